/**
 * `engram/kit`: what implementers of stores, checkpointers, backends and models need — the
 * contracts' helper types, the encodings and rules every store shares, the checkpoint format,
 * thread search, backend capabilities. Agent builders need none of it: they use `engram`.
 * The contracts themselves (`Store`, `Checkpointer`, `Backend`, `ChatModel`, …) are re-exported
 * here too, so an implementation imports from one place. Conformance suites: `engram/testing`.
 * @packageDocumentation
 */

// ---- Shared with `engram`: the contracts and what every implementation uses ----
export { EngramError, type EngramErrorCode, ModelError, type ModelErrorCode, ResumeError } from "./errors.js";
export { type LoadCoreOptions, loadCore, loadedCore } from "./core/loader.js";
export type { Backend, ExecuteOptions, ExecuteResult } from "./backends/protocol.js";
export { CompositeBackend } from "./backends/composite.js";
export { StoreBackend } from "./backends/store.js";
export { type Namespace, type Store, type StoreItem, validateNamespace } from "./stores/types.js";
export {
  type Checkpoint,
  type Checkpointer,
  checkThreadId,
  type ListThreadsOptions,
  type ThreadInfo,
} from "./agent/checkpointer.js";
export type { ChatModel, Message, ModelRequest, ModelResult, ModelStreamEvent, ToolCall } from "./models/types.js";
export { isLocalModelId, LongTermMemory } from "./memory/longterm/longterm.js";

// ---- The core's types (what its calls take and give) ----
export type {
  Core,
  CoreFanOut,
  CoreFileTable,
  CoreKind,
  CoreRouter,
  EditOptions,
  EditResult,
  ErrorCode,
  ErrorData,
  FactsBlockInput,
  FanAsk,
  FanGlobResult,
  FileInfo,
  FileTableMark,
  GlobAsk,
  GlobOptions,
  GlobResult,
  GrepMatch,
  GrepMergeOptions,
  GrepOptions,
  GrepOutputMode,
  GrepResult,
  GrepSkip,
  LsResult,
  MemorySectionResult,
  MemorySourceInput,
  MountPart,
  ReadOptions,
  ReadResult,
  Redaction,
  Result,
  Route,
  WriteOptions,
} from "./core/types.js";

// ---- Backends: the contract's options, capabilities, wrappers ----
export type {
  BackendEditOptions,
  BackendGlobOptions,
  BackendGrepOptions,
  BackendReadResult,
  BackendWriteOptions,
  ToolTextRequest,
  VersionedFileInfo,
} from "./backends/protocol.js";
export {
  type BackendCapabilities,
  CAPABILITIES,
  type ChangeMark,
  capability,
  type ResidentMirror,
} from "./backends/capabilities.js";
export { wrapBackend } from "./backends/wrap.js";
export type { StateMark } from "./backends/state.js";
export type { NamespaceContext, StoredFile } from "./backends/store.js";
export type { FilesystemSearchOptions } from "./backends/filesystem.js";
export type { SandboxDefaults } from "./backends/sandbox.js";

// ---- Stores: the rules every store keeps (keys, values, listing, search) ----
export type {
  BatchOp,
  BatchResult,
  FilterCondition,
  ListOptions,
  ListResult,
  PutOptions,
  PutResult,
  SearchOptions,
  SearchResult,
} from "./stores/types.js";
export { MAX_KEY_BYTES } from "./stores/types.js";
export {
  type Bound,
  checkKey,
  compareKeys,
  DamagedValueError,
  decodeValue,
  encodeValue,
  type FetchRows,
  isDamagedValue,
  listReadable,
  listRows,
  matchesFilter,
  namespaceFromId,
  namespaceId,
  prefixEnd,
  type RawRow,
  searchRows,
} from "./stores/rules.js";

// ---- Checkpointers: the checkpoint format, conflicts, run steps ----
export {
  assembleCheckpoint,
  CHECKPOINT_VERSION,
  checkpointFiles,
  checkThreadLimit,
  decodeCheckpoint,
  type EncodedCheckpoint,
  encodeCheckpoint,
  type FilesRef,
  filesConflict,
  type GetCheckpointOptions,
  type HistoryHead,
  revisionConflict,
  sameFiles,
} from "./agent/checkpointer.js";
export {
  checkPutOptions,
  checkRunStep,
  checkStepKeys,
  hasHistoryOperations,
  hasStepOperations,
  type HistoryOperations,
  historyOrder,
  type HistoryStep,
  type PutCheckpointOptions,
  type StepKey,
  ProcessClaims,
  releasedOnce,
  type RunStep,
  type StepOperations,
  stepConflict,
  type ThreadClaim,
  threadBusy,
} from "./agent/run-steps.js";
export { interruptedCallNotice, OPEN_TOOLS, runStatus } from "./agent/step-log.js";

// ---- Thread search (a store's past-threads index) ----
export {
  type CheckedSearch,
  checkMessageSearch,
  MESSAGE_SEARCH_LIMIT,
  type MessageSearchHit,
  type MessageSearchQuery,
  SNIPPET_CHARS,
} from "./memory/recall/types.js";
export { MAX_INDEXED_CHARS, queryWords, type SearchableMessage, searchableMessages, snippetAround } from "./memory/recall/text.js";
export {
  byRelevance,
  type CandidateMessage,
  type IndexedThread,
  type LoadedThread,
  rankCandidates,
  rankLoadedThreads,
} from "./memory/recall/rank.js";
export { canSearchThreads, type ThreadSearchSource } from "./memory/recall/search.js";

// ---- Long-term memory storage and its pending work ----
export { type LoadedMemory, type MemoryStorage, NO_REVISION, type SaveMemoryResult, safeId } from "./memory/longterm/storage.js";
export {
  createEmptyMemory,
  type HistoryContext,
  isEmptyMemory,
  MEMORY_VERSION,
  type MemorySection,
  parseMemory,
  type UserContext,
} from "./memory/longterm/schema.js";
export {
  InMemoryPendingWork,
  type PendingEntry,
  type PendingWorkStore,
  StorePendingWork,
  type StorePendingWorkOptions,
  type UpdateJob,
} from "./memory/longterm/pending.js";
export type {
  CloseOptions,
  DeleteFactResult,
  ExtractionSchedule,
  FactErrorCode,
  FactPatch,
  FactResult,
  MemoryIdentity,
  NewFactInput,
  UserLine,
} from "./memory/longterm/longterm.js";
export { REDACTED } from "./memory/longterm/redact.js";
export { type CapturedConversation, captureConversation } from "./memory/longterm/capture.js";
export { type ExtractionMode, factsUpdateSchema, memoryUpdateSchema } from "./memory/longterm/update-schema.js";
export type { MemoryInjection, RecallMode } from "./memory/longterm/inject.js";
export { runMemoryUpdate, type UpdateOutcome, type UpdaterContext } from "./memory/longterm/updater.js";
export { buildUpdateRequest, chunkConversation, type UpdatePromptOptions, type UpdateRequest } from "./memory/longterm/prompt.js";
export {
  MEMORY_GUIDELINES,
  type MemoryMiddlewareOptions,
  memoryMiddleware,
} from "./middleware/memory.js";
export type { MemoryCacheEntry } from "./memory/sources/load.js";

// ---- Memory history: recording changes made through other paths ----
export type {
  ListChangesOptions,
  MemoryActor,
  MemoryKind,
  MemoryRetention,
  NewMemoryChange,
  RestoreFn,
} from "./memory/history/history.js";
export { factsTarget, factsText, type RecordFactChangesOptions, recordFactChanges } from "./memory/history/facts.js";
export { type RecordMemoryChangesOptions, recordMemoryChanges } from "./memory/history/recording-backend.js";

// ---- Models: helpers for a ChatModel implementation ----
export type { CutReply, ResponseFormat, Role, ToolSpec, Usage } from "./models/types.js";
export {
  assistantMessage,
  type ParsedToolArgs,
  type ParseToolArgsOptions,
  parseToolArgs,
  parseToolArguments,
  RAW_ARGS_KEY,
} from "./models/normalize.js";
export { parseTextToolCalls, type TextToolCall, type TextToolCalls } from "./models/text-tool-calls.js";
export { type RetryInfo, type RetryOptions, type RetryPolicy, retryDelay, retryPolicy } from "./models/retry.js";
export { codeForStatus, isRetryable, parseRetryAfter } from "./models/classify.js";
export type { FakeScript, FakeToolCall, RecordedRequest } from "./models/fake.js";
export {
  isLanguageModelLike,
  type LanguageModelCallOptions,
  type LanguageModelFunctionTool,
  type LanguageModelPart,
  type LanguageModelPromptMessage,
  type LanguageModelTextPart,
  type LanguageModelToolCallPart,
  type LanguageModelToolResultPart,
} from "./models/ai-sdk.js";
export { DEFAULT_OLLAMA_BASE_URL, isChatModel, loadModel, MODEL_PROVIDERS, type ModelProviderPackage } from "./models/resolve.js";
export {
  estimateMessagesTokens,
  estimateRequestTokens,
  estimateTokens,
  MESSAGE_OVERHEAD_TOKENS,
  TOOL_CALL_OVERHEAD_TOKENS,
} from "./models/tokens.js";

// ---- Tools and untrusted text ----
export type { ToolAttachment } from "./tools/types.js";
export { FILESYSTEM_TOOL_NAMES } from "./tools/filesystem.js";
export { DEFAULT_EVICTION_CHARS, type EvictionOptions, evictLargeResult, safeResultId } from "./tools/eviction.js";
export { DEFAULT_MAX_OUTPUT_CHARS } from "./tools/format.js";
export { createExecuteTool, EXECUTE_TOOL_NAME } from "./tools/execute.js";
export { escapeTags, neutralizeSectionTags, PROMPT_SECTION_TAGS } from "./prompt/escape.js";
export { DEFAULT_OPTIONS, type DefaultOptions } from "./agent/options.js";
export type { RunContext } from "./agent/types.js";
export type { DecisionType } from "./middleware/types.js";

// ---- Skills: parsing and the prompt section ----
export { type Frontmatter, splitFrontmatter } from "./skills/frontmatter.js";
export {
  MAX_SKILL_COMPATIBILITY_LENGTH,
  MAX_SKILL_DESCRIPTION_LENGTH,
  MAX_SKILL_NAME_LENGTH,
  type ParseSkillResult,
  parseSkillFile,
  type YamlParse,
} from "./skills/parse.js";
export { MAX_SKILL_FILE_BYTES } from "./skills/loader.js";
export { escapeSkillText, formatSkillsSection } from "./skills/prompt.js";
