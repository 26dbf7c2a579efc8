/**
 * Model-facing text for filesystem results: listings, `cat -n` reads, grouped grep output,
 * notes for empty and truncated results, and one cap on output size.
 * @module
 */
import type { Core, ErrorData, FileInfo, GrepResult, ReadResult } from "../core/types.js";
import { cutAt } from "../core/text.js";
import type { ToolResult } from "./types.js";

/** Default cap on one tool output, in characters (20,000 tokens × 4). */
export const DEFAULT_MAX_OUTPUT_CHARS = 80_000;

export function errorResult(error: ErrorData): ToolResult {
  return { content: `Error: ${error.message}`, isError: true };
}

/** Cuts `text` to `max` characters on a line boundary where possible, with a note. */
export function capOutput(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.lastIndexOf("\n", max);
  const kept = cutAt(text, cut > max / 2 ? cut : max);
  return `${kept}\n\n[Output truncated at ${max.toLocaleString("en-US")} characters: narrow the path, pattern or line range.]`;
}

export function formatLs(path: string, entries: FileInfo[]): string {
  if (entries.length === 0) return `No files found in ${path}`;
  return entries.map((e) => (e.isDir ? `${e.path} (directory)` : `${e.path} (${e.size ?? 0} bytes)`)).join("\n");
}

export function formatRead(core: Core, path: string, r: ReadResult, limit: number): string {
  if (r.totalLines === 0) return `System reminder: '${path}' exists but is empty.`;
  if (r.lines === 0) {
    return `Note: offset ${r.offset} is past the end of '${path}' (${r.totalLines} lines). Use an offset below ${r.totalLines}.`;
  }
  let out = core.formatNumbered(r.content, r.offset + 1);
  const next = r.offset + r.lines;
  if (next < r.totalLines && r.lines >= limit) {
    out += `\n\n[Lines ${r.offset + 1}-${next} of ${r.totalLines}. Continue with offset=${next}.]`;
  }
  return out;
}

export function formatGrep(pattern: string, r: GrepResult): string {
  const lines: string[] = [];
  if (r.matches) {
    let current = "";
    for (const m of r.matches) {
      if (m.path !== current) {
        current = m.path;
        lines.push(`${m.path}:`);
      }
      lines.push(`  ${m.line}${m.context ? "-" : ":"} ${m.text}`);
    }
  } else if (r.files) {
    for (const f of r.files) lines.push(f);
  } else if (r.counts) {
    for (const [f, n] of Object.entries(r.counts)) lines.push(`${f}: ${n}`);
  }
  if (lines.length === 0) return `No matches found for pattern '${pattern}'`;
  if (r.truncated)
    lines.push("", "Note: the search stopped at the maximum count; there are more matches. Narrow the search or raise max_count.");
  return lines.join("\n");
}

export function formatGlob(pattern: string, files: FileInfo[], truncated: boolean): string {
  if (files.length === 0) return `No files found matching pattern '${pattern}'`;
  const lines = files.map((f) => f.path);
  if (truncated) lines.push("", "Note: more files match; narrow the pattern or the path.");
  return lines.join("\n");
}
