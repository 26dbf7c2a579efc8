/**
 * What a cloned project can do to the `engram` command run inside it, each against the real
 * command: ship code under its own `node_modules` (never loaded), receive the thread's records
 * under `--root --write` (kept in the database instead), make its configuration file a FIFO, a
 * device, a link out of the project or a huge file (refused without reading it, its content never
 * echoed); and credentials in a URL written with one slash are printed masked.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
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
