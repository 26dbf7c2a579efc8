/**
 * FilesystemBackend containment: every escape attempt, through every operation, is refused with
 * `path_escape` or `invalid_path`, and nothing outside the root is read or written.
 */
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Backend, type Core, EngramError, FilesystemBackend, loadCore } from "../src/index.js";

let core: Core;
let base: string;
let root: string;
let outside: string;
let backend: FilesystemBackend;

/** Everything under a directory: relative path → sha256 + mode, to prove nothing changed. */
function fingerprint(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const p = join(dir, name);
    const st = statSync(p);
    out[name] = st.isFile() ? `${createHash("sha256").update(readFileSync(p)).digest("hex")}:${st.mtimeMs}` : "dir";
  }
  return out;
}

let before: Record<string, string>;

beforeAll(async () => {
  core = await loadCore();
  base = mkdtempSync(join(tmpdir(), "engram-sec-"));
  root = join(base, "root");
  outside = join(base, "outside");
  mkdirSync(join(root, "a", "b"), { recursive: true });
  mkdirSync(join(outside, "etc"), { recursive: true });
  writeFileSync(join(outside, "secret.txt"), "TOP SECRET needle\n");
  writeFileSync(join(outside, "etc", "passwd"), "root:x:0:0 needle\n");
  writeFileSync(join(root, "real.txt"), "inside needle\n");
  writeFileSync(join(root, "a", "b", "deep.txt"), "deep needle\n");
  symlinkSync(outside, join(root, "link_out"));
  symlinkSync(join(outside, "etc"), join(root, "etc_link"));
  symlinkSync(join(outside, "etc", "passwd"), join(root, "passwd_link"));
  symlinkSync(join(outside, "secret.txt"), join(root, "a", "secret_link"));
  symlinkSync(join(root, "loop_b"), join(root, "loop_a"));
  symlinkSync(join(root, "loop_a"), join(root, "loop_b"));
  symlinkSync(join(base, "does-not-exist"), join(root, "dangling"));
  symlinkSync("..", join(root, "a", "up"));
  symlinkSync("../..", join(root, "a", "up2"));
  symlinkSync(join(root, "real.txt"), join(root, "inside_link"));
  before = fingerprint(outside);
  backend = new FilesystemBackend({ rootDir: root, core });
});

afterAll(() => {
  rmSync(base, { recursive: true, force: true });
});

const ESCAPES: string[] = [
  "/../outside/secret.txt",
  "../outside/secret.txt",
  "/a/../../outside/secret.txt",
  "/a/b/../../../outside",
  "//..//outside",
  "/./../outside",
  "/link_out/secret.txt",
  "/link_out/etc/passwd",
  "/link_out",
  "/etc_link/passwd",
  "/etc_link",
  "/passwd_link",
  "/a/secret_link",
  "/loop_a",
  "/loop_a/x",
  "/dangling",
  "/a/up2/outside/secret.txt",
  "/a/up2",
  "/a/up/a/up2/outside/secret.txt",
  "~/secret.txt",
  "~root/.ssh/id_rsa",
  "/~/x",
  "C:/Windows/system32",
  "c:\\Windows",
  "/a\\..\\..\\outside",
  "..\\outside\\secret.txt",
  "/a\u0000/../../outside",
  "/real.txt\u0000.png",
  "/a/\nb",
];

type Op = [string, (b: Backend, p: string) => Promise<{ error?: { code: string } }>];
const OPS: Op[] = [
  ["read", (b, p) => b.read(p)],
  ["readBytes", (b, p) => b.readBytes(p)],
  ["write", (b, p) => b.write(p, "pwned")],
  ["edit", (b, p) => b.edit(p, "needle", "pwned")],
  ["ls", (b, p) => b.ls(p)],
  ["stat", (b, p) => b.stat(p)],
  ["delete", (b, p) => b.delete(p)],
  ["grep", (b, p) => b.grep("needle", { path: p })],
  ["glob", (b, p) => b.glob("**", { path: p })],
];

describe("FilesystemBackend escape table", () => {
  const cases = ESCAPES.flatMap((p) => OPS.map(([name, op]) => [name, p, op] as const));

  it(`has at least 50 escape attempts (${cases.length})`, () => {
    expect(cases.length).toBeGreaterThanOrEqual(50);
  });

  it.each(cases)("%s %j is refused", async (_name, p, op) => {
    const r = await op(backend, p);
    expect(r.error?.code, JSON.stringify(r)).toMatch(/^(path_escape|invalid_path)$/);
  });

  it("leaves everything outside the root untouched", () => {
    expect(fingerprint(outside)).toEqual(before);
  });

  it("never returns outside content through a search at the root", async () => {
    const grep = await backend.grep("needle", { outputMode: "files_with_matches" });
    expect(grep.files).toEqual(["/a/b/deep.txt", "/real.txt"]);
    const glob = await backend.glob("**");
    expect(glob.files?.map((f) => f.path)).not.toContain("/link_out/secret.txt");
    expect(JSON.stringify(glob)).not.toContain("TOP SECRET");
  });

  it("does not follow a link inside the root either", async () => {
    expect((await backend.read("/inside_link")).error?.code).toBe("permission_denied");
    expect((await backend.read("/real.txt")).content).toBe("inside needle");
  });

  it("treats encoded dots as a literal name inside the root", async () => {
    expect((await backend.read("/%2e%2e/%2e%2e/outside/secret.txt")).error?.code).toBe("file_not_found");
    expect((await backend.write("/%2e%2e/x.txt", "ok")).error).toBeUndefined();
    expect(readFileSync(join(root, "%2e%2e", "x.txt"), "utf8")).toBe("ok");
  });
});

describe("FilesystemBackend host-path mode", () => {
  it("maps host paths inside the root and refuses others", async () => {
    const host = new FilesystemBackend({ rootDir: root, virtualMode: false, core });
    const realRoot = host.rootDir;
    expect((await host.read(join(realRoot, "real.txt"))).content).toBe("inside needle");
    expect((await host.read(join(outside, "secret.txt"))).error?.code).toBe("path_escape");
    expect((await host.read("/etc/passwd")).error?.code).toBe("path_escape");
    const ls = await host.ls(join(realRoot, "a"));
    expect(ls.entries?.map((e) => e.path)).toEqual([
      join(realRoot, "a", "b/"),
      join(realRoot, "a", "secret_link"),
      join(realRoot, "a", "up"),
      join(realRoot, "a", "up2"),
    ]);
    expect((await host.read(join(realRoot, "missing.txt"))).error?.message).toBe(`File not found: '${join(realRoot, "missing.txt")}'`);
  });

  it("names host paths in errors, rendered from the error's structure (a root with $& and $' in its name, an error about a parent)", async () => {
    const odd = join(base, "root $& $' $`");
    mkdirSync(odd, { recursive: true });
    const host = new FilesystemBackend({ rootDir: odd, virtualMode: false, core });
    const r = host.rootDir;
    const missing = join(r, "missing.txt");
    // Exactly the core's own rendering for the host path (which escapes the quote).
    expect((await host.read(missing)).error).toMatchObject({ ...core.errorData("file_not_found", missing), subject: missing });
    expect((await host.write(join(r, "f.txt"), "x")).error).toBeUndefined();
    const nested = await host.write(join(r, "f.txt", "under.txt"), "y"); // the error is about the parent
    expect(nested.error?.subject?.startsWith(`${r}/f.txt`)).toBe(true);
  });

  it("requires an existing root directory", () => {
    expect(() => new FilesystemBackend({ rootDir: join(base, "nope"), core })).toThrow(EngramError);
    expect(() => new FilesystemBackend({ rootDir: join(root, "real.txt"), core })).toThrow(EngramError);
  });
});
