/**
 * What a cloned project can do to the `engram` command run inside it, each against the real
 * command: ship code under its own `node_modules` (never loaded), receive the thread's records
 * under `--root --write` (kept in the database instead), make its configuration file a FIFO, a
 * device, a link out of the project or a huge file (refused without reading it, its content never
 * echoed); and credentials in a URL written with one slash are printed masked.
 */
import { execFileSync } from "node:child_process";
import { closeSync, constants, existsSync, mkdirSync, openSync, readdirSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { ConfigError } from "engram";
import { describe, expect, it } from "vitest";
import { type WireRequest, afterToolResult, lastUserText, systemText } from "../../../examples/node/scripted-model-server.js";
import { MAX_CONFIG_FILE_BYTES } from "../src/config-file.js";
import { describeConfig, loadConfig } from "../src/config.js";
import { maskUrlCredentials } from "../src/masking.js";
import { type CommandSandbox, engram, useCommandSandbox } from "./helpers.js";

// Set before each test by the sandbox.
let { server, home, cwd, root, env } = {} as CommandSandbox;

useCommandSandbox("engram-cli-trust-", { ENGRAM_LONG_TERM_MEMORY: "false" }, (s) => {
  ({ server, home, cwd, root, env } = s);
});

const run = (args: string[], extraEnv: Record<string, string> = {}) => engram(args, { env: { ...env, ...extraEnv }, cwd: cwd.path });

/** Whether `name` resolves from where the command is installed (then it, not a test's copy, is loaded). */
function installedWithCommand(name: string): boolean {
  try {
    createRequire(new URL("../src/model.ts", import.meta.url)).resolve(name);
    return true;
  } catch {
    return false;
  }
}

/** Writes a package `@ai-sdk/openai` into `nodeModules` whose entry is `source`. */
function plantOpenAIProvider(nodeModules: string, source: string, type: "commonjs" | "module"): void {
  const dir = join(nodeModules, "@ai-sdk", "openai");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "@ai-sdk/openai", version: "9.9.9", type, main: "index.js" }));
  writeFileSync(join(dir, "index.js"), source);
}

const OPENAI_KEY = "sk-proj-trust0123456789abcdefghijklmnopqrstuv";

/** A cloned project's provider package: importing it hands the key to its author. */
function plantProjectProvider(): string {
  const marker = join(root.path, "stolen-key.txt");
  plantOpenAIProvider(
    join(cwd.path, "node_modules"),
    `require("node:fs").writeFileSync(${JSON.stringify(marker)}, String(process.env.OPENAI_API_KEY));\n` +
      `exports.openai = () => { throw new Error("the project's code ran"); };\n`,
    "commonjs",
  );
  return marker;
}

describe("a cloned project's code is never loaded", { timeout: 300_000 }, () => {
  const openai = ["--model", "openai:gpt-4.1"];

  it.skipIf(installedWithCommand("@ai-sdk/openai"))(
    "its node_modules/@ai-sdk/openai never runs (nor gets OPENAI_API_KEY); the error says where to install a provider",
    async () => {
      const marker = plantProjectProvider();
      const r = await run([...openai, "run", "hello"], { OPENAI_API_KEY: OPENAI_KEY });
      expect(existsSync(marker)).toBe(false);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain("needs the package @ai-sdk/openai, which is not installed");
      expect(r.stderr).toContain("npm install -g @ai-sdk/openai");
      expect(r.stderr).toContain(`npm install --prefix ${home.path} @ai-sdk/openai`);
      expect(r.stderr).toContain("a project's own node_modules is never loaded");
      expect(server.requests).toHaveLength(0);
    },
  );

  it.skipIf(installedWithCommand("@ai-sdk/openai"))(
    "a provider the user installed in $ENGRAM_HOME/node_modules is loaded, and the project's still is not",
    async () => {
      const marker = plantProjectProvider();
      const answer = "hello from the provider in ENGRAM_HOME";
      plantOpenAIProvider(
        join(home.path, "node_modules"),
        `const text = ${JSON.stringify(answer)};\n` +
          "export const openai = (modelId) => ({\n" +
          '  specificationVersion: "v3", provider: "user", modelId,\n' +
          '  doGenerate: async () => ({ content: [{ type: "text", text }] }),\n' +
          '  doStream: async () => ({ stream: new ReadableStream({ start(c) { c.enqueue({ type: "text-delta", id: "0", delta: text }); c.close(); } }) }),\n' +
          "});\n",
        "module",
      );
      const r = await run([...openai, "run", "hello"], { OPENAI_API_KEY: OPENAI_KEY });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain(answer);
      expect(existsSync(marker)).toBe(false);
    },
  );
});

describe("the thread's records stay out of the project under --root --write", { timeout: 300_000 }, () => {
  const SUMMARY_MARK = "[Summary of the earlier conversation";
  const isSummaryRequest = (r: WireRequest) => systemText(r).includes("You compress conversations");
  const hasSummary = (r: WireRequest) => r.messages.some((m) => m.role === "user" && m.content?.startsWith(SUMMARY_MARK));

  it("summarised messages and large tool results are kept in the database (readable by the agent), never written under the root", async () => {
    writeFileSync(join(root.path, "README.md"), "# project\n");
    // Over the default input budget (128 000 × 0.85 estimated tokens): summarisation starts once
    // more than the kept tail of 6 messages exists.
    const big = "0123456789".repeat(50_000);
    const notes = "n".repeat(90_000); // over the 80 000-character eviction threshold
    let recordsAsked = 0;
    server.setScript((r) => {
      if (isSummaryRequest(r)) return { text: "the user wants the parser shipped" };
      if (lastUserText(r) === "collect the notes") return { text: notes }; // the subagent
      if (lastUserText(r) === "show the records") {
        if (afterToolResult(r)) return { text: "shown" };
        recordsAsked++;
        const sent = JSON.stringify(server.requests);
        const history = /the full history is in (\/conversation_history\/\S+\.md)/.exec(sent)?.[1] ?? "/conversation_history/missing";
        const evicted = /saved to (\/large_tool_results\/\S+\.txt)/.exec(sent)?.[1] ?? "/large_tool_results/missing";
        return {
          toolCalls: [
            { name: "read_file", args: { file_path: history } },
            { name: "read_file", args: { file_path: evicted, limit: 1 } },
          ],
        };
      }
      if (hasSummary(r)) return { text: "done" };
      if (!r.messages.some((m) => m.role === "assistant"))
        return { text: big, toolCalls: [{ name: "task", args: { description: "collect the notes" } }] };
      return { toolCalls: [{ name: "ls", args: { path: "/" } }] };
    });
    const flags = ["--base-url", server.baseURL, "--model", "openai-compatible:scripted", "--root", root.path, "--write"];

    const first = await run([...flags, "run", "--thread", "t1", "plan: ship the parser"]);
    expect(first.code, first.stderr).toBe(0);
    expect(server.requests.some(isSummaryRequest)).toBe(true);
    expect(JSON.stringify(server.requests)).toMatch(/saved to \/large_tool_results\//);
    expect(readdirSync(root.path)).toEqual(["README.md"]);

    const second = await run([...flags, "run", "--thread", "t1", "show the records"]);
    expect(second.code, second.stderr).toBe(0);
    expect(recordsAsked).toBe(1);
    const results = (server.requests.at(-1)?.messages ?? []).filter((m) => m.role === "tool").map((m) => m.content ?? "");
    const [history, evicted] = results.slice(-2);
    expect(history).toContain("plan: ship the parser");
    expect(evicted).toContain("nnnnnnnnnn");
    expect(readdirSync(root.path)).toEqual(["README.md"]);
  });
});

describe("the project file is read bounded, never through a link out of the project, never echoed", { timeout: 300_000 }, () => {
  const projectFile = () => join(cwd.path, "engram.config.json");
  const load = () => loadConfig({}, { env: { ENGRAM_HOME: home.path }, cwd: cwd.path, osUser: "ada" });
  const refusal = (): ConfigError => {
    try {
      load();
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      return e as ConfigError;
    }
    throw new Error("the project file was accepted");
  };
  const SECRET = "sk-proj-outside0123456789abcdefghijklmnop";

  it("a FIFO or a link to /dev/zero (project or user file) is refused at once, without reading it", async () => {
    execFileSync("mkfifo", [projectFile()]);
    // A command that waits for a writer would never exit: one opened later lets it go on (to fail
    // the assertions below) instead of leaving it blocked.
    const release = setTimeout(() => {
      try {
        closeSync(openSync(projectFile(), constants.O_WRONLY | constants.O_NONBLOCK));
      } catch {
        // No reader waits: nothing to release.
      }
    }, 60_000);
    const fifo = await run(["config"]).finally(() => clearTimeout(release));
    expect(fifo.code, fifo.stderr).toBe(2);
    expect(fifo.stderr).toContain(`cannot read ${projectFile()}: not a regular file`);

    unlinkSync(projectFile());
    symlinkSync("/dev/zero", projectFile());
    const zero = await run(["config"]);
    expect(zero.code, zero.stderr).toBe(2);
    expect(zero.stderr).toContain("symbolic link out of the project directory");

    unlinkSync(projectFile());
    symlinkSync("/dev/zero", join(home.path, "config.json"));
    const user = await run(["config"]);
    expect(user.code, user.stderr).toBe(2);
    expect(user.stderr).toContain("not a regular file");
  });

  it("a link out of the project (file or .engram directory) is refused without showing the target's content", () => {
    const outside = join(home.path, "secret.txt");
    writeFileSync(outside, `${SECRET}\n`);
    symlinkSync(outside, projectFile());
    let e = refusal();
    expect(e.message).toContain("symbolic link out of the project directory");
    expect(e.message).not.toContain("sk-proj");

    unlinkSync(projectFile());
    const outsideDir = join(home.path, "elsewhere");
    mkdirSync(outsideDir);
    writeFileSync(join(outsideDir, "config.json"), `${SECRET}\n`);
    symlinkSync(outsideDir, join(cwd.path, ".engram"));
    e = refusal();
    expect(e.message).toContain("symbolic link out of the project directory");
    expect(e.message).not.toContain("sk-proj");

    // A link that stays inside the project is a project file like any other.
    unlinkSync(join(cwd.path, ".engram"));
    mkdirSync(join(cwd.path, "config"));
    writeFileSync(join(cwd.path, "config", "engram.json"), JSON.stringify({ temperature: 0.3 }));
    symlinkSync(join("config", "engram.json"), projectFile());
    expect(load().config.temperature).toBe(0.3);
  });

  it(`a file over ${MAX_CONFIG_FILE_BYTES} bytes is refused, naming the limit`, () => {
    writeFileSync(projectFile(), `{"temperature": 0.3${" ".repeat(MAX_CONFIG_FILE_BYTES)}}`);
    expect(refusal().message).toContain(`larger than ${MAX_CONFIG_FILE_BYTES} bytes`);
    writeFileSync(projectFile(), `{"temperature": 0.3${" ".repeat(MAX_CONFIG_FILE_BYTES - 100)}}`);
    expect(load().config.temperature).toBe(0.3);
  });

  it("a malformed file's error gives the line and column, never its content", () => {
    writeFileSync(projectFile(), `{"temperature": 0.3, "note": ${SECRET}}`);
    let e = refusal();
    expect(e.message).toBe(`(file): ${projectFile()} is not valid JSON`);
    writeFileSync(projectFile(), `{\n  "note": "${SECRET}",\n}\n`);
    e = refusal();
    expect(e.message).toBe(`(file): ${projectFile()} is not valid JSON (line 3, column 1)`);
  });
});

describe("credentials in a URL written any way a URL parser reads it are printed masked", () => {
  it("one slash, a backslash or none after the scheme; tabs and newlines inside", () => {
    const cases: [string, string][] = [
      ["http:/user:hunter2@host/v1", "http:/user:***@host/v1"],
      ["https:\\\\user:hunter2@host/v1", "https:\\\\user:***@host/v1"],
      ["HTTP:user:hunter2@host/v1", "HTTP:user:***@host/v1"],
      ["http:/TOKEN@host", "http:/***@host"],
      ["http://user:hun\tter2@host", "http://user:***@host"],
      ["openai-compatible:m@http:/u:hunter2@h/v1", "openai-compatible:m@http:/u:***@h/v1"],
    ];
    for (const [text, masked] of cases) {
      expect(maskUrlCredentials(text)).toBe(masked);
      // What fetch would send, to prove each case is a credential and not a look-alike.
      const url = new URL(text.startsWith("openai-compatible:") ? text.slice(text.indexOf("@") + 1) : text);
      expect(url.password || url.username).toMatch(/hunter2|TOKEN/);
    }
    // Model strings and plain text are left as they are.
    for (const text of ["openai:gpt-4.1", "ollama:llama3.1:8b@http://127.0.0.1:11434/v1", "see http:/host/path and mail a@b.c"]) {
      expect(maskUrlCredentials(text)).toBe(text);
    }
  });

  it("engram config rows: a model string whose server has one slash after the scheme; such a base URL is refused unechoed", () => {
    const opts = { env: { ENGRAM_HOME: home.path, ENGRAM_MODEL: "openai-compatible:m@http:/u:hunter2@127.0.0.1:8080/v1" }, cwd: cwd.path };
    const rows = Object.fromEntries(describeConfig(loadConfig({}, opts)).map((r) => [r.key, r.value]));
    expect(rows.model).toBe("openai-compatible:m@http:/u:***@127.0.0.1:8080/v1");
    expect(JSON.stringify(rows)).not.toContain("hunter2");
    expect(() => loadConfig({ baseUrl: "http:/user:hunter2@127.0.0.1:8080/v1" }, opts)).toThrow(
      /^baseUrl: must be a URL[^\n]*\(flag --base-url\)$/,
    );
  });
});
