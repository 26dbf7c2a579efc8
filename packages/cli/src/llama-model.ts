/**
 * The `llama:<file.gguf>` model of the command: the file is checked when the command starts (a
 * missing one is a configuration error, exit 2, before any conversation), and the user's
 * `threads` and `contextSize` apply. node-llama-cpp is loaded from where the command is
 * installed, else `ENGRAM_LLAMA_MODULE`, else the user's `$ENGRAM_HOME/node_modules` or npm's
 * global packages (`npm install -g node-llama-cpp` next to a command that was linked or
 * installed elsewhere) — never from the working directory.
 * @module
 */
import { existsSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { type ChatModel, ConfigError } from "engram";
import { LLAMA_MODULE_ENV, LlamaCppModel } from "engram/llama";
import { type CliConfig, engramHome } from "./config.js";
import { userModulesDir } from "./modules.js";

const LLAMA_PACKAGE = "node-llama-cpp";

/** Where the command looks for node-llama-cpp when it is not installed next to it. */
export function llamaRuntime(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env[LLAMA_MODULE_ENV]) return env[LLAMA_MODULE_ENV];
  // npm's default global prefix is the directory Node is installed in (/usr, ~/.nvm/versions/…).
  const globalRoot = env.NPM_CONFIG_PREFIX ?? env.npm_config_prefix ?? dirname(dirname(process.execPath));
  const places = [join(userModulesDir(engramHome(env)), LLAMA_PACKAGE), join(globalRoot, "lib", "node_modules", LLAMA_PACKAGE)];
  return places.find((dir) => existsSync(join(dir, "package.json")));
}

/** A `LlamaCppModel` for the file `path` (relative to the working directory). */
export function llamaModel(config: CliConfig, path: string): ChatModel {
  const file = resolve(path);
  if (!existsSync(file) || !statSync(file).isFile()) {
    throw new ConfigError("model", `llama: no model file at ${file} (--model llama:<path of a .gguf file>)`);
  }
  const runtime = llamaRuntime();
  return new LlamaCppModel({
    modelPath: file,
    id: `llama:${path}`,
    ...(runtime !== undefined && { module: runtime }),
    ...(config.threads !== undefined && { threads: config.threads }),
    ...(config.contextSize !== undefined && { contextSize: config.contextSize }),
  });
}
