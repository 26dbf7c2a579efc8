/**
 * FilesystemBackend bounded work and durability: a grep over a large tree with a huge maxCount
 * keeps peak RSS bounded (measured in a child process), model-chosen caps are clamped, files
 * over the size limit are reported as skipped, hostile paths are refused at once, searches are
 * cancellable, both durability modes are atomic, and a long-term memory writer killed with
 * SIGKILL while saving never blocks the next save.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createEmptyMemory } from "../src/memory/longterm/index.js";
import { FileMemoryStorage } from "../src/memory/longterm/node.js";
import {
  CompositeBackend,
  createFilesystemTools,
  EngramError,
  FilesystemBackend,
  invokeTool,
  loadCore,
  StateBackend,
  type Tool,
} from "../src/index.js";

const native = process.env.ENGRAM_CORE !== "wasm";
const here = import.meta.dirname;
const childScript = join(here, "fixtures/fs/child.ts");

let base: string;
beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), "engram-fs-bounds-"));
});
afterEach(() => {
  rmSync(base, { recursive: true, force: true });
});

function child(args: string[]): { proc: ChildProcess; done: Promise<{ code: number | null; out: string }> } {
  const proc = spawn(process.execPath, ["--expose-gc", "--import", "tsx", childScript, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    cwd: join(here, "../../.."),
  });
  let out = "";
  proc.stdout?.on("data", (d) => (out += d));
  proc.stderr?.on("data", (d) => (out += d));
  return { proc, done: new Promise((resolve) => proc.on("close", (code) => resolve({ code, out }))) };
}

/** A tree of `dirs` × `files` files of `lines` lines, every line holding the common token. */
function tree(root: string, dirs: number, files: number, lines: number) {
  const body = "a line with the common token and some more text to make it longer\n".repeat(lines);
  for (let d = 0; d < dirs; d++) {
    mkdirSync(join(root, `d${d}`));
    for (let f = 0; f < files; f++) writeFileSync(join(root, `d${d}`, `f${f}.txt`), body);
  }
}

describe("FilesystemBackend bounded work", () => {
  it("uses the core for error texts on both cores", async () => {
    const fs = new FilesystemBackend({ rootDir: base, core: loadCore() });
    expect((await fs.read("/missing")).error?.code).toBe("file_not_found");
  });

  it.skipIf(!native)(
    "a grep of a common token over a large tree with a huge maxCount keeps peak RSS within +64 MB",
    async () => {
      tree(base, 100, 40, 200); // 4000 files, 800 000 matching lines, ~54 MB
      const { done } = child(["grep-rss", base]);
      const { code, out } = await done;
      expect(code, out).toBe(0);
      const r = JSON.parse(out.trim().split("\n").pop() as string) as { idle: number; peak: number; matches: number; truncated: boolean };
      console.log(
        `bounded grep: idle ${Math.round(r.idle / 1024)} MB, peak ${Math.round(r.peak / 1024)} MB, ${r.matches} matches (clamped)`,
      );
      expect(r.matches).toBe(10_000);
      expect(r.truncated).toBe(true);
      expect(r.peak - r.idle).toBeLessThan(64 * 1024);
    },
    120_000,
  );

  it.skipIf(!native)("clamps model-chosen caps to the configured ceiling", async () => {
    tree(base, 2, 3, 10);
    const fs = new FilesystemBackend({ rootDir: base, maxResults: 7 });
    const grep = await fs.grep("token", { maxCount: 1_000_000 });
    expect([grep.matches?.length, grep.truncated]).toEqual([7, true]);
    const files = await fs.grep("token", { outputMode: "files_with_matches" });
    expect([files.files?.length, files.truncated]).toEqual([6, false]);
    const glob = await fs.glob("**", { maxResults: 1_000_000 });
    expect([glob.files?.length, glob.truncated]).toEqual([6, false]);
    const small = new FilesystemBackend({ rootDir: base, maxResults: 4 });
    expect((await small.glob("**")).truncated).toBe(true);
  });

  it.skipIf(!native)("reports files over the size limit as skipped, never as a silent no-match", async () => {
    writeFileSync(join(base, "big.txt"), `needle\n${"x".repeat(2 * 1024 * 1024)}`);
    writeFileSync(join(base, "small.txt"), "needle\n");
    const fs = new FilesystemBackend({ rootDir: base, maxFileSizeMb: 1 });
    const r = await fs.grep("needle");
    expect(r.matches?.map((m) => m.path)).toEqual(["/small.txt"]);
    expect(r.skipped).toEqual([{ path: "/big.txt", reason: "too_large" }]);
    expect((await fs.grep("needle", { path: "/big.txt" })).skipped).toEqual([{ path: "/big.txt", reason: "too_large" }]);
    expect((await fs.grep("needle", { path: "/small.txt" })).skipped).toBeUndefined();
  });

  it.skipIf(!native)("reports files whose names no virtual path can hold as skipped, never as a silent no-match", async () => {
    writeFileSync(join(base, "ok.txt"), "needle\n");
    writeFileSync(join(base, "a\nb.txt"), "needle\n");
    writeFileSync(join(base, "~$draft.txt"), "needle\n");
    const r = await new FilesystemBackend({ rootDir: base }).grep("needle");
    expect(r.matches?.map((m) => m.path)).toEqual(["/ok.txt"]);
    expect(r.skipped).toEqual([
      { path: "/a\\nb.txt", reason: "invalid_name" },
      { path: "/~$draft.txt", reason: "invalid_name" },
    ]);
  });

  it.skipIf(!native)("tells the model what its grep could not search, within the output cap", async () => {
    writeFileSync(join(base, "big.txt"), `needle\n${"x".repeat(2 * 1024 * 1024)}`);
    writeFileSync(join(base, "~$draft.txt"), "needle\n");
    const backend = new FilesystemBackend({ rootDir: base, maxFileSizeMb: 1 });
    const grep = createFilesystemTools({ backend, maxOutputChars: 200 }).find((t) => t.name === "grep") as Tool<never>;
    const text = (await invokeTool(grep, { pattern: "needle" })).content;
    expect(text).toBe("No matches found for pattern 'needle'\n\nNote: not searched: /big.txt (too large), /~$draft.txt (invalid name)");
    writeFileSync(join(base, "hit.txt"), "needle\n".repeat(500));
    const capped = (await invokeTool(grep, { pattern: "needle", output_mode: "content" })).content;
    expect(capped.endsWith("\n\nNote: not searched: /big.txt (too large), /~$draft.txt (invalid name)")).toBe(true);
    expect(capped).toContain("[Output truncated at");
    expect(capped.length).toBeLessThan(400);
  });

  it.skipIf(!native)("carries what a search skipped through a composite, under outer paths, to the model", async () => {
    mkdirSync(join(base, "project"));
    writeFileSync(join(base, "project", "big.txt"), `needle\n${"x".repeat(2 * 1024 * 1024)}`);
    writeFileSync(join(base, "project", "~$draft.txt"), "needle\n");
    const fs = new FilesystemBackend({ rootDir: join(base, "project"), maxFileSizeMb: 1 });
    const mounted = new CompositeBackend(new StateBackend(), { "/project/": fs });
    expect((await mounted.grep("needle")).skipped).toEqual([
      { path: "/project/big.txt", reason: "too_large" },
      { path: "/project/~$draft.txt", reason: "invalid_name" },
    ]);
    const asDefault = new CompositeBackend(fs, { "/memories/": new StateBackend() });
    expect((await asDefault.grep("needle")).skipped?.map((k) => k.path)).toEqual(["/big.txt", "/~$draft.txt"]);
    const grep = createFilesystemTools({ backend: mounted }).find((t) => t.name === "grep") as Tool<never>;
    expect((await invokeTool(grep, { pattern: "needle" })).content).toBe(
      "No matches found for pattern 'needle'\n\nNote: not searched: /project/big.txt (too large), /project/~$draft.txt (invalid name)",
    );
    const memoriesOnly = await asDefault.grep("needle", { path: "/memories" });
    expect([memoriesOnly.error, memoriesOnly.skipped]).toEqual([undefined, undefined]);
  });

  it.skipIf(!native)("a glob names what its walk could not look into, never a silent partial list", async () => {
    mkdirSync(join(base, "project"));
    const root = join(base, "project");
    writeFileSync(join(root, "ok.docx"), "x");
    writeFileSync(join(root, "~$ok.docx"), "x");
    // Deeper than the walk goes (256 levels): the directory it stops at is named.
    const deep = Array.from({ length: 257 }, () => "d");
    mkdirSync(join(root, ...deep), { recursive: true });
    writeFileSync(join(root, ...deep, "lost.docx"), "x");
    const tooDeep = `/${deep.join("/")}`;
    const fs = new FilesystemBackend({ rootDir: root });
    const r = await fs.glob("**/*.docx");
    expect(r.files?.map((f) => f.path)).toEqual(["/ok.docx"]);
    expect(r.skipped).toEqual([
      { path: tooDeep, reason: "too_deep" },
      { path: "/~$ok.docx", reason: "invalid_name" },
    ]);
    expect((await fs.glob("**/*.docx", { path: "/d/d" })).skipped).toEqual([{ path: tooDeep, reason: "too_deep" }]);
    // A file one level below the deepest directory has a path no virtual path can hold.
    expect((await new FilesystemBackend({ rootDir: join(root, "d") }).glob("**")).skipped?.map((k) => k.reason)).toEqual(["invalid_name"]);
    mkdirSync(join(base, "clean"));
    writeFileSync(join(base, "clean", "a.docx"), "x");
    expect(await new FilesystemBackend({ rootDir: join(base, "clean") }).glob("*.docx")).toEqual({
      files: [expect.objectContaining({ path: "/a.docx" })],
      truncated: false,
    });
    const note = `Note: not searched: ${tooDeep} (too deep), /~$ok.docx (invalid name)`;
    const glob = createFilesystemTools({ backend: fs }).find((t) => t.name === "glob") as Tool<never>;
    expect((await invokeTool(glob, { pattern: "**/*.docx" })).content).toBe(`/ok.docx\n\n${note}`);
    expect((await invokeTool(glob, { pattern: "**/*.pdf" })).content).toBe(`No files found matching pattern '**/*.pdf'\n\n${note}`);
    // Through a composite (the engram command's shape): under outer paths, to the model.
    const mounted = new CompositeBackend(new StateBackend(), { "/project/": fs });
    expect((await mounted.glob("**/*.docx")).skipped?.map((k) => k.path)).toEqual([`/project${tooDeep}`, "/project/~$ok.docx"]);
    const viaComposite = createFilesystemTools({ backend: mounted }).find((t) => t.name === "glob") as Tool<never>;
    expect((await invokeTool(viaComposite, { pattern: "**/*.docx" })).content).toBe(
      `/project/ok.docx\n\nNote: not searched: /project${tooDeep} (too deep), /project/~$ok.docx (invalid name)`,
    );
    const asDefault = new CompositeBackend(fs, { "/memories/": new StateBackend() });
    expect((await asDefault.glob("**/*.docx")).skipped?.map((k) => k.path)).toEqual([tooDeep, "/~$ok.docx"]);
    expect((await asDefault.glob("*", { path: "/memories" })).skipped).toBeUndefined();
  });

  it.skipIf(!native)("an ls names the entries it cannot list, through the tool and a composite", async () => {
    const root = join(base, "project");
    mkdirSync(join(root, "docs"), { recursive: true });
    writeFileSync(join(root, "docs", "ok.md"), "x");
    writeFileSync(join(root, "docs", "~$ok.md"), "x");
    writeFileSync(join(root, "docs", "a\nb.md"), "x");
    const fs = new FilesystemBackend({ rootDir: root });
    const listed = await fs.ls("/docs");
    expect(listed.entries?.map((e) => e.path)).toEqual(["/docs/ok.md"]);
    expect(listed.skipped).toEqual([
      { path: "/docs/a\\nb.md", reason: "invalid_name" },
      { path: "/docs/~$ok.md", reason: "invalid_name" },
    ]);
    expect((await fs.ls("/")).skipped).toBeUndefined();
    const ls = createFilesystemTools({ backend: fs }).find((t) => t.name === "ls") as Tool<never>;
    expect((await invokeTool(ls, { path: "/docs" })).content).toBe(
      "/docs/ok.md (1 bytes)\n\nNote: not listed: /docs/a\\nb.md (invalid name), /docs/~$ok.md (invalid name)",
    );
    const mounted = new CompositeBackend(new StateBackend(), { "/project/": fs });
    expect((await mounted.ls("/project/docs")).skipped?.map((k) => k.path)).toEqual(["/project/docs/a\\nb.md", "/project/docs/~$ok.md"]);
    const viaComposite = createFilesystemTools({ backend: mounted }).find((t) => t.name === "ls") as Tool<never>;
    expect((await invokeTool(viaComposite, { path: "/project/docs" })).content).toContain("Note: not listed: /project/docs/a\\nb.md");
    const asDefault = new CompositeBackend(fs, { "/memories/": new StateBackend() });
    expect((await asDefault.ls("/docs")).skipped?.map((k) => k.path)).toEqual(["/docs/a\\nb.md", "/docs/~$ok.md"]);
  });

  it.skipIf(!native)("refuses a 4 KB path and an absurdly deep one with invalid_path", async () => {
    const fs = new FilesystemBackend({ rootDir: base });
    const long = `/${"a".repeat(4096)}`;
    const deep = "/a".repeat(2000);
    for (const p of [long, deep]) {
      for (const r of [
        await fs.read(p),
        await fs.write(p, "x"),
        await fs.ls(p),
        await fs.stat(p),
        await fs.delete(p),
        await fs.grep("x", { path: p }),
      ]) {
        expect(r.error?.code).toBe("invalid_path");
      }
    }
    expect(readdirSync(base)).toEqual([]);
  });

  it.skipIf(!native)("cancels a search through an AbortSignal (per call or per backend)", async () => {
    tree(base, 40, 25, 50);
    const fs = new FilesystemBackend({ rootDir: base });
    const aborted = new AbortController();
    aborted.abort();
    await expect(fs.grep("token", { signal: aborted.signal })).rejects.toMatchObject({ code: "aborted" });
    const ctl = new AbortController();
    const running = fs.grep("nothing-matches-this", { signal: ctl.signal });
    ctl.abort();
    await expect(running).rejects.toBeInstanceOf(EngramError);
    const owner = new AbortController();
    const scoped = new FilesystemBackend({ rootDir: base, signal: owner.signal });
    owner.abort();
    await expect(scoped.glob("**")).rejects.toMatchObject({ code: "aborted" });
    expect((await fs.grep("token", { outputMode: "count" })).truncated).toBe(false);
  });
});

describe("FilesystemBackend durability", () => {
  it.skipIf(!native).each(["full", "relaxed"] as const)(
    "durability %s writes atomically and keeps compare-and-swap",
    async (durability) => {
      const fs = new FilesystemBackend({ rootDir: base, durability });
      const a = await fs.write("/x/y.txt", "one");
      expect(a.error).toBeUndefined();
      expect((await fs.write("/x/y.txt", "two", { ifVersion: "0" })).error?.code).toBe("conflict");
      expect((await fs.write("/x/y.txt", "two", { ifVersion: a.version })).error).toBeUndefined();
      expect((await fs.read("/x/y.txt")).content).toBe("two");
      expect(readdirSync(join(base, "x"))).toEqual(["y.txt"]);
    },
  );
});

describe.skipIf(!native)("FileMemoryStorage and killed writers", () => {
  it("a writer killed with SIGKILL while saving never blocks the next save", async () => {
    const storage = new FileMemoryStorage({ dir: base, lockTimeoutMs: 2000 });
    for (let round = 0; round < 8; round++) {
      const w = child(["save-loop", base]);
      await new Promise<void>((resolve) => w.proc.stdout?.once("data", () => resolve()));
      await new Promise((r) => setTimeout(r, 20 + Math.random() * 80));
      w.proc.kill("SIGKILL");
      await w.done;
      // Within lockTimeoutMs or it throws `conflict`: the kernel released the dead writer's lock.
      const loaded = await storage.load("u");
      expect((await storage.save("u", undefined, createEmptyMemory(), loaded.revision)).ok).toBe(true);
    }
    // Temp files of killed writers are removed by the first save of a storage started afterwards.
    const restarted = new FileMemoryStorage({ dir: base });
    const loaded = await restarted.load("u");
    expect((await restarted.save("u", undefined, createEmptyMemory(), loaded.revision)).ok).toBe(true);
    expect(readdirSync(join(base, "users", "u"))).toEqual(["memory.json"]);
  }, 120_000);
});
