/**
 * A file table's remembered answers (small whole-file reads and stats, answered again without
 * crossing into the core): after any sequence of calls they equal the answers of a table that
 * remembers nothing (a fresh table restored from a snapshot of the same files), on both cores.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { type Core, loadCore } from "../src/index.js";
import type { CoreFileTable } from "../src/kit.js";
import { prng } from "../src/testing/api.js";

let core: Core;

beforeAll(async () => {
  core = await loadCore();
});

/** What a caller sees of a path: the whole-file read and the stat. */
function seen(t: CoreFileTable, path: string) {
  return { read: t.read(path), stat: t.stat(path) };
}

/** The same files in a fresh table, which has remembered nothing yet. */
function fresh(t: CoreFileTable): CoreFileTable {
  return core.restoreFileTable(t.snapshot());
}

describe("remembered reads and stats", () => {
  it("a write, edit, append, delete or writeMany is seen by the next read and stat", () => {
    const t = core.createFileTable();
    t.write("/m.md", "one\n", { modifiedAt: 1 });
    expect(seen(t, "/m.md").read.content).toBe("one");
    const v1 = t.stat("/m.md").info?.version;
    t.write("/m.md", "two\n", { modifiedAt: 2 });
    expect(t.read("/m.md").content).toBe("two");
    expect(t.stat("/m.md").info).toMatchObject({ modifiedAt: 2, size: 4 });
    expect(t.stat("/m.md").info?.version).not.toBe(v1);
    t.edit({ path: "/m.md", oldString: "two", newString: "three" });
    expect(t.read("/m.md").content).toBe("three");
    t.append("/m.md", "four\n");
    expect(t.read("/m.md")).toEqual({ content: "three\nfour", totalLines: 2, offset: 0, lines: 2 });
    t.writeMany([["/m.md", "five"]]);
    expect(t.read("/m.md").content).toBe("five");
    t.delete("/m.md");
    expect(t.read("/m.md").error?.code).toBe("file_not_found");
    expect(t.stat("/m.md").error?.code).toBe("file_not_found");
  });

  it("a failed change leaves the remembered answers right (nothing changed), a refused one too", () => {
    const t = core.createFileTable();
    t.write("/a", "alpha");
    expect(t.read("/a").content).toBe("alpha");
    // All or nothing: the batch fails on its last path, so /a keeps its old text.
    expect(
      t.writeMany([
        ["/a", "changed"],
        ["/a/below", "x"],
      ]).error,
    ).toBeDefined();
    expect(t.read("/a").content).toBe("alpha");
    expect(t.edit({ path: "/a", oldString: "nope", newString: "x" }).error?.code).toBe("string_not_found");
    expect(t.write("/a", "stale", { ifVersion: "0" }).error).toBeDefined();
    expect(seen(t, "/a")).toEqual(seen(fresh(t), "/a"));
  });

  it("results are copies: changing one does not change the next answer", () => {
    const t = core.createFileTable();
    t.write("/x", "text\n");
    const r = t.read("/x");
    const s = t.stat("/x");
    (r as { content: string }).content = "mutated";
    (s.info as { size: number }).size = -1;
    expect(t.read("/x").content).toBe("text");
    expect(t.stat("/x").info?.size).toBe(5);
  });

  it("paged reads, large files and more paths than it keeps are answered by the core", () => {
    const t = core.createFileTable();
    const big = "line\n".repeat(10_000);
    t.write("/big", big);
    expect(t.read("/big").lines).toBe(10_000);
    t.append("/big", "tail\n");
    expect(t.read("/big").totalLines).toBe(10_001);
    expect(t.read("/big", { offset: 5, limit: 2 })).toEqual({ content: "line\nline", totalLines: 10_001, offset: 5, lines: 2 });
    for (let i = 0; i < 200; i++) t.write(`/f/${i}`, `file ${i}`);
    for (let i = 0; i < 200; i++) expect(t.read(`/f/${i}`).content).toBe(`file ${i}`);
    t.write("/f/3", "rewritten");
    for (let i = 0; i < 200; i++) expect(t.read(`/f/${i}`).content).toBe(i === 3 ? "rewritten" : `file ${i}`);
  });

  it("after any random sequence of calls, answers equal a table that remembers nothing", () => {
    const next = prng(0x5eed);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)] as T;
    const paths = ["/a", "/b", "/d/c", "/d/e", "/d", "/a/../b", "//a"];
    const texts = ["", "x", "x\ny\n", "é😀\n", "MARK\n"];
    const t = core.createFileTable();
    for (let step = 0; step < 600; step++) {
      const path = pick(paths);
      switch (pick(["write", "edit", "append", "delete", "many", "read", "stat", "read", "stat"] as const)) {
        case "write":
          t.write(path, pick(texts), { modifiedAt: step });
          break;
        case "edit":
          t.edit({ path, oldString: "x", newString: pick(texts), replaceAll: next() < 0.5, modifiedAt: step });
          break;
        case "append":
          t.append(path, pick(texts), { modifiedAt: step });
          break;
        case "delete":
          t.delete(path);
          break;
        case "many":
          t.writeMany(
            [
              [path, pick(texts)],
              [pick(paths), pick(texts)],
            ],
            { modifiedAt: step },
          );
          break;
        default:
          // Asked (and remembered) now; compared below after the next change.
          seen(t, path);
      }
      if (step % 3 === 0) {
        const oracle = fresh(t);
        for (const p of paths) expect(seen(t, p), `step ${step}, ${p}`).toEqual(seen(oracle, p));
      }
    }
  });
});
