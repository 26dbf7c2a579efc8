/**
 * The text the model reads from the filesystem tools. Every format rule (listings, `cat -n`
 * reads, grouped grep output, the notes for empty and truncated results, the output cap) lives
 * in the core (`crates/engram-core/src/format.rs`): a backend that holds its files in the core
 * (State, Store) makes the whole text in one call (its `toolText` capability), and any other
 * backend's structured result is formatted by the same core functions.
 * @module
 */
import type { BackendCapabilities } from "../backends/capabilities.js";
import type { Backend, ToolTextRequest } from "../backends/protocol.js";
import type { Core, ErrorData } from "../core/types.js";
import type { ToolResult } from "./types.js";

/** Default cap on one tool output, in characters (20,000 tokens × 4). */
export const DEFAULT_MAX_OUTPUT_CHARS = 80_000;

export function errorResult(error: ErrorData): ToolResult {
  return { content: `Error: ${error.message}`, isError: true };
}

/** The result of one `ls`, `read_file`, `glob` or `grep` call, capped at `maxChars`. */
export async function toolText(backend: Backend, core: Core, request: ToolTextRequest, maxChars: number): Promise<ToolResult> {
  const own = (backend as Backend & BackendCapabilities).toolText;
  const made = typeof own === "function" ? await own.call(backend, request, maxChars) : undefined;
  if (made) return made.error ? errorResult(made.error) : { content: made.text };
  switch (request.op) {
    case "ls": {
      const r = await backend.ls(request.path);
      return r.error ? errorResult(r.error) : { content: core.formatLs(request.path, r, maxChars) };
    }
    case "read": {
      const r = await backend.read(request.path, { offset: request.offset, limit: request.limit });
      return r.error ? errorResult(r.error) : { content: core.formatRead(request.path, r, request.limit, maxChars) };
    }
    case "glob": {
      const r = await backend.glob(request.pattern, { path: request.path });
      return r.error ? errorResult(r.error) : { content: core.formatGlob(request.pattern, r, maxChars) };
    }
    case "grep": {
      const r = await backend.grep(request.pattern, request.options);
      return r.error ? errorResult(r.error) : { content: core.formatGrep(request.pattern, r, maxChars) };
    }
  }
}
