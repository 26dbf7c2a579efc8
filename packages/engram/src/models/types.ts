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
   * Always an object. Arguments a provider sent as malformed JSON are kept as
   * `{ __raw: "<text>" }` (see {@link RAW_ARGS_KEY}) for a repair step to fix.
   */
  args: Record<string, unknown>;
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

/** What a {@link ChatModel} receives. */
export interface ModelRequest {
  /** The fully assembled system prompt (static prefix, then memory). May be empty. */
  system: string;
  messages: Message[];
  tools: ToolSpec[];
  /** Cancels the call; the model then rejects with a {@link ModelError} of code `aborted`. */
  signal?: AbortSignal;
}

/** Token counts as reported by the provider (absent when it reports none). */
export interface Usage {
  inputTokens?: number;
  outputTokens?: number;
}

/** What {@link ChatModel.invoke} resolves to. */
export interface ModelResult {
  /** Always `role: "assistant"`. */
  message: Message;
  usage?: Usage;
}

/**
 * One event of {@link ChatModel.stream}: text as it arrives, each tool call once complete,
 * then exactly one `finish` carrying the whole assistant message.
 */
export type ModelStreamEvent =
  | { type: "text_delta"; text: string }
  | { type: "tool_call"; call: ToolCall }
  | { type: "finish"; message: Message; usage?: Usage };

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
}

export { ModelError, type ModelErrorCode } from "../errors.js";
