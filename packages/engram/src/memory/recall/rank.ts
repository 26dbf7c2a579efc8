/**
 * Ranking threads held in memory: the core's BM25 over every searchable message of them, the
 * best message standing for its thread.
 * @module
 */
import type { Core } from "../../core/types.js";
import type { Message } from "../../models/types.js";
import { isInflected, regExpLiteral, stemKey } from "../longterm/words.js";
import { type SearchableMessage, queryWords, searchableMessages, snippetAround } from "./text.js";
import type { CheckedSearch, MessageSearchHit } from "./types.js";

/** A thread of the user asking, loaded. */
export interface LoadedThread {
  threadId: string;
  savedAt: number;
  messages: readonly Message[];
}

/** The best-matching threads among `threads` (already the user's, without the excluded one),
 * best first, at most `search.limit`. Only the messages holding a query word (as a substring)
 * are ranked, as a full-text index hands them over: the core's BM25 costs per message given. */
export function rankLoadedThreads(
  core: Pick<Core, "rankBm25">,
  search: CheckedSearch,
  threads: Iterable<LoadedThread | IndexedThread>,
): MessageSearchHit[] {
  const words = queryWords(search.query);
  const candidates: CandidateMessage[] = [];
  for (const thread of threads) {
    const { threadId, savedAt } = thread;
    const messages = "searchable" in thread ? thread.searchable : searchableMessages(thread.messages);
    for (const message of messages) {
      const lower = message.text.toLowerCase();
      if (words.some((w) => lower.includes(w))) candidates.push({ threadId, savedAt, message });
    }
  }
  return rankCandidates(core, search, candidates);
}

/** A thread of the user asking, with its searchable messages taken out already. */
export interface IndexedThread {
  threadId: string;
  savedAt: number;
  searchable: readonly SearchableMessage[];
}

/** A message that may match, with its thread. */
export interface CandidateMessage {
  threadId: string;
  savedAt: number;
  message: SearchableMessage;
}

/** Every candidate the core's BM25 scores above 0 for `search.query`, as a hit, in candidate
 * order (messages sharing no word with the query are left out). */
function scoredHits(core: Pick<Core, "rankBm25">, search: CheckedSearch, candidates: readonly CandidateMessage[]): MessageSearchHit[] {
  const asked = queryWords(search.query);
  if (asked.length === 0 || candidates.length === 0) return [];
  const words = withInflections(
    asked,
    candidates.map((c) => c.message.text),
  );
  const scores = core.rankBm25(
    words.join(" "),
    candidates.map((c) => c.message.text),
  );
  const hits: MessageSearchHit[] = [];
  for (const [at, score] of scores.entries()) {
    if (!(score > 0)) continue;
    const { threadId, savedAt, message } = candidates[at] as CandidateMessage;
    hits.push({
      threadId,
      savedAt,
      role: message.role,
      messageIndex: message.index,
      snippet: snippetAround(message.text, words, search.snippetChars),
      score,
    });
  }
  return hits;
}

/**
 * `words` plus the words of `texts` that are an inflection of one of them ("named" for "name",
 * "moving" for "moved": the same crude stem, see `sameWord` in long-term memory). The core's BM25 compares words
 * exactly, so without them "What are the names of my pets?" scores "I have a cat named Miso" 0.
 */
export function withInflections(words: readonly string[], texts: readonly string[]): string[] {
  const out = new Set(words);
  // Each stem, and whether a query word of that stem is an inflection (two plain words whose
  // stems meet are not the same word: "same" does not find "Sam").
  const stems = new Map<string, boolean>();
  for (const w of words) {
    const key = stemKey(w);
    if (key !== undefined) stems.set(key, stems.get(key) === true || isInflected(w));
  }
  if (stems.size === 0) return [...out];
  // A stem is a prefix of its word, so only words that start with one of the stems can be an
  // inflection: a text without any stem is passed over (a plain search, the cheap part over
  // thousands of messages), the regular expression finds the words, and the stem rule decides.
  const alternatives = [...stems.keys()].map(regExpLiteral).join("|");
  const hasStem = new RegExp(alternatives, "iu");
  const startsWithStem = new RegExp(`(?<![\\p{L}\\p{N}])(?:${alternatives})[\\p{L}\\p{N}]*`, "giu");
  const seen = new Set<string>();
  for (const text of texts) {
    if (!hasStem.test(text)) continue;
    for (const [match] of text.matchAll(startsWithStem)) {
      const w = match.toLowerCase();
      if (out.has(w) || seen.has(w)) continue;
      seen.add(w);
      const key = stemKey(w);
      const queried = key === undefined ? undefined : stems.get(key);
      if (queried !== undefined && (queried || isInflected(w))) out.add(w);
    }
  }
  return [...out];
}

/** The core's BM25 over `candidates`; each thread's best message, best first, at most
 * `search.limit` (messages sharing no word with the query are left out). */
export function rankCandidates(
  core: Pick<Core, "rankBm25">,
  search: CheckedSearch,
  candidates: readonly CandidateMessage[],
): MessageSearchHit[] {
  const best = new Map<string, MessageSearchHit>();
  for (const hit of scoredHits(core, search, candidates)) {
    const held = best.get(hit.threadId);
    if (!held || hit.score > held.score) best.set(hit.threadId, hit);
  }
  return [...best.values()].sort(byRelevance).slice(0, search.limit);
}

/** The core's BM25 over `candidates`, message by message (several may come from one thread),
 * best first, at most `search.limit`; messages sharing no word with the query are left out. */
export function rankMessages(
  core: Pick<Core, "rankBm25">,
  search: CheckedSearch,
  candidates: readonly CandidateMessage[],
): MessageSearchHit[] {
  return scoredHits(core, search, candidates)
    .sort((a, b) => byRelevance(a, b) || a.messageIndex - b.messageIndex)
    .slice(0, search.limit);
}

/** Higher score first; on a tie, the thread saved last, then thread id. */
export function byRelevance(a: MessageSearchHit, b: MessageSearchHit): number {
  return b.score - a.score || b.savedAt - a.savedAt || (a.threadId < b.threadId ? -1 : a.threadId > b.threadId ? 1 : 0);
}
