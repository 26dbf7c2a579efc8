/**
 * Long-term facts memory (DESIGN §5.2), edge-safe: no `node:` import is reachable from here.
 * `FileMemoryStorage` lives in the Node-only entry `./node.js`.
 * @module
 */
export {
  LongTermMemory,
  LONG_TERM_MEMORY_DEFAULTS,
  LOCAL_MODEL_DEFAULTS,
  isLocalModelId,
  type CloseOptions,
  type DeleteFactResult,
  type ExtractionSchedule,
  type FactErrorCode,
  type FactPatch,
  type FactResult,
  type LongTermMemoryOptions,
  type MemoryIdentity,
  type NewFactInput,
} from "./longterm.js";
export {
  FACT_CATEGORIES,
  HISTORY_SECTIONS,
  MEMORY_VERSION,
  USER_SECTIONS,
  createEmptyMemory,
  isEmptyMemory,
  memorySchema,
  parseMemory,
  type Fact,
  type FactCategory,
  type HistoryContext,
  type MemoryData,
  type MemorySection,
  type UserContext,
} from "./schema.js";
export { NO_REVISION, safeId, type LoadedMemory, type MemoryStorage, type SaveMemoryResult } from "./storage.js";
export { StoreMemoryStorage, type StoreMemoryStorageOptions } from "./store-storage.js";
export {
  captureConversation,
  detectForget,
  detectSignals,
  filterForMemory,
  SIGNAL_WINDOW,
  type CapturedConversation,
} from "./capture.js";
export {
  InMemoryPendingWork,
  StorePendingWork,
  type PendingEntry,
  type PendingWorkStore,
  type StorePendingWorkOptions,
} from "./pending.js";
export { UpdateQueue, type UpdateQueueOptions } from "./queue.js";
export { parseMemoryUpdate, type MemoryUpdate, type NewFact, type ParsedUpdate, type SectionUpdate } from "./parse.js";
export {
  buildUpdateRequest,
  chunkConversation,
  DEFAULT_UPDATE_PROMPT_OPTIONS,
  type UpdatePromptOptions,
  type UpdateRequest,
} from "./prompt.js";
export {
  type ExtractionFormat,
  type ExtractionMode,
  extractionFormat,
  FACTS_JSON_SCHEMA,
  factsUpdateSchema,
  memoryUpdateSchema,
  UPDATE_EXAMPLE,
  UPDATE_JSON_SCHEMA,
  UPDATE_RESPONSE_FORMAT,
  type MemoryUpdateShape,
} from "./update-schema.js";
export {
  applyUpdate,
  type ApplyContext,
  runMemoryUpdate,
  sanitizeMemory,
  type AppliedUpdate,
  type SaveRules,
  type UpdateRules,
  type UpdateJob,
  type UpdateOutcome,
  type UpdaterContext,
} from "./updater.js";
export { formatMemoryBlock, memoryInjection, scoreFacts, type InjectionOptions, type MemoryInjection, type RecallMode } from "./inject.js";
export { lineUpdatesFact, notUpdatedBy, type UserLine } from "./supersede.js";
export { factRestatesLine, notRestatedBy } from "./restated.js";
export { redactSecrets, REDACTED } from "./redact.js";
