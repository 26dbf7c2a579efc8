/**
 * The command with a local model and the small things around it: a `llama:` model that cannot
 * load fails when the command starts, not on the first message; `--threads` and
 * `--context-size` (user-level only); `memory forget` without `fact_`; `threads resume` shows the
 * last turns first; `--review files` reviews every tool that changes a file.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isMemoryExtraction, lastUserText, memoryUpdate } from "../../../examples/node/scripted-model-server.js";
import { loadConfig } from "../src/config.js";
import { llamaModel } from "../src/llama-model.js";
import { REVIEW_GROUPS, agentOptions, runsLocally } from "../src/runtime.js";
import { type CommandSandbox, REPO, engram, jsonLines, useCommandSandbox } from "./helpers.js";

let { server, home, cwd, env } = {} as CommandSandbox;
useCommandSandbox("engram-local-", {}, (s) => {
  ({ server, home, cwd, env } = s);
});

const scripted = () => ["--base-url", server.baseURL, "--model", "openai-compatible:scripted"];
const run = (args: string[], input?: string) => engram(args, { env, cwd: cwd.path, ...(input !== undefined && { input }) });

describe("a llama: model that cannot load", { timeout: 120_000 }, () => {
  it("a missing file is a configuration error before anything starts (exit 2)", async () => {
    for (const command of ["chat", "run"]) {
      const r = await run(["--model", "llama:/nope.gguf", command, ...(command === "run" ? ["hi"] : [])], "hello\n");
      expect(r.code, r.stdout).toBe(2);
      expect(r.stderr).toContain("no model file at /nope.gguf");
      expect(r.stdout).not.toContain("engram chat");
    }
  });

  it("a model the runtime cannot load ends chat with the error and a non-zero code", async () => {
    const file = join(cwd.path, "not-a-model.gguf");
    writeFileSync(file, "not a GGUF file");
    const r = await run(["--model", `llama:${file}`, "chat"], "hello\n");
    expect(r.code).not.toBe(0);
    expect(`${r.stdout}${r.stderr}`).toMatch(/error: .*LlamaCppModel/);
  });
});

describe("a model on this machine", () => {
  it("is one whose memory extraction waits for idle time: llama:, ollama:, a loopback server", () => {
    const model = (id: string) => ({ id, invoke: async () => ({}), stream: async function* () {} }) as never;
    const local = (config: { model?: string; baseUrl?: string }, id = "openai-compatible:m") =>
      runsLocally(config as Parameters<typeof runsLocally>[0], model(id));
    expect(local({ model: "llama:./m.gguf" }, "llama:./m.gguf")).toBe(true);
    expect(local({ model: "ollama:qwen2.5" })).toBe(true);
    expect(local({ model: "ollama:qwen2.5@http://gpu-box:11434/v1" })).toBe(false);
    expect(local({ model: "openai-compatible:m@http://127.0.0.1:8080/v1" })).toBe(true);
    expect(local({ model: "openai-compatible:m", baseUrl: "http://[::1]:8080/v1" })).toBe(true);
    expect(local({ model: "openai-compatible:m", baseUrl: "http://localhost:1234/v1" })).toBe(true);
    expect(local({ model: "openai-compatible:m", baseUrl: "https://api.example.com/v1" })).toBe(false);
    expect(local({ model: "openai:gpt-4.1" }, "openai:gpt-4.1")).toBe(false);
  });
});

describe("--threads and --context-size", () => {
  it("reach the llama model, from flags, variables or the user file, never a project file", () => {
    const file = join(cwd.path, "m.gguf");
    writeFileSync(file, "");
    const { config } = loadConfig({ threads: "3", contextSize: "1024" }, { env: { ...env, ENGRAM_HOME: home.path }, cwd: cwd.path });
    expect(config).toMatchObject({ threads: 3, contextSize: 1024 });
    // The context size is the model's window: its input budget is the size less the output cap.
    expect(llamaModel(config, file).maxInputTokens?.()).toBe(1024 - 512);
    expect(loadConfig({}, { env: { ...env, ENGRAM_HOME: home.path, ENGRAM_THREADS: "2" }, cwd: cwd.path }).config.threads).toBe(2);
    writeFileSync(join(cwd.path, "engram.config.json"), JSON.stringify({ contextSize: 131072 }));
    expect(() => loadConfig({}, { env: { ...env, ENGRAM_HOME: home.path }, cwd: cwd.path })).toThrow(/contextSize/);
  });
});

describe("memory, threads and reviews", { timeout: 120_000 }, () => {
  it("memory forget takes an id without its fact_ prefix", async () => {
    const added = await run(["memory", "add", "Prefers tabs"]);
    expect(added.code, added.stderr).toBe(0);
    const id = added.stdout.split(/\s+/)[0] ?? "";
    expect(id).toMatch(/^fact_/);
    const forgot = await run(["memory", "forget", id.slice("fact_".length, "fact_".length + 4)]);
    expect(forgot.code, forgot.stderr).toBe(0);
    expect((await run(["memory", "facts"])).stdout).not.toContain("Prefers tabs");
  });

  it("threads resume shows the thread's last turns first, inert", async () => {
    server.setScript((r) => (isMemoryExtraction(r) ? { text: memoryUpdate() } : { text: `answer to ${lastUserText(r)}` }));
    const first = await run([...scripted(), "run", "--json", "first question \u001b]0;owned\u0007"]);
    const { threadId } = jsonLines(first.stdout).at(-1) as { threadId: string };
    const resumed = await run([...scripted(), "threads", "resume", threadId], "");
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain("you  first question ^[]0;owned^G");
    expect(resumed.stdout).toContain("engram  answer to first question");
    expect(resumed.stdout).not.toContain("\u001b]0;owned");
  });

  it("--review files reviews write_file, edit_file and delete", () => {
    const { config } = loadConfig({ review: "files" }, { env: { ...env, ENGRAM_HOME: home.path }, cwd: cwd.path });
    const storage = { config, backend: () => undefined } as unknown as Parameters<typeof agentOptions>[0];
    const options = agentOptions(storage, { model: { id: "m", invoke: async () => ({}), stream: async function* () {} } as never });
    expect(Object.keys(options.interruptOn ?? {}).sort()).toEqual(["delete", "edit_file", "write_file"]);
  });

  it("the README: every --review covers each tool that changes a file; llama: says it needs node-llama-cpp", () => {
    const readme = readFileSync(`${REPO}/README.md`, "utf8");
    const reviews = [...readme.matchAll(/--review[ =]([\w,-]+)/g)].map((m) => m[1] ?? "");
    expect(reviews.length).toBeGreaterThan(0);
    for (const list of reviews) {
      const tools = list.split(",").flatMap((name) => (Object.hasOwn(REVIEW_GROUPS, name) ? [...(REVIEW_GROUPS[name] ?? [])] : [name]));
      expect(tools, `--review ${list}`).toEqual(expect.arrayContaining(["write_file", "edit_file", "delete"]));
    }
    // And its llama: example says what it needs.
    expect(readme).toMatch(/npm install -g node-llama-cpp\n.*--model llama:/);
  });
});
