/**
 * The model contract (DESIGN §2–3): messages and tool schemas in, one assistant message with
 * tool calls out, streamed or not. Every model in Engram — scripted, HTTP, AI SDK — implements
 * {@link ChatModel}; failures are {@link ModelError}s with a pinned code.
 * @module
 */

/** Who wrote a message. The system prompt is not a message: it travels in {@link ModelRequest.system}. */
export type Role = "user" | "assistant" | "tool";

/** One call the model asks the agent to make. */
export interface ToolCall {
  /** Matches the {@link Message.toolCallId} of the tool's reply. */
  id: string;
  name: string;
  /**
   * Always an object. Malformed JSON is repaired when the fix is obvious (a missing brace or
   * quote, a trailing comma — `jsonrepair`); arguments that still cannot be read are kept as
   * `{ __raw: "<text>" }` (the key is `RAW_ARGS_KEY` in `engram/kit`) and {@link ToolCall.argsError} says why.
   */
  args: Record<string, unknown>;
  /**
   * Set only when the arguments could not be read as a JSON object: what was wrong, in words
   * meant for the model (the agent returns it as the tool result instead of running the tool,
   * so the model can correct its call). Absent on every well-formed call.
   */
  argsError?: string;
}

/** One turn of the conversation. */
export interface Message {
  role: Role;
  content: string;
  /** Assistant messages only; present only when non-empty. */
  toolCalls?: ToolCall[];
  /** Tool messages only: the {@link ToolCall.id} this message answers. */
  toolCallId?: string;
}

/** A tool as the model sees it. */
export interface ToolSpec {
  name: string;
  description: string;
  /** A JSON Schema object describing the arguments. */
  parameters: Record<string, unknown>;
}

/**
 * Sampling settings of one request, passed through by every model (each maps them to its
 * provider's names). Every field defaults to "not sent": the provider's own default applies.
 */
export interface ModelSettings {
  /** Sampling temperature (0 = greedy). */
  temperature?: number;
  /** Cap on generated tokens (OpenAI-compatible: `max_tokens`; AI SDK: `maxOutputTokens`). */
  maxOutputTokens?: number;
  /** Nucleus sampling (OpenAI-compatible: `top_p`). */
  topP?: number;
  /** Seed for reproducible sampling, where the provider supports it. */
  seed?: number;
  /**
   * Provider-specific extras. OpenAI-compatible: merged into the request body (they cannot
   * replace `model`, `messages`, `tools`, `stream`); AI SDK: passed as `providerOptions`
   * (keyed by provider, e.g. `{ openai: { reasoningEffort: "low" } }`); llama: ignored.
   */
  providerOptions?: Record<string, unknown>;
}

/** A JSON answer the model must give: a JSON object text matching `schema`. */
export interface ResponseFormat {
  /** A short identifier of the schema (OpenAI requires one), e.g. `"memory_update"`. */
  name: string;
  /** A JSON Schema object. */
  schema: Record<string, unknown>;
}

/** What a {@link ChatModel} receives. */
export interface ModelRequest {
  /**
   * The STATIC prefix of the system prompt: instructions identical on every call of a run (so
   * providers can cache it). May be empty.
   */
  system: string;
  /**
   * Volatile system blocks (AGENTS.md memory, the skills index, long-term facts), sent as a
   * separate system message right after {@link ModelRequest.system} (OpenAI-compatible and AI
   * SDK: a second system message; llama: after the static part and the tool definitions).
   * Default: none.
   */
  systemContext?: string;
  messages: Message[];
  tools: ToolSpec[];
  /** Ask for a JSON object answer matching a schema. Default: free text. */
  responseFormat?: ResponseFormat;
  /** Sampling settings for this request; they override a model's constructor defaults. Default: none. */
  settings?: ModelSettings;
  /** Cancels the call; the model then rejects with a {@link ModelError} of code `aborted`. */
  signal?: AbortSignal;
}

/** Token counts as reported by the provider (absent when it reports none). */
export interface Usage {
  /** Prompt tokens, including cached ones. */
  inputTokens?: number;
  outputTokens?: number;
  /** The part of `inputTokens` served from the provider's prompt cache. */
  cachedInputTokens?: number;
}

/**
 * Why the model stopped: `stop` (a complete answer), `tool_calls` (it asks for tools),
 * `length` (cut off by the output-token limit: the message is incomplete), `content_filter`,
 * `error` (the provider reported one), `other` (anything else a provider reports).
 */
export type FinishReason = "stop" | "tool_calls" | "length" | "content_filter" | "error" | "other";

/**
 * What a model says of a reply cut at the output limit (`finishReason: "length"`).
 */
export interface CutReply {
  /**
   * The cut part was structured output — a tool call, or a grammar-constrained or
   * `responseFormat` JSON reply — and the unfinished JSON is left out of the message: such a
   * reply cannot be continued as text (the agent ends the run `truncated` instead). Absent for
   * a cut free-text reply, which can.
   */
  structuredCut?: boolean;
}

/** What {@link ChatModel.invoke} resolves to. */
export interface ModelResult extends CutReply {
  /** Always `role: "assistant"`. */
  message: Message;
  /** Why the model stopped. Engram's models always set it; a custom model that leaves it out
   * means `"tool_calls"` when the message has tool calls, else `"stop"`. */
  finishReason?: FinishReason;
  usage?: Usage;
}

/**
 * What a model is busy with, for a status line (local models report it; others need not):
 * `loading_model` (weights into memory, once), `reading_prompt` (`tokens`: the prompt's size),
 * `writing` (the first token is out; a tool call's JSON streams no text).
 */
export type ModelStage = "loading_model" | "reading_prompt" | "writing";

/**
 * One event of {@link ChatModel.stream}: text as it arrives, each tool call once complete,
 * then exactly one `finish` carrying the whole assistant message, why it stopped and usage;
 * `status` events may come at any point before `finish`.
 */
export type ModelStreamEvent =
  | { type: "text_delta"; text: string }
  | { type: "status"; stage: ModelStage; tokens?: number }
  | { type: "tool_call"; call: ToolCall }
  | ({ type: "finish"; message: Message; finishReason?: FinishReason; usage?: Usage } & CutReply);

/** A chat model: the only thing the agent loop needs from a provider. */
export interface ChatModel {
  /** Identifies the model in logs and events, e.g. `"fake"`, `"openai-compatible:llama3"`. */
  readonly id: string;
  /** One complete assistant turn. */
  invoke(request: ModelRequest): Promise<ModelResult>;
  /**
   * The same turn as events. Every model streams; one that cannot stream emits a single
   * `finish`. The concatenated `text_delta`s equal the finish message's `content`.
   */
  stream(request: ModelRequest): AsyncIterable<ModelStreamEvent>;
  /**
   * Optional: the most input tokens one call can take — the context window less the output
   * reserved for the reply — or `undefined` when the model does not know it. The agent asks
   * before every call and summarises the conversation before it outgrows this (unless
   * `maxInputTokens` is set).
   */
  maxInputTokens?(): number | undefined | Promise<number | undefined>;
}

export { ModelError, type ModelErrorCode } from "../errors.js";
