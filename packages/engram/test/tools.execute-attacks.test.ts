/** Every way out of `execute`'s sandbox, asked for by a model's tool call in the library (the
 * command's suite, packages/cli/test/cli.execute.test.ts, asks the same through `engram run`).
 * The disk, the process table and servers the test runs are checked, not only the answers. */
import { spawn } from "node:child_process";
import { createSocket } from "node:dgram";
import { mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type Core, FakeChatModel, FilesystemBackend, type Message, createDeepAgent, loadCore } from "../src/index.js";
import { loadNativeBinding } from "../src/core/node-access.js";

const core: Core = await loadCore();
const missing = (loadNativeBinding() as unknown as { sandboxSupport?: () => { missing?: string | null } }).sandboxSupport?.().missing;
const dirs: string[] = [];
const tempDir = (label: string) => {
  const dir = mkdtempSync(join(tmpdir(), `engram-attack-${label}-`));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The processes whose command line holds `marker`. */
const processesWith = (marker: string) =>
  readdirSync("/proc").filter((p) => {
    try {
      return /^\d+$/.test(p) && readFileSync(`/proc/${p}/cmdline`, "utf8").includes(marker);
    } catch {
      return false;
    }
  });

/** Runs one agent turn whose model asks for `commands` as execute calls, one at a time; the
 * tool results in order. */
async function attack(root: string, commands: string[], limits: { timeoutMs?: number; maxOutputBytes?: number } = {}) {
  const model = new FakeChatModel([...commands.map((command) => ({ toolCalls: [{ name: "execute", args: { command } }] })), "done"]);
  const backend = new FilesystemBackend({ rootDir: root, execute: { timeoutMs: 20_000, ...limits } });
  const out = await createDeepAgent(model, { core, backend: () => backend, enableSubagents: false }).invoke({
    messages: [{ role: "user", content: "go" }],
  });
  return out.messages.filter((m: Message) => m.role === "tool").map((m: Message) => m.content);
}

describe.skipIf(missing !== undefined && missing !== null)("execute attacks through a model's tool call", () => {
  it("files: outside the root, $HOME, ~/.ssh, an Engram database, links out — nothing read or written", async () => {
    const root = tempDir("root");
    const outside = tempDir("outside");
    const home = process.env.HOME ?? "/root";
    const homeTarget = join(home, `engram-attack-${process.pid}`);
    writeFileSync(join(outside, "id_ed25519"), "FAKE-PRIVATE-KEY");
    writeFileSync(join(outside, "engram.db"), "SQLite format 3\u0000FAKE-DB-ROWS");
    symlinkSync(outside, join(root, "link"));
    const results = await attack(root, [
      `echo x > ${outside}/planted; echo x > ${homeTarget}; echo x > /tmp/engram-attack-${process.pid}`,
      `cat ${outside}/id_ed25519 ${outside}/engram.db; cat link/id_ed25519; echo x > link/planted2`,
    ]);
    expect(results.join("\n")).not.toMatch(/FAKE-PRIVATE-KEY|FAKE-DB-ROWS/);
    expect(readdirSync(outside).sort()).toEqual(["engram.db", "id_ed25519"]);
    expect(() => readFileSync(homeTarget)).toThrow();
    expect(() => readFileSync(`/tmp/engram-attack-${process.pid}`)).toThrow();
  });

  it("network: a TCP server and a DNS server on 127.0.0.1 see nothing", async () => {
    let connections = 0;
    const tcp = createServer((s) => {
      connections++;
      s.destroy();
    });
    await new Promise<void>((r) => tcp.listen(0, "127.0.0.1", r));
    let queries = 0;
    const dns = createSocket("udp4", () => queries++);
    await new Promise<void>((r) => dns.bind(0, "127.0.0.1", r));
    const tcpPort = (tcp.address() as { port: number }).port;
    const dnsPort = dns.address().port;
    try {
      const [out] = await attack(tempDir("net"), [
        `node -e "require('net').connect(${tcpPort},'127.0.0.1').on('connect',()=>console.log('CONNECTED')).on('error',e=>console.log('tcp',e.code))"; ` +
          `node -e "const d=require('dns');d.setServers(['127.0.0.1:${dnsPort}']);d.resolve4('example.com',(e)=>console.log(e?'dns '+e.code:'RESOLVED'))"`,
      ]);
      expect(out).toMatch(/tcp E/);
      expect(out).not.toMatch(/CONNECTED|RESOLVED/);
      expect(connections).toBe(0);
      expect(queries).toBe(0);
    } finally {
      tcp.close();
      dns.close();
    }
  });

  it("processes: sleep 600 at a timeout and a fork bomb leave nothing; no key in the environment", async () => {
    process.env.ENGRAM_ATTACK_TEST_KEY = "sk-attack-test-secret";
    try {
      const results = await attack(
        tempDir("proc"),
        ["sleep 621 & (setsid sleep 622 &); sleep 623", "b() { b | b & }; b; sleep 624", "env"],
        {
          timeoutMs: 1500,
        },
      );
      expect(results[0]).toContain("[Command killed: it ran past its timeout]");
      expect(results[2]).not.toContain("sk-attack-test-secret");
      await new Promise((r) => setTimeout(r, 300));
      for (const marker of ["sleep 621", "sleep 622", "sleep 623", "sleep 624"]) expect(processesWith(marker)).toEqual([]);
    } finally {
      delete process.env.ENGRAM_ATTACK_TEST_KEY;
    }
  });

  it("resources: 1 GB of output is capped within +64 MB of this process; a 10 GB file stops at the limit", async () => {
    const root = tempDir("res");
    const before = process.memoryUsage().rss;
    const [big, file] = await attack(root, [
      "head -c 1000000000 /dev/zero | tr '\\0' x; echo; echo last",
      "head -c 10000000000 /dev/zero > huge; echo status $?",
    ]);
    expect(process.memoryUsage().rss - before).toBeLessThan(64 * 1024 * 1024);
    expect(big).toContain("bytes of output omitted");
    expect(big?.length).toBeLessThan(40_000);
    expect(file).not.toContain("status 0");
    expect(readdirSync(root)).toEqual(["huge"]);
    const { size } = await import("node:fs").then((fs) => fs.statSync(join(root, "huge")));
    expect(size).toBeLessThanOrEqual(1 << 30);
  });

  it("kill -9 of the agent's process during a command leaves no process behind", async () => {
    const root = tempDir("kill");
    const script = join(root, "..", `engram-attack-agent-${process.pid}.mts`);
    dirs.push(script);
    const backendModule = resolve(import.meta.dirname, "../src/backends/filesystem.ts");
    writeFileSync(
      script,
      `import { FilesystemBackend } from ${JSON.stringify(backendModule)};\n` +
        `const b = new FilesystemBackend({ rootDir: ${JSON.stringify(root)}, execute: true });\n` +
        `setTimeout(() => console.log("started"), 300);\n` +
        `await b.execute("sleep 625 & sleep 626");\n`,
    );
    const tsx = resolve(import.meta.dirname, "../../../node_modules/.bin/tsx");
    const child = spawn(tsx, [script], { stdio: ["ignore", "pipe", "inherit"] });
    await new Promise<void>((r) => child.stdout.on("data", () => r()));
    await new Promise((r) => setTimeout(r, 500));
    expect(processesWith("sleep 626").length).toBeGreaterThan(0);
    const exited = new Promise((r) => child.on("exit", r));
    // tsx runs the script in a child node process: kill every process of it at once.
    for (const pid of processesWith(script)) process.kill(Number(pid), "SIGKILL");
    await exited;
    await new Promise((r) => setTimeout(r, 500));
    expect(processesWith("sleep 625")).toEqual([]);
    expect(processesWith("sleep 626")).toEqual([]);
  });
});

describe("the explicit opt-out", () => {
  it('sandbox: "none" runs unconfined and says so on stderr when the backend is made', async () => {
    const root = tempDir("none");
    const outside = tempDir("none-outside");
    const warnings: string[] = [];
    const warn = console.warn;
    console.warn = (message: string) => warnings.push(message);
    let backend: FilesystemBackend;
    try {
      backend = new FilesystemBackend({ rootDir: root, execute: { sandbox: "none" } });
    } finally {
      console.warn = warn;
    }
    expect(warnings).toEqual([expect.stringContaining("UNCONFINED")]);
    const r = await backend.execute?.(`echo reached > ${outside}/written`);
    expect(r).toMatchObject({ exitCode: 0 });
    expect(readFileSync(join(outside, "written"), "utf8")).toBe("reached\n");
    expect(warnings).toHaveLength(1);
  });
});
