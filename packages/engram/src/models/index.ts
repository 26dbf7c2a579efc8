export type {
  ChatModel,
  CutReply,
  FinishReason,
  Message,
  ModelRequest,
  ModelResult,
  ModelSettings,
  ModelStage,
  ModelStreamEvent,
  ResponseFormat,
  Role,
  ToolCall,
  ToolSpec,
  Usage,
} from "./types.js";
export {
  type ParseToolArgsOptions,
  type ParsedToolArgs,
  RAW_ARGS_KEY,
  assistantMessage,
  parseToolArgs,
  parseToolArguments,
} from "./normalize.js";
export { type TextToolCall, type TextToolCalls, parseTextToolCalls } from "./text-tool-calls.js";
export { type RetryInfo, type RetryOptions, type RetryPolicy, retryDelay, retryPolicy } from "./retry.js";
export { codeForStatus, isRetryable, parseRetryAfter } from "./classify.js";
export {
  FakeChatModel,
  type FakeChatModelOptions,
  type FakeScript,
  type FakeToolCall,
  type FakeTurn,
  type RecordedRequest,
} from "./fake.js";
export { OpenAICompatibleModel, type OpenAICompatibleOptions } from "./openai-compatible.js";
export {
  type LanguageModelAdapterOptions,
  type LanguageModelCallOptions,
  type LanguageModelFunctionTool,
  type LanguageModelLike,
  type LanguageModelPart,
  type LanguageModelPromptMessage,
  type LanguageModelTextPart,
  type LanguageModelToolCallPart,
  type LanguageModelToolResultPart,
  fromLanguageModel,
  isLanguageModelLike,
} from "./ai-sdk.js";
export {
  DEFAULT_OLLAMA_BASE_URL,
  MODEL_PROVIDERS,
  type ModelProviderPackage,
  type ModelSpec,
  type ResolveModelOptions,
  isChatModel,
  loadModel,
  parseModelString,
  resolveModel,
} from "./resolve.js";
export {
  MESSAGE_OVERHEAD_TOKENS,
  TOOL_CALL_OVERHEAD_TOKENS,
  estimateMessagesTokens,
  estimateRequestTokens,
  estimateTokens,
} from "./tokens.js";
