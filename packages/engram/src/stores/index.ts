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
  DamagedValueError,
  checkKey,
  compareKeys,
  decodeValue,
  encodeValue,
  isDamagedValue,
  listReadable,
  listRows,
  matchesFilter,
  namespaceFromId,
  namespaceId,
  prefixEnd,
  searchRows,
} from "./rules.js";
