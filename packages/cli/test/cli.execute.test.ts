/**
 * `execute` through the real `engram run`: a scripted model asks for each attack as a tool call
 * and the command runs it in the sandbox (`--mode auto`, so no review stops it); then the modes,
 * the user's allow/deny rules, cancelling, and `kill -9` of the command. The disk, the process
 * table (/proc) and servers the test runs are checked, not only the answers.
 */
import { createSocket } from "node:dgram";
import { createRequire } from "node:module";
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { type Server, createServer } from "node:net";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  type ScriptedModelServer,
  type WireRequest,
  afterToolResult,
  lastUserText,
  startScriptedModelServer,
} from "../../../examples/node/scripted-model-server.js";
import { loadConfig } from "../src/config.js";
import { Permissions, simpleCommands } from "../src/permissions.js";
import { isEngramCommandLine, type Ran, cleanEnv, jsonLines, startEngram, tempDir } from "./helpers.js";

type Call = { name: string; args: Record<string, unknown> };

/** The calls the model makes for each task (the task text is the key); after the tool results
 * it answers "done". */
const plans = new Map<string, Call[]>();
let server: ScriptedModelServer;
const home = tempDir("engram-exec-home-");
const fakeHome = tempDir("engram-exec-userhome-");
const outside = tempDir("engram-exec-outside-");
const cwd = tempDir("engram-exec-cwd-");
/** A distinct number per test worker (both cores run this file, maybe at once). */
const tag = `${process.pid}`;
const SECRET_KEY = "sk-proj-parentSecretKey1234567890abcdef";
/** What this kernel lacks for the sandbox (undefined when it has all): the tests that run a
 * command need it; where it is missing, the command must refuse instead (tested below). */
const sandboxMissing: string | undefined =
  (createRequire(import.meta.url)("@engram/native") as { sandboxSupport(): { missing?: string | null } }).sandboxSupport().missing ??
  undefined;

beforeAll(async () => {
  server = await startScriptedModelServer((request: WireRequest) => {
    const task = request.messages.find((m) => m.role === "user")?.content ?? lastUserText(request);
    if (afterToolResult(request)) return { text: "done" };
    const calls = plans.get(task ?? "");
    return calls ? { toolCalls: calls.map((c, i) => ({ ...c, id: `c${i}` })) } : { text: "no plan" };
  });
  writeFileSync(join(home.path, "config.json"), JSON.stringify({ permissions: { deny: ["execute(rm *)"] } }));
  mkdirSync(join(fakeHome.path, ".ssh"));
  writeFileSync(join(fakeHome.path, ".ssh", "id_ed25519"), "-----BEGIN OPENSSH PRIVATE KEY-----\nFAKE-SSH-KEY-CONTENT\n");
  writeFileSync(join(outside.path, "secret.txt"), "OUTSIDE-SECRET\n");
});
afterAll(async () => {
  await server.close();
  for (const dir of [home, fakeHome, outside, cwd]) dir.remove();
});

const baseEnv = (extra: Record<string, string> = {}) =>
  cleanEnv({
    ENGRAM_HOME: home.path,
    ENGRAM_USER: "tester",
    ENGRAM_LONG_TERM_MEMORY: "false",
    HOME: fakeHome.path,
    OPENAI_API_KEY: SECRET_KEY,
    ENGRAM_API_KEY: `${SECRET_KEY}-engram`,
    ...extra,
  });

/** Starts `engram --root <root> <flags> run --json <runFlags> <task>` with `calls` scripted for the task. */
function startRun(
  task: string,
  calls: Call[],
  root: string,
  flags: string[] = ["--mode", "auto"],
  env = baseEnv(),
  runFlags: string[] = [],
) {
  plans.set(task, calls);
  const model = ["--base-url", server.baseURL, "--model", "openai-compatible:scripted"];
  const args = [...model, "--root", root, ...flags, "run", "--json", ...runFlags, task];
  return startEngram(args, { env, cwd: cwd.path, timeoutMs: 180_000 });
}

/** The tool results the model received for `task`, by call index. */
function results(task: string): string[] {
  const request = [...server.requests].reverse().find((r) => r.messages.find((m) => m.role === "user")?.content === task);
  const tools = (request?.messages ?? []).filter((m) => m.role === "tool");
  return (plans.get(task) ?? []).map((_, i) => tools.find((m) => m.tool_call_id === `c${i}`)?.content ?? "(no result)");
}

async function runCalls(task: string, calls: Call[], root: string, flags?: string[], env?: NodeJS.ProcessEnv, runFlags?: string[]) {
  const ran = await startRun(task, calls, root, flags, env, runFlags).done;
  return { ran, results: results(task) };
}

const exec = (command: string, timeout?: number): Call => ({ name: "execute", args: { command, ...(timeout && { timeout }) } });

// ---- the process table ----------------------------------------------------------------------

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
  } catch {
    return "";
  }
}

/** Live processes whose command line holds `marker` (zombies have none). */
function processesWith(marker: string): number[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => pid !== process.pid && cmdline(pid).includes(marker));
}

function statusKb(pid: number, field: string): number | undefined {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

function parent(pid: number): number | undefined {
  try {
    const m = /^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** The `engram` process running `pid`'s command. The sandbox's forks of that process show the
 * same command line, so it is the topmost of them (under tsx, the child running the source). */
function engramProcessOf(pid: number): number {
  let found: number | undefined;
  for (let p = parent(pid); p !== undefined && p > 1; p = parent(p)) {
    const line = cmdline(p);
    if (isEngramCommandLine(line)) found = p;
    else if (found !== undefined) break;
  }
  if (found === undefined) throw new Error(`no engram process above ${pid}`);
  started.push(found);
  return found;
}

/** The engram processes a test found: killed after it, whatever happened (tsx's own process
 * is what the helper's timeout kills). */
const started: number[] = [];
afterEach(() => {
  for (const pid of started.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Ended already.
    }
  }
});

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor<T>(probe: () => T | undefined, ms: number, what: string): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await pause(10);
  }
}

const final = (ran: Ran) => jsonLines(ran.stdout).at(-1) ?? {};

describe.skipIf(sandboxMissing)("engram run: attacks through the model's execute calls (--mode auto)", { timeout: 240_000 }, () => {
  it("cannot write or read outside the root, follow a link out, reach the network, or see the parent's keys; npm test runs", async () => {
    const root = tempDir("engram-exec-root-");
    try {
      writeFileSync(join(root.path, "keep.txt"), "keep\n");
      symlinkSync(join(outside.path, "secret.txt"), join(root.path, "link-out"));
      symlinkSync(outside.path, join(root.path, "dir-out"));
      mkdirSync(join(root.path, "proj"));
      writeFileSync(
        join(root.path, "proj", "package.json"),
        JSON.stringify({ name: "tiny", private: true, scripts: { test: "node --test sum.test.js" } }),
      );
      writeFileSync(
        join(root.path, "proj", "sum.test.js"),
        'const test = require("node:test");\nconst assert = require("node:assert");\ntest("sums", () => assert.strictEqual(1 + 1, 2));\n',
      );
      // A TCP server and a DNS (UDP) server on 127.0.0.1: the command must reach neither.
      let tcpConnections = 0;
      const tcp: Server = createServer((s) => {
        tcpConnections++;
        s.destroy();
      });
      await new Promise<void>((r) => tcp.listen(0, "127.0.0.1", r));
      const tcpPort = (tcp.address() as { port: number }).port;
      let dnsQueries = 0;
      const dns = createSocket("udp4", () => dnsQueries++);
      await new Promise<void>((r) => dns.bind(0, "127.0.0.1", r));
      const dnsPort = dns.address().port;
      const db = join(home.path, "engram.db");

      const task = `attacks ${tag}`;
      const { ran, results: out } = await runCalls(
        task,
        [
          exec(`echo pwned > ${outside.path}/written.txt`),
          exec(`echo pwned > ${fakeHome.path}/written.txt`),
          exec(`cat ${fakeHome.path}/.ssh/id_ed25519`),
          exec(`head -c 64 ${db} | od -c | head -2`),
          exec("cat link-out; echo linked > dir-out/through-link.txt"),
          exec(
            `node -e "require('net').connect(${tcpPort}, '127.0.0.1').on('connect', () => console.log('CONNECTED')).on('error', (e) => console.log('tcp', e.code))"`,
          ),
          exec(
            `node -e "const d = require('dns'); d.setServers(['127.0.0.1:${dnsPort}']); d.resolve4('example.com', (e, a) => console.log(e ? 'dns ' + e.code : 'RESOLVED ' + a))"; getent hosts example.com || echo no-dns`,
          ),
          exec("env"),
          exec("true && rm -f keep.txt"),
          exec("cd proj && npm_config_update_notifier=false npm test"),
        ],
        root.path,
      );
      tcp.close();
      dns.close();
      expect(ran.code, ran.stderr).toBe(0);
      const [outsideWrite, homeWrite, sshRead, dbRead, links, tcpOut, dnsOut, envOut, denied, npmTest] = out as [
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
      ];
      // Writes outside the root (the test's /tmp directory, $HOME) fail and leave nothing.
      expect(outsideWrite).toMatch(/Permission denied|Read-only/);
      expect(existsSync(join(outside.path, "written.txt"))).toBe(false);
      expect(homeWrite).toMatch(/Permission denied|Read-only/);
      expect(existsSync(join(fakeHome.path, "written.txt"))).toBe(false);
      // Reads of ~/.ssh and the Engram database fail.
      expect(sshRead).toMatch(/Permission denied/);
      expect(sshRead).not.toContain("FAKE-SSH-KEY-CONTENT");
      expect(existsSync(db)).toBe(true);
      expect(dbRead).toMatch(/Permission denied/);
      expect(dbRead).not.toContain("S   Q   L   i   t   e");
      // A link out of the root is not followed, to read or to write.
      expect(links).not.toContain("OUTSIDE-SECRET");
      expect(links).toMatch(/Permission denied/);
      expect(existsSync(join(outside.path, "through-link.txt"))).toBe(false);
      expect(readFileSync(join(outside.path, "secret.txt"), "utf8")).toBe("OUTSIDE-SECRET\n");
      // No network: 0 connections, 0 DNS queries.
      expect(tcpOut).not.toContain("CONNECTED");
      expect(tcpConnections).toBe(0);
      expect(dnsOut).not.toContain("RESOLVED");
      expect(dnsOut).toContain("no-dns");
      expect(dnsQueries).toBe(0);
      // The parent's keys are not in the command's environment.
      expect(envOut).toContain("PATH=");
      expect(envOut).not.toContain(SECRET_KEY);
      expect(envOut).not.toMatch(/OPENAI_API_KEY|ENGRAM_/);
      // The user's deny rule (execute(rm *)) answered the call as denied; nothing ran.
      expect(denied).toMatch(/^Denied: .*execute\(rm \*\)/);
      expect(existsSync(join(root.path, "keep.txt"))).toBe(true);
      // A real toolchain runs confined: npm runs node --test, which passes.
      expect(npmTest).toContain("[Command succeeded with exit code 0]");
      expect(npmTest).toMatch(/# pass 1/);
    } finally {
      root.remove();
    }
  });

  it("kills sleep 600 at its timeout and a fork bomb, leaving no process; a 10 GB file stops at the size limit", async () => {
    const root = tempDir("engram-exec-root-");
    const sleepMarker = `sleep 600.${tag}1`;
    const bomb = `bomb${tag}`;
    try {
      const task = `limits ${tag}`;
      let bombPeak = 0;
      const sampler = setInterval(() => {
        bombPeak = Math.max(bombPeak, processesWith(bomb).length);
      }, 100);
      const { ran, results: out } = await runCalls(
        task,
        [
          exec(sleepMarker, 1),
          exec(`${bomb}() { ${bomb} | ${bomb} & }; ${bomb}; sleep 60`, 3),
          exec("head -c 10G /dev/zero > big.bin", 120),
        ],
        root.path,
      );
      clearInterval(sampler);
      expect(ran.code, ran.stderr).toBe(0);
      // The bomb met the process limit (1024 per command; the pids cgroup bounds root): its
      // "Cannot fork" below proves it ran into it. Once forks fail the bomb dies out within
      // milliseconds, so a sampler on a loaded machine may see none of it; it never sees more.
      console.log(`fork bomb: at most ${bombPeak} of its processes seen at once`);
      expect(bombPeak).toBeLessThanOrEqual(1024);
      const [slept, bombed, big] = out as [string, string, string];
      expect(slept).toContain("[Command killed: it ran past its timeout]");
      // Killed at its timeout, or ended early when the limit also refused its own `sleep`.
      expect(bombed).toMatch(/\[Command killed: it ran past its timeout\]|\[Command failed with exit code \d+\]/);
      expect(bombed).toContain("Cannot fork");
      expect(processesWith(sleepMarker)).toEqual([]);
      expect(processesWith(bomb)).toEqual([]);
      // RLIMIT_FSIZE (1 GiB) ends the writer: the file is never larger.
      expect(big).not.toContain("[Command succeeded");
      expect(statSync(join(root.path, "big.bin")).size).toBeLessThanOrEqual(2 ** 30);
    } finally {
      root.remove();
    }
  });

  it("caps 1 GB of output: the answer keeps head and tail, and the command's RSS grows < 64 MB", async () => {
    const root = tempDir("engram-exec-root-");
    const marker = `output-${tag}`;
    try {
      const task = `output ${tag}`;
      const running = startRun(task, [exec(`yes ${marker} | head -c 1000000000; echo`)], root.path);
      const yesPid = await waitFor(() => processesWith(`yes ${marker}`)[0], 60_000, "the yes process");
      const pid = engramProcessOf(yesPid);
      const before = statusKb(pid, "VmRSS") ?? 0;
      let peak = before;
      let hwm = statusKb(pid, "VmHWM") ?? 0;
      const hwmBefore = hwm;
      const sampler = setInterval(() => {
        peak = Math.max(peak, statusKb(pid, "VmRSS") ?? 0);
        hwm = Math.max(hwm, statusKb(pid, "VmHWM") ?? 0);
      }, 20);
      const ran = await running.done;
      clearInterval(sampler);
      expect(ran.code, ran.stderr).toBe(0);
      const [output] = results(task) as [string];
      expect(output).toContain("[Output was cut to its head and tail]");
      expect(output.length).toBeLessThan(40_000);
      // The high-water mark counts peaks between samples too, once it passes the one before.
      const grown = Math.max(peak, hwm > hwmBefore ? hwm : 0) - before;
      console.log(`1 GB of output: engram RSS ${before >> 10} MB before, +${grown >> 10} MB at most`);
      expect(grown).toBeLessThan(64 * 1024);
    } finally {
      root.remove();
    }
  });

  it("Ctrl-C (SIGINT) of the command kills the running command's processes within a second", async () => {
    const root = tempDir("engram-exec-root-");
    const marker = `sleep 600.${tag}2`;
    try {
      const running = startRun(`cancel ${tag}`, [exec(marker, 600)], root.path);
      const sleeper = await waitFor(() => processesWith(marker)[0], 60_000, "the sleep");
      const pid = engramProcessOf(sleeper);
      const sent = Date.now();
      process.kill(pid, "SIGINT");
      await waitFor(() => (processesWith(marker).length === 0 ? true : undefined), 5_000, "the sleep to end");
      const took = Date.now() - sent;
      console.log(`Ctrl-C: the command's processes were gone ${took} ms after SIGINT`);
      expect(took).toBeLessThan(1000);
      const ran = await running.done;
      expect(ran.code).toBe(130);
    } finally {
      root.remove();
    }
  });

  it("kill -9 of the engram process during a command leaves no process behind", async () => {
    const root = tempDir("engram-exec-root-");
    const marker = `sleep 600.${tag}3`;
    try {
      const running = startRun(`orphan ${tag}`, [exec(marker, 600)], root.path);
      const sleeper = await waitFor(() => processesWith(marker)[0], 60_000, "the sleep");
      process.kill(engramProcessOf(sleeper), "SIGKILL");
      await running.done;
      // The kernel ends the PID namespace when its parent dies; give it a moment to reap.
      await waitFor(() => (processesWith(marker).length === 0 ? true : undefined), 5_000, "no sleep left");
      expect(processesWith(marker)).toEqual([]);
    } finally {
      root.remove();
    }
  });
});

describe("engram run: modes and the user's rules", { timeout: 240_000 }, () => {
  it("plan mode offers no tool that writes or runs, and never writes or executes (checked on disk)", async () => {
    const root = tempDir("engram-exec-root-");
    try {
      const task = `plan ${tag}`;
      const { ran, results: out } = await runCalls(
        task,
        [{ name: "write_file", args: { file_path: "/planned.txt", content: "x" } }, exec("touch executed.txt")],
        root.path,
        ["--mode", "plan", "--write"],
      );
      expect(ran.code, ran.stderr).toBe(0);
      const offered = server.requests.find((r) => lastUserText(r) === task)?.tools?.map((t) => t.function.name) ?? [];
      expect(offered).toContain("read_file");
      for (const tool of ["write_file", "edit_file", "delete", "execute"]) expect(offered).not.toContain(tool);
      for (const r of out) expect(r).toMatch(/^Denied: .*plan mode/);
      expect(readdirSync(root.path)).toEqual([]);
    } finally {
      root.remove();
    }
  });

  it.skipIf(sandboxMissing)("ask reviews execute; an allow rule lets its commands run unreviewed, and only those", async () => {
    const root = tempDir("engram-exec-root-");
    try {
      const env = baseEnv({ ENGRAM_PERMISSIONS: JSON.stringify({ allow: ["execute(echo *)"] }) });
      const allowed = await runCalls(`allowed ${tag}`, [exec("echo hi > allowed.txt")], root.path, ["--write"], env);
      expect(allowed.ran.code, allowed.ran.stderr).toBe(0);
      expect(existsSync(join(root.path, "allowed.txt")), `the execute result: ${JSON.stringify(allowed.results)}`).toBe(true);
      expect(readFileSync(join(root.path, "allowed.txt"), "utf8")).toBe("hi\n");
      // A command one part of which the rule does not cover waits for a human.
      const asked = await runCalls(`asked ${tag}`, [exec("echo hi; touch asked.txt")], root.path, ["--write"], env);
      expect(asked.ran.code).toBe(5);
      expect(final(asked.ran)).toMatchObject({ stopReason: "interrupted" });
      expect(existsSync(join(root.path, "asked.txt"))).toBe(false);
    } finally {
      root.remove();
    }
  });

  it.skipIf(sandboxMissing)("without --write, execute reads and runs the root but changes nothing in it", async () => {
    const root = tempDir("engram-exec-root-");
    try {
      writeFileSync(join(root.path, "a.txt"), "kept\n");
      const { ran, results: out } = await runCalls(
        `read-only ${tag}`,
        [exec("cat a.txt; echo x > b.txt; echo y >> a.txt; mv a.txt c.txt; echo scratch > $TMPDIR/s && cat $TMPDIR/s")],
        root.path,
        [],
        baseEnv(),
        ["--yes"],
      );
      expect(ran.code, ran.stderr).toBe(0);
      const [output] = out as [string];
      expect(output).toMatch(/^kept\n/);
      expect(output).toContain("Permission denied");
      expect(output).toContain("scratch\n");
      expect(readdirSync(root.path)).toEqual(["a.txt"]);
      expect(readFileSync(join(root.path, "a.txt"), "utf8")).toBe("kept\n");
    } finally {
      root.remove();
    }
  });

  it.skipIf(sandboxMissing)(
    "a command that writes a key into the project's AGENTS.md leaves it redacted, in the file and in the history",
    async () => {
      const root = tempDir("engram-exec-root-");
      try {
        writeFileSync(join(root.path, "AGENTS.md"), "# Project\n");
        const task = `memory by command ${tag}`;
        const { ran } = await runCalls(task, [exec(`printf -- '- deploy key %s\\n' ${SECRET_KEY} >> AGENTS.md`)], root.path, [
          "--mode",
          "auto",
          "--write",
        ]);
        expect(ran.code, ran.stderr).toBe(0);
        expect(readFileSync(join(root.path, "AGENTS.md"), "utf8")).toBe("# Project\n- deploy key [REDACTED]\n");
        const history = await startEngram(["--root", root.path, "memory", "history", "--json"], { env: baseEnv(), cwd: cwd.path }).done;
        expect(history.code, history.stderr).toBe(0);
        expect(history.stdout).toContain("/AGENTS.md");
        expect(history.stdout).not.toContain(SECRET_KEY);
      } finally {
        root.remove();
      }
    },
  );

  it.skipIf(sandboxMissing)("chat: an allow rule approves its command without asking", async () => {
    const root = tempDir("engram-exec-root-");
    try {
      const task = `chat allowed ${tag}`;
      plans.set(task, [exec("echo hi > chat.txt")]);
      const env = baseEnv({ ENGRAM_PERMISSIONS: JSON.stringify({ allow: ["execute(echo *)"] }) });
      const args = ["--base-url", server.baseURL, "--model", "openai-compatible:scripted", "--root", root.path, "--write", "chat"];
      const ran = await startEngram(args, { env, cwd: cwd.path, input: `${task}\n`, timeoutMs: 120_000 }).done;
      expect(ran.code, ran.stderr).toBe(0);
      expect(ran.stdout).not.toContain("review");
      expect(readFileSync(join(root.path, "chat.txt"), "utf8")).toBe("hi\n");
    } finally {
      root.remove();
    }
  });

  it.runIf(sandboxMissing)("where the kernel lacks the sandbox, execute refuses and says what is missing", async () => {
    const root = tempDir("engram-exec-root-");
    try {
      const { ran, results: out } = await runCalls(`no sandbox ${tag}`, [exec("touch ran.txt")], root.path, ["--mode", "auto", "--write"]);
      expect(ran.code, ran.stderr).toBe(0);
      expect(out[0]).toContain(`sandbox not available here: this kernel lacks ${sandboxMissing}`);
      expect(readdirSync(root.path)).toEqual([]);
    } finally {
      root.remove();
    }
  });

  it("auto-edit writes files unreviewed and reviews execute", async () => {
    const root = tempDir("engram-exec-root-");
    try {
      const task = `auto-edit ${tag}`;
      const ran = await startRun(
        task,
        [{ name: "write_file", args: { file_path: "/edited.txt", content: "x" } }, exec("touch run.txt")],
        root.path,
        ["--mode", "auto-edit"],
      ).done;
      expect(ran.code).toBe(5);
      const interrupt = final(ran).interrupt as { toolCalls: { name: string }[] };
      expect(interrupt.toolCalls.map((c) => c.name)).toEqual(["execute"]);
    } finally {
      root.remove();
    }
  });
});

describe("permissions: configuration and rules", () => {
  const project = (values: unknown, user: unknown = {}) => {
    const dir = tempDir("engram-exec-project-");
    const userHome = tempDir("engram-exec-userconf-");
    try {
      writeFileSync(join(dir.path, "engram.config.json"), JSON.stringify(values));
      writeFileSync(join(userHome.path, "config.json"), JSON.stringify(user));
      return loadConfig({}, { env: { ENGRAM_HOME: userHome.path }, cwd: dir.path, osUser: "u" }).config;
    } finally {
      dir.remove();
      userHome.remove();
    }
  };

  it("a project file may only add denials and narrow the mode", () => {
    const config = project({ permissions: { deny: ["execute(curl *)"] } }, { permissions: { deny: ["execute(rm *)"] } });
    expect(config.permissions.deny).toEqual(["execute(rm *)", "execute(curl *)"]);
    expect(() => project({ permissions: { allow: ["execute"] } })).toThrow(/permissions.*allow rules let calls skip their review/s);
    expect(() => project({ mode: "auto" })).toThrow(/may only narrow it, to at most ask/);
    expect(project({ mode: "plan" }, { mode: "auto" }).mode).toBe("plan");
    expect(project({ mode: "auto-edit" }, { mode: "auto" }).mode).toBe("auto-edit");
    expect(() => project({ permissions: { deny: ["not a rule"] } })).toThrow(/must be a rule/);
  });

  it("a bad mode or rule is a ConfigError naming the key", () => {
    const at =
      (flags: Record<string, unknown>, env: Record<string, string> = {}) =>
      () =>
        loadConfig(flags, { env: { ENGRAM_HOME: cwd.path, ...env }, cwd: cwd.path, osUser: "u" });
    expect(at({ mode: "yolo" })).toThrow(
      expect.objectContaining({
        code: "invalid_config",
        message: expect.stringMatching(/mode.*must be one of plan, ask, auto-edit, auto/s),
      }),
    );
    expect(at({}, { ENGRAM_PERMISSIONS: "{deny:" })).toThrow(/permissions.*must be JSON/s);
    expect(at({}, { ENGRAM_PERMISSIONS: '{"deny":["rm -rf"]}' })).toThrow(/permissions\.deny\.0.*must be a rule/s);
  });

  it("mode sets write: plan never writes, auto-edit and auto do unless the project said write: false", () => {
    expect(project({}, { mode: "plan", write: true }).write).toBe(false);
    expect(project({}, { mode: "auto" }).write).toBe(true);
    expect(project({}, { mode: "auto-edit" }).write).toBe(true);
    expect(project({ write: false }, { mode: "auto" }).write).toBe(false);
    expect(project({}, {}).write).toBe(false);
  });

  it("deny matches any simple command; allow needs every one; paths are normalised", () => {
    const p = new Permissions({
      allow: ["execute(npm test*)", "execute(git status)", "read_file(/docs/*)"],
      deny: ["execute(rm *)", "write_file(/secrets/*)"],
    });
    const call = (command: string) => p.judge({ name: "execute", args: { command } })?.kind;
    expect(call("npm test")).toBe("allow");
    expect(call("npm test && git status")).toBe("allow");
    expect(call("npm test; curl x")).toBeUndefined();
    expect(call("rm -rf /")).toBe("deny");
    for (const dodge of ["true; rm x", "echo $(rm x)", "a | rm x", "if rm x; then :; fi", "{ rm x; }", "sudo rm x", "(rm x)"])
      expect(call(dodge), dodge).toBe("deny");
    expect(p.judge({ name: "write_file", args: { file_path: "/a/../secrets/k" } })?.kind).toBe("deny");
    expect(p.judge({ name: "write_file", args: { file_path: "secrets/k" } })?.kind).toBe("deny");
    expect(p.judge({ name: "read_file", args: { file_path: "/docs/a.md" } })?.kind).toBe("allow");
    expect(p.judge({ name: "read_file", args: { file_path: "/src/a.md" } })).toBeUndefined();
    expect(simpleCommands("a && b || c | d; e & f\ng `h` $(i)")).toEqual(["a", "b", "c", "d", "e", "f", "g", "h", "$", "i"]);
    expect(p.decide({ id: "1", name: "execute", args: { command: "rm x" }, allow: ["approve", "reject"] })).toMatchObject({
      type: "reject",
    });
    expect(p.decide({ id: "1", name: "execute", args: { command: "git status" }, allow: ["approve", "reject"] })).toEqual({
      type: "approve",
    });
    expect(p.decide({ id: "1", name: "execute", args: { command: "ls" }, allow: ["approve", "reject"] })).toBeUndefined();
  });
});
