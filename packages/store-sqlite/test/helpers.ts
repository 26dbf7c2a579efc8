/** Child processes for the multi-process store tests (real processes, real files/servers). */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import Database from "better-sqlite3";
import { type Checkpointer, StateBackend, loadCore } from "engram";
import { checkpointFiles } from "engram/kit";
import { expect } from "vitest";
import { bundledFixture } from "../../engram/test/fixtures/node-bundle.js";
import { MIGRATIONS } from "../src/database.js";

const root = join(import.meta.dirname, "../../..");
export const WORKER = join(import.meta.dirname, "fixtures/worker.ts");

/** A running fixture process whose stdout lines are collected. */
export class Child {
  readonly proc: ChildProcess;
  readonly lines: string[] = [];
  stderr = "";
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  #waiters: (() => void)[] = [];

  /** Starts the fixture `script` (TypeScript), bundled once per test process (see
   * `bundledFixture`), with plain node: SIGKILL reaches the process doing the writes. */
  static async start(script: string, args: string[], env: Record<string, string> = {}): Promise<Child> {
    return new Child(await bundledFixture(script), args, env);
  }

  constructor(script: string, args: string[], env: Record<string, string> = {}) {
    // `node --import tsx`, not the tsx wrapper: SIGKILL must reach the process doing the writes
    // (killing the wrapper would leave the writer running as an orphan).
    // tsx resolves `engram` and `@engram/*` to their sources (as vitest does), never a stale build.
    // A bundle (`.mjs`, from `Child.start`) runs with plain node.
    const argv = script.endsWith(".mjs") ? [script, ...args] : ["--import", "tsx", script, ...args];
    this.proc = spawn(process.execPath, argv, {
      cwd: root,
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, TSX_TSCONFIG_PATH: join(root, "tsconfig.check.json"), ...env },
    });
    let buf = "";
    this.proc.stdout?.setEncoding("utf8").on("data", (d: string) => {
      buf += d;
      let nl = buf.indexOf("\n");
      while (nl >= 0) {
        this.lines.push(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
        nl = buf.indexOf("\n");
      }
      for (const w of this.#waiters.splice(0)) w();
    });
    this.proc.stderr?.setEncoding("utf8").on("data", (d: string) => {
      this.stderr += d;
    });
    this.exited = new Promise((resolve) => {
      this.proc.on("exit", (code, signal) => {
        for (const w of this.#waiters.splice(0)) w();
        resolve({ code, signal });
      });
    });
  }

  /** Resolves when a line satisfies `pred` (or rejects after `ms` or on exit). */
  async waitFor(pred: (line: string) => boolean, ms = 30_000): Promise<string> {
    const deadline = Date.now() + ms;
    for (;;) {
      const hit = this.lines.find(pred);
      if (hit !== undefined) return hit;
      if (this.proc.exitCode !== null || this.proc.signalCode !== null)
        throw new Error(`child exited without the expected line; stderr: ${this.stderr}`);
      if (Date.now() > deadline) throw new Error(`timed out waiting for a line; stderr: ${this.stderr}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 200);
        this.#waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  send(line: string): void {
    this.proc.stdin?.write(`${line}\n`);
  }

  kill(): void {
    this.proc.kill("SIGKILL");
  }
}

/** Starts one worker per argument list, waits until all are ready, lets them go together and
 * returns each one's last output line (parsed) once all exited cleanly. */
export async function raceWorkers(argLists: string[][], ms = 50_000): Promise<unknown[]> {
  const children = await Promise.all(argLists.map((a) => Child.start(WORKER, a)));
  try {
    await Promise.all(children.map((c) => c.waitFor((l) => l === '"ready"', ms)));
    for (const c of children) c.send("go");
    const results = await Promise.all(
      children.map(async (c) => {
        const timer = setTimeout(() => c.kill(), ms);
        const { code } = await c.exited;
        clearTimeout(timer);
        if (code !== 0) throw new Error(`worker failed (${code}): ${c.stderr}`);
        return JSON.parse(c.lines.at(-1) as string) as unknown;
      }),
    );
    return results;
  } finally {
    for (const c of children) if (c.proc.exitCode === null) c.kill();
  }
}

/**
 * Checks a thread that the `thread` workers (tags `tags`, `n` runs each) saved: every run's
 * request is in its messages and every file it wrote is in its files — no run saved over
 * another's.
 */
export async function threadIntact(checkpointer: Checkpointer, threadId: string, tags: string[], n: number): Promise<void> {
  const cp = await checkpointer.get(threadId);
  const asked = (cp?.messages ?? []).filter((m) => m.role === "user").map((m) => m.content);
  const expected = tags.flatMap((tag) => Array.from({ length: n }, (_, i) => `save /${tag}-${i}.md ${tag} ${i}`));
  expect([...asked].sort()).toEqual([...expected].sort());
  const core = await loadCore();
  const files = cp && checkpointFiles(cp, core);
  const state = files ? await StateBackend.restore(files, { core }) : new StateBackend({ core });
  for (const tag of tags) for (let i = 0; i < n; i++) expect((await state.read(`/${tag}-${i}.md`)).content).toBe(`${tag} ${i}`);
  expect(cp?.revision).toBeGreaterThan(0);
}

/** A SQLite database at `path` as a release of schema `version` left it (open, for filling). */
export function databaseOfSchema(path: string, version: number): Database.Database {
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.exec("CREATE TABLE engram_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)");
  for (let v = 1; v <= version; v++) {
    db.exec(MIGRATIONS[v - 1] as string);
    db.prepare("INSERT INTO engram_migrations VALUES (?, 0)").run(v);
  }
  return db;
}

/** `n` files of about 2 KB in namespace `fs/old` of a schema 3 database, as it stored them. */
export function fillSchema3(db: Database.Database, n: number): void {
  const insert = db.prepare("INSERT INTO engram_items (ns, key, value, revision, updated_at) VALUES ('fs/old', ?, ?, ?, ?)");
  db.transaction(() => {
    for (let i = 0; i < n; i++) insert.run(`/d${i % 13}/f${i}.md`, JSON.stringify({ n: i, text: "x".repeat(2000) }), i + 1, i);
    db.prepare("UPDATE engram_counters SET value = ? WHERE name = 'revision'").run(n);
  })();
}
