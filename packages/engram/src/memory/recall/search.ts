/**
 * `searchPastThreads`: a user's earlier threads that match a query. A checkpointer that can
 * search its own messages (`searchMessages`: an index of its own) answers; otherwise the
 * threads are listed, loaded and ranked with the core's BM25. Either way the answer is bounded
 * (threads and snippet length) and holds only threads saved with the asking user's id.
 * @module
 */
import type { Core } from "../../core/types.js";
import { EngramError } from "../../errors.js";
import type { Message } from "../../models/types.js";
import { cutAt } from "../../core/text.js";
import { type LoadedThread, byRelevance, rankLoadedThreads } from "./rank.js";
import { type MessageSearchHit, type MessageSearchQuery, checkMessageSearch } from "./types.js";

/** What a search needs of a checkpointer: its own search, or listing and loading threads. */
export interface ThreadSearchSource {
  searchMessages?(search: MessageSearchQuery): Promise<MessageSearchHit[]>;
  list?(options?: { limit?: number; cursor?: string }): Promise<{ threads: { threadId: string }[]; cursor?: string }>;
  get(threadId: string): Promise<{ messages: Message[]; savedAt: number; userId?: string } | undefined>;
}

/** Threads loaded per listed page when the checkpointer has no search of its own. */
const PAGE = 200;

/** Whether `source` can answer {@link searchPastThreads}. */
export function canSearchThreads(source: Partial<ThreadSearchSource>): boolean {
  return typeof source.searchMessages === "function" || (typeof source.list === "function" && typeof source.get === "function");
}

/** The user's threads (but the excluded one) that match `search.query`, best first. Throws an
 * `invalid_argument` {@link EngramError} for a bad search, `unsupported` when `source` can
 * neither search nor list its threads. */
export async function searchPastThreads(
  source: ThreadSearchSource,
  core: Pick<Core, "rankBm25">,
  search: MessageSearchQuery,
): Promise<MessageSearchHit[]> {
  const checked = checkMessageSearch(search);
  if (typeof source.searchMessages === "function") {
    const hits = await source.searchMessages({ ...search, ...checked, excludeThreadId: checked.excludeThreadId });
    // Bounded whatever the implementation returns.
    return hits
      .filter((h) => h.threadId !== checked.excludeThreadId)
      .slice(0, checked.limit)
      .map((h) => (h.snippet.length > checked.snippetChars ? { ...h, snippet: cutAt(h.snippet, checked.snippetChars) } : h));
  }
  if (typeof source.list !== "function")
    throw new EngramError("unsupported", "searching past threads needs a checkpointer with searchMessages or list");
  const threads: LoadedThread[] = [];
  let cursor: string | undefined;
  do {
    const page = await source.list({ limit: PAGE, ...(cursor !== undefined && { cursor }) });
    for (const { threadId } of page.threads) {
      if (threadId === checked.excludeThreadId) continue;
      let cp: Awaited<ReturnType<ThreadSearchSource["get"]>>;
      try {
        cp = await source.get(threadId);
      } catch {
        // A damaged checkpoint names no user for sure: it is left out, the search goes on.
        continue;
      }
      if (cp?.userId === checked.userId && Array.isArray(cp.messages))
        threads.push({ threadId, savedAt: cp.savedAt, messages: cp.messages });
    }
    cursor = page.cursor;
  } while (cursor !== undefined);
  return rankLoadedThreads(core, checked, threads).sort(byRelevance);
}
