/**
 * What of a thread is searchable and how a hit is shown: the user's and the assistant's words
 * (not tool results, which are files and command output), the query's words, and a snippet
 * around the first match. Every implementation uses these, so they index and show the same.
 * @module
 */
import { cutAt } from "../../core/text.js";
import type { Message } from "../../models/types.js";

/** The longest message text indexed, in characters (the rest of a longer message is not). */
export const MAX_INDEXED_CHARS = 32_768;
/** The most query words a search uses (the first ones). */
export const MAX_QUERY_WORDS = 32;

/** A message as indexed: its position in the thread, who wrote it, its text. */
export interface SearchableMessage {
  index: number;
  role: "user" | "assistant";
  text: string;
}

/** The messages of a thread that a search sees: user and assistant text, cut at
 * {@link MAX_INDEXED_CHARS}; empty messages and tool results are left out. */
export function searchableMessages(messages: readonly Message[]): SearchableMessage[] {
  const out: SearchableMessage[] = [];
  for (const [index, m] of messages.entries()) {
    if ((m?.role !== "user" && m?.role !== "assistant") || typeof m.content !== "string") continue;
    const text = cutAt(m.content, MAX_INDEXED_CHARS);
    if (text.trim() !== "") out.push({ index, role: m.role, text });
  }
  return out;
}

/** The distinct lower-cased words (letters and digits) of a query, at most `MAX_QUERY_WORDS`. */
export function queryWords(query: string): string[] {
  const words = new Set<string>();
  for (const [w] of query.toLowerCase().matchAll(/[\p{L}\p{N}]+/gu)) {
    words.add(w);
    if (words.size === MAX_QUERY_WORDS) break;
  }
  return [...words];
}

/**
 * At most `maxChars` characters of `text` (whitespace runs as one space), starting a little
 * before the first of `words` it contains (its start when none), with `…` where it was cut.
 */
export function snippetAround(text: string, words: readonly string[], maxChars: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  if (flat.length <= maxChars) return flat;
  const lower = flat.toLowerCase();
  // Lower-casing can change a text's length (rare letters): then positions do not carry over.
  let hit = -1;
  if (lower.length === flat.length) {
    for (const w of words) {
      const at = lower.indexOf(w);
      if (at >= 0 && (hit < 0 || at < hit)) hit = at;
    }
  }
  const body = maxChars - 2;
  let start = hit < 0 ? 0 : Math.max(0, Math.min(hit - Math.floor(body / 3), flat.length - body));
  // Never start inside a surrogate pair.
  const first = flat.charCodeAt(start);
  if (start > 0 && first >= 0xdc00 && first <= 0xdfff) start++;
  const lead = start > 0 ? "…" : "";
  const rest = flat.slice(start);
  const room = maxChars - lead.length;
  return rest.length <= room ? lead + rest : `${lead}${cutAt(rest, room - 1)}…`;
}
