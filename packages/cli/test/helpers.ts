/**
 * Spawning the `engram` command built from its sources (see `setup/command.ts`: bundled once per
 * run, each process started with plain `node`), bounded in time, each test in its own temporary
 * ENGRAM_HOME and working directory.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, beforeEach, inject } from "vitest";
import { type ScriptedModelServer, startScriptedModelServer } from "../../../examples/node/scripted-model-server.js";

export const REPO = resolve(fileURLToPath(new URL("../../..", import.meta.url)));
export const TSX = join(REPO, "node_modules/.bin/tsx");
export const BIN = join(REPO, "packages/cli/src/bin.ts");
/** tsx resolves `engram` and `@engram/*` to their sources through this file's `paths` (as vitest
 * does), so the command under test never runs against a stale build. */
export const TSCONFIG = join(REPO, "tsconfig.check.json");
/** The argv that runs the command from sources through tsx, module by module (for tests of what
 * the command loads). */
export const SOURCE_ARGV = [TSX, "--tsconfig", TSCONFIG, BIN];
/** The command the `cli` project's global setup bundled from the sources; absent when these
 * helpers run without that setup or with ENGRAM_TEST_CLI_SOURCES=1 (stack traces name the
 * sources): then the command runs through tsx. */
const bundled: string | undefined = process.env.ENGRAM_TEST_CLI_SOURCES ? undefined : inject("engramCommand");
/** The argv that runs the command: `node <bundle>` (a third of tsx's start-up), else {@link SOURCE_ARGV}. */
export const ENGRAM_ARGV = bundled === undefined ? SOURCE_ARGV : [process.execPath, bundled];

/** Whether a process command line (`/proc/<pid>/cmdline`, NULs as spaces) is the `engram` command
 * of {@link ENGRAM_ARGV}: the bundle, or tsx's child running the source (with its preflight). */
export function isEngramCommandLine(line: string): boolean {
  return bundled === undefined ? line.includes(BIN) && line.includes("preflight") : line.includes(bundled);
}

/** A fresh directory, removed by the returned function. */
export function tempDir(prefix: string): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** The parent's environment without any ENGRAM_* setting (ENGRAM_CORE, the project's core, is kept). */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("ENGRAM_") || k === "ENGRAM_CORE") env[k] = v;
  delete env.NO_COLOR;
  delete env.FORCE_COLOR;
  return { ...env, ...extra };
}

export interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A running `engram` process. */
export interface Running {
  child: ReturnType<typeof spawn>;
  /** Resolves when stdout contains `text`; rejects after `ms`. */
  waitForStdout(text: string, ms?: number): Promise<void>;
  done: Promise<Ran>;
}

/** Starts `engram <args>`; killed (SIGKILL) after `timeoutMs` (default 120 s). */
export function startEngram(args: string[], options: { env: NodeJS.ProcessEnv; cwd: string; input?: string; timeoutMs?: number }): Running {
  const [cmd, ...pre] = ENGRAM_ARGV as [string, ...string[]];
  const child = spawn(cmd, [...pre, ...args], { env: options.env, cwd: options.cwd, stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  const waiters: { text: string; resolve: () => void }[] = [];
  child.stdout.on("data", (d: Buffer) => {
    stdout += d.toString("utf8");
    for (const w of [...waiters]) if (stdout.includes(w.text)) w.resolve();
  });
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString("utf8");
  });
  if (options.input !== undefined) child.stdin.end(options.input);
  else child.stdin.end();
  const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 120_000);
  const done = new Promise<Ran>((resolve) =>
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    }),
  );
  return {
    child,
    done,
    waitForStdout(text, ms = 30_000) {
      if (stdout.includes(text)) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`no ${JSON.stringify(text)} in stdout after ${ms} ms:\n${stdout}\n${stderr}`)), ms);
        waiters.push({
          text,
          resolve: () => {
            clearTimeout(t);
            resolve();
          },
        });
      });
    },
  };
}

/** Runs `engram <args>` to completion. */
export function engram(args: string[], options: { env: NodeJS.ProcessEnv; cwd: string; input?: string; timeoutMs?: number }): Promise<Ran> {
  return startEngram(args, options).done;
}

/** The JSON lines of a `--json` output. */
export function jsonLines(stdout: string): Record<string, unknown>[] {
  return stdout
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** What a test of the command runs against: the file's scripted model server, and per test a
 * fresh ENGRAM_HOME, working directory and root directory with a clean environment. */
export interface CommandSandbox {
  server: ScriptedModelServer;
  home: ReturnType<typeof tempDir>;
  cwd: ReturnType<typeof tempDir>;
  root: ReturnType<typeof tempDir>;
  env: NodeJS.ProcessEnv;
}

/** Registers the hooks that give each test of the file a {@link CommandSandbox} (`take` receives
 * it before each test; directories are named `<prefix>home-…`, and removed after it). */
export function useCommandSandbox(prefix: string, extraEnv: Record<string, string>, take: (s: CommandSandbox) => void): void {
  let server: ScriptedModelServer;
  let sandbox: CommandSandbox | undefined;
  beforeAll(async () => {
    server = await startScriptedModelServer(() => ({ text: "unset" }));
  });
  afterAll(() => server.close());
  beforeEach(() => {
    const home = tempDir(`${prefix}home-`);
    const env = cleanEnv({ ENGRAM_HOME: home.path, ENGRAM_USER: "tester", ...extraEnv });
    sandbox = { server, home, cwd: tempDir(`${prefix}cwd-`), root: tempDir(`${prefix}root-`), env };
    server.requests.length = 0;
    take(sandbox);
  });
  afterEach(() => {
    for (const dir of [sandbox?.home, sandbox?.cwd, sandbox?.root]) dir?.remove();
  });
}
