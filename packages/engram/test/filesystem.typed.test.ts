/**
 * FilesystemBackend across the typed native boundary: listings and grep answers arrive in
 * columns and errors as `{ code, message }` data; the tools' text made in Rust
 * (`FilesystemBackend.toolText`) equals the core's formatting of the structured answers under
 * every cap; hostile names (invalid UTF-8, lone surrogates), a huge directory and symlink escapes
 * give the same typed errors on the text path as on the structured one; `durability: "full"`
 * reaches Rust and fsyncs the file and every directory it changed (counted by the handle, and
 * seen by strace in a child process), `"relaxed"` never syncs. The Router takes its prefixes as
 * an array on both cores.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Backend, type Core, EngramError, FilesystemBackend, loadCore } from "../src/index.js";
import { openRootedFs } from "../src/core/rooted-fs.js";
import type { ToolTextRequest } from "../src/backends/protocol.js";
import { toolText } from "../src/tools/format.js";

const native = process.env.ENGRAM_CORE !== "wasm";
const here = import.meta.dirname;

let core: Core;
let base: string;
let root: string;
let fs: FilesystemBackend;

beforeAll(async () => {
  core = await loadCore();
  base = mkdtempSync(join(tmpdir(), "engram-fs-typed-"));
  root = join(base, "root");
  mkdirSync(join(root, "src", "deep"), { recursive: true });
  mkdirSync(join(root, "big"), { recursive: true });
  mkdirSync(join(base, "outside"), { recursive: true });
  writeFileSync(join(base, "outside", "secret.txt"), "needle outside\n");
  for (let i = 0; i < 40; i++) {
    const lines = Array.from({ length: 30 }, (_, j) => (j % 3 === 0 ? `needle ${i}.${j} ünï` : `line ${j}`));
    writeFileSync(join(root, "src", i % 2 ? "deep" : "", `f${String(i).padStart(2, "0")}.ts`), `${lines.join("\n")}\n`);
  }
  writeFileSync(join(root, "empty.txt"), "");
  // 5,000 entries in one directory.
  for (let i = 0; i < 5000; i++) writeFileSync(join(root, "big", `e${i}.txt`), i % 100 === 0 ? "needle\n" : "x\n");
  // A name that is not UTF-8: never listed, searched or matched, never an error.
  writeFileSync(Buffer.from(join(root, "bad-\xff-name.txt"), "latin1"), "needle in a bad name\n");
  symlinkSync(join(base, "outside"), join(root, "escape"));
  symlinkSync(join(base, "outside", "secret.txt"), join(root, "secret-link.txt"));
  if (native) fs = new FilesystemBackend({ rootDir: root });
}, 120_000);

afterAll(() => {
  rmSync(base, { recursive: true, force: true });
});

/** The same backend without `toolText`: the tools format its structured answers in the core. */
function structured(b: Backend): Backend {
  return {
    ls: (p) => b.ls(p),
    read: (p, o) => b.read(p, o),
    readBytes: (p) => b.readBytes(p),
    write: (p, c, o) => b.write(p, c, o),
    edit: (p, a, c, o) => b.edit(p, a, c, o),
    grep: (p, o) => b.grep(p, o),
    glob: (p, o) => b.glob(p, o),
    delete: (p) => b.delete(p),
    stat: (p) => b.stat(p),
  };
}

const requests: ToolTextRequest[] = [
  { op: "ls", path: "/" },
  { op: "ls", path: "/src" },
  { op: "ls", path: "/big" },
  { op: "ls", path: "/nope" },
  { op: "ls", path: "/escape" },
  { op: "ls", path: "/../etc" },
  { op: "read", path: "/src/f00.ts", offset: 0, limit: 10 },
  { op: "read", path: "/src/f00.ts", offset: 25, limit: 10 },
  { op: "read", path: "/src/f00.ts", offset: 500, limit: 10 },
  { op: "read", path: "/empty.txt", offset: 0, limit: 10 },
  { op: "read", path: "/secret-link.txt", offset: 0, limit: 10 },
  { op: "read", path: "/escape/secret.txt", offset: 0, limit: 10 },
  { op: "read", path: "/src", offset: 0, limit: 10 },
  { op: "glob", pattern: "**/*.ts", path: "/" },
  { op: "glob", pattern: "*.ts", path: "/src/deep" },
  { op: "glob", pattern: "**/*.md", path: "/" },
  { op: "glob", pattern: "[", path: "/" },
  { op: "glob", pattern: "**", path: "/escape" },
  { op: "grep", pattern: "needle", options: {} },
  { op: "grep", pattern: "needle", options: { path: "/src", context: 1 } },
  { op: "grep", pattern: "needle", options: { outputMode: "files_with_matches" } },
  { op: "grep", pattern: "needle", options: { outputMode: "count", path: "/big" } },
  { op: "grep", pattern: "needle", options: { maxCount: 7 } },
  { op: "grep", pattern: "NEEDLE \\d+\\.3", options: { regex: true, ignoreCase: true, glob: "*.ts" } },
  { op: "grep", pattern: "absent-token", options: {} },
  { op: "grep", pattern: "(", options: { regex: true } },
  { op: "grep", pattern: "needle", options: { outputMode: "bogus" as "count" } },
  { op: "grep", pattern: "needle", options: { path: "/escape" } },
  { op: "grep", pattern: "needle", options: { path: "/secret-link.txt" } },
];

describe.skipIf(!native)("FilesystemBackend tool text made in Rust", () => {
  it.each([80_000, 1000, 120, 5])("equals the core's formatting of the structured answers (cap %i)", async (cap) => {
    for (const request of requests) {
      const made = await fs.toolText(request, cap);
      expect(made, JSON.stringify(request)).toBeDefined();
      const viaText = await toolText(fs, core, request, cap);
      const viaStructured = await toolText(structured(fs), core, request, cap);
      expect(viaText, JSON.stringify(request)).toEqual(viaStructured);
    }
  });

  it("answers errors as the same data as the structured calls", async () => {
    const cases: [ToolTextRequest, string][] = [
      [{ op: "ls", path: "/escape" }, "path_escape"],
      [{ op: "read", path: "/secret-link.txt", offset: 0, limit: 5 }, "path_escape"],
      [{ op: "read", path: "/src", offset: 0, limit: 5 }, "is_directory"],
      [{ op: "read", path: "/nope.txt", offset: 0, limit: 5 }, "file_not_found"],
      [{ op: "glob", pattern: "**", path: "/../x" }, "path_escape"],
      [{ op: "grep", pattern: "(", options: { regex: true } }, "invalid_pattern"],
      [{ op: "grep", pattern: "x\ud800", options: {} }, "invalid_pattern"],
      [{ op: "ls", path: "/a\udc00" }, "invalid_path"],
    ];
    for (const [request, code] of cases) {
      const r = await fs.toolText(request, 1000);
      expect(r?.error?.code, JSON.stringify(request)).toBe(code);
      expect(Object.keys(r?.error ?? {}).sort()).toEqual(expect.arrayContaining(["code", "message"]));
      expect(Object.getPrototypeOf(r?.error)).toBe(Object.prototype);
    }
    expect((await fs.ls("/escape")).error).toEqual((await fs.toolText({ op: "ls", path: "/escape" }, 1000))?.error);
  });

  it("leaves the text to the tools in host-path mode", async () => {
    const host = new FilesystemBackend({ rootDir: root, virtualMode: false });
    expect(await host.toolText({ op: "ls", path: `${root}/src` }, 1000)).toBeUndefined();
    expect((await toolText(host, core, { op: "ls", path: `${root}/src` }, 1000)).content).toContain(`${fs.rootDir}/src/f00.ts`);
  });

  it("a 90k-character grep answer is capped in Rust (the cap note, no more than the cap)", async () => {
    const r = await fs.toolText({ op: "grep", pattern: "x", options: { path: "/big" } }, 2000);
    expect(r?.text?.length).toBeLessThanOrEqual(2000 + 120);
    expect(r?.text).toContain("[Output truncated at 2,000 characters");
  });
});

describe.skipIf(!native)("FilesystemBackend typed answers", () => {
  it("lists a huge directory from columns, with sizes, times and versions", async () => {
    const r = await fs.ls("/big");
    expect(r.entries).toHaveLength(5000);
    const e = r.entries?.find((x) => x.path === "/big/e100.txt");
    expect(e).toMatchObject({ path: "/big/e100.txt", isDir: false, size: 7 });
    expect(typeof e?.modifiedAt).toBe("number");
    expect(e?.version).toMatch(/^\d+-7$/);
    const dirs = (await fs.ls("/")).entries?.filter((x) => x.isDir);
    expect(dirs).toEqual([
      { path: "/big/", isDir: true },
      { path: "/src/", isDir: true },
    ]);
    const stat = await fs.stat("/big/e1.txt");
    expect(stat.info).toEqual(e && { ...(await fs.ls("/big")).entries?.find((x) => x.path === "/big/e1.txt") });
    const glob = await fs.glob("*.txt", { path: "/big", maxResults: 10 });
    expect(glob.files).toHaveLength(10);
    expect(glob.truncated).toBe(true);
    expect(glob.files?.[0]).toMatchObject({ isDir: false, size: 7 });
  });

  it("never lists, searches or errors on a name that is not UTF-8, and says a search passed it by", async () => {
    const listed = (await fs.ls("/")).entries?.map((e) => e.path);
    expect(listed).toEqual(["/big/", "/empty.txt", "/escape", "/secret-link.txt", "/src/"]);
    const passed = { path: "/bad-\ufffd-name.txt", reason: "invalid_name" };
    const grep = await fs.grep("bad name", { outputMode: "files_with_matches" });
    expect([grep.files, grep.skipped]).toEqual([[], [passed]]);
    const glob = await fs.glob("bad-*");
    expect([glob.files, glob.skipped]).toEqual([[], [passed]]);
    expect((await fs.toolText({ op: "glob", pattern: "bad-*", path: "/" }, 1000))?.text).toBe(
      "No files found matching pattern 'bad-*'\n\nNote: not searched: /bad-\ufffd-name.txt (invalid name)",
    );
  });

  it("answers grep in every mode with the skipped list", async () => {
    const small = new FilesystemBackend({ rootDir: root, maxFileSizeMb: 100 / (1024 * 1024) });
    const r = await small.grep("needle", { path: "/src", outputMode: "count" });
    expect(r.error).toBeUndefined();
    expect(r.skipped?.length).toBe(40);
    expect(r.skipped?.[0]).toEqual({ path: "/src/deep/f01.ts", reason: "too_large" });
    // The same answer as the in-memory core over the same file, in every mode.
    const table = core.createFileTable();
    table.write("/src/deep/f01.ts", readFileSync(join(root, "src", "deep", "f01.ts")));
    for (const outputMode of ["content", "files_with_matches", "count"] as const) {
      const options = { path: "/src/deep/f01.ts", context: 1, maxCount: 2, outputMode };
      expect(await fs.grep("needle", options)).toEqual(table.grep({ ...options, pattern: "needle" }));
    }
    const c = await fs.grep("needle", { path: "/src/deep/f01.ts", context: 1, maxCount: 2 });
    expect(c.matches?.[0]).toEqual({ path: "/src/deep/f01.ts", line: 1, text: "needle 1.0 ünï" });
    expect(c.matches?.[1]).toEqual({ path: "/src/deep/f01.ts", line: 2, text: "line 1", context: true });
    expect(c.truncated).toBe(true);
    expect(c.skipped).toBeUndefined();
  });

  it("reports every failure as plain { code, message } data", async () => {
    const checks: [Promise<{ error?: unknown }>, string][] = [
      [fs.read("/escape/secret.txt"), "path_escape"],
      [fs.readBytes("/secret-link.txt"), "path_escape"],
      [fs.write("/escape/new.txt", "x"), "path_escape"],
      [fs.edit("/src/f00.ts", "not there at all", "y"), "string_not_found"],
      [fs.delete("/nope"), "file_not_found"],
      [fs.stat("/big/nope"), "file_not_found"],
      [fs.write("/src/f00.ts", "x", { ifVersion: "1-1" }), "conflict"],
      [fs.grep("needle", { path: "/escape" }), "path_escape"],
      [fs.glob("**", { path: "/nope/../../x" }), "path_escape"],
    ];
    for (const [call, code] of checks) {
      const r = (await call) as { error?: { code: string; message: string } };
      expect(r.error?.code).toBe(code);
      expect(typeof r.error?.message).toBe("string");
      expect(Object.getPrototypeOf(r.error)).toBe(Object.prototype);
    }
    expect(() => new FilesystemBackend({ rootDir: join(base, "missing") })).toThrow(expect.objectContaining({ code: "file_not_found" }));
    expect(() => new FilesystemBackend({ rootDir: root, durability: "sometimes" as "full" })).toThrow(
      expect.objectContaining({ code: "unsupported" }),
    );
    for (const maxFileSizeMb of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
      const open = () => new FilesystemBackend({ rootDir: root, maxFileSizeMb });
      expect(open, String(maxFileSizeMb)).toThrow(EngramError);
      expect(open, String(maxFileSizeMb)).toThrow(expect.objectContaining({ code: "unsupported" }));
    }
  });
});

/** How many fsyncs one write makes, through the native handle. */
async function syncsOf(durability: "full" | "relaxed", dir: string) {
  const fs = openRootedFs({ rootDir: dir, durability });
  const before = fs.syncs();
  const w = await fs.write("/n1/n2/f.txt", new TextEncoder().encode("x"));
  expect(w.path).toBe("/n1/n2/f.txt");
  const afterWrite = fs.syncs();
  expect((await fs.rename("/n1/n2/f.txt", "/n1/g.txt")).path).toBe("/n1/g.txt");
  const afterRename = fs.syncs();
  expect((await fs.delete("/n1/g.txt")).deleted).toBe(1);
  const afterDelete = fs.syncs();
  const d = (a: { files: number; dirs: number }, b: { files: number; dirs: number }) => ({
    files: b.files - a.files,
    dirs: b.dirs - a.dirs,
  });
  return { write: d(before, afterWrite), rename: d(afterWrite, afterRename), delete: d(afterRename, afterDelete) };
}

describe.skipIf(!native)("FilesystemBackend durability reaches Rust", () => {
  it("full: fsyncs the file, its directory and every parent it created; relaxed: none", async () => {
    const full = await syncsOf("full", mkdtempSync(join(base, "full-")));
    // mkdir n1 (sync /), mkdir n2 (sync /n1), the file, its directory /n1/n2.
    expect(full.write).toEqual({ files: 1, dirs: 3 });
    expect(full.rename).toEqual({ files: 0, dirs: 2 });
    expect(full.delete).toEqual({ files: 0, dirs: 1 });
    const relaxed = await syncsOf("relaxed", mkdtempSync(join(base, "relaxed-")));
    expect(relaxed).toEqual({ write: { files: 0, dirs: 0 }, rename: { files: 0, dirs: 0 }, delete: { files: 0, dirs: 0 } });
  });

  // strace installed and allowed to trace here (ptrace may be refused in a container).
  const strace = spawnSync("strace", ["-qq", "-e", "trace=fsync", "true"]).status === 0;
  it.skipIf(!strace)("the kernel sees the fsyncs of full and none of relaxed (strace of a child process)", () => {
    const counts: Record<string, number> = {};
    for (const durability of ["full", "relaxed"]) {
      const dir = mkdtempSync(join(base, `strace-${durability}-`));
      const log = join(dir, "..", `strace-${durability}.log`);
      execFileSync(
        "strace",
        [
          "-f",
          "-qq",
          "-e",
          "trace=fsync,fdatasync",
          "-o",
          log,
          process.execPath,
          "--import",
          "tsx",
          join(here, "fixtures/fs/sync-writer.ts"),
          dir,
          durability,
        ],
        { cwd: join(here, "../../.."), stdio: "pipe", timeout: 60_000 },
      );
      const lines = readFileSync(log, "utf8").split("\n");
      counts[durability] = lines.filter((l) => /\b(fsync|fdatasync)\(\d+\)\s+= 0/.test(l)).length;
    }
    // 10 writes of a new file in one existing directory: the file and the directory each time.
    expect(counts.full).toBeGreaterThanOrEqual(20);
    expect(counts.relaxed).toBe(0);
  });
});

describe("Router prefixes cross as an array", () => {
  it("routes, rejects an escaping prefix and a lone surrogate with typed errors", () => {
    const r = core.createRouter(["/memories", "/memories/deep/", "//skills//"]);
    expect(r.prefixes).toEqual(["/memories/", "/memories/deep/", "/skills/"]);
    expect(r.route("/memories/deep/x").route).toBe(1);
    expect(() => core.createRouter(["/ok", "/../bad"])).toThrow(expect.objectContaining({ code: "path_escape" }));
    expect(() => core.createRouter(["/a\ud800"])).toThrow(expect.objectContaining({ code: "invalid_path" }));
    expect(() => core.createRouter([`/${"x".repeat(100_000)}`, "/y"])).toThrow(expect.objectContaining({ code: "invalid_path" }));
    expect(core.createRouter([]).route("/a").route).toBeNull();
  });
});
