/**
 * Engram: deep agents with durable memory, on a Rust core that runs as a Node native addon or
 * as WebAssembly (workerd, browsers, Deno).
 * @packageDocumentation
 */
export * from "./core/index.js";
export * from "./backends/index.js";
export * from "./stores/index.js";
export * from "./tools/index.js";
export * from "./models/index.js";
export {
  ConfigError,
  EngramError,
  type EngramErrorCode,
  ModelError,
  type ModelErrorCode,
  ResumeError,
} from "./errors.js";
export * from "./agent/index.js";
export * from "./middleware/index.js";
export * from "./skills/index.js";
export * from "./memory/longterm/index.js";
export * from "./memory/history/index.js";
export * from "./memory/recall/index.js";
export { redactMemoryWrites } from "./memory/redact-writes.js";
export { PROMPT_SECTION_TAGS, escapeTags, neutralizeSectionTags } from "./prompt/escape.js";
