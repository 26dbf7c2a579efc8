/** The `execute` capability: a backend that runs commands gives the agent an `execute` tool; the
 * commands run confined (engram-sandbox) and a cancelled run kills them. */
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  CompositeBackend,
  type Core,
  FakeChatModel,
  FilesystemBackend,
  type Message,
  StateBackend,
  createDeepAgent,
  loadCore,
} from "../src/index.js";
import { loadNativeBinding } from "../src/core/node-access.js";
import { wrapBackend } from "../src/kit.js";

const core: Core = await loadCore();

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "engram-execute-"));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const user = (content: string): { messages: Message[] } => ({ messages: [{ role: "user", content }] });
const execute = (command: string, extra: Record<string, unknown> = {}) => ({
  toolCalls: [{ name: "execute", args: { command, ...extra } }],
});
const toolResults = (messages: Message[]) => messages.filter((m) => m.role === "tool").map((m) => m.content);

/** Whether this kernel runs the sandbox (the tests of confinement need it; elsewhere `execute`
 * must refuse, which is tested instead). */
const sandboxMissing = (): string | undefined =>
  (loadNativeBinding() as unknown as { sandboxSupport?: () => { missing?: string | null } }).sandboxSupport?.().missing ??
  (process.platform === "linux" ? undefined : "not Linux");

describe("execute", () => {
  it("is offered only by a backend that runs commands (a capability, found by method)", async () => {
    const root = tempDir();
    const names = async (backend: unknown) => {
      const model = new FakeChatModel(["ok"]);
      await createDeepAgent(model, { core, backend: () => backend as never, enableSubagents: false }).invoke(user("hi"));
      return (model.requests[0]?.tools ?? []).map((t) => t.name);
    };
    expect(await names(new FilesystemBackend({ rootDir: root }))).not.toContain("execute");
    expect(await names(new StateBackend({ core }))).not.toContain("execute");
    expect(await names(new FilesystemBackend({ rootDir: root, execute: true }))).toContain("execute");
    const routed = new CompositeBackend(
      new FilesystemBackend({ rootDir: root, execute: true }),
      { "/memories/": new StateBackend({ core }) },
      { core },
    );
    expect(await names(routed)).toContain("execute");
    // A user's wrapper forwards the capability with everything else.
    const wrapped = new Proxy(new FilesystemBackend({ rootDir: root, execute: true }), {
      get: (target, key) => {
        const value = Reflect.get(target, key, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    expect(await names(wrapped)).toContain("execute");
  });

  it("says the commands are sandboxed only when the backend declares it, through wrappers too", async () => {
    const root = tempDir();
    const description = async (backend: unknown) => {
      const model = new FakeChatModel(["ok"]);
      await createDeepAgent(model, { core, backend: () => backend as never, enableSubagents: false }).invoke(user("hi"));
      return model.requests[0]?.tools?.find((t) => t.name === "execute")?.description ?? "";
    };
    const sandboxed = new FilesystemBackend({ rootDir: root, execute: true });
    const warn = console.warn;
    console.warn = () => {};
    const unconfined = new FilesystemBackend({ rootDir: root, execute: { sandbox: "none" } });
    console.warn = warn;
    expect(await description(sandboxed)).toContain("sandboxed");
    expect(await description(unconfined)).not.toContain("sandbox");
    expect(await description(new CompositeBackend(sandboxed, { "/memories/": new StateBackend({ core }) }, { core }))).toContain(
      "sandboxed",
    );
    expect(await description(new CompositeBackend(unconfined, {}, { core }))).not.toContain("sandbox");
    expect(await description(wrapBackend(sandboxed, { write: sandboxed.write.bind(sandboxed) }))).toContain("sandboxed");
    // A backend of the user's own that runs commands claims nothing it did not declare.
    const own = wrapBackend(new StateBackend({ core }), {
      execute: async () => ({ output: "", exitCode: 0, timedOut: false, cancelled: false, truncated: false }),
    });
    expect(await description(own)).not.toContain("sandbox");
  });

  it.runIf(process.platform === "linux" && sandboxMissing())(
    "where the kernel lacks the sandbox, a command is refused and nothing runs",
    async () => {
      const root = tempDir();
      const backend = new FilesystemBackend({ rootDir: root, execute: true });
      const result = await backend.execute?.("touch ran.txt");
      expect(result).toMatchObject({ error: { code: "unsupported" } });
      expect(JSON.stringify(result)).toContain(String(sandboxMissing()));
      expect(readdirSync(root)).toEqual([]);
    },
  );

  it.skipIf(sandboxMissing())("runs the model's command in the root and reports how it ended; writes outside fail", async () => {
    const root = tempDir();
    const outside = tempDir();
    writeFileSync(join(outside, "secret.txt"), "TOP SECRET");
    const model = new FakeChatModel([
      execute("echo built > out.txt && cat out.txt"),
      execute(`cat ${outside}/secret.txt; echo planted > ${outside}/planted; exit 4`),
      "done",
    ]);
    const backend = new FilesystemBackend({ rootDir: root, execute: true });
    const out = await createDeepAgent(model, { core, backend: () => backend, enableSubagents: false }).invoke(user("build"));
    const [first, second] = toolResults(out.messages);
    expect(first).toBe("built\n[Command succeeded with exit code 0]");
    expect(readFileSync(join(root, "out.txt"), "utf8")).toBe("built\n");
    expect(second).toContain("[Command failed with exit code 4]");
    expect(second).not.toContain("TOP SECRET");
    expect(readdirSync(outside)).toEqual(["secret.txt"]);
  });

  it.skipIf(sandboxMissing())("the command does not get the agent's API keys", async () => {
    const root = tempDir();
    process.env.ENGRAM_EXECUTE_TEST_KEY = "sk-execute-test-secret";
    try {
      const model = new FakeChatModel([execute("env"), "done"]);
      const backend = new FilesystemBackend({ rootDir: root, execute: true });
      const out = await createDeepAgent(model, { core, backend: () => backend, enableSubagents: false }).invoke(user("env"));
      const [result] = toolResults(out.messages);
      expect(result).toContain("PATH=");
      expect(result).not.toContain("sk-execute-test-secret");
    } finally {
      delete process.env.ENGRAM_EXECUTE_TEST_KEY;
    }
  });

  it.skipIf(sandboxMissing())("a timeout from the model kills the command", async () => {
    const root = tempDir();
    const backend = new FilesystemBackend({ rootDir: root, execute: { timeoutMs: 60_000 } });
    const r = await backend.execute?.("sleep 5; echo late", { timeoutMs: 300 });
    expect(r).toMatchObject({ timedOut: true, exitCode: null });
    expect(r?.output).not.toContain("late");
  });

  it.skipIf(sandboxMissing())("cancelling the run kills the running command", async () => {
    const root = tempDir();
    const controller = new AbortController();
    const model = new FakeChatModel([execute("sleep 30; echo finished > done.txt"), "done"]);
    const backend = new FilesystemBackend({ rootDir: root, execute: true });
    const run = createDeepAgent(model, { core, backend: () => backend, enableSubagents: false }).invoke(user("go"), {
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(), 300);
    await expect(run).rejects.toThrow();
    await new Promise((r) => setTimeout(r, 200));
    const running = readdirSync("/proc").filter((p) => {
      try {
        return /^\d+$/.test(p) && readFileSync(`/proc/${p}/cmdline`, "utf8").includes("sleep 30; echo finished");
      } catch {
        return false;
      }
    });
    expect(running).toEqual([]);
  });

  it("a command that is not a string is an invalid_argument; a cwd outside the root is path_escape", async () => {
    const backend = new FilesystemBackend({ rootDir: tempDir(), execute: true });
    await expect(backend.execute?.(42 as never)).rejects.toMatchObject({ code: "invalid_argument" });
    const r = await backend.execute?.("true", { cwd: "/../.." });
    expect(r?.error?.code).toMatch(/path_escape|invalid_path/);
  });
});
