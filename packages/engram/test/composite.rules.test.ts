/**
 * The composite's two rules that live in the core (crates/engram-core/src/composite/): a
 * mount's error rendered again for the outer path from its structure (never by editing the
 * message text), and grep/glob fan-out answers merged in path order under one ceiling.
 */
import { describe, expect, it } from "vitest";
import * as engram from "../src/index.js";
import type { Backend, ErrorData } from "../src/index.js";

const { CompositeBackend, InMemoryStore, StateBackend, StoreBackend } = engram;
/** The core ENGRAM_CORE selects (the suite runs once per core). */
const core = await engram.loadCore();

/** A user's backend over a StateBackend whose errors are replaced by `fail(path)`. */
function custom(fail: (path: string) => ErrorData): Backend {
  const inner = new StateBackend({ core });
  return new Proxy(inner, {
    get(target, key) {
      if (key === "read") return async (path: string) => ({ error: fail(path) });
      const v = Reflect.get(target, key, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

describe("errors of mounted backends name the outer path", () => {
  it("keeps paths with quotes, regex and replacement metacharacters intact", async () => {
    const c = new CompositeBackend(new StateBackend({ core }), { "/m": new StateBackend({ core }) }, { core });
    // `$&` and `$'` are special in String.prototype.replace; `'` is escaped in messages.
    for (const name of ["a(.*)+[x]{2}.md", "x$&y$'z$1.md", "it's.md", "é\u{1F600}.md"]) {
      const outer = `/m/${name}`;
      const e = (await c.read(outer)).error;
      expect(e).toEqual(core.errorData("file_not_found", outer));
      expect(e?.subject).toBe(outer);
    }
  });

  it("moves only the subject when the inner path also appears in the detail", async () => {
    const c = new CompositeBackend(
      new StateBackend({ core }),
      {
        "/m/": custom((path) => core.errorData("unsupported", path, `'${path}' is a special file`)),
      },
      { core },
    );
    const e = (await c.read("/m/x")).error;
    expect(e?.message).toBe("Unsupported: '/x' is a special file ('/m/x')");
    expect(e).toMatchObject({ code: "unsupported", subject: "/m/x", detail: "'/x' is a special file" });
  });

  it("renders errors through nested composites, each level adding its prefix", async () => {
    const store = new StoreBackend({ store: new InMemoryStore(), namespace: ["notes"], core });
    const team = new CompositeBackend(new StateBackend({ core }), { "/notes/": store }, { core });
    const c = new CompositeBackend(new StateBackend({ core }), { "/team/": team }, { core });
    await c.write("/team/notes/d/f.txt", "x");
    expect((await c.read("/team/notes/missing (1).md")).error).toEqual(core.errorData("file_not_found", "/team/notes/missing (1).md"));
    expect((await c.read("/team/notes/d")).error?.message).toBe("Is a directory: '/team/notes/d'");
    const below = (await c.write("/team/notes/d/f.txt/g", "x")).error;
    expect(below).toMatchObject({ code: "invalid_path", subject: "/team/notes/d/f.txt/g" });
    expect((await c.edit("/team/notes/d/f.txt", "nope", "y")).error?.message).toBe("String not found in file: '/team/notes/d/f.txt'");
  });

  it("gives a custom backend's { code, message } the canonical error for the path asked about", async () => {
    const answers: Record<string, ErrorData> = {
      "/gone.md": { code: "file_not_found", message: "no such key" },
      "/ro.md": { code: "permission_denied", message: "read-only mount" },
      "/twice.md": { code: "multiple_matches", message: "ambiguous" },
      "/pattern": { code: "invalid_pattern", message: "bad pattern [" },
      "/teapot": { code: "teapot" as ErrorData["code"], message: "I'm a teapot" },
    };
    const c = new CompositeBackend(new StateBackend({ core }), { "/u/": custom((p) => answers[p] as ErrorData) }, { core });
    expect((await c.read("/u/gone.md")).error).toEqual(core.errorData("file_not_found", "/u/gone.md"));
    expect((await c.read("/u/ro.md")).error).toEqual(core.errorData("permission_denied", "/u/ro.md", "read-only mount"));
    expect((await c.read("/u/twice.md")).error?.message).toMatch(/^String appears several times in '\/u\/twice\.md'/);
    // A pattern is the same inside and outside the mount; an unknown code cannot be rendered.
    expect((await c.read("/u/pattern")).error).toEqual(answers["/pattern"]);
    expect((await c.read("/u/teapot")).error).toEqual(answers["/teapot"]);
  });
});

describe("fan-out merge", () => {
  async function threeMounts() {
    const main = new StateBackend({ core });
    const m = new StoreBackend({ store: new InMemoryStore(), namespace: ["m"], core });
    const c = new CompositeBackend(main, { "/z": new StateBackend({ core }), "/m": m, "/a": new StateBackend({ core }) }, { core });
    // Hidden behind the /m route: never part of an answer.
    await main.write("/m/hidden.md", "x\n");
    const files: Record<string, string> = {
      "/y.md": "x\n",
      "/b.md": "x\nmid\nx\n",
      "/a/1.md": "x\nx\n",
      "/m/x.md": "x\n",
      "/m/n/deep.md": "x\n",
      "/z/q.md": "x\n",
    };
    for (const [p, text] of Object.entries(files)) expect((await c.write(p, text)).error).toBeUndefined();
    return c;
  }

  it("orders content across three mounts and the default, under one ceiling", async () => {
    const c = await threeMounts();
    const all = await c.grep("x");
    expect(all.matches?.map((m) => `${m.path}:${m.line}`)).toEqual([
      "/a/1.md:1",
      "/a/1.md:2",
      "/b.md:1",
      "/b.md:3",
      "/m/n/deep.md:1",
      "/m/x.md:1",
      "/y.md:1",
      "/z/q.md:1",
    ]);
    expect(all.truncated).toBe(false);
    const capped = await c.grep("x", { maxCount: 5, context: 1 });
    // Context lines are kept and not counted; the ceiling cuts inside the /m mount.
    expect(capped.matches?.map((m) => `${m.path}:${m.line}${m.context ? "c" : ""}`)).toEqual([
      "/a/1.md:1",
      "/a/1.md:2",
      "/b.md:1",
      "/b.md:2c",
      "/b.md:3",
      "/m/n/deep.md:1",
    ]);
    expect(capped.truncated).toBe(true);
  });

  it("merges files and counts with one ceiling, and filters mounts by a path glob", async () => {
    const c = await threeMounts();
    const files = await c.grep("x", { outputMode: "files_with_matches", maxCount: 3 });
    expect(files).toEqual({ files: ["/a/1.md", "/b.md", "/m/n/deep.md"], truncated: true });
    const counts = await c.grep("x", { outputMode: "count" });
    expect(counts).toEqual({
      counts: { "/a/1.md": 2, "/b.md": 2, "/m/n/deep.md": 1, "/m/x.md": 1, "/y.md": 1, "/z/q.md": 1 },
      truncated: false,
    });
    expect(Object.keys(counts.counts ?? {})).toEqual(["/a/1.md", "/b.md", "/m/n/deep.md", "/m/x.md", "/y.md", "/z/q.md"]);
    expect((await c.grep("x", { outputMode: "files_with_matches", glob: "m/*.md" })).files).toEqual(["/m/x.md"]);
    expect((await c.grep("x", { outputMode: "files_with_matches", glob: "*.md", path: "/m" })).files).toEqual(["/m/n/deep.md", "/m/x.md"]);
    expect((await c.grep("x", { glob: "m/[z" })).error?.code).toBe("invalid_pattern");
  });

  it("merges glob answers in path order with one maxResults", async () => {
    const c = await threeMounts();
    const all = await c.glob("**/*.md");
    expect(all.files?.map((f) => f.path)).toEqual(["/a/1.md", "/b.md", "/m/n/deep.md", "/m/x.md", "/y.md", "/z/q.md"]);
    // Each file keeps its own metadata through the merge.
    const sizes: Record<string, number> = { "/a/1.md": 4, "/b.md": 8 };
    for (const f of all.files ?? []) expect(f).toMatchObject({ isDir: false, size: sizes[f.path] ?? 2, version: expect.any(String) });
    const capped = await c.glob("**/*.md", { maxResults: 3 });
    expect(capped).toMatchObject({ truncated: true });
    expect(capped.files?.map((f) => f.path)).toEqual(["/a/1.md", "/b.md", "/m/n/deep.md"]);
    expect((await c.glob("/m/**", { path: "/z" })).files?.map((f) => f.path)).toEqual([]);
    expect((await c.glob("*.md", { path: "/m" })).files?.map((f) => f.path)).toEqual(["/m/x.md"]);
  });
});

describe("listings", () => {
  it("add each route's first directory once, hide shadowed entries and keep the default's own", async () => {
    const main = new StateBackend({ core });
    const c = new CompositeBackend(
      main,
      { "/a/b": new StateBackend({ core }), "/a/c/": new StateBackend({ core }), "/m": new StateBackend({ core }) },
      { core },
    );
    await main.write("/a/own.md", "x");
    await main.write("/m/hidden.md", "x");
    await main.write("/mX.md", "x");
    await c.write("/a/b/in.md", "x");
    expect((await c.ls("/")).entries?.map((e) => e.path)).toEqual(["/a/", "/m/", "/mX.md"]);
    expect((await c.ls("/a")).entries?.map((e) => e.path)).toEqual(["/a/b/", "/a/c/", "/a/own.md"]);
    expect((await c.ls("/a/b")).entries).toEqual([expect.objectContaining({ path: "/a/b/in.md", isDir: false, size: 1 })]);
    expect((await c.ls("/m")).entries).toEqual([]);
    expect((await c.stat("/a/b/in.md")).info).toMatchObject({ path: "/a/b/in.md", isDir: false });
    expect((await c.stat("/a/c")).info).toMatchObject({ path: "/a/c/", isDir: true });
    // Only mounted below: the default backend has no /x, yet /x/ exists.
    const d = new CompositeBackend(new StateBackend({ core }), { "/x/y/": new StateBackend({ core }) }, { core });
    expect((await d.stat("/x")).info).toEqual({ path: "/x/", isDir: true });
    expect((await d.ls("/x")).entries).toEqual([{ path: "/x/y/", isDir: true }]);
    expect((await d.ls("/nope")).error).toEqual(core.errorData("file_not_found", "/nope"));
  });
});
