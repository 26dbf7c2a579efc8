/**
 * Engram: deep agents with durable memory, on a Rust core that runs as a Node native addon or
 * as WebAssembly (workerd, browsers, Deno).
 *
 * This entry holds what an agent builder uses, listed by name. What store, backend and model
 * implementers need besides (the contracts' helper types, encodings, conformance rules) is in
 * `engram/kit`; the conformance suites are in `engram/testing`.
 * @packageDocumentation
 */

// ---- The agent ----
export { createDeepAgent, type DeepAgent } from "./agent/create.js";
export {
  type AgentModelSettings,
  type BackendContext,
  BUILT_IN_TOOL_NAMES,
  type DeepAgentOptions,
  type InterruptConfig,
  type LongTermMemoryAgentOptions,
  type SubagentDefinition,
  type ThreadRecallOptions,
} from "./agent/options.js";
export { DEFAULT_SYSTEM_PROMPT } from "./agent/prompt.js";

// ---- Running it: input, events, output, reviews ----
export {
  type AgentEvent,
  type AgentInput,
  type AgentOutput,
  type Decision,
  type Interrupt,
  type InterruptedCall,
  type ResumeInput,
  type RunOptions,
  resume,
  type StopReason,
  type SubagentIdentity,
} from "./agent/types.js";
export { closeOnSignals, type SignalProcess } from "./agent/shutdown.js";
export type { AgentState, HookContext, Middleware, ModelResponse } from "./agent/middleware.js";

// ---- Threads ----
export {
  type Checkpoint,
  type Checkpointer,
  InMemoryCheckpointer,
  type InMemoryCheckpointerOptions,
  type ListThreadsOptions,
  type ThreadInfo,
} from "./agent/checkpointer.js";
export {
  type HistoryPoint,
  type HistoryRetention,
  type ListHistoryOptions,
  type PointState,
  type RewindOptions,
  type RewindResult,
  forkThread,
  listHistory,
  readHistoryPoint,
  rewindThread,
} from "./agent/history.js";

// ---- Models ----
export type {
  ChatModel,
  FinishReason,
  Message,
  ModelRequest,
  ModelResult,
  ModelSettings,
  ModelStage,
  ModelStreamEvent,
  ToolCall,
  Usage,
} from "./models/types.js";
export { OpenAICompatibleModel, type OpenAICompatibleOptions } from "./models/openai-compatible.js";
export { fromLanguageModel, type LanguageModelAdapterOptions, type LanguageModelLike } from "./models/ai-sdk.js";
export { type ModelSpec, parseModelString, type ResolveModelOptions, resolveModel } from "./models/resolve.js";
export { FakeChatModel, type FakeChatModelOptions, type FakeTurn } from "./models/fake.js";

// ---- Tools ----
export { invokeTool, type Tool, type ToolContext, type ToolResult } from "./tools/types.js";
export { createFilesystemTools, type FilesystemToolsOptions } from "./tools/filesystem.js";

// ---- Backends: where the agent's files live ----
export type { Backend, ExecuteOptions, ExecuteResult } from "./backends/protocol.js";
export { StateBackend, type StateBackendOptions } from "./backends/state.js";
export { StoreBackend, type StoreBackendOptions } from "./backends/store.js";
export { CompositeBackend, type CompositeBackendOptions } from "./backends/composite.js";
export { FilesystemBackend, type FilesystemBackendOptions } from "./backends/filesystem.js";

// ---- Stores: where memory and threads persist ----
export type { Namespace, Store, StoreItem } from "./stores/types.js";
export { InMemoryStore } from "./stores/memory.js";

// ---- The core ----
export { type LoadCoreOptions, loadCore } from "./core/loader.js";
export type { Core, CoreKind, ErrorCode, ErrorData, FileInfo, Result } from "./core/types.js";

// ---- Errors ----
export { ConfigError, EngramError, type EngramErrorCode, ModelError, type ModelErrorCode, ResumeError } from "./errors.js";

// ---- Memory: AGENTS.md, long-term facts, their history, past threads ----
export { LongTermMemory, type LongTermMemoryOptions } from "./memory/longterm/longterm.js";
export { FACT_CATEGORIES, type Fact, type FactCategory, type MemoryData } from "./memory/longterm/schema.js";
export { StoreMemoryStorage, type StoreMemoryStorageOptions } from "./memory/longterm/store-storage.js";
export { redactSecrets } from "./memory/longterm/redact.js";
export { redactMemoryWrites } from "./memory/sources/redact.js";
export {
  type MemoryChange,
  MemoryHistory,
  type MemoryHistoryOptions,
} from "./memory/history/history.js";
export { restoreThrough } from "./memory/history/recording-backend.js";
export { searchPastThreads } from "./memory/recall/search.js";

// ---- Skills ----
export { type Skill, setSkillsYamlParser } from "./skills/parse.js";
export { SkillsLoader, type SkillsLoaderOptions } from "./skills/loader.js";
