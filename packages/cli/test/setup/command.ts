/**
 * Global setup of the `cli` test project: builds the `engram` command under test once per run.
 * The command is bundled from its sources (`packages/cli/src/bin.ts`, with `engram` and
 * `@engram/*` resolved to their sources through tsconfig.check.json's `paths`, as tsx resolves
 * them) into an ES module under `.tmp/` (with the llama model's child process beside it), so each
 * test process starts with plain `node` instead of transforming the sources again; the core,
 * SQLite and optional providers stay packages, loaded as an installed command loads them. Tests
 * receive the command's file through `inject("engramCommand")`.
 */
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** The bundled `engram` command (an ES module run with `node`). */
    engramCommand: string;
  }
}

/** Packages the command loads at run time, as installed: native code, WebAssembly, peers. */
const EXTERNAL = [
  "@engram/native",
  "@engram/wasm",
  "better-sqlite3",
  "pg",
  "pg-native",
  "node-llama-cpp",
  "@ai-sdk/*",
  "@modelcontextprotocol/*",
  "@opentelemetry/*",
  "js-tiktoken",
];

export default async function setup(project: TestProject): Promise<() => void> {
  const root = project.config.root;
  // One directory per run: parallel runs (several checkouts' tests, a watch run) never share it.
  const dir = join(root, ".tmp", "cli-under-test", `${process.pid}-${Date.now()}`);
  mkdirSync(dir, { recursive: true });
  await build({
    // The llama model's child process is bundled beside the command, where the model looks for it.
    entryPoints: {
      engram: join(root, "packages/cli/src/bin.ts"),
      "llama-child": join(root, "packages/engram/src/models/llama-child.ts"),
    },
    outdir: dir,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    tsconfig: join(root, "tsconfig.check.json"),
    external: EXTERNAL,
    // Bundled CommonJS dependencies (commander) call `require` for Node's built-ins.
    banner: { js: 'import { createRequire as engramRequire } from "node:module"; const require = engramRequire(import.meta.url);' },
    logLevel: "error",
  });
  project.provide("engramCommand", join(dir, "engram.mjs"));
  return () => rmSync(dir, { recursive: true, force: true });
}
