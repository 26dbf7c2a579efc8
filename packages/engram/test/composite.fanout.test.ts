/**
 * Composite grep and glob over core-resident backends (State tables, Store mirrors) run as one
 * fan-out in the core (crates/engram-core/src/composite/: GlobFanOut, GrepFanOut), and `ls`
 * of a State backend's directory as one call (ls_table). On random
 * mount layouts — nested routes, Filesystem mounts mixed in, errors — the answers, errors and
 * tool texts must equal those of the per-backend path (the same backends without their
 * capabilities, which the composite then asks through their own methods).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import * as engram from "../src/index.js";
import type { Backend } from "../src/index.js";
import type { ToolTextRequest } from "../src/kit.js";
import { CAPABILITIES } from "../src/backends/capabilities.js";
import { wrapBackend } from "../src/backends/wrap.js";
import { prng } from "../src/testing/api.js";
import { toolText } from "../src/tools/format.js";

const { CompositeBackend, FilesystemBackend, InMemoryStore, StateBackend, StoreBackend } = engram;
/** The core ENGRAM_CORE selects (the suite runs once per core). */
const core = await engram.loadCore();

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Seeded choices (the testing kit's PRNG): the same layouts on every run and both cores. */
function rng(seed: number) {
  const next = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)] as T;
  return { next, pick };
}

const PREFIXES = ["/a/", "/a/b/", "/m/", "/x/y/", "/fs/"];
const FILES = ["/n.md", "/b/k.md", "/b/c.txt", "/d/e/f.md", "/y/q.md", "/k.txt", "/a/b/g.md", "/m/z.md", "/fs/w.md", "/x/y/v.txt"];
const ROOTS = ["/", "/a", "/a/b", "/m", "/x", "/x/y", "/b", "/nowhere", "/fs", "/m/b", "/a/missing"];
const GLOBS = ["**/*.md", "*", "b/*", "/a/**", "**", "*.txt", "b/**/*.md", "../x/*", "/m/*.md", "y/[q-z].md", "**/{k,n}.*", "/**/*.txt"];
const PATTERNS = ["alpha", "beta 2", "gamma", "zzz", "a(", "^alpha"];

type Kind = "state" | "store" | "fs";

function backend(kind: Kind): Backend {
  if (kind === "state") return new StateBackend({ core });
  if (kind === "store") return new StoreBackend({ store: new InMemoryStore(), namespace: ["n"], core });
  const dir = mkdtempSync(join(tmpdir(), "engram-fanout-"));
  dirs.push(dir);
  return new FilesystemBackend({ rootDir: dir, core });
}

/** `backend` without its capabilities (a resident table or mirror, its tool text): a composite
 * asks it through its methods, the per-backend path. */
function perBackend(backend: Backend): Backend {
  const hidden = new Set<PropertyKey>(CAPABILITIES);
  return new Proxy(backend, {
    get(target, key) {
      if (hidden.has(key)) return undefined;
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** A random layout: the composite, and the same backends without their capabilities (the
 * per-backend path). */
async function layout(seed: number, kinds: readonly Kind[]) {
  const r = rng(seed);
  const defaultBackend = backend(r.next() < 0.85 ? "state" : r.pick(kinds));
  const routes: Record<string, Backend> = {};
  for (const p of PREFIXES) if (r.next() < 0.45) routes[p] = backend(r.pick(kinds));
  const fast = new CompositeBackend(defaultBackend, routes, { core });
  const plain = Object.fromEntries(Object.entries(routes).map(([p, b]) => [p, perBackend(b)]));
  const slow = new CompositeBackend(perBackend(defaultBackend), plain, { core });
  const n = 1 + Math.floor(r.next() * 12);
  for (let i = 0; i < n; i++) {
    const p = `${r.pick(ROOTS.filter((d) => d !== "/nowhere"))}${r.pick(FILES)}`.replace(/^\/\//, "/");
    const v = Math.floor(r.next() * 4);
    // Some writes fail (a file where a directory is): both composites see the same files.
    await fast.write(p, `alpha ${i}\nbeta ${v}\nalpha beta\n${"gamma ".repeat(v)}\n`);
  }
  return { fast, slow, r };
}

async function compare(seed: number, kinds: readonly Kind[], calls: number) {
  const { fast, slow, r } = await layout(seed, kinds);
  for (let i = 0; i < calls; i++) {
    const path = r.pick(ROOTS);
    const where = `seed ${seed} call ${i}`;
    const which = r.next();
    if (which < 0.2) {
      const dir = r.pick([...ROOTS, "/a/b/g.md", "/m/z.md", "/memories", "/a/"]);
      expect(await fast.ls(dir), `${where}: ls ${dir}`).toEqual(await slow.ls(dir));
      expect(await fast.stat(dir), `${where}: stat ${dir}`).toEqual(await slow.stat(dir));
    } else if (which < 0.6) {
      const pattern = r.pick(GLOBS);
      const maxResults = r.next() < 0.3 ? Math.floor(r.next() * 4) : undefined;
      const options = { path, ...(maxResults !== undefined && { maxResults }) };
      expect(await fast.glob(pattern, options), `${where}: glob ${pattern} ${JSON.stringify(options)}`).toEqual(
        await slow.glob(pattern, options),
      );
      const request: ToolTextRequest = { op: "glob", pattern, path };
      expect(await toolText(fast, core, request, 120), `${where}: glob text`).toEqual(await toolText(slow, core, request, 120));
    } else {
      const pattern = r.pick(PATTERNS);
      const options = {
        path,
        regex: r.next() < 0.4,
        outputMode: r.pick(["content", "files_with_matches", "count"] as const),
        ...(r.next() < 0.3 && { maxCount: Math.floor(r.next() * 5) }),
        ...(r.next() < 0.3 && { context: 1 }),
        ...(r.next() < 0.3 && { glob: r.pick(["*.md", "b/*.md", "**/*.txt"]) }),
      };
      expect(await fast.grep(pattern, options), `${where}: grep ${pattern} ${JSON.stringify(options)}`).toEqual(
        await slow.grep(pattern, options),
      );
      const request: ToolTextRequest = { op: "grep", pattern, options };
      // Small caps make the fan-out stop each source early (made for its text alone).
      const chars = r.pick([30, 200, 2000]);
      expect(await toolText(fast, core, request, chars), `${where}: grep text ${chars}`).toEqual(
        await toolText(slow, core, request, chars),
      );
    }
  }
}

describe("composite fan-out over resident backends", () => {
  it("answers as the per-backend path on random State/Store layouts", async () => {
    for (let seed = 1; seed <= 40; seed++) await compare(seed, ["state", "store"], 12);
  });

  it("answers as the per-backend path with Filesystem mounts mixed in", async () => {
    for (let seed = 101; seed <= 120; seed++) await compare(seed, ["state", "store", "fs"], 10);
  });

  it("asks no resident backend through its own grep or glob", async () => {
    const grep = vi.spyOn(StoreBackend.prototype, "grep");
    const glob = vi.spyOn(StateBackend.prototype, "glob");
    try {
      const store = new StoreBackend({ store: new InMemoryStore(), namespace: ["m"], core });
      const c = new CompositeBackend(new StateBackend({ core }), { "/memories/": store }, { core });
      await c.write("/memories/a.md", "alpha\n");
      await c.write("/src/b.md", "alpha\n");
      expect((await c.grep("alpha", { outputMode: "files_with_matches" })).files).toEqual(["/memories/a.md", "/src/b.md"]);
      expect((await c.glob("**/*.md")).files?.map((f) => f.path)).toEqual(["/memories/a.md", "/src/b.md"]);
      // The Store mount's version is its store revision, as its own glob gives it.
      const [viaComposite] = (await c.glob("/memories/*.md")).files ?? [];
      const own = await store.stat("/a.md");
      expect(viaComposite?.version).toBe(own.info?.version ?? "no version");
      expect(grep).not.toHaveBeenCalled();
      expect(glob).not.toHaveBeenCalled();
      expect((await c.toolText({ op: "grep", pattern: "alpha", options: {} }, 1000))?.text).toBe(
        "/memories/a.md:\n  1: alpha\n/src/b.md:\n  1: alpha",
      );
    } finally {
      grep.mockRestore();
      glob.mockRestore();
    }
  });

  it("globs mounts whose paths fill several boundary chunks, each file with its own metadata", async () => {
    const big = new StateBackend({ core });
    const store = new StoreBackend({ store: new InMemoryStore(), namespace: ["m"], core });
    const c = new CompositeBackend(new StateBackend({ core }), { "/big/": big, "/store/": store }, { core });
    const expected = new Map<string, { size: number; version: string }>();
    for (let i = 0; i < 2_000; i++) {
      const inner = `/dir-${i % 7}/ファイル-${String(i).padStart(5, "0")}-${"z".repeat(i % 30)}.md`;
      const w = await big.write(inner, "q".repeat(i % 13));
      expected.set(`/big${inner}`, { size: i % 13, version: w.version as string });
    }
    for (let i = 0; i < 300; i++) {
      const w = await store.write(`/s-${i}.md`, "é".repeat(i % 5));
      expected.set(`/store/s-${i}.md`, { size: 2 * (i % 5), version: w.version as string });
    }
    const files = (await c.glob("**/*.md")).files ?? [];
    expect(files.map((f) => f.path)).toEqual([...expected.keys()].sort());
    for (const f of files) expect({ size: f.size, version: f.version }, f.path).toEqual(expected.get(f.path));
  });

  it("leaves a wrapped or overridden backend to its own methods", async () => {
    const inner = new StateBackend({ core });
    await inner.write("/a.md", "alpha\n");
    const seen: string[] = [];
    const filtered = wrapBackend(inner, {
      grep: async (pattern) => {
        seen.push(pattern);
        return { files: [], truncated: false };
      },
    });
    const c = new CompositeBackend(new StateBackend({ core }), { "/m/": filtered }, { core });
    expect((await c.grep("alpha", { outputMode: "files_with_matches" })).files).toEqual([]);
    expect(seen).toEqual(["alpha"]);
    expect(await c.toolText({ op: "grep", pattern: "alpha", options: {} }, 100)).toBeUndefined();
  });

  it("lists a State backend's directory without asking its own ls", async () => {
    const ls = vi.spyOn(StateBackend.prototype, "ls");
    try {
      const c = new CompositeBackend(
        new StateBackend({ core }),
        { "/m/": new StateBackend({ core }), "/a/b/": new StateBackend({ core }) },
        { core },
      );
      await c.write("/a/x.md", "x");
      await c.write("/m/d/y.md", "y");
      expect((await c.ls("/a")).entries?.map((e) => e.path)).toEqual(["/a/b/", "/a/x.md"]);
      expect((await c.ls("/m")).entries).toEqual([{ path: "/m/d/", isDir: true }]);
      expect((await c.ls("/m/nope")).error).toEqual(core.errorData("file_not_found", "/m/nope"));
      expect(ls).not.toHaveBeenCalled();
    } finally {
      ls.mockRestore();
    }
  });

  it("caps a grep with a path glob after filtering the mounts' files, on both paths", async () => {
    for (const wrap of [false, true]) {
      const mount = new StateBackend({ core });
      await mount.write("/a.md", "alpha\n");
      await mount.write("/b/c.md", "alpha\n");
      const c = new CompositeBackend(new StateBackend({ core }), { "/m/": wrap ? perBackend(mount) : mount }, { core });
      // The mount's first match (/m/a.md) is not admitted: the cap must not hide /m/b/c.md.
      const r = await c.grep("alpha", { glob: "m/b/*.md", maxCount: 1, outputMode: "files_with_matches" });
      expect(r, wrap ? "per backend" : "fan-out").toEqual({ files: ["/m/b/c.md"], truncated: false });
    }
  });

  it("cuts a capped grep with context where one tree does: every mount kind, both paths", async () => {
    const files: Record<string, string> = {
      "/a.md": "intro\nhit a1\nmid\nhit a2\n",
      "/f/d.md": "lead\nlead 2\nhit d1\n",
      "/m/b.md": "hit b1\nafter\n\nbefore\nhit b2\n",
      "/s/c.md": "ctx\nhit c1\n",
      "/z.md": "top\nhit z1\nbottom\n",
    };
    const flat = new StateBackend({ core });
    for (const [p, c] of Object.entries(files)) await flat.write(p, c);
    const layouts = {
      resident: () => ({ "/m/": backend("state"), "/s/": backend("store"), "/f/": backend("store") }),
      "with a Filesystem mount": () => ({ "/m/": backend("state"), "/s/": backend("store"), "/f/": backend("fs") }),
      "per backend": () => ({ "/m/": perBackend(backend("state")), "/s/": backend("store"), "/f/": backend("fs") }),
    };
    for (const [name, routes] of Object.entries(layouts)) {
      const own = new StateBackend({ core });
      // Hidden by routes: never shown, never counted toward the cap, never `truncated`.
      await own.write("/f/0.md", "hit hidden\n");
      await own.write("/m/0.md", "hit hidden\nhit hidden\n");
      const c = new CompositeBackend(own, routes(), { core });
      for (const [p, text] of Object.entries(files)) expect((await c.write(p, text)).error).toBeUndefined();
      for (const path of ["/", "/m", "/f"]) {
        for (const outputMode of ["content", "files_with_matches", "count"] as const) {
          for (const maxCount of [0, 1, 2, 3, 4, 6, 7, 8, 9, undefined]) {
            for (const context of [0, 1, 2]) {
              const options = { path, outputMode, context, ...(maxCount !== undefined && { maxCount }) };
              const where = `${name}: ${JSON.stringify(options)}`;
              expect(await c.grep("hit", options), where).toEqual(await flat.grep("hit", options));
              const request: ToolTextRequest = { op: "grep", pattern: "hit", options };
              expect(await toolText(c, core, request, 2000), `${where} (text)`).toEqual(await toolText(flat, core, request, 2000));
            }
          }
        }
      }
    }
  });

  it("counts no hidden file of the default backend toward the cap, on both paths", async () => {
    for (const wrap of [false, true]) {
      const own = new StateBackend({ core });
      await own.write("/memories/a.md", "hit\n");
      const mount = new StateBackend({ core });
      await mount.write("/x.md", "miss\n");
      const c = new CompositeBackend(wrap ? perBackend(own) : own, { "/memories/": mount }, { core });
      const where = wrap ? "per backend" : "fan-out";
      for (const outputMode of ["content", "files_with_matches", "count"] as const) {
        expect((await c.grep("hit", { maxCount: 0, outputMode })).truncated, `${where} ${outputMode}`).toBe(false);
      }
      await own.write("/z.md", "hit\n");
      expect(await c.grep("hit", { maxCount: 1 }), where).toEqual({ matches: [{ path: "/z.md", line: 1, text: "hit" }], truncated: false });
      expect(await c.grep("hit", { maxCount: 0, outputMode: "files_with_matches" }), where).toEqual({ files: [], truncated: true });
    }
  });

  it("names the outer path in a mount's error", async () => {
    const c = new CompositeBackend(new StateBackend({ core }), { "/m/": new StateBackend({ core }) }, { core });
    expect((await c.grep("x", { path: "/m/missing" })).error).toEqual(core.errorData("file_not_found", "/m/missing"));
    const text = await c.toolText({ op: "grep", pattern: "x", options: { path: "/m/missing" } }, 100);
    expect(text?.error).toEqual(core.errorData("file_not_found", "/m/missing"));
  });
});
