/**
 * The composite's per-call routing keeps the router's answer per input path, and the core
 * wrapper keeps normalised paths: both are the core's own answers, so repeated calls, other
 * spellings of one path, hostile paths and more paths than either keeps must route exactly as
 * the router says, errors included.
 */
import { describe, expect, it } from "vitest";
import * as engram from "../src/index.js";
import type { Backend } from "../src/index.js";
import { wrapBackend } from "../src/backends/wrap.js";

const { CompositeBackend, InMemoryStore, StateBackend, StoreBackend } = engram;
/** The core ENGRAM_CORE selects (the suite runs once per core). */
const core = await engram.loadCore();

function setup(defaultBackend: Backend = new StateBackend({ core })) {
  const memories = new StoreBackend({ store: new InMemoryStore(), namespace: ["m"], core });
  const deep = new StateBackend({ core });
  const c = new CompositeBackend(defaultBackend, { "/memories/": memories, "/memories/deep/": deep }, { core });
  return { c, memories, deep, defaultBackend };
}

describe("mount points", () => {
  it("refuses one directory mounted twice: the second mount could not be read, yet a search would show it", async () => {
    for (const [a, b] of [
      ["/m", "/m/"],
      ["//m//", "/x/../m"],
      ["/", "//"],
    ] as const) {
      const shadowed = new StateBackend({ core });
      await shadowed.write("/only-here.txt", "x");
      const c = new CompositeBackend(new StateBackend({ core }), { [a]: new StateBackend({ core }), [b]: shadowed }, { core });
      const refused = { name: "EngramError", code: "invalid_path", message: expect.stringContaining("mounted twice") };
      await expect(c.glob("**")).rejects.toMatchObject(refused);
      await expect(c.grep("x")).rejects.toMatchObject(refused);
      await expect(c.read("/m/only-here.txt")).rejects.toMatchObject(refused);
    }
    expect(() => core.createRouter(["/m", "/m/"])).toThrow(expect.objectContaining({ code: "invalid_path" }));
    expect(core.createRouter(["/m", "/m/n", "/mn"]).prefixes).toEqual(["/m/", "/m/n/", "/mn/"]);
  });
});

describe("routing per input path", () => {
  it("routes every spelling of a path as the router does, call after call", async () => {
    const { c, memories, deep } = setup();
    await c.write("/memories/a.md", "A");
    await c.write("/memories/deep/b.md", "B");
    await c.write("/memoriesX/c.md", "C");
    for (let round = 0; round < 3; round++) {
      for (const p of ["/memories/a.md", "/memories//a.md", "/x/../memories/./a.md", "memories/a.md"]) {
        expect((await c.read(p)).content, p).toBe("A");
      }
      for (const p of ["/memories/deep/b.md", "/memories/deep//b.md", "/memories/x/../deep/b.md"]) {
        expect((await c.read(p)).content, p).toBe("B");
      }
      expect((await c.read("/memoriesX/c.md")).content).toBe("C");
    }
    expect((await memories.read("/a.md")).content).toBe("A");
    expect((await deep.read("/b.md")).content).toBe("B");
    expect((await memories.read("/deep/b.md")).error?.code).toBe("file_not_found");
  });

  it("splits non-ASCII paths where the router does (the inner path crosses as an offset)", async () => {
    const inner = new StateBackend({ core });
    const c = new CompositeBackend(new StateBackend({ core }), { "/mémoires/😀/": inner, "/": new StateBackend({ core }) }, { core });
    await c.write("/mémoires/😀//x/é\u{1F600}.md", "A");
    expect((await inner.read("/x/é\u{1F600}.md")).content).toBe("A");
    expect((await c.write("/mémoires/😀", "x")).error?.code).toBe("is_directory");
    expect((await c.ls("/mémoires/😀")).entries?.map((e) => e.path)).toEqual(["/mémoires/😀/x/"]);
    const r = core.createRouter(["/mémoires/😀/"]).route("/mémoires/😀/a/../ü");
    expect(r).toEqual({ route: 0, prefix: "/mémoires/😀/", path: "/ü", outer: "/mémoires/😀/ü" });
    expect(core.createRouter(["/mémoires/😀/"]).route("/mémoires/😀")).toEqual({
      route: 0,
      prefix: "/mémoires/😀/",
      path: "/",
      outer: "/mémoires/😀",
    });
    expect(core.createRouter(["/m/"]).route("/ü")).toEqual({ route: null, prefix: null, path: "/ü", outer: "/ü" });
  });

  it("answers paths the router refuses with its error every time", async () => {
    const { c } = setup();
    for (let round = 0; round < 3; round++) {
      expect((await c.read("/memories/../../etc/passwd")).error?.code).toBe("path_escape");
      expect((await c.read("/memories/\uD800.md")).error?.code).toBe("invalid_path");
      expect((await c.write("/../x", "x")).error?.code).toBe("path_escape");
      expect(core.normalizePath("/a/\uDC00").error?.code).toBe("invalid_path");
    }
    await expect(c.read(42 as unknown as string)).rejects.toThrow(engram.EngramError);
  });

  it("stays exact past the number of paths it keeps", async () => {
    const { c } = setup();
    // More distinct paths than the composite (1,024) and the core wrapper (4,096) keep.
    for (let i = 0; i < 5000; i++) {
      const p = i % 2 ? `/memories/n${i % 7}.md` : `/d/${i}/../n${i % 7}.md`;
      const w = await c.write(p, `${i}`);
      expect(w.path, p).toBe(i % 2 ? `/memories/n${i % 7}.md` : `/d/n${i % 7}.md`);
    }
    expect((await c.read("/memories/n1.md")).content).toBe("4999");
    expect((await c.read("/d/n0.md")).content).toBe("4998");
  });

  it("hands out fresh answers: a caller changing one changes no later answer", async () => {
    const { c } = setup();
    await c.write("/memories/a.md", "A");
    const first = core.normalizePath("/memories//a.md");
    (first as { path: string }).path = "/changed";
    expect(core.normalizePath("/memories//a.md")).toEqual({ path: "/memories/a.md" });
    const w = await c.edit("/memories/a.md", "A", "B");
    (w as { path: string }).path = "/changed";
    expect((await c.edit("/memories/a.md", "B", "C")).path).toBe("/memories/a.md");
  });

  it("names the outer path in results and errors of a wrapped default backend", async () => {
    const inner = new StateBackend({ core });
    // A wrapper whose write reports the path in its own way: the composite still names the
    // path it was asked about.
    const odd = wrapBackend(inner, {
      write: async (path, content) => {
        const r = await inner.write(path, content);
        return r.error ? r : { ...r, path: `${r.path}?` };
      },
    });
    const { c } = setup(odd);
    expect((await c.write("/src//a.ts", "x")).path).toBe("/src/a.ts");
    expect((await c.edit("/src/a.ts", "nope", "y")).error?.message).toBe("String not found in file: '/src/a.ts'");
    expect((await c.read("/memories/missing.md")).error).toEqual(core.errorData("file_not_found", "/memories/missing.md"));
  });
});
