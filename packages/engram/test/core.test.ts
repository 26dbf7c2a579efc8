/**
 * The core API suite. Runs once per core (vitest projects `native` and `wasm` set ENGRAM_CORE),
 * so every expectation here holds for both builds.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { type Core, EngramError, loadCore } from "../src/index.js";
import type { CoreFileTable } from "../src/kit.js";
import { expectedScenario, runScenario } from "./fixtures/scenario.js";

let core: Core;
const enc = new TextEncoder();

beforeAll(async () => {
  core = await loadCore();
});

function tableWith(files: Record<string, string | Uint8Array>): CoreFileTable {
  const t = core.createFileTable();
  for (const [p, c] of Object.entries(files)) {
    const r = t.write(p, c, { modifiedAt: 1000 });
    if (r.error) throw new Error(r.error.message);
  }
  return t;
}

describe("loader", () => {
  it("loads exactly the core ENGRAM_CORE asks for", () => {
    expect(process.env.ENGRAM_CORE).toMatch(/^(native|wasm)$/);
    expect(core.kind).toBe(process.env.ENGRAM_CORE);
  });

  it("returns the same instance on every load", async () => {
    expect(await loadCore()).toBe(core);
  });

  it("rejects an unknown ENGRAM_CORE value instead of guessing", async () => {
    const saved = process.env.ENGRAM_CORE;
    process.env.ENGRAM_CORE = "java";
    try {
      await expect(loadCore()).rejects.toMatchObject({ name: "EngramError", code: "core_unavailable" });
    } finally {
      process.env.ENGRAM_CORE = saved;
    }
  });

  it("runs the shared edge scenario", () => {
    expect(runScenario(core)).toEqual({ kind: core.kind, ...expectedScenario });
  });
});

describe("paths", () => {
  it.each([
    ["/", "/"],
    ["//a///b/", "/a/b"],
    ["/a/./b/../c", "/a/c"],
    ["relative/x.md", "/relative/x.md"],
    ["/a..b/c..", "/a..b/c.."],
    ["/%2e%2e/x", "/%2e%2e/x"],
    ["/文档/😀.md", "/文档/😀.md"],
  ])("normalises %j to %j", (input, expected) => {
    expect(core.normalizePath(input)).toEqual({ path: expected });
  });

  it.each([
    ["/..", "path_escape"],
    ["../etc/passwd", "path_escape"],
    ["/a/../../b", "path_escape"],
    ["", "invalid_path"],
    ["/a\u0000b", "invalid_path"],
    ["/a\nb", "invalid_path"],
    ["~/secrets", "invalid_path"],
    ["C:/Windows", "invalid_path"],
    ["/a\\b", "invalid_path"],
    [`/${"x".repeat(5000)}`, "invalid_path"],
  ])("refuses %j with %s", (input, code) => {
    const r = core.normalizePath(input);
    expect(r.error?.code).toBe(code);
    expect(r.error?.message.length).toBeLessThan(400);
  });
});

describe("router", () => {
  it("routes by longest whole-segment prefix", () => {
    const router = core.createRouter(["/memories", "/memories/deep/", "//skills//"]);
    expect(router.prefixes).toEqual(["/memories/", "/memories/deep/", "/skills/"]);
    expect(router.route("/memories/a.md")).toEqual({ route: 0, prefix: "/memories/", path: "/a.md", outer: "/memories/a.md" });
    expect(router.route("/memories/deep/x.md")).toMatchObject({ route: 1, path: "/x.md" });
    expect(router.route("/memoriesX/a.md")).toEqual({ route: null, prefix: null, path: "/memoriesX/a.md", outer: "/memoriesX/a.md" });
    expect(router.route("/memories")).toMatchObject({ route: 0, path: "/" });
    expect(router.route("//memories/./deep//x.md")).toMatchObject({ path: "/x.md", outer: "/memories/deep/x.md" });
    expect(router.route("/memories/../../etc").error?.code).toBe("path_escape");
  });

  it("throws a typed error for an invalid prefix", () => {
    expect(() => core.createRouter(["/ok", "/../bad"])).toThrow(EngramError);
    try {
      core.createRouter(["/../bad"]);
    } catch (e) {
      expect((e as EngramError).code).toBe("path_escape");
    }
  });
});

describe("file table", () => {
  it("writes, stats, lists one directory level and deletes", () => {
    const t = tableWith({ "/b.txt": "b", "/a/x.md": "x", "/a/y/z.md": "z", "/a.txt": "a" });
    expect(t.size).toBe(4);
    expect(t.ls("/").entries?.map((e) => e.path)).toEqual(["/a.txt", "/a/", "/b.txt"]);
    expect(t.ls("/a").entries).toEqual([
      { path: "/a/x.md", isDir: false, size: 1, modifiedAt: 1000, version: expect.any(String) },
      { path: "/a/y/", isDir: true },
    ]);
    expect(t.stat("/a").info).toEqual({ path: "/a/", isDir: true });
    expect(t.delete("/a")).toEqual({ deleted: 2 });
    expect(t.ls("/a").error?.code).toBe("file_not_found");
    expect(t.delete("/a").error?.code).toBe("file_not_found");
    expect(t.size).toBe(2);
  });

  it("changes the version on every write and supports compare-and-swap", () => {
    const t = core.createFileTable();
    const first = t.write("/m.md", "1", { ifVersion: "0" });
    expect(first.error).toBeUndefined();
    expect(t.write("/m.md", "x", { ifVersion: "0" }).error?.code).toBe("conflict");
    const second = t.write("/m.md", "2", { ifVersion: first.version });
    expect(second.version).not.toBe(first.version);
    expect(t.write("/m.md", "3", { ifVersion: first.version }).error?.code).toBe("conflict");
    expect(t.read("/m.md").content).toBe("2");
  });

  it("refuses to write over a directory or below a file", () => {
    const t = tableWith({ "/a/b.txt": "x" });
    expect(t.write("/a", "x").error?.code).toBe("is_directory");
    expect(t.write("/a/b.txt/c", "x").error?.code).toBe("invalid_path");
    expect(t.write("/../x", "x").error?.code).toBe("path_escape");
    expect(t.read("/a").error?.code).toBe("is_directory");
    expect(t.read("/nope").error).toEqual({ code: "file_not_found", message: "File not found: '/nope'", subject: "/nope" });
  });

  it("reads by line with totals, past-the-end and clamped offsets", () => {
    const t = tableWith({ "/f.txt": "l0\nl1\r\nl2\nl3", "/empty": "" });
    expect(t.read("/f.txt", { offset: 1, limit: 2 })).toEqual({ content: "l1\r\nl2", totalLines: 4, offset: 1, lines: 2 });
    expect(t.read("/f.txt", { offset: 10, limit: 5 })).toMatchObject({ content: "", totalLines: 4, lines: 0 });
    expect(t.read("/f.txt", { offset: -3, limit: 1.7 })).toMatchObject({ content: "l0", offset: 0, lines: 1 });
    expect(t.read("/f.txt", { limit: Number.POSITIVE_INFINITY }).lines).toBe(4);
    expect(t.read("/empty")).toMatchObject({ content: "", totalLines: 0 });
  });

  it("keeps bytes exact: unicode, astral characters, invalid UTF-8 and binary", () => {
    const text = "中文 línea 😀 𝄞\n第二行\n";
    const invalid = new Uint8Array([0x63, 0x61, 0x66, 0xe9, 0x20, 0x6e, 0x65, 0x65, 0x64, 0x6c, 0x65, 0x0a]);
    const binary = new Uint8Array([0x6e, 0x65, 0x65, 0x64, 0x6c, 0x65, 0x00, 0xff]);
    const t = tableWith({ "/u.md": text, "/latin1.txt": invalid, "/blob.bin": binary });
    expect(t.read("/u.md").content).toBe(text.slice(0, -1));
    expect(t.stat("/u.md").info?.size).toBe(enc.encode(text).length);
    expect(t.readBytes("/latin1.txt")).toEqual(invalid);
    expect(t.readBytes("/blob.bin")).toEqual(binary);
    expect(t.readBytes("/missing")).toBeUndefined();
    expect(t.read("/latin1.txt").content).toBe("caf\uFFFD needle");
    const found = t.grep({ pattern: "needle", outputMode: "files_with_matches" });
    expect(found.files).toEqual(["/latin1.txt"]);
    expect(t.grep({ pattern: "😀" }).matches).toEqual([{ path: "/u.md", line: 1, text: "中文 línea 😀 𝄞" }]);
  });
});

describe("grep", () => {
  const files = {
    "/src/a.ts": "const x = 1; // TODO\nlet y = x.y;\nTODO: more\n",
    "/src/b.js": "todo lower\nx.y\n",
    "/src/deep/c.ts": "nothing\n",
    "/README.md": "TODO in docs\n",
  };

  it("is literal by default and regex on request", () => {
    const t = tableWith(files);
    expect(t.grep({ pattern: "x.y" }).matches?.map((m) => `${m.path}:${m.line}`)).toEqual(["/src/a.ts:2", "/src/b.js:2"]);
    const rx = t.grep({ pattern: "^TODO", regex: true });
    expect(rx.matches?.map((m) => `${m.path}:${m.line}`)).toEqual(["/README.md:1", "/src/a.ts:3"]);
    expect(t.grep({ pattern: "todo", ignoreCase: true, outputMode: "count" }).counts).toEqual({
      "/README.md": 1,
      "/src/a.ts": 2,
      "/src/b.js": 1,
    });
  });

  it("scopes by path and glob", () => {
    const t = tableWith(files);
    expect(t.grep({ pattern: "TODO", path: "/src", outputMode: "files_with_matches" }).files).toEqual(["/src/a.ts"]);
    expect(t.grep({ pattern: "x", glob: "*.js", outputMode: "files_with_matches" }).files).toEqual(["/src/b.js"]);
    expect(t.grep({ pattern: "TODO", path: "/src/a.ts" }).matches?.length).toBe(2);
    expect(t.grep({ pattern: "TODO", path: "/nope" }).error?.code).toBe("file_not_found");
  });

  it("caps with maxCount and says so", () => {
    const t = tableWith(files);
    const capped = t.grep({ pattern: "TODO", maxCount: 2 });
    expect(capped.matches?.length).toBe(2);
    expect(capped.truncated).toBe(true);
    expect(t.grep({ pattern: "TODO", maxCount: 3 }).truncated).toBe(false);
    const filesCapped = t.grep({ pattern: "TODO", outputMode: "files_with_matches", maxCount: 1 });
    expect(filesCapped).toEqual({ files: ["/README.md"], truncated: true });
  });

  it("adds merged context lines marked as context", () => {
    const t = tableWith({ "/f": "1\n2\nhit\n4\nhit\n6\n7\n8\nhit\n" });
    const r = t.grep({ pattern: "hit", context: 1 });
    expect(r.matches?.map((m) => `${m.line}${m.context ? "c" : "m"}`)).toEqual(["2c", "3m", "4c", "5m", "6c", "8c", "9m"]);
  });

  it("reports an invalid regex as invalid_pattern", () => {
    const t = tableWith(files);
    expect(t.grep({ pattern: "(unclosed", regex: true }).error?.code).toBe("invalid_pattern");
  });

  it("runs a catastrophic-backtracking pattern in linear time", () => {
    const t = tableWith({ "/evil.txt": `${"a".repeat(100_000)}!\n` });
    expect(t.grep({ pattern: "(a+)+$", regex: true }).matches).toEqual([]);
  });

  it("stops at the 10,000-match ceiling whatever maxCount the model chose", () => {
    const t = tableWith({ "/big.txt": "match\n".repeat(100_000) });
    for (const maxCount of [undefined, 1e9, Number.POSITIVE_INFINITY, 50_000]) {
      const r = t.grep({ pattern: "match", maxCount });
      expect(r.matches?.length).toBe(10_000);
      expect(r.truncated).toBe(true);
      expect(r.matches?.at(-1)).toEqual({ path: "/big.txt", line: 10_000, text: "match" });
    }
    expect(t.grep({ pattern: "match", maxCount: 3 }).matches?.length).toBe(3);
    const files = tableWith(Object.fromEntries(Array.from({ length: 10_050 }, (_, i) => [`/f/${i}.txt`, "x"])));
    const listed = files.grep({ pattern: "x", outputMode: "files_with_matches", maxCount: 1e12 });
    expect([listed.files?.length, listed.truncated]).toEqual([10_000, true]);
  });
});

describe("glob", () => {
  const t = () =>
    tableWith({
      "/a.ts": "",
      "/src/b.ts": "",
      "/src/deep/c.ts": "",
      "/src/d.js": "",
      "/src/x1.md": "",
      "/src/xy.md": "",
      "/.env": "",
      "/src/.hidden.ts": "",
    });
  const paths = (table: CoreFileTable, pattern: string, path?: string) =>
    table.glob(path ? { pattern, path } : { pattern }).files?.map((f) => f.path);

  it("keeps * and ? within one segment", () => {
    const table = t();
    expect(paths(table, "*.ts")).toEqual(["/a.ts"]);
    expect(paths(table, "src/?1.md")).toEqual(["/src/x1.md"]);
    expect(paths(table, "**/*.ts")).toEqual(["/a.ts", "/src/.hidden.ts", "/src/b.ts", "/src/deep/c.ts"]);
  });

  it("supports classes, alternation, dotfiles, anchoring and scoping", () => {
    const table = t();
    expect(paths(table, "src/x[0-9].md")).toEqual(["/src/x1.md"]);
    expect(paths(table, "src/*.{js,md}")).toEqual(["/src/d.js", "/src/x1.md", "/src/xy.md"]);
    expect(paths(table, ".*")).toEqual(["/.env"]);
    expect(paths(table, "*.ts", "/src")).toEqual(["/src/.hidden.ts", "/src/b.ts"]);
    expect(paths(table, "/src/*.js", "/src")).toEqual(["/src/d.js"]);
    expect(paths(table, "*", "/missing")).toEqual([]);
    expect(table.glob({ pattern: "src/[" }).error?.code).toBe("invalid_pattern");
    expect(table.glob({ pattern: "**", maxResults: 3 })).toMatchObject({ truncated: true });
  });

  it("answers a glob of many long and non-ASCII paths with each file's own metadata", () => {
    // The paths cross the boundary in chunks (engram_core::api::PATHS_CHUNK_BYTES, 32 KiB):
    // 6,000 files make several, with paths of every length up to the longest allowed.
    const table = core.createFileTable();
    const long = `/d/${"é".repeat(2_044)}.ts`;
    const written = new Map<string, string>();
    for (let i = 0; i < 6_000; i++) {
      const path = i === 2_500 ? long : `/d/${String(i).padStart(4, "0")}-中文-${"x".repeat(i % 40)}.ts`;
      const w = table.write(path, "y".repeat(i % 97), { modifiedAt: i });
      expect(w.error).toBeUndefined();
      written.set(path, w.version as string);
    }
    const files = table.glob({ pattern: "**/*.ts" }).files ?? [];
    expect(files.map((f) => f.path)).toEqual([...written.keys()].sort());
    for (const f of files) {
      const i = f.path === long ? 2_500 : Number(f.path.slice(3, 7));
      expect(f).toEqual({ path: f.path, isDir: false, size: i % 97, modifiedAt: i, version: written.get(f.path) });
    }
    table.dispose();
  });
});

describe("edit", () => {
  it("requires a unique match unless replaceAll", () => {
    const t = tableWith({ "/f": "a b a" });
    const multiple = t.edit({ path: "/f", oldString: "a", newString: "x" });
    expect(multiple.error?.code).toBe("multiple_matches");
    expect(multiple.error?.message).toContain("2 times");
    expect(t.edit({ path: "/f", oldString: "a", newString: "x", replaceAll: true })).toMatchObject({ occurrences: 2 });
    expect(t.read("/f").content).toBe("x b x");
    expect(t.edit({ path: "/f", oldString: "zzz", newString: "y" }).error?.code).toBe("string_not_found");
    expect(t.edit({ path: "/nope", oldString: "a", newString: "b" }).error?.code).toBe("file_not_found");
  });

  it("keeps CRLF line endings", () => {
    const t = tableWith({ "/win.txt": "one\r\ntwo\r\nthree\r\n" });
    expect(t.edit({ path: "/win.txt", oldString: "one\ntwo", newString: "uno\ndos" }).occurrences).toBe(1);
    expect(new TextDecoder().decode(t.readBytes("/win.txt"))).toBe("uno\r\ndos\r\nthree\r\n");
  });

  it("preserves bytes it does not touch, including invalid UTF-8", () => {
    const t = tableWith({ "/f": new Uint8Array([0xff, 0x0a, 0x61, 0x62, 0x0a, 0xfe]) });
    t.edit({ path: "/f", oldString: "ab", newString: "é" });
    expect(t.readBytes("/f")).toEqual(new Uint8Array([0xff, 0x0a, 0xc3, 0xa9, 0x0a, 0xfe]));
  });
});

describe("formatNumbered", () => {
  it("formats cat -n style", () => {
    expect(core.formatNumbered("a\nb", 1)).toBe("     1\ta\n     2\tb");
    expect(core.formatNumbered("x", 123456)).toBe("123456\tx");
  });

  it("splits lines over 5000 characters into N.1, N.2 rows", () => {
    const out = core.formatNumbered(`short\n${"😀".repeat(12_000)}`, 1).split("\n");
    expect(out.map((r) => r.split("\t")[0]?.trim())).toEqual(["1", "2.1", "2.2", "2.3"]);
    expect([...(out[3]?.split("\t")[1] ?? "")].length).toBe(2000);
  });
});

describe("estimateTokensEach", () => {
  it("counts each text as estimateTokens does, in order, in one call", () => {
    const texts = ["", "hello world", "😀 emoji and CJK 中文字", "x".repeat(70_000), '{"json": [1, 2, 3]}'];
    const each = core.estimateTokensEach(texts);
    expect(each).toEqual(texts.map((t) => core.estimateTokens(t)));
    expect(each[0]).toBe(0);
    expect(each[3]).toBeGreaterThan(1000);
    expect(core.estimateTokensEach([])).toEqual([]);
  });

  it("refuses what is not a list of strings with invalid_argument", () => {
    for (const bad of [["a", 1], "abc", null, [undefined]]) {
      expect(() => core.estimateTokensEach(bad as unknown as string[])).toThrow(expect.objectContaining({ code: "invalid_argument" }));
    }
  });
});

describe("scale", () => {
  it("lists one directory of a 20,000-file table and finds planted tokens", () => {
    const t = core.createFileTable();
    for (let i = 0; i < 20_000; i++) {
      t.write(`/repo/d${i % 100}/f${i}.txt`, i % 1000 === 0 ? "x RARE_TOKEN y\n" : "plain text\n");
    }
    expect(t.ls("/repo").entries?.length).toBe(100);
    expect(t.ls("/repo/d7").entries?.length).toBe(200);
    const hits = t.grep({ pattern: "RARE_TOKEN", outputMode: "files_with_matches" });
    expect(hits.files?.length).toBe(20);
    expect(t.glob({ pattern: "**/f1999?.txt" }).files?.length).toBe(10);
    t.dispose();
  });
});

describe("snapshots and helpers", () => {
  it("restores a table from its snapshot, bytes and versions intact", () => {
    const t = tableWith({ "/a/b.txt": "héllo\n", "/bin": new Uint8Array([0, 255, 1]) });
    const version = t.stat("/a/b.txt").info?.version;
    const back = core.restoreFileTable(t.snapshot());
    expect(back.readBytes("/bin")).toEqual(new Uint8Array([0, 255, 1]));
    expect(back.read("/a/b.txt").content).toBe("héllo");
    expect(back.stat("/a/b.txt").info?.version).toBe(version);
    expect(back.ls("/").entries?.map((e) => e.path)).toEqual(["/a/", "/bin"]);
    expect(back.write("/a/b.txt", "x").version).not.toBe(version);
  });

  it("refuses a corrupt snapshot with a typed error", () => {
    const snap = tableWith({ "/x": "data" }).snapshot();
    expect(() => core.restoreFileTable(snap.slice(0, snap.length - 1))).toThrow(EngramError);
    expect(() => core.restoreFileTable(new Uint8Array([1, 2, 3]))).toThrow(/corrupt snapshot/);
  });

  it("applies deltas, and refuses a damaged one with a typed error", () => {
    const t = tableWith({ "/x": "data" });
    const base = t.snapshot();
    const mark = t.mark();
    t.write("/y", "more");
    const delta = t.deltaSince(mark) as Uint8Array;
    expect(core.restoreFileTable(core.applyFileDeltas(base, [delta])).read("/y").content).toBe("more");
    const damaged = () => core.applyFileDeltas(base, [delta.slice(0, delta.length - 1)]);
    expect(damaged).toThrow(EngramError);
    expect(damaged).toThrow(expect.objectContaining({ code: expect.any(String), message: expect.stringMatching(/\S/) }));
    expect(() => core.applyFileDeltas(base.slice(0, 3), [delta])).toThrow(EngramError);
  });

  it("gives canonical error data and glob filtering", () => {
    expect(core.errorData("file_not_found", "/x")).toEqual({ code: "file_not_found", message: "File not found: '/x'", subject: "/x" });
    expect(core.filterPaths("glob", "**/*.md", "/m", ["/m/a.md", "/m/b/c.md", "/x.md"]).paths).toEqual(["/m/a.md", "/m/b/c.md"]);
    expect(core.filterPaths("grep", "*.md", "/", ["/a/b.md", "/c.txt"]).paths).toEqual(["/a/b.md"]);
    expect(core.filterPaths("glob", "[", "/", []).error?.code).toBe("invalid_pattern");
  });
});
