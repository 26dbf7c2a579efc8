/**
 * Searching a user's earlier threads: the request every implementation takes, its bounds, and
 * the hit it returns.
 * @module
 */
import { EngramError } from "../../errors.js";
import { checkKeyText } from "../../stores/rules.js";

/** What {@link MessageSearchQuery.limit} is when absent, and the most it may be. */
export const MESSAGE_SEARCH_LIMIT = { default: 5, max: 50 } as const;
/** What {@link MessageSearchQuery.snippetChars} is when absent, and its range. */
export const SNIPPET_CHARS = { default: 300, min: 40, max: 2000 } as const;
/** The longest query, in characters (a longer one is cut). */
export const MAX_QUERY_CHARS = 1000;

/** A search of one user's saved threads. */
export interface MessageSearchQuery {
  /** Only threads saved with this user id are searched; a thread saved without one never
   * matches. */
  userId: string;
  /** Free text: a message matches when it shares a word with it (case-insensitive); more
   * shared words, and rarer ones, rank it higher (BM25). */
  query: string;
  /** A thread left out (the one asking). */
  excludeThreadId?: string;
  /** At most this many threads. Default 5, at most 50. */
  limit?: number;
  /** Each snippet has at most this many characters. Default 300 (40–2000). */
  snippetChars?: number;
}

/** One matching thread: its best-matching message. */
export interface MessageSearchHit {
  threadId: string;
  /** When the thread was last saved (milliseconds since the epoch). */
  savedAt: number;
  /** Who wrote the message. */
  role: "user" | "assistant";
  /** The message's position in the thread's saved messages. */
  messageIndex: number;
  /** Part of the message around its first matching word, at most `snippetChars` long. */
  snippet: string;
  /** Relevance, higher first; comparable only within one answer. */
  score: number;
}

/** A query with its defaults filled in and checked. */
export interface CheckedSearch {
  userId: string;
  query: string;
  excludeThreadId: string | undefined;
  limit: number;
  snippetChars: number;
}

function intIn(value: unknown, name: string, min: number, max: number, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max)
    throw new EngramError("invalid_argument", `${name} must be an integer in [${min}, ${max}], got ${String(value)}`);
  return value;
}

/** Checks a search and fills in its defaults; throws an `invalid_argument` {@link EngramError}. */
export function checkMessageSearch(search: MessageSearchQuery): CheckedSearch {
  if (typeof search !== "object" || search === null) throw new EngramError("invalid_argument", "a search must be an object");
  const userId = checkKeyText(search.userId, "a user id", false);
  if (typeof search.query !== "string") throw new EngramError("invalid_argument", `query must be a string, got ${typeof search.query}`);
  const excludeThreadId = search.excludeThreadId === undefined ? undefined : checkKeyText(search.excludeThreadId, "a thread id", false);
  return {
    userId,
    query: search.query.slice(0, MAX_QUERY_CHARS),
    excludeThreadId,
    limit: intIn(search.limit, "limit", 1, MESSAGE_SEARCH_LIMIT.max, MESSAGE_SEARCH_LIMIT.default),
    snippetChars: intIn(search.snippetChars, "snippetChars", SNIPPET_CHARS.min, SNIPPET_CHARS.max, SNIPPET_CHARS.default),
  };
}
