/**
 * `fromLanguageModel`: adapts a Vercel AI SDK provider model — the `LanguageModelV2` /
 * `V3` / `V4` specification with `doGenerate` / `doStream` that `@ai-sdk/openai`,
 * `@ai-sdk/anthropic`, `@ai-sdk/openai-compatible` and the rest implement — to a
 * {@link ChatModel}. Nothing from the AI SDK is imported: the types below describe the subset
 * of the specification Engram uses, and real provider models satisfy them.
 * @module
 */
import { EngramError } from "../errors.js";
import { abortedError, isAbortError, raceAbort, throwIfAborted } from "./abort.js";
import { assistantMessage, isPlainObject, parseToolArgs } from "./normalize.js";
import {
  type ChatModel,
  type Message,
  ModelError,
  type ModelRequest,
  type ModelResult,
  type ModelStreamEvent,
  type ToolCall,
  type Usage,
} from "./types.js";

/** A text part of an AI SDK prompt message. */
export interface LanguageModelTextPart {
  type: "text";
  text: string;
}

/** A tool call the assistant made, in an AI SDK prompt. `input` is the arguments object. */
export interface LanguageModelToolCallPart {
  type: "tool-call";
  toolCallId: string;
  toolName: string;
  input: unknown;
}

/** A tool's reply, in an AI SDK prompt. */
export interface LanguageModelToolResultPart {
  type: "tool-result";
  toolCallId: string;
  toolName: string;
  output: { type: "text"; value: string };
}

/** One message of the AI SDK's standardized prompt, as Engram builds it. */
export type LanguageModelPromptMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: LanguageModelTextPart[] }
  | { role: "assistant"; content: (LanguageModelTextPart | LanguageModelToolCallPart)[] }
  | { role: "tool"; content: LanguageModelToolResultPart[] };

/** A function tool offered to an AI SDK model. */
export interface LanguageModelFunctionTool {
  type: "function";
  name: string;
  description?: string;
  /** A JSON Schema object. */
  inputSchema: Record<string, unknown>;
}

/** The call options Engram passes to `doGenerate` / `doStream`. */
export interface LanguageModelCallOptions {
  prompt: LanguageModelPromptMessage[];
  tools?: LanguageModelFunctionTool[];
  toolChoice?: { type: "auto" };
  temperature?: number;
  maxOutputTokens?: number;
  abortSignal?: AbortSignal;
}

/**
 * A content part of a `doGenerate` result or a part of a `doStream` stream, loosely: Engram
 * reads `text`, `text-delta` (`delta`), `tool-call` (`input` is JSON text), `finish`
 * (`usage`) and `error`, and ignores the rest (reasoning, sources, files, tool-input deltas,
 * provider-executed calls and their results).
 */
export interface LanguageModelPart {
  type: string;
  text?: string;
  delta?: string;
  toolCallId?: string;
  toolName?: string;
  input?: unknown;
  providerExecuted?: boolean;
  usage?: unknown;
  error?: unknown;
}

/**
 * What {@link fromLanguageModel} needs of an AI SDK model: the provider specification
 * `"v2"` (AI SDK 5, `@ai-sdk/provider` 2), `"v3"` (AI SDK 6, provider 3) or `"v4"` (AI SDK 7,
 * provider 4). Any `LanguageModelV2` / `V3` / `V4` from `@ai-sdk/provider` is one: the parts
 * Engram uses are the same in all three, except usage (numbers in v2, `{ total }` objects since v3).
 */
export interface LanguageModelLike {
  readonly specificationVersion: "v2" | "v3" | "v4";
  readonly provider: string;
  readonly modelId: string;
  doGenerate(options: LanguageModelCallOptions): PromiseLike<{ content: LanguageModelPart[]; usage?: unknown }>;
  doStream(options: LanguageModelCallOptions): PromiseLike<{ stream: ReadableStream<LanguageModelPart> }>;
}

/** Options of {@link fromLanguageModel}. */
export interface LanguageModelAdapterOptions {
  /** {@link ChatModel.id}. Default: `"<provider>:<modelId>"`, e.g. `"openai.responses:gpt-4.1"`. */
  id?: string;
  /** Sampling temperature. Default: not sent (the provider's default). */
  temperature?: number;
  /** Cap on generated tokens. Default: not sent (the provider's default). */
  maxOutputTokens?: number;
}

/** True for an object that looks like an AI SDK provider model (any specification version). */
export function isLanguageModelLike(value: unknown): value is LanguageModelLike {
  return (
    isPlainObject(value) &&
    typeof value.specificationVersion === "string" &&
    typeof value.doGenerate === "function" &&
    typeof value.doStream === "function"
  );
}

/**
 * Adapts an AI SDK provider model. Our messages become the standardized prompt (system first,
 * tool results grouped per turn and named after the call they answer), tool specs become
 * function tools; text, client-side tool calls (arguments parsed, malformed JSON kept as
 * `{ __raw }`) and usage come back. Provider errors become {@link ModelError}s: API call errors
 * (anything with a `statusCode`) → `http_error`, an aborted `signal` → `aborted`, anything else
 * → `bad_response`, with the provider's message and the original as `cause`.
 * @throws EngramError (`unsupported`) for a specification version other than `"v2"`, `"v3"`, `"v4"`.
 */
export function fromLanguageModel(model: LanguageModelLike, options: LanguageModelAdapterOptions = {}): ChatModel {
  const version: unknown = model.specificationVersion;
  if (version !== "v2" && version !== "v3" && version !== "v4") {
    throw new EngramError(
      "unsupported",
      `AI SDK language model specification ${JSON.stringify(version)} is not supported (use a provider built for AI SDK 5, 6 or 7: "v2", "v3", "v4")`,
    );
  }
  return new LanguageModelAdapter(model, options);
}

class LanguageModelAdapter implements ChatModel {
  readonly id: string;
  readonly #model: LanguageModelLike;
  readonly #options: LanguageModelAdapterOptions;

  constructor(model: LanguageModelLike, options: LanguageModelAdapterOptions) {
    this.#model = model;
    this.#options = options;
    this.id = options.id ?? `${model.provider}:${model.modelId}`;
  }

  async invoke(request: ModelRequest): Promise<ModelResult> {
    throwIfAborted(request.signal);
    let result: Awaited<ReturnType<LanguageModelLike["doGenerate"]>>;
    try {
      result = await raceAbort(this.#model.doGenerate(toCallOptions(request, this.#options)), request.signal);
    } catch (e) {
      throw toModelError(e, this.id, request.signal);
    }
    throwIfAborted(request.signal);
    if (!result || !Array.isArray(result.content)) throw new ModelError("bad_response", `${this.id}: doGenerate returned no content`);
    let text = "";
    const calls: ToolCall[] = [];
    for (const part of result.content) {
      if (part.type === "text" && typeof part.text === "string") text += part.text;
      const call = toToolCall(part);
      if (call) calls.push(call);
    }
    const out: ModelResult = { message: assistantMessage(text, calls) };
    const usage = fromUsage(result.usage);
    if (usage) out.usage = usage;
    return out;
  }

  async *stream(request: ModelRequest): AsyncGenerator<ModelStreamEvent> {
    const { signal } = request;
    throwIfAborted(signal);
    let stream: ReadableStream<LanguageModelPart>;
    try {
      ({ stream } = await raceAbort(this.#model.doStream(toCallOptions(request, this.#options)), signal));
    } catch (e) {
      throw toModelError(e, this.id, signal);
    }
    const reader = stream.getReader();
    // Providers that ignore the signal would leave a read pending forever: cancelling ends it.
    const onAbort = () => void reader.cancel(signal?.reason).catch(() => undefined);
    signal?.addEventListener("abort", onAbort, { once: true });
    let text = "";
    const calls: ToolCall[] = [];
    let usage: Usage | undefined;
    let ended = false;
    try {
      for (;;) {
        let next: ReadableStreamReadResult<LanguageModelPart>;
        try {
          next = await reader.read();
        } catch (e) {
          throw toModelError(e, this.id, signal);
        }
        throwIfAborted(signal);
        if (next.done) break;
        const part = next.value;
        if (part.type === "text-delta") {
          const delta = part.delta ?? (part as { textDelta?: string }).textDelta;
          if (typeof delta === "string" && delta) {
            text += delta;
            yield { type: "text_delta", text: delta };
          }
        } else if (part.type === "tool-call") {
          const call = toToolCall(part);
          if (call) {
            calls.push(call);
            yield { type: "tool_call", call };
          }
        } else if (part.type === "finish") {
          usage = fromUsage(part.usage);
        } else if (part.type === "error") {
          throw toModelError(part.error, this.id, signal);
        }
      }
      ended = true;
    } finally {
      signal?.removeEventListener("abort", onAbort);
      if (!ended) await reader.cancel().catch(() => undefined);
      reader.releaseLock();
    }
    const finish: ModelStreamEvent = { type: "finish", message: assistantMessage(text, calls) };
    if (usage) finish.usage = usage;
    yield finish;
  }
}

/** Our request as AI SDK call options. */
export function toCallOptions(request: ModelRequest, options: LanguageModelAdapterOptions = {}): LanguageModelCallOptions {
  const call: LanguageModelCallOptions = { prompt: toPrompt(request.system, request.messages) };
  if (request.tools.length > 0) {
    call.tools = request.tools.map((t) => ({ type: "function", name: t.name, description: t.description, inputSchema: t.parameters }));
    call.toolChoice = { type: "auto" };
  }
  if (options.temperature !== undefined) call.temperature = options.temperature;
  if (options.maxOutputTokens !== undefined) call.maxOutputTokens = options.maxOutputTokens;
  if (request.signal) call.abortSignal = request.signal;
  return call;
}

/**
 * Our conversation as an AI SDK prompt: the system prompt first (when non-empty), empty
 * assistant text left out, consecutive tool messages grouped into one tool message, each
 * result named after the tool call it answers (`""` when no earlier call has its id).
 */
export function toPrompt(system: string, messages: readonly Message[]): LanguageModelPromptMessage[] {
  const prompt: LanguageModelPromptMessage[] = system ? [{ role: "system", content: system }] : [];
  const toolNames = new Map<string, string>();
  for (const m of messages) {
    if (m.role === "user") {
      prompt.push({ role: "user", content: [{ type: "text", text: m.content }] });
    } else if (m.role === "assistant") {
      const content: (LanguageModelTextPart | LanguageModelToolCallPart)[] = m.content ? [{ type: "text", text: m.content }] : [];
      for (const c of m.toolCalls ?? []) {
        toolNames.set(c.id, c.name);
        content.push({ type: "tool-call", toolCallId: c.id, toolName: c.name, input: c.args });
      }
      prompt.push({ role: "assistant", content });
    } else {
      const id = m.toolCallId ?? "";
      const part: LanguageModelToolResultPart = {
        type: "tool-result",
        toolCallId: id,
        toolName: toolNames.get(id) ?? "",
        output: { type: "text", value: m.content },
      };
      const last = prompt[prompt.length - 1];
      if (last?.role === "tool") last.content.push(part);
      else prompt.push({ role: "tool", content: [part] });
    }
  }
  return prompt;
}

/** A client-side tool call from a `tool-call` part; `undefined` for other parts and provider-executed calls. */
function toToolCall(part: LanguageModelPart): ToolCall | undefined {
  if (part.type !== "tool-call" || part.providerExecuted) return undefined;
  return { id: part.toolCallId ?? "", name: part.toolName ?? "", args: parseToolArgs(part.input) };
}

/** Usage from a v2 (`inputTokens: number`) or v3/v4 (`inputTokens: { total }`) usage object. */
export function fromUsage(raw: unknown): Usage | undefined {
  if (!isPlainObject(raw)) return undefined;
  const count = (v: unknown): number | undefined =>
    typeof v === "number" ? v : isPlainObject(v) && typeof v.total === "number" ? v.total : undefined;
  const usage: Usage = {};
  const input = count(raw.inputTokens);
  const output = count(raw.outputTokens);
  if (input !== undefined) usage.inputTokens = input;
  if (output !== undefined) usage.outputTokens = output;
  return input === undefined && output === undefined ? undefined : usage;
}

function toModelError(error: unknown, id: string, signal?: AbortSignal): ModelError {
  if (error instanceof ModelError) return error;
  if (signal?.aborted || isAbortError(error)) return abortedError(signal);
  const message = error instanceof Error ? error.message : typeof error === "string" ? error : JSON.stringify(error);
  const status = isPlainObject(error) && typeof error.statusCode === "number" ? error.statusCode : undefined;
  const apiError = status !== undefined || (error instanceof Error && error.name === "AI_APICallError");
  return new ModelError(apiError ? "http_error" : "bad_response", `${id}: ${message}`, {
    cause: error,
    ...(status !== undefined ? { status } : {}),
  });
}
