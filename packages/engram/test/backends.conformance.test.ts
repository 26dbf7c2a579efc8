/**
 * The backend conformance suite: one list of behaviours, run against every backend directly and
 * mounted behind a CompositeBackend route, on the core ENGRAM_CORE selects.
 */
import { beforeAll, describe, expect, it } from "vitest";
import {
  type Backend,
  CompositeBackend,
  type Core,
  EngramError,
  InMemoryStore,
  StateBackend,
  StoreBackend,
  loadCore,
} from "../src/index.js";
import { backendFactories } from "./fixtures/backends.js";

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});

const enc = new TextEncoder();
const dec = new TextDecoder();

/** `store` with `before(method, args)` awaited ahead of each call of the `watched` methods. */
function watchedStore(
  store: InMemoryStore,
  watched: readonly string[],
  before: (method: string, args: unknown[]) => void | Promise<void>,
): InMemoryStore {
  return new Proxy(store, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (typeof v !== "function") return v;
      if (!watched.includes(String(prop))) return v.bind(target);
      return async (...args: unknown[]) => {
        await before(String(prop), args);
        return v.apply(target, args);
      };
    },
  });
}

for (const factory of backendFactories) {
  describe(`${factory.name} conformance`, () => {
    let b: Backend;
    /** The path a test means, as seen through this backend (prefixed when mounted). */
    const P = (p: string) => (p === "/" ? factory.root || "/" : factory.root + p);
    const fresh = async (files: Record<string, string | Uint8Array> = {}) => {
      b = await factory.create(core);
      for (const [p, c] of Object.entries(files)) {
        const r = await b.write(P(p), c);
        expect(r.error).toBeUndefined();
      }
      return b;
    };
    // A composite's other mount points show up as directories; they are not under test here.
    const paths = (list: { path: string }[] | undefined) => list?.map((x) => x.path).filter((p) => !factory.otherMounts?.includes(p));

    describe("1. round trip", () => {
      it("write → read → edit → ls → grep → glob", async () => {
        await fresh();
        expect(await b.write(P("/notes/a.md"), "hello world\n")).toMatchObject({ path: P("/notes/a.md") });
        expect((await b.read(P("/notes/a.md"))).content).toBe("hello world");
        expect(await b.edit(P("/notes/a.md"), "world", "there")).toMatchObject({ occurrences: 1, path: P("/notes/a.md") });
        expect(paths((await b.ls(P("/notes"))).entries)).toEqual([P("/notes/a.md")]);
        expect((await b.grep("there")).matches).toEqual([{ path: P("/notes/a.md"), line: 1, text: "hello there" }]);
        expect(paths((await b.glob("**/*.md", { path: P("/") })).files)).toEqual([P("/notes/a.md")]);
      });
    });

    describe("2. write", () => {
      it("overwrites, changes the version and creates parents", async () => {
        await fresh({ "/a/b/c.txt": "one" });
        const v1 = (await b.stat(P("/a/b/c.txt"))).info?.version;
        await b.write(P("/a/b/c.txt"), "two");
        const info = (await b.stat(P("/a/b/c.txt"))).info;
        expect(info).toMatchObject({ path: P("/a/b/c.txt"), isDir: false, size: 3 });
        expect(info?.version).not.toBe(v1);
        expect((await b.stat(P("/a/b"))).info).toMatchObject({ isDir: true });
        expect((await b.read(P("/a/b/c.txt"))).content).toBe("two");
      });

      it("compare-and-swap on the version", async () => {
        await fresh();
        const first = await b.write(P("/m.md"), "1", { ifVersion: "0" });
        expect(first.error).toBeUndefined();
        expect((await b.write(P("/m.md"), "x", { ifVersion: "0" })).error?.code).toBe("conflict");
        expect((await b.write(P("/m.md"), "2", { ifVersion: first.version })).error).toBeUndefined();
        expect((await b.write(P("/m.md"), "3", { ifVersion: first.version })).error?.code).toBe("conflict");
        expect((await b.read(P("/m.md"))).content).toBe("2");
      });

      it("refuses directories and file parents", async () => {
        await fresh({ "/d/f.txt": "x" });
        expect((await b.write(P("/d"), "x")).error?.code).toBe("is_directory");
        expect((await b.write(P("/d/f.txt/g"), "x")).error?.code).toBe("invalid_path");
      });
    });

    describe("3. read", () => {
      it("paginates by line", async () => {
        const lines = Array.from({ length: 1000 }, (_, i) => `line ${i}`);
        await fresh({ "/f.txt": `${lines.join("\n")}\n` });
        let seen: string[] = [];
        for (let offset = 0; offset < 1000; offset += 100) {
          const r = await b.read(P("/f.txt"), { offset, limit: 100 });
          expect(r.totalLines).toBe(1000);
          seen = seen.concat((r.content ?? "").split("\n"));
        }
        expect(seen).toEqual(lines);
        expect(await b.read(P("/f.txt"), { offset: 1000, limit: 5 })).toMatchObject({ content: "", lines: 0 });
        expect(await b.read(P("/f.txt"), { offset: 5000 })).toMatchObject({ content: "", totalLines: 1000 });
        expect(await b.read(P("/f.txt"), { offset: 3, limit: 0 })).toMatchObject({ content: "", lines: 0 });
      });

      it("handles empty files, unicode and long lines", async () => {
        const long = "é".repeat(12_000);
        await fresh({ "/empty": "", "/u.txt": `中文 😀 𝄞\n${long}\n` });
        expect(await b.read(P("/empty"))).toMatchObject({ content: "", totalLines: 0 });
        const r = await b.read(P("/u.txt"));
        expect(r.content).toBe(`中文 😀 𝄞\n${long}`);
        expect(
          core
            .formatNumbered(r.content ?? "", 1)
            .split("\n")
            .map((l) => l.split("\t")[0]?.trim()),
        ).toEqual(["1", "2.1", "2.2", "2.3"]);
      });

      it("errors with pinned codes naming the full path", async () => {
        await fresh({ "/d/f": "x" });
        expect((await b.read(P("/nope"))).error).toEqual({
          code: "file_not_found",
          message: `File not found: '${P("/nope")}'`,
          subject: P("/nope"),
        });
        expect((await b.read(P("/d"))).error?.code).toBe("is_directory");
        expect((await b.read("/../x")).error?.code).toBe("path_escape");
      });
    });

    describe("4. bytes", () => {
      it("stores binary and invalid UTF-8 byte-for-byte; grep skips binary", async () => {
        const binary = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff, 0x6e, 0x65, 0x65, 0x64, 0x6c, 0x65]);
        const latin1 = new Uint8Array([0x63, 0x61, 0x66, 0xe9, 0x20, 0x6e, 0x65, 0x65, 0x64, 0x6c, 0x65, 0x0a]);
        await fresh({ "/img.png": binary, "/latin1.txt": latin1 });
        expect((await b.readBytes(P("/img.png"))).data).toEqual(binary);
        expect((await b.readBytes(P("/latin1.txt"))).data).toEqual(latin1);
        expect((await b.read(P("/latin1.txt"))).content).toBe("caf\uFFFD needle");
        expect((await b.grep("needle", { outputMode: "files_with_matches" })).files).toEqual([P("/latin1.txt")]);
        expect((await b.readBytes(P("/missing"))).error?.code).toBe("file_not_found");
      });
    });

    describe("5. edit", () => {
      it("unique match, multiple, replaceAll, not found, missing file", async () => {
        await fresh({ "/f": "a b a" });
        const multi = await b.edit(P("/f"), "a", "x");
        expect(multi.error?.code).toBe("multiple_matches");
        expect(multi.error?.message).toContain("2 times");
        expect(await b.edit(P("/f"), "a", "x", { replaceAll: true })).toMatchObject({ occurrences: 2 });
        expect((await b.edit(P("/f"), "zzz", "y")).error?.code).toBe("string_not_found");
        expect((await b.edit(P("/nope"), "a", "b")).error?.code).toBe("file_not_found");
      });

      it("takes metacharacters literally, spans lines, deletes, keeps CRLF", async () => {
        await fresh({ "/p": "price $100.00 [a-z]*\nline two\n", "/win": "one\r\ntwo\r\nthree\r\n" });
        expect((await b.edit(P("/p"), "$100.00 [a-z]*", "free")).occurrences).toBe(1);
        expect((await b.edit(P("/p"), "free\nline", "free line")).occurrences).toBe(1);
        expect((await b.edit(P("/p"), " two", "")).occurrences).toBe(1);
        expect((await b.read(P("/p"))).content).toBe("price free line");
        await b.edit(P("/win"), "one\ntwo", "uno\ndos");
        expect(dec.decode((await b.readBytes(P("/win"))).data)).toBe("uno\r\ndos\r\nthree\r\n");
      });

      it("sets the content of an empty file from an empty old string", async () => {
        await fresh({ "/e": "" });
        expect((await b.edit(P("/e"), "", "new")).error).toBeUndefined();
        expect((await b.read(P("/e"))).content).toBe("new");
        expect((await b.edit(P("/e"), "", "again")).error?.code).toBe("string_not_found");
      });

      it("guards against lost updates with ifVersion", async () => {
        await fresh({ "/m": "v1" });
        const v = (await b.stat(P("/m"))).info?.version as string;
        await b.write(P("/m"), "v2 by someone else");
        expect((await b.edit(P("/m"), "v2", "v3", { ifVersion: v })).error?.code).toBe("conflict");
      });

      it("gives every globbed file the version stat and its last write or edit give it", async () => {
        const files: Record<string, string> = {};
        for (let i = 0; i < 40; i++) files[`/v/${i % 3}/f${i}.md`] = `file ${i}\n`;
        await fresh(files);
        const last = new Map<string, string>();
        const agree = async () => {
          const globbed = (await b.glob("**/*.md", { path: P("/") })).files ?? [];
          expect(globbed.length).toBe(last.size || Object.keys(files).length);
          for (const f of globbed) {
            expect(f.version, f.path).toBe((await b.stat(f.path)).info?.version);
            if (last.has(f.path)) expect(f.version, f.path).toBe(last.get(f.path));
          }
          for (const f of globbed) if (!last.has(f.path)) last.set(f.path, f.version as string);
        };
        await agree();
        // Each change is seen by the next glob alone (one file stale), then by a glob after many.
        for (const i of [3, 17]) {
          const edited = await b.edit(P(`/v/${i % 3}/f${i}.md`), `file ${i}`, `edited ${i}`);
          last.set(P(`/v/${i % 3}/f${i}.md`), edited.version as string);
          await agree();
        }
        for (let i = 0; i < 40; i += 2) {
          const written = await b.write(P(`/v/${i % 3}/f${i}.md`), `rewritten ${i}\n`);
          last.set(P(`/v/${i % 3}/f${i}.md`), written.version as string);
        }
        expect((await b.delete(P("/v/1/f1.md"))).error).toBeUndefined();
        last.delete(P("/v/1/f1.md"));
        await agree();
        expect((await b.read(P("/v/0/f0.md"))).content).toBe("rewritten 0");
      });
    });

    describe("6. ls", () => {
      it("lists one level, sorted, directories with a slash", async () => {
        await fresh({ "/b.txt": "b", "/a/x.md": "x", "/a/y/z.md": "z", "/.hidden": "h", "/with space/文件.md": "u" });
        const root = (await b.ls(P("/"))).entries;
        expect(paths(root)).toEqual([P("/.hidden"), P("/a/"), P("/b.txt"), P("/with space/")]);
        expect(root?.find((e) => e.path === P("/a/"))).toEqual({ path: P("/a/"), isDir: true });
        expect(paths((await b.ls(P("/a/"))).entries)).toEqual([P("/a/x.md"), P("/a/y/")]);
        expect(paths((await b.ls(P("/with space"))).entries)).toEqual([P("/with space/文件.md")]);
        expect((await b.ls(P("/missing"))).error?.code).toBe("file_not_found");
      });

      it("lists a large directory", async () => {
        await fresh();
        await Promise.all(Array.from({ length: 500 }, (_, i) => b.write(P(`/big/f${String(i).padStart(3, "0")}`), "x")));
        const entries = (await b.ls(P("/big"))).entries ?? [];
        expect(entries.length).toBe(500);
        expect(entries[0]?.path).toBe(P("/big/f000"));
      });
    });

    describe("7. grep", () => {
      const files = {
        "/src/a.ts": "const a = 1; // TODO\nhel+o a.b\nTODO: more\n",
        "/src/b.js": "todo lower\naxb\n",
        "/src/deep/c.ts": "nothing\n",
        "/README.md": "TODO in docs\n",
      };

      it("is literal, case-sensitive and numbered from 1", async () => {
        await fresh(files);
        expect((await b.grep("a.b")).matches).toEqual([{ path: P("/src/a.ts"), line: 2, text: "hel+o a.b" }]);
        expect((await b.grep("hel+o")).matches?.length).toBe(1);
        expect((await b.grep("TODO", { outputMode: "count" })).counts).toEqual({ [P("/README.md")]: 1, [P("/src/a.ts")]: 2 });
      });

      it("supports regex, ignoreCase and context", async () => {
        await fresh(files);
        expect((await b.grep("^TODO", { regex: true })).matches?.map((m) => m.line)).toEqual([1, 3]);
        expect((await b.grep("todo", { ignoreCase: true, outputMode: "files_with_matches" })).files).toEqual([
          P("/README.md"),
          P("/src/a.ts"),
          P("/src/b.js"),
        ]);
        const ctx = await b.grep("more", { context: 1 });
        expect(ctx.matches?.map((m) => `${m.line}${m.context ? "c" : "m"}`)).toEqual(["2c", "3m"]);
        expect((await b.grep("(", { regex: true })).error?.code).toBe("invalid_pattern");
      });

      it("scopes to a directory, a single file and a glob", async () => {
        await fresh(files);
        expect((await b.grep("TODO", { path: P("/src"), outputMode: "files_with_matches" })).files).toEqual([P("/src/a.ts")]);
        expect((await b.grep("TODO", { path: P("/src/a.ts") })).matches?.length).toBe(2);
        expect((await b.grep("o", { glob: "*.js", outputMode: "files_with_matches" })).files).toEqual([P("/src/b.js")]);
        expect((await b.grep("TODO", { path: P("/nope") })).error?.code).toBe("file_not_found");
      });

      it("truncates at maxCount, and exactly maxCount is complete", async () => {
        await fresh(files);
        expect(await b.grep("TODO", { maxCount: 2 })).toMatchObject({ truncated: true });
        expect((await b.grep("TODO", { maxCount: 2 })).matches?.length).toBe(2);
        expect(await b.grep("TODO", { maxCount: 3 })).toMatchObject({ truncated: false });
        expect(await b.grep("TODO", { maxCount: 1, outputMode: "files_with_matches" })).toEqual({
          files: [P("/README.md")],
          truncated: true,
        });
      });

      it("maxCount 0 and 1, with and without context: as a StateBackend holding the same files", async () => {
        const cut = { "/a.md": "x\nhit one\ny\nhit two\nz\n", "/b.md": "before\nhit three\n", "/c.md": "no match\n" };
        await fresh(cut);
        const reference = new StateBackend({ core });
        for (const [p, c] of Object.entries(cut)) await reference.write(P(p), c);
        for (const outputMode of ["content", "files_with_matches", "count"] as const) {
          for (const maxCount of [0, 1, 2, 3]) {
            for (const context of [0, 1]) {
              for (const pattern of ["hit", "absent"]) {
                const options = { path: P("/"), outputMode, maxCount, context };
                const want = await reference.grep(pattern, options);
                expect(await b.grep(pattern, options), `${pattern} ${JSON.stringify(options)}`).toEqual(want);
              }
            }
          }
        }
        // `truncated` says something was cut: never for a search that found nothing.
        for (const outputMode of ["content", "files_with_matches", "count"] as const) {
          expect((await b.grep("absent", { maxCount: 0, outputMode })).truncated).toBe(false);
          expect((await b.grep("hit", { maxCount: 0, outputMode })).truncated).toBe(true);
        }
        expect(await b.grep("hit", { maxCount: 0 })).toEqual({ matches: [], truncated: true });
      });

      it("stops at the 10,000-match ceiling (whatever maxCount says) and survives a hostile regex", async () => {
        await fresh({ "/big.txt": "match\n".repeat(100_000), "/evil.txt": `${"a".repeat(50_000)}!\n` });
        for (const maxCount of [undefined, 1e9]) {
          const r = await b.grep("match", { path: P("/big.txt"), maxCount });
          expect([r.matches?.length, r.truncated]).toEqual([10_000, true]);
        }
        expect((await b.grep("(a+)+$", { regex: true, path: P("/evil.txt") })).matches).toEqual([]);
      });
    });

    describe("8. glob", () => {
      const tree = {
        "/a.ts": "",
        "/src/b.ts": "",
        "/src/deep/c.ts": "",
        "/src/d.py": "",
        "/src/e.md": "",
        "/src/x1.md": "",
        "/.env": "",
      };

      it("keeps * within a segment and ** across", async () => {
        await fresh(tree);
        expect(paths((await b.glob("*.ts", { path: P("/") })).files)).toEqual([P("/a.ts")]);
        expect(paths((await b.glob("**/*.ts", { path: P("/") })).files)).toEqual([P("/a.ts"), P("/src/b.ts"), P("/src/deep/c.ts")]);
      });

      it("supports ?, classes, braces, dotfiles, scoping and anchoring", async () => {
        await fresh(tree);
        expect(paths((await b.glob("src/?1.md", { path: P("/") })).files)).toEqual([P("/src/x1.md")]);
        expect(paths((await b.glob("src/[de].*", { path: P("/") })).files)).toEqual([P("/src/d.py"), P("/src/e.md")]);
        expect(paths((await b.glob("src/*.{py,md}", { path: P("/") })).files)).toEqual([P("/src/d.py"), P("/src/e.md"), P("/src/x1.md")]);
        expect(paths((await b.glob(".*", { path: P("/") })).files)).toEqual([P("/.env")]);
        expect(paths((await b.glob("*.ts", { path: P("/src") })).files)).toEqual([P("/src/b.ts")]);
        expect(paths((await b.glob(`${P("/src")}/*.py`, { path: P("/src/deep") })).files)).toEqual([P("/src/d.py")]);
        expect((await b.glob("*", { path: P("/missing") })).files).toEqual([]);
        expect((await b.glob("[", { path: P("/") })).error?.code).toBe("invalid_pattern");
      });

      it("caps results", async () => {
        await fresh(tree);
        const r = await b.glob("**", { path: P("/"), maxResults: 2 });
        expect(r.files?.length).toBe(2);
        expect(r.truncated).toBe(true);
      });
    });

    describe("9. delete", () => {
      it("deletes a file, a directory recursively, keeps siblings", async () => {
        await fresh({ "/d/a": "1", "/d/e/b": "2", "/keep": "3" });
        expect(await b.delete(P("/d/a"))).toEqual({ deleted: 1 });
        expect(await b.delete(P("/d"))).toEqual({ deleted: 1 });
        expect(paths((await b.ls(P("/"))).entries)).toEqual([P("/keep")]);
        expect((await b.delete(P("/d"))).error?.code).toBe("file_not_found");
      });
    });

    describe("paths", () => {
      it.each(["/../etc/passwd", "/a/../../b", "~/x", "/a\u0000b", "C:/x", "/a\\b"])("refuses %j", async (bad) => {
        await fresh({ "/a/file": "x" });
        for (const r of [await b.read(bad), await b.write(bad, "x"), await b.ls(bad), await b.delete(bad)]) {
          expect(["path_escape", "invalid_path"]).toContain(r.error?.code);
        }
      });

      it("treats `a..b` as a name and normalises // and .", async () => {
        await fresh({ "/a..b/f": "x" });
        expect((await b.read(P("//a..b/./f"))).content).toBe("x");
      });
    });
  });
}

describe("composite routing", () => {
  const make = () => {
    const store = new InMemoryStore();
    const memories = new StoreBackend({ store, namespace: ["mem"], core });
    const main = new StateBackend({ core });
    return { main, memories, store, c: new CompositeBackend(main, { "/memories": memories }, { core }) };
  };

  it("normalises prefixes: /memoriesX stays on the default backend", async () => {
    const { c, main, memories } = make();
    await c.write("/memories/prefs.md", "dark mode");
    await c.write("/memoriesX/prefs.md", "elsewhere");
    expect((await memories.read("/prefs.md")).content).toBe("dark mode");
    expect((await main.read("/memoriesX/prefs.md")).content).toBe("elsewhere");
    expect((await main.read("/memories/prefs.md")).error?.code).toBe("file_not_found");
  });

  it("merges and de-duplicates route directories in ls", async () => {
    const { c, main } = make();
    await main.write("/memories/shadowed.md", "hidden by the route");
    await main.write("/notes.md", "n");
    await c.write("/memories/a.md", "a");
    expect((await c.ls("/")).entries).toEqual([{ path: "/memories/", isDir: true }, expect.objectContaining({ path: "/notes.md" })]);
    expect((await c.ls("/memories")).entries?.map((e) => e.path)).toEqual(["/memories/a.md"]);
  });

  it("fans grep and glob out to routes under the path, never returning shadowed files", async () => {
    const { c, main } = make();
    await main.write("/memories/shadowed.md", "needle");
    await main.write("/src/x.md", "needle");
    await c.write("/memories/m.md", "needle");
    expect((await c.grep("needle", { outputMode: "files_with_matches" })).files).toEqual(["/memories/m.md", "/src/x.md"]);
    expect((await c.grep("needle", { path: "/src", outputMode: "files_with_matches" })).files).toEqual(["/src/x.md"]);
    expect((await c.glob("**/*.md")).files?.map((f) => f.path)).toEqual(["/memories/m.md", "/src/x.md"]);
    expect((await c.glob("/memories/*.md")).files?.map((f) => f.path)).toEqual(["/memories/m.md"]);
    expect((await c.glob("**/memories/*.md")).files?.map((f) => f.path)).toEqual(["/memories/m.md"]);
  });

  it("applies one maxCount across routes, in path order", async () => {
    const { c } = make();
    await c.write("/a.md", "x\nx\n");
    await c.write("/memories/b.md", "x\n");
    await c.write("/z.md", "x\n");
    const r = await c.grep("x", { maxCount: 3 });
    expect(r.matches?.map((m) => `${m.path}:${m.line}`)).toEqual(["/a.md:1", "/a.md:2", "/memories/b.md:1"]);
    expect(r.truncated).toBe(true);
  });

  it("refuses to delete a directory holding a mount, and the mount point itself", async () => {
    const { c } = make();
    await c.write("/memories/a.md", "a");
    expect((await c.delete("/")).error?.code).toBe("permission_denied");
    expect((await c.delete("/memories")).error?.code).toBe("permission_denied");
    expect((await c.read("/memories/a.md")).content).toBe("a");
  });

  it("rejects an invalid route prefix loudly", async () => {
    const c = new CompositeBackend(new StateBackend({ core }), { "/../bad": new StateBackend({ core }) }, { core });
    await expect(c.read("/x")).rejects.toMatchObject({ name: "EngramError", code: "path_escape" });
  });

  it("names the full path in routed errors", async () => {
    const { c } = make();
    expect((await c.read("/memories/missing.md")).error?.message).toBe("File not found: '/memories/missing.md'");
  });
});

describe("store backend", () => {
  it("validates namespaces and isolates them", async () => {
    const store = new InMemoryStore();
    expect(() => new StoreBackend({ store, namespace: ["ok", "bad/slash"] })).toThrow(EngramError);
    expect(() => new StoreBackend({ store, namespace: ["*"] })).toThrow(EngramError);
    const factory = ({ userId }: { userId?: string }) => ["users", userId ?? "anon", "fs"];
    const alice = new StoreBackend({ store, namespace: factory, context: { userId: "alice" }, core });
    const bob = alice.withContext({ userId: "bob" });
    expect(bob.namespace).toEqual(["users", "bob", "fs"]);
    await alice.write("/secret.md", "alice only");
    expect((await bob.read("/secret.md")).error?.code).toBe("file_not_found");
    expect((await alice.read("/secret.md")).content).toBe("alice only");
    expect(() => alice.withContext({ userId: "../x" })).toThrow(EngramError);
  });

  it("pushes prefixes down: ls and grep never list the whole namespace", async () => {
    const store = new InMemoryStore();
    const seen: string[] = [];
    const spy = watchedStore(store, ["list"], (_, args) => {
      seen.push((args[1] as { prefix?: string } | undefined)?.prefix ?? "");
    });
    const b = new StoreBackend({ store: spy, core });
    for (let i = 0; i < 200; i++) await b.write(`/dir${i % 10}/f${i}.txt`, "x");
    seen.length = 0;
    await b.ls("/dir3");
    await b.grep("x", { path: "/dir4" });
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((p) => p.startsWith("/dir3/") || p.startsWith("/dir4/") || p === "/dir4")).toBe(true);
  });

  it("forgets what another writer removed under the scope it syncs, after a whole-namespace search", async () => {
    const store = new InMemoryStore();
    const b = new StoreBackend({ store, core });
    const other = new StoreBackend({ store, core });
    for (const p of ["/d/a.md", "/d/b.md", "/d/sub/c.md", "/x", "/e.md"]) await b.write(p, "needle");
    expect((await b.grep("needle", { outputMode: "files_with_matches" })).files).toHaveLength(5);
    await other.delete("/d/a.md");
    await other.delete("/d/sub/c.md");
    await other.delete("/x");
    await other.write("/x/y.md", "needle");
    // A file's own sync forgets it; a directory's sync forgets what went under it; a file that
    // became a directory is replaced; an unrelated file stays.
    expect((await b.read("/d/a.md")).error?.code).toBe("file_not_found");
    expect((await b.grep("needle", { path: "/d", outputMode: "files_with_matches" })).files).toEqual(["/d/b.md"]);
    expect((await b.read("/x/y.md")).content).toBe("needle");
    expect((await b.edit("/e.md", "needle", "pin")).occurrences).toBe(1);
    expect((await b.grep("needle", { outputMode: "files_with_matches" })).files).toEqual(["/d/b.md", "/x/y.md"]);
    expect((await b.glob("**")).files?.map((f) => f.path)).toEqual(["/d/b.md", "/e.md", "/x/y.md"]);
    // A mirrored file another writer changed is read anew; one another program overwrote with
    // something that is no file is no longer served.
    await other.write("/e.md", "rewritten");
    expect((await b.read("/e.md")).content).toBe("rewritten");
    await store.put(["filesystem"], "/d/b.md", { not: "a file" });
    expect((await b.read("/d/b.md")).error?.code).toBe("file_not_found");
    expect((await b.grep("needle", { outputMode: "files_with_matches" })).files).toEqual(["/x/y.md"]);
  });

  it("brings a changed mirrored file up to date in one store round trip", async () => {
    const store = new InMemoryStore();
    const calls: string[] = [];
    const spy = watchedStore(store, ["list", "get"], (method) => {
      calls.push(method);
    });
    const b = new StoreBackend({ store: spy, core });
    for (let i = 0; i < 20; i++) await b.write(`/notes/n${i}.md`, `note ${i}`);
    expect((await b.grep("note", { outputMode: "count" })).counts?.["/notes/n7.md"]).toBe(1);
    await new StoreBackend({ store, core }).write("/notes/n7.md", "changed");
    calls.length = 0;
    expect((await b.read("/notes/n7.md")).content).toBe("changed");
    expect(calls).toEqual(["get"]);
  });

  it("edits a file it holds in one store round trip, and again on the store's copy when that moved on", async () => {
    const store = new InMemoryStore();
    const calls: string[] = [];
    const spy = watchedStore(store, ["get", "list", "put"], (method) => {
      calls.push(method);
    });
    const a = new StoreBackend({ store: spy, core });
    const b = new StoreBackend({ store, core });
    await a.write("/count.md", "A:0 B:0\n");
    expect((await a.read("/count.md")).content).toBe("A:0 B:0");
    calls.length = 0;
    expect((await a.edit("/count.md", "A:0", "A:1")).occurrences).toBe(1);
    expect(calls).toEqual(["put"]);
    // Turns of two writers, each editing its own counter: every edit sees the other's.
    for (let i = 1; i <= 30; i++) {
      expect((await b.edit("/count.md", `B:${i - 1}`, `B:${i}`)).error).toBeUndefined();
      expect((await a.edit("/count.md", `A:${i}`, `A:${i + 1}`)).error).toBeUndefined();
    }
    expect((await b.read("/count.md")).content).toBe("A:31 B:30");
    // An edit that only the old copy allowed fails, and the store keeps what it had.
    await b.edit("/count.md", "A:31", "A:gone");
    expect((await a.edit("/count.md", "A:31", "A:32")).error?.code).toBe("string_not_found");
    expect((await b.read("/count.md")).content).toBe("A:gone B:30");
    // One that only the new copy allows succeeds.
    await b.edit("/count.md", "B:30", "B:new");
    expect((await a.edit("/count.md", "B:new", "B:mine")).occurrences).toBe(1);
    expect((await b.read("/count.md")).content).toBe("A:gone B:mine");
  });

  it("takes parallel edits of one file in turns, however the store orders their writes", async () => {
    const store = new InMemoryStore();
    let delayNext = false;
    // The first put after the flag is set lands last: a database's pool may reorder two writes.
    const slow = watchedStore(store, ["put"], async () => {
      if (delayNext) {
        delayNext = false;
        await new Promise((r) => setTimeout(r, 20));
      }
    });
    const b = new StoreBackend({ store: slow, core });
    await b.write("/tasks.md", "- [ ] one\n- [ ] two\n");
    expect((await b.read("/tasks.md")).content).toBe("- [ ] one\n- [ ] two");
    delayNext = true;
    const [one, two] = await Promise.all([b.edit("/tasks.md", "[ ] one", "[x] one"), b.edit("/tasks.md", "[ ] two", "[x] two")]);
    expect([one.error, two.error]).toEqual([undefined, undefined]);
    expect((await new StoreBackend({ store, core }).read("/tasks.md")).content).toBe("- [x] one\n- [x] two");
  });

  it("gives concurrent first searches one consistent mirror", async () => {
    const store = new InMemoryStore();
    const writer = new StoreBackend({ store, core });
    for (let i = 0; i < 50; i++) await writer.write(`/d/f${i}.md`, "needle");
    const fresh = new StoreBackend({ store, core });
    const results = await Promise.all([
      fresh.grep("needle", { outputMode: "files_with_matches" }),
      fresh.glob("**/*.md"),
      fresh.grep("needle", { path: "/d" }),
    ]);
    expect(results[0].files?.length).toBe(50);
    expect(results[1].files?.length).toBe(50);
    expect(results[2].matches?.length).toBe(50);
    expect((await fresh.grep("needle", { outputMode: "count" })).counts?.["/d/f7.md"]).toBe(1);
  });

  it("skips damaged items instead of failing every search", async () => {
    const store = new InMemoryStore();
    const b = new StoreBackend({ store, namespace: ["fs"], core });
    await b.write("/ok.md", "needle");
    await store.put(["fs"], "/bad.bin", { content: "%%% not base64 %%%", encoding: "base64", size: 3, modifiedAt: 0 });
    await store.put(["fs"], "/junk", { whatever: true });
    expect((await b.grep("needle", { outputMode: "files_with_matches" })).files).toEqual(["/ok.md"]);
    expect((await b.read("/bad.bin")).error?.code).toBe("file_not_found");
    expect((await store.get(["fs"], "/bad.bin"))?.value).toMatchObject({ content: "%%% not base64 %%%" });
  });

  it("mirrors text another program stored as it would be encoded: a lone surrogate reads as U+FFFD", async () => {
    const store = new InMemoryStore();
    const b = new StoreBackend({ store, namespace: ["fs"], core });
    await store.put(["fs"], "/odd.md", { content: "a\uD800b 😀 ünï", encoding: "utf8", size: 11, modifiedAt: 7 });
    expect((await b.read("/odd.md")).content).toBe("a\uFFFDb 😀 ünï");
    expect((await b.readBytes("/odd.md")).data).toEqual(new TextEncoder().encode("a\uD800b 😀 ünï"));
    expect((await b.grep("\uFFFDb")).matches?.map((m) => m.path)).toEqual(["/odd.md"]);
    expect((await b.glob("*.md")).files).toMatchObject([{ path: "/odd.md", size: 16, modifiedAt: 7 }]);
  });

  it("mirrors a namespace in one batch with each file's own time, and a bad item costs only itself", async () => {
    const store = new InMemoryStore();
    for (let i = 0; i < 30; i++) {
      await store.put(["fs"], `/m/${i}.md`, { content: `needle ${i}`, encoding: "utf8", size: 8 + String(i).length, modifiedAt: 100 + i });
    }
    const fresh = () => new StoreBackend({ store, namespace: ["fs"], core });
    const files = (await fresh().glob("**/*.md")).files ?? [];
    expect(files.map((f) => [f.path, f.modifiedAt])).toEqual(
      Array.from({ length: 30 }, (_, i) => [`/m/${i}.md`, 100 + i] as const).sort((a, b) => (a[0] < b[0] ? -1 : 1)),
    );
    // Items another program stored: a key that is no path (the batch is refused, then each item
    // goes alone), a time that is not a number, and a broken base64 body.
    await store.put(["fs"], "/m/../../escape.md", { content: "needle x", encoding: "utf8", size: 8, modifiedAt: 1 });
    await store.put(["fs"], "/m/odd-time.md", { content: "needle t", encoding: "utf8", size: 8, modifiedAt: "soon" });
    await store.put(["fs"], "/m/bad.bin", { content: "%%%", encoding: "base64", size: 3, modifiedAt: 1 });
    const b = fresh();
    expect((await b.grep("needle", { outputMode: "count" })).counts).toMatchObject({ "/m/0.md": 1, "/m/29.md": 1, "/m/odd-time.md": 1 });
    expect(Object.keys((await b.grep("needle", { outputMode: "count" })).counts ?? {})).toHaveLength(31);
    expect((await b.glob("odd-time.md", { path: "/m" })).files).toMatchObject([{ path: "/m/odd-time.md", modifiedAt: 0 }]);
    expect((await b.read("/m/bad.bin")).error?.code).toBe("file_not_found");
  });

  it("sees changes made through another backend on the same store", async () => {
    const store = new InMemoryStore();
    const a = new StoreBackend({ store, core });
    const b = new StoreBackend({ store, core });
    await a.write("/x.md", "one");
    expect((await b.grep("one")).matches?.length).toBe(1);
    await a.write("/x.md", "two");
    expect((await b.grep("one")).matches).toEqual([]);
    expect((await b.read("/x.md")).content).toBe("two");
    await a.delete("/x.md");
    expect((await b.grep("two")).matches).toEqual([]);
    expect((await b.glob("*.md")).files).toEqual([]);
  });

  it("keeps text readable in the store and binary as base64", async () => {
    const store = new InMemoryStore();
    const b = new StoreBackend({ store, namespace: ["fs"], core });
    await b.write("/t.md", "héllo");
    await b.write("/bin", new Uint8Array([0, 255]));
    expect((await store.get(["fs"], "/t.md"))?.value).toMatchObject({ content: "héllo", encoding: "utf8", size: 6 });
    expect((await store.get(["fs"], "/bin"))?.value).toMatchObject({ encoding: "base64", size: 2 });
  });

  it("turns a concurrent edit race into a conflict, never a lost update", async () => {
    const store = new InMemoryStore();
    const b = new StoreBackend({ store, core });
    await b.write("/m.md", "count: 0\n");
    const results = await Promise.all([b.edit("/m.md", "count: 0", "count: A"), b.edit("/m.md", "count: 0", "count: B")]);
    const ok = results.filter((r) => !r.error);
    expect(ok.length).toBe(1);
    expect(results.find((r) => r.error)?.error?.code).toMatch(/conflict|string_not_found/);
    expect((await b.read("/m.md")).content).toMatch(/count: [AB]/);
  });
});

describe("state backend", () => {
  it("checkpoints as a compact snapshot and restores", async () => {
    const b = new StateBackend({ core });
    await b.write("/a.md", "x".repeat(1000));
    await b.write("/bin", new Uint8Array([1, 2, 3]));
    const snap = await b.snapshot();
    expect(snap.length).toBeLessThan(1100);
    const back = await StateBackend.restore(snap, { core });
    expect((await back.readBytes("/bin")).data).toEqual(new Uint8Array([1, 2, 3]));
    expect((await back.stat("/a.md")).info?.version).toBe((await b.stat("/a.md")).info?.version);
    await expect(StateBackend.restore(snap.slice(3), { core })).rejects.toMatchObject({ name: "EngramError" });
  });

  it("encodes strings as UTF-8", async () => {
    const b = new StateBackend({ core });
    await b.write("/u", "😀");
    expect((await b.readBytes("/u")).data).toEqual(enc.encode("😀"));
  });
});

describe("append", () => {
  it("appends natively or by a version-guarded read + write, for every backend", async () => {
    const { appendTo } = await import("../src/backends/append.js");
    for (const factory of backendFactories) {
      const b = await factory.create(core);
      const path = `${factory.root}/log/history.md`;
      expect((await appendTo(b, path, "one\n")).error).toBeUndefined();
      expect((await appendTo(b, path, "two\n")).error).toBeUndefined();
      expect((await b.read(path)).content).toBe("one\ntwo");
    }
  });
});
