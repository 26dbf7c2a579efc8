/** Recall of a user's earlier threads. @module */
export {
  type CheckedSearch,
  MESSAGE_SEARCH_LIMIT,
  type MessageSearchHit,
  type MessageSearchQuery,
  SNIPPET_CHARS,
  checkMessageSearch,
} from "./types.js";
export { MAX_INDEXED_CHARS, type SearchableMessage, queryWords, searchableMessages, snippetAround } from "./text.js";
export {
  type CandidateMessage,
  type IndexedThread,
  type LoadedThread,
  byRelevance,
  rankCandidates,
  rankLoadedThreads,
  rankMessages,
} from "./rank.js";
export { type ThreadSearchSource, canSearchThreads, searchPastThreads } from "./search.js";
export { RECALL_TAG, type RecallBlock, type RecallRequest, fitRecallBlock, formatRecallBlock, recallSnippets } from "./inject.js";
