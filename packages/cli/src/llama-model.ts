/**
 * The `llama:<file.gguf>` model of the command: the file is checked when the command starts (a
 * missing one is a configuration error, exit 2, before any conversation), and the user's
 * `threads` and `contextSize` apply.
 * @module
 */
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { type ChatModel, ConfigError } from "engram";
import { LlamaCppModel } from "engram/llama";
import type { CliConfig } from "./config.js";

/** A `LlamaCppModel` for the file `path` (relative to the working directory). */
export function llamaModel(config: CliConfig, path: string): ChatModel {
  const file = resolve(path);
  if (!existsSync(file) || !statSync(file).isFile()) {
    throw new ConfigError("model", `llama: no model file at ${file} (--model llama:<path of a .gguf file>)`);
  }
  return new LlamaCppModel({
    modelPath: file,
    id: `llama:${path}`,
    ...(config.threads !== undefined && { threads: config.threads }),
    ...(config.contextSize !== undefined && { contextSize: config.contextSize }),
  });
}
