export type {
  BatchOp,
  BatchResult,
  FilterCondition,
  ListOptions,
  ListResult,
  Namespace,
  PutOptions,
  PutResult,
  SearchOptions,
  SearchResult,
  Store,
  StoreItem,
} from "./types.js";
export { MAX_KEY_BYTES, validateNamespace } from "./types.js";
export { InMemoryStore } from "./memory.js";
export {
  type Bound,
  type FetchRows,
  type RawRow,
  checkKey,
  compareKeys,
  encodeValue,
  listRows,
  matchesFilter,
  namespaceFromId,
  namespaceId,
  prefixEnd,
  searchRows,
} from "./rules.js";
// Checkpoint storage helpers live with the checkpointer; exported here for store packages.
export {
  CHECKPOINT_VERSION,
  type EncodedCheckpoint,
  type ListThreadsOptions,
  type ThreadInfo,
  checkThreadId,
  checkThreadLimit,
  decodeCheckpoint,
  encodeCheckpoint,
} from "../agent/checkpointer.js";
