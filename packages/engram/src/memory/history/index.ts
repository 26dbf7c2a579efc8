export {
  type ListChangesOptions,
  type MemoryActor,
  type MemoryChange,
  MemoryHistory,
  type MemoryHistoryOptions,
  type MemoryKind,
  type MemoryRetention,
  type NewMemoryChange,
  type RestoreFn,
} from "./history.js";
export { factsTarget, factsText, type RecordFactChangesOptions, recordFactChanges } from "./facts.js";
export { type RecordMemoryChangesOptions, recordMemoryChanges, restoreThrough } from "./recording-backend.js";
