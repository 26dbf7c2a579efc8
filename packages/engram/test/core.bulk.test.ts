/**
 * Bulk seeding (`CoreFileTable.writeMany`, `StateBackend.writeMany`) and the typed boundary's
 * result shapes, on both cores.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { type Core, EngramError, StateBackend, loadCore } from "../src/index.js";

let core: Core;

beforeAll(async () => {
  core = await loadCore();
});

describe("writeMany", () => {
  it("seeds strings and bytes in one call, exactly as one write per file would", () => {
    const files: [string, string | Uint8Array][] = [
      ["/a.txt", "alpha\n"],
      ["/d//b.md", "βeta ✓ 😀\n"],
      ["/bin", new Uint8Array([0, 1, 2, 255])],
      ["/empty", ""],
    ];
    const t = core.createFileTable();
    expect(t.writeMany(files, { modifiedAt: 5 })).toEqual({ written: 4 });
    const one = core.createFileTable();
    for (const [p, c] of files) one.write(p, c, { modifiedAt: 5 });
    for (const p of ["/a.txt", "/d/b.md", "/bin", "/empty"]) {
      expect(t.readBytes(p)).toEqual(one.readBytes(p));
      expect(t.stat(p).info).toMatchObject({ path: p, isDir: false, modifiedAt: 5 });
    }
    expect(t.read("/d/b.md")).toEqual({ content: "βeta ✓ 😀", totalLines: 1, offset: 0, lines: 1 });
    expect(t.ls("/").entries?.map((e) => e.path)).toEqual(["/a.txt", "/bin", "/d/", "/empty"]);
  });

  it("grows its buffer past the first estimate (multi-byte text) and handles thousands of files", () => {
    const t = core.createFileTable();
    const files = Array.from({ length: 3000 }, (_, i) => [`/s/${i % 7}/f${i}.txt`, "é😀".repeat(i % 50)] as const);
    expect(t.writeMany(files)).toEqual({ written: 3000 });
    expect(t.size).toBe(3000);
    expect(t.read("/s/6/f48.txt").content).toBe("é😀".repeat(48));
    expect(t.grep({ pattern: "😀", outputMode: "count", path: "/s/0" }).counts?.["/s/0/f49.txt"]).toBe(1);
  });

  it("keeps every byte when the room for a batch grows many times over (WASM: memory grows mid-batch)", () => {
    const t = core.createFileTable();
    // One byte per UTF-16 unit is the first guess; these need two to four, and bytes and text mix.
    const files: [string, string | Uint8Array][] = [];
    for (let i = 0; i < 12; i++) {
      files.push([`/big/${i}.txt`, `${"é".repeat(1 << 20)}${i}😀`]);
      files.push([`/bin/${i}`, new Uint8Array(1 << 18).fill(i)]);
    }
    expect(t.writeMany(files)).toEqual({ written: 24 });
    for (let i = 0; i < 12; i++) {
      const text = t.read(`/big/${i}.txt`).content as string;
      expect(text.length).toBe((1 << 20) + String(i).length + 2);
      expect(text.endsWith(`${i}😀`)).toBe(true);
      expect(text.startsWith("éé")).toBe(true);
      const bytes = t.readBytes(`/bin/${i}`) as Uint8Array;
      expect(bytes.length).toBe(1 << 18);
      expect(bytes.every((b) => b === i)).toBe(true);
    }
    expect(t.grep({ pattern: "😀", outputMode: "count", path: "/big" }).counts).toEqual(
      Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`/big/${i}.txt`, 1])),
    );
  });

  it("is all or nothing: a bad path anywhere is that path's error and no file is written", () => {
    const t = core.createFileTable();
    expect(t.writeMany([["/keep.txt", "k"]])).toEqual({ written: 1 });
    const before = t.snapshot();
    const bad: [string, string][] = [
      ["/../escape", "path_escape"],
      ["/x\0y", "invalid_path"], // a NUL would mis-split the joined paths
      ["/lone\uD800.txt", "invalid_path"], // a lone surrogate (not well-formed UTF-16)
      ["", "invalid_path"],
      ["/keep.txt/child", "invalid_path"], // below a file
      ["/d", "is_directory"], // a directory made by an earlier file of the same batch
      ["/", "is_directory"],
    ];
    for (const [path, code] of bad) {
      const r = t.writeMany([
        ["/ok.txt", "1"],
        ["/keep.txt", "replaced?"],
        ["/d/inner.txt", "2"],
        [path, "3"],
        ["/never.txt", "4"],
      ]);
      expect(r.error?.code, JSON.stringify(path)).toBe(code);
      expect(t.snapshot(), JSON.stringify(path)).toEqual(before);
      expect(t.readBytes("/ok.txt")).toBeUndefined();
      expect(t.ls("/").entries?.map((e) => e.path)).toEqual(["/keep.txt"]);
    }
  });

  it("takes an empty batch, duplicate paths (the last wins), lone surrogates in content and large files", () => {
    const t = core.createFileTable();
    expect(t.writeMany([])).toEqual({ written: 0 });
    expect(t.writeMany(new Map<string, string>())).toEqual({ written: 0 });
    expect(t.size).toBe(0);
    const big = "x".repeat(3 << 20);
    expect(
      t.writeMany(
        new Map<string, string | Uint8Array>([
          ["/dup.txt", "first"],
          ["/big.txt", big],
          ["/bytes.bin", new Uint8Array([0xff, 0xfe, 0])],
        ]),
      ),
    ).toEqual({ written: 3 });
    expect(
      t.writeMany([
        ["/dup.txt", "second"],
        ["/a//dup.txt", "x"],
        ["/a/dup.txt", "third"],
        ["/lone.txt", "a\uDC00b"],
      ]),
    ).toEqual({ written: 4 });
    expect(t.read("/dup.txt").content).toBe("second");
    expect(t.read("/a/dup.txt").content).toBe("third");
    expect(t.stat("/big.txt").info?.size).toBe(3 << 20);
    expect(t.readBytes("/bytes.bin")).toEqual(new Uint8Array([0xff, 0xfe, 0]));
    // A lone surrogate in content is stored as U+FFFD, exactly as write() stores it.
    const one = core.createFileTable();
    one.write("/lone.txt", "a\uDC00b");
    expect(t.readBytes("/lone.txt")).toEqual(one.readBytes("/lone.txt"));
  });

  it("gives the entries the versions after the table's last, in input order (StoreBackend relies on it)", () => {
    const t = core.createFileTable();
    t.write("/before.txt", "x");
    const { lastVersion } = t.mark();
    const paths = ["/z.txt", "/a/b.txt", "/m.txt", "/a/b.txt", "/c.txt"];
    expect(t.writeMany(paths.map((p, i) => [p, `content ${i}`] as const))).toEqual({ written: 5 });
    expect(t.mark().lastVersion).toBe(lastVersion + paths.length);
    // A path given twice holds its later entry, and that entry's version.
    for (const [i, p] of paths.entries()) {
      if (paths.lastIndexOf(p) !== i) continue;
      expect(t.stat(p).info?.version, p).toBe(String(lastVersion + 1 + i));
    }
    const versionOf = (p: string) => String(p === "/before.txt" ? lastVersion : lastVersion + 1 + paths.lastIndexOf(p));
    const all = [...new Set(["/before.txt", ...paths])].sort();
    expect(t.glob({ pattern: "**" }).files?.map((f) => [f.path, f.version])).toEqual(all.map((p) => [p, versionOf(p)]));
  });

  it("stores every text as exactly the UTF-8 a TextEncoder gives: one-byte, two-byte and surrogate texts mixed in one batch", () => {
    // Texts V8 keeps one byte per character (ASCII, Latin-1) and two (CJK, emoji), pairs and
    // lone surrogates at every position, a long text between short ones (the native core reuses
    // scratch room), empty texts, bytes between texts, and texts over a megabyte.
    const texts = [
      "",
      "plain ascii\n",
      "café Latin-1 only: é ü ÿ \u0080",
      "日本語 and 😀 pairs 𝄞",
      "\uD83D",
      "\uDE00 a low surrogate first",
      "ends with a high surrogate \uD83D",
      "two highs \uD83D\uD83D\uDE00 then a pair",
      "x".repeat(1 << 20) + "é",
      `${"a😀".repeat(300_000)}\uDFFF`,
      "short after long",
      "é".repeat(40),
      "",
    ];
    const encoder = new TextEncoder();
    const files: [string, string | Uint8Array][] = texts.map((text, i) => [`/t/${i}.txt`, text]);
    files.push(["/t/bytes.bin", new Uint8Array([0xed, 0xa0, 0x80, 0xc3])]); // not UTF-8: kept as is
    const t = core.createFileTable();
    expect(t.writeMany(files)).toEqual({ written: files.length });
    // Compared as buffers: element-wise deep equality of megabyte arrays is far too slow.
    const same = (a: Uint8Array | null | undefined, b: Uint8Array | null | undefined) =>
      a != null && b != null && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
    texts.forEach((text, i) => {
      expect(same(t.readBytes(`/t/${i}.txt`), encoder.encode(text)), `text ${i}`).toBe(true);
    });
    expect(t.readBytes("/t/bytes.bin")).toEqual(new Uint8Array([0xed, 0xa0, 0x80, 0xc3]));
    // The same batch twice over (the scratch room kept from the first) gives the same bytes.
    const again = core.createFileTable();
    expect(again.writeMany([...files].reverse())).toEqual({ written: files.length });
    for (const [path] of files) expect(same(again.readBytes(path), t.readBytes(path)), path).toBe(true);
  });

  it.runIf(process.env.ENGRAM_CORE === "wasm")(
    "refuses a batch larger than WebAssembly memory can hold with too_large, writing nothing",
    () => {
      const t = core.createFileTable();
      expect(t.writeMany([["/keep.txt", "k"]])).toEqual({ written: 1 });
      const before = t.snapshot();
      // 2 GiB of contents (one 256 MiB text eight times): more than a 32-bit memory can stage.
      const huge = "x".repeat(1 << 28);
      const r = t.writeMany(Array.from({ length: 8 }, (_, i) => [`/huge/${i}.txt`, huge] as const));
      expect(r.error?.code).toBe("too_large");
      expect(t.snapshot()).toEqual(before);
      expect(t.writeMany([["/after.txt", "still works"]])).toEqual({ written: 1 });
      expect(t.read("/after.txt").content).toBe("still works");
    },
  );

  it("refuses wrong argument types with invalid_argument", () => {
    const t = core.createFileTable();
    expect(() => t.writeMany([["/a", 5 as never]])).toThrow(EngramError);
    expect(() => t.writeMany([[7 as never, "x"]])).toThrow(EngramError);
    // Entries are judged in order: a bad path before a bad content is that path's error.
    expect(
      t.writeMany([
        ["/ok", "1"],
        ["/lone\uDC00", "2"],
        ["/b", null as never],
      ]).error?.code,
    ).toBe("invalid_path");
    expect(() =>
      t.writeMany([
        ["/a", {} as never],
        ["/x\0y", "2"],
      ]),
    ).toThrow(EngramError);
    expect(t.size).toBe(0);
  });

  it("gives each file its entry's modification time, the others options.modifiedAt, and checks the times", () => {
    const t = core.createFileTable();
    const files = Array.from({ length: 40 }, (_, i) => [`/t/${i}.md`, `${i}`, i % 3 === 0 ? undefined : 1000 + i] as const);
    expect(t.writeMany(files, { modifiedAt: 7 })).toEqual({ written: 40 });
    const times = (t.glob({ pattern: "**" }).files ?? []).map((f) => [f.path, f.modifiedAt] as const);
    expect(new Map(times)).toEqual(new Map(files.map(([p, , at]) => [p, at ?? 7])));
    expect(core.restoreFileTable(t.snapshot()).stat("/t/5.md").info?.modifiedAt).toBe(1005);
    // A time that is not a number is the caller's bug: thrown, nothing written.
    const u = core.createFileTable();
    expect(() =>
      u.writeMany([
        ["/a", "1", 3],
        ["/b", "2", "soon" as never],
      ]),
    ).toThrow(EngramError);
    expect(() => u.writeMany([["/a", "1", Number.NaN]])).toThrow(/modifiedAt/);
    expect(u.size).toBe(0);
  });

  it("keeps the files of one batch apart: changing, appending or deleting one leaves the others as they were", () => {
    // The files of a batch share a few large buffers in the core (no allocation per file).
    const t = core.createFileTable();
    const text = (i: number) => `${i}:${"ab\n".repeat(i % 13)}é😀`;
    const files = Array.from({ length: 500 }, (_, i) => [`/f/${i}.txt`, text(i)] as const);
    expect(t.writeMany(files)).toEqual({ written: 500 });
    expect(t.edit({ path: "/f/10.txt", oldString: "10:", newString: "ten:" }).error).toBeUndefined();
    expect(t.append("/f/11.txt", "more").error).toBeUndefined();
    expect(t.write("/f/12.txt", "new").error).toBeUndefined();
    expect(t.delete("/f/13.txt").error).toBeUndefined();
    const back = core.restoreFileTable(t.snapshot());
    for (const table of [t, back]) {
      expect(table.read("/f/10.txt").content).toBe(text(10).replace("10:", "ten:").replace(/\n$/, ""));
      expect(new TextDecoder().decode(table.readBytes("/f/11.txt"))).toBe(`${text(11)}more`);
      expect(table.read("/f/12.txt").content).toBe("new");
      expect(table.readBytes("/f/13.txt")).toBeUndefined();
      for (const i of [0, 9, 14, 499]) expect(new TextDecoder().decode(table.readBytes(`/f/${i}.txt`))).toBe(text(i));
    }
  });

  it("StateBackend.writeMany seeds a backend the tools then read", async () => {
    const b = new StateBackend({ core });
    expect(await b.writeMany([["/src/a.ts", "export const a = 1;\n"]])).toEqual({ written: 1 });
    expect((await b.read("/src/a.ts")).content).toBe("export const a = 1;");
    expect((await b.grep("const", {})).matches).toEqual([{ path: "/src/a.ts", line: 1, text: "export const a = 1;" }]);
  });
});

describe("clear and dispose", () => {
  it("a cleared table is empty, counts one change, and takes no delta across the clear", () => {
    const t = core.createFileTable();
    t.writeMany([
      ["/a/1.txt", "one"],
      ["/b.txt", "two"],
    ]);
    const mark = t.mark();
    const changes = t.changes;
    t.clear();
    expect(t.size).toBe(0);
    expect(t.ls("/").entries).toEqual([]);
    expect(t.read("/b.txt").error?.code).toBe("file_not_found");
    expect(t.changes).toBe(changes + 1);
    expect(t.deltaSince(mark)).toBeUndefined();
    expect(t.write("/b.txt", "again").error).toBeUndefined();
    expect(core.restoreFileTable(t.snapshot()).read("/b.txt").content).toBe("again");
  });

  it("memory a cleared batch let go of is refilled by the next batches and restores, and never by a file still held", () => {
    // Native keeps the large buffers of files that are gone for the next batch or restore.
    const batch = (tag: string, n: number) =>
      Array.from({ length: n }, (_, i) => [`/${tag}/${i}.txt`, `${tag}:${i}:${"x".repeat(4000)}é\n`] as const);
    const check = (t: ReturnType<Core["createFileTable"]>, tag: string, n: number) => {
      for (let i = 0; i < n; i += 37) expect(t.read(`/${tag}/${i}.txt`).content).toBe(`${tag}:${i}:${"x".repeat(4000)}é`);
    };
    const held = core.createFileTable();
    held.writeMany(batch("a", 600)); // 2.4 MB, over one shared buffer
    for (let i = 1; i < 600; i++) held.delete(`/a/${i}.txt`); // /a/0.txt still holds that buffer
    const gone = core.createFileTable();
    gone.writeMany(batch("b", 600));
    const snapshot = gone.snapshot();
    for (let round = 0; round < 4; round++) {
      gone.clear();
      const next = core.createFileTable();
      next.writeMany(batch(`c${round}`, 600));
      const restored = core.restoreFileTable(snapshot);
      check(next, `c${round}`, 600);
      check(restored, "b", 600);
      expect(held.read("/a/0.txt").content).toBe(`a:0:${"x".repeat(4000)}é`);
      next.clear();
      restored.clear();
      gone.writeMany(batch("b", 600));
    }
    check(gone, "b", 600);
  });

  it("StateBackend.dispose releases the files and leaves the backend usable, empty", async () => {
    const b = new StateBackend({ core });
    await b.writeMany([["/src/a.ts", "export const a = 1;\n"]]);
    const before = await b.snapshot();
    b.dispose();
    expect((await b.read("/src/a.ts")).error?.code).toBe("file_not_found");
    const after = await b.snapshot();
    expect(after).not.toEqual(before);
    expect(core.restoreFileTable(after).size).toBe(0);
    expect((await b.write("/x.md", "x")).error).toBeUndefined();
    expect((await b.read("/x.md")).content).toBe("x");
  });
});

describe("typed results", () => {
  it("are plain objects, errors included", () => {
    const t = core.createFileTable();
    const w = t.write("/a/b.txt", "x\ny\n", { modifiedAt: 1 });
    expect(Object.getPrototypeOf(w)).toBe(Object.prototype);
    expect(w).toEqual({ path: "/a/b.txt", version: expect.any(String) });
    const missing = t.read("/nope");
    expect(missing).toEqual({ error: { code: "file_not_found", message: expect.stringContaining("/nope"), subject: "/nope" } });
    expect(Object.getPrototypeOf(missing.error)).toBe(Object.prototype);
    expect(t.edit({ path: "/a/b.txt", oldString: "x", newString: "z" })).toEqual({
      path: "/a/b.txt",
      occurrences: 1,
      version: expect.any(String),
    });
    expect(t.glob({ pattern: "**" })).toEqual({
      files: [{ path: "/a/b.txt", isDir: false, size: 4, modifiedAt: expect.any(Number), version: expect.any(String) }],
      truncated: false,
    });
    expect(t.grep({ pattern: "y", outputMode: "bogus" as never }).error?.code).toBe("unsupported");
    expect(() => t.grep({ pattern: "y", regex: "yes" as never })).toThrow(EngramError);
    expect(core.createRouter(["/m"]).route("/m/x")).toEqual({ route: 0, prefix: "/m/", path: "/x", outer: "/m/x" });
    expect(core.createRouter(["/m"]).route("/x")).toEqual({ route: null, prefix: null, path: "/x", outer: "/x" });
  });
});

describe("the helpers cross typed (no JSON)", () => {
  it("filterPaths hands back the caller's own strings, odd ones included", () => {
    const lone = "/m/\uD800.md";
    const paths = ["/m/a.md", lone, "/m/b.txt", "/m/c/d.md"];
    const r = core.filterPaths("glob", "**/*.md", "/m", paths);
    expect(r.paths).toEqual(["/m/a.md", lone, "/m/c/d.md"]);
    expect(r.paths?.[1]).toBe(lone);
    expect(core.filterPaths("glob", "*.md", "/m", [])).toEqual({ paths: [] });
    expect(core.filterPaths("bogus" as never, "*", "/", ["/a"]).error?.code).toBe("unsupported");
    expect(() => core.filterPaths("glob", "*", "/", ["/a", 3 as never])).toThrow(EngramError);
  });

  it("rankBm25, redactSecrets, errorData and normalizePath return plain values", () => {
    const scores = core.rankBm25("rust", ["likes rust", "likes go", "lone \uDC00 rust"]);
    expect(Array.isArray(scores)).toBe(true);
    expect(scores).toHaveLength(3);
    expect((scores[0] as number) > 0 && scores[1] === 0 && (scores[2] as number) > 0).toBe(true);
    expect(core.rankBm25("x", [])).toEqual([]);
    const red = core.redactSecrets("key: sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD");
    expect(Object.getPrototypeOf(red)).toBe(Object.prototype);
    expect(red.count).toBe(1);
    expect(red.text).not.toContain("abcdefghijklmnop");
    const e = core.errorData("file_not_found", "/x");
    expect(Object.getPrototypeOf(e)).toBe(Object.prototype);
    expect(e).toEqual({ code: "file_not_found", message: "File not found: '/x'", subject: "/x" });
    expect(core.errorData("no_such_code" as never, "/x").code).toBe("unsupported");
    expect(core.normalizePath("/a//b/./c/")).toEqual({ path: "/a/b/c" });
    expect(core.normalizePath("/../x").error?.code).toBe("path_escape");
  });
});

describe("text written through a reused encoding buffer", () => {
  it("keeps every file's own bytes, short after long, appends, multi-byte and large text", () => {
    const t = core.createFileTable();
    const long = "é😀 long line\n".repeat(500);
    t.write("/a.txt", long);
    t.write("/b.txt", "short");
    t.append("/b.txt", "+é");
    t.append("/b.txt", "+😀");
    const huge = "x".repeat((1 << 20) / 3 + 10); // past the reused buffer's limit
    t.write("/c.txt", huge);
    t.write("/d.txt", "");
    expect(t.read("/a.txt", { limit: 100_000 }).content).toBe(long.slice(0, -1));
    expect(t.read("/b.txt").content).toBe("short+é+😀");
    expect(t.read("/c.txt").content).toBe(huge);
    expect(t.readBytes("/d.txt")).toEqual(new Uint8Array(0));
  });
});

describe("StateBackend checkpoints of an unchanged table", () => {
  it("reuse the last snapshot until a change, and the reused bytes equal a fresh snapshot", async () => {
    const b = new StateBackend({ core });
    await b.write("/a.txt", "one\n");
    const first = await b.snapshot();
    await b.read("/a.txt");
    await b.grep("one");
    expect(await b.snapshot()).toBe(first);
    for (const change of [
      () => b.write("/b.txt", "two\n"),
      () => b.edit("/a.txt", "one", "uno"),
      () => b.append("/a.txt", "more\n"),
      () => b.delete("/b.txt"),
      () => b.writeMany([["/c.txt", "three"]]),
    ]) {
      const before = await b.snapshot();
      await change();
      const after = await b.snapshot();
      expect(after).not.toBe(before);
      expect(after).not.toEqual(before);
    }
    // A failed change changes nothing.
    const settled = await b.snapshot();
    expect((await b.delete("/missing")).error?.code).toBe("file_not_found");
    expect(await b.snapshot()).toBe(settled);
  });

  it("after a restore, hand back bytes equal to what the core would produce", async () => {
    const b = new StateBackend({ core });
    await b.writeMany([
      ["/x/1.md", "a"],
      ["/x/2.md", "b"],
    ]);
    await b.edit("/x/1.md", "a", "A");
    const bytes = await b.snapshot();
    const restored = await StateBackend.restore(bytes, { core });
    expect(await restored.snapshot()).toEqual(core.restoreFileTable(bytes).snapshot());
    expect(await restored.snapshot()).toEqual(bytes);
    bytes.fill(0); // the caller's buffer is not shared
    expect((await restored.read("/x/1.md")).content).toBe("A");
    expect(await restored.snapshot()).toEqual(core.restoreFileTable(await restored.snapshot()).snapshot());
    const loaded = new StateBackend({ core });
    const copy = await restored.snapshot();
    await loaded.loadSnapshot(copy);
    expect(await loaded.snapshot()).toEqual(copy);
    await loaded.write("/x/3.md", "c");
    expect((await loaded.snapshot()).length).toBeGreaterThan(copy.length);
  });
});
