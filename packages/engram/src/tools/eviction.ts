/**
 * Large results of non-filesystem tools go to `/large_tool_results/<id>.txt`; the model gets
 * a head/tail preview and the path to page through with `read_file` or `grep`.
 * @module
 */
import type { Backend } from "../backends/protocol.js";
import type { Core } from "../core/types.js";
import { cutAt } from "../core/text.js";

/** Default size above which a result is evicted, in characters (20,000 tokens × 4). */
export const DEFAULT_EVICTION_CHARS = 80_000;
const PREVIEW_LINES = 5;
const PREVIEW_LINE_CHARS = 1000;
const MAX_ID_BYTES = 128;

/** A file name from a tool call id: safe characters kept, anything long hashed. */
export async function safeResultId(toolCallId: string): Promise<string> {
  const cleaned = toolCallId.replace(/[^A-Za-z0-9_-]/g, "_");
  if (cleaned.length > 0 && new TextEncoder().encode(cleaned).length <= MAX_ID_BYTES) return cleaned;
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(toolCallId));
  return `call-${[...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** First and last lines, numbered, with the gap stated. */
export function preview(core: Core, text: string): string {
  const lines = text.split("\n");
  const cut = (l: string) => (l.length > PREVIEW_LINE_CHARS ? `${cutAt(l, PREVIEW_LINE_CHARS)}…` : l);
  if (lines.length <= PREVIEW_LINES * 2) return core.formatNumbered(lines.map(cut).join("\n"), 1);
  const head = core.formatNumbered(lines.slice(0, PREVIEW_LINES).map(cut).join("\n"), 1);
  const tailStart = lines.length - PREVIEW_LINES;
  const tail = core.formatNumbered(lines.slice(tailStart).map(cut).join("\n"), tailStart + 1);
  return `${head}\n... [${tailStart - PREVIEW_LINES} lines truncated] ...\n${tail}`;
}

/** Options of {@link evictLargeResult}. */
export interface EvictionOptions {
  backend: Backend;
  core: Core;
  toolCallId: string;
  /** Default: {@link DEFAULT_EVICTION_CHARS}. */
  thresholdChars?: number;
}

/** Returns `content` unchanged when small; otherwise saves it and returns the preview message. */
export async function evictLargeResult(content: string, options: EvictionOptions): Promise<string> {
  const threshold = options.thresholdChars ?? DEFAULT_EVICTION_CHARS;
  if (content.length <= threshold) return content;
  const path = `/large_tool_results/${await safeResultId(options.toolCallId)}.txt`;
  const saved = await options.backend.write(path, content);
  const shown = preview(options.core, content);
  if (saved.error) {
    return `Tool result too large (${content.length} characters) and it could not be saved (${saved.error.message}). Preview:\n${shown}`;
  }
  return `Tool result too large (${content.length} characters); saved to ${path}. Read it with read_file (offset/limit) or search it with grep. Preview:\n${shown}`;
}
