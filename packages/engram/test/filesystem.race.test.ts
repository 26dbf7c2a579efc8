/**
 * FilesystemBackend under hostile concurrency, with real child processes:
 * - containment while another process swaps a directory and a symlink to the outside
 *   (renameat2 RENAME_EXCHANGE in a loop) under every operation;
 * - compare-and-swap across processes (2 writers × 150 edits, no lost update);
 * - atomicity when a writer is killed with SIGKILL at random moments (never a torn file);
 * - temp files never listed and cleaned by the next writer.
 * FilesystemBackend always runs on the native engram-fs crate (the core only supplies error
 * texts), so these process-heavy tests run once, in the native project.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FilesystemBackend } from "../src/index.js";
import { version } from "./fixtures/fs/child.js";

const native = process.env.ENGRAM_CORE !== "wasm";
const here = import.meta.dirname;
/** `node --import tsx`, not the tsx wrapper: a signal must reach the process doing the work. */
const tsx = process.execPath;
const tsxArgs = ["--import", "tsx"];
const childScript = join(here, "fixtures/fs/child.ts");

let base: string;
beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), "engram-fs-race-"));
});
afterEach(() => {
  rmSync(base, { recursive: true, force: true });
});

function run(cmd: string, args: string[]): { child: ChildProcess; done: Promise<{ code: number | null; out: string }> } {
  const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"], cwd: join(here, "../../..") });
  let out = "";
  child.stdout?.on("data", (d) => (out += d));
  child.stderr?.on("data", (d) => (out += d));
  const done = new Promise<{ code: number | null; out: string }>((resolve) => child.on("close", (code) => resolve({ code, out })));
  return { child, done };
}

const ready = (child: ChildProcess) => new Promise<void>((resolve) => child.stdout?.once("data", () => resolve()));

/** Relative path → sha256:mtimeMs of everything under `dir`, links not followed. */
function fingerprint(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const st = statSync(join(dir, name));
    out[name] = st.isFile()
      ? `${createHash("sha256")
          .update(readFileSync(join(dir, name)))
          .digest("hex")}:${st.mtimeMs}`
      : `dir:${st.mtimeMs}`;
  }
  return out;
}

describe.skipIf(!native)("FilesystemBackend containment under a symlink-swapping process", () => {
  it("never reads, lists, creates, changes or deletes anything outside the root", async () => {
    const root = join(base, "root");
    const outside = join(base, "outside");
    mkdirSync(join(root, "d", "sub"), { recursive: true });
    mkdirSync(join(outside, "sub"), { recursive: true });
    writeFileSync(join(root, "d", "victim.txt"), "inside victim\n");
    writeFileSync(join(root, "d", "sub", "deep.txt"), "inside deep\n");
    for (const f of ["victim.txt", "sub/deep.txt", "canary-secret.txt"]) writeFileSync(join(outside, f), "CANARY-OUTSIDE\n");
    symlinkSync(outside, join(root, "l"));
    const before = fingerprint(outside);
    const fs = new FilesystemBackend({ rootDir: root, durability: "relaxed" });

    const swapper = run("python3", [join(here, "fixtures/fs/swap.py"), join(root, "d"), join(root, "l"), "4"]);
    await ready(swapper.child);
    let attempted = 0;
    let finished = false;
    const leaks: string[] = [];
    void swapper.done.then(() => {
      finished = true;
    });
    const seen = (what: string, r: unknown) => {
      attempted++;
      const text = JSON.stringify(r);
      if (text.includes("CANARY") || text.includes("canary") || text.includes("PWNED")) leaks.push(`${what}: ${text}`);
    };
    for (let i = 0; !finished; i++) {
      const results = await Promise.all([
        fs.read("/d/victim.txt"),
        fs.readBytes("/d/sub/deep.txt").then((r) => (r.data ? new TextDecoder().decode(r.data) : r)),
        fs.ls("/d"),
        fs.ls("/d/sub"),
        fs.stat("/d/victim.txt"),
        fs.write(`/d/new-${i}.txt`, "PWNED"),
        fs.write(`/d/sub/m${i}/x.txt`, "PWNED"),
        fs.edit("/d/victim.txt", "victim", "victim"),
        fs.delete(`/d/new-${i}.txt`),
        fs.delete(`/d/sub/m${i}`),
        fs.delete("/d/sub/deep.txt"),
        fs.grep("CANARY"),
        fs.grep("CANARY", { path: "/d" }),
        fs.glob("**/*.txt"),
        fs.glob("*", { path: "/d/sub" }),
      ]);
      for (const [k, r] of results.entries()) seen(`op ${k}`, r);
    }
    const { code, out } = await swapper.done;
    expect(code, out).toBe(0);
    const swaps = Number(out.trim().split("\n").pop());
    console.log(`race (TS): ${attempted} operations attempted during ${swaps} exchanges in 4 s`);
    expect(swaps).toBeGreaterThan(100);
    expect(attempted).toBeGreaterThan(100);
    expect(leaks).toEqual([]);
    expect(fingerprint(outside)).toEqual(before);
  }, 60_000);
});

describe.skipIf(!native)("FilesystemBackend compare-and-swap across processes", () => {
  it("2 processes × 150 edits of one file lose no update (conflicts retried)", async () => {
    writeFileSync(join(base, "shared.txt"), "<<END>>\n");
    const children = ["A", "B"].map((n) => run(tsx, [...tsxArgs, childScript, "edit", base, n, "150"]));
    const results = await Promise.all(children.map((c) => c.done));
    for (const r of results) expect(r, r.out).toMatchObject({ code: 0 });
    const stats = results.map((r) => JSON.parse(r.out.trim().split("\n").pop() as string) as { done: number; conflicts: number });
    const lines = readFileSync(join(base, "shared.txt"), "utf8").split("\n");
    const expected = ["A", "B"].flatMap((n) => Array.from({ length: 150 }, (_, i) => `${n}-${i}`));
    console.log(`edit race: ${lines.length - 2} of 300 edits kept; conflicts retried: ${stats.map((s) => s.conflicts).join(" + ")}`);
    expect(lines.filter((l) => /^[AB]-/.test(l)).sort()).toEqual(expected.sort());
  }, 120_000);

  it("a writer killed with SIGKILL at random moments never leaves a torn file; its temp files are never listed and are cleaned", async () => {
    const fs = new FilesystemBackend({ rootDir: base });
    const rounds = 12;
    for (let round = 0; round < rounds; round++) {
      const w = run(tsx, [...tsxArgs, childScript, "write-loop", base]);
      await ready(w.child);
      await new Promise((r) => setTimeout(r, 30 + Math.random() * 120));
      // Listings taken while the writer runs never show its temp files.
      const ls = await fs.ls("/");
      expect(ls.entries?.map((e) => e.path).filter((p) => p.includes(".engram-tmp"))).toEqual([]);
      w.child.kill("SIGKILL");
      await w.done;
      const text = readFileSync(join(base, "torn.txt"), "utf8");
      const n = Number(/^\d+\|v(\d+) /.exec(text)?.[1]);
      expect(text, `round ${round}`).toBe(version(n));
    }
    // The next write in that directory removes what a killed writer left behind.
    expect((await fs.write("/torn.txt", "after")).error).toBeUndefined();
    expect(readdirSync(base).filter((f) => f.startsWith(".engram-tmp"))).toEqual([]);
    expect((await fs.glob("**")).files?.map((f) => f.path)).toEqual(["/torn.txt"]);
  }, 120_000);
});
