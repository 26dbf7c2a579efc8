/**
 * `fromLanguageModel`: adapts a Vercel AI SDK provider model — the `LanguageModelV2` /
 * `V3` / `V4` specification with `doGenerate` / `doStream` that `@ai-sdk/openai`,
 * `@ai-sdk/anthropic`, `@ai-sdk/openai-compatible` and the rest implement — to a
 * {@link ChatModel}. Nothing from the AI SDK is imported: the types below describe the subset
 * of the specification Engram uses, and real provider models satisfy them.
 * @module
 */
import { EngramError } from "../errors.js";
import { AttemptSignal, abortedError, isAbortError, raceAbort, throwIfAborted } from "./abort.js";
import { errorFromStatus, errorFromTransport, errorFromWire } from "./classify.js";
import { ContextWindow } from "./context-window.js";
import { assistantMessage, isPlainObject, toolCall } from "./normalize.js";
import { type RetryOptions, type RetryPolicy, retryPolicy, withRetries, withStreamRetries } from "./retry.js";
import { TextToolCallStream, textToolCalls, withTextToolCalls } from "./text-tool-calls.js";
import {
  type ChatModel,
  type FinishReason,
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

/** One message of the AI SDK's standardized prompt, as Engram builds it. `providerOptions`
 * carries a prompt-cache breakpoint (see {@link LanguageModelAdapterOptions.promptCache}). */
export type LanguageModelPromptMessage = (
  | { role: "system"; content: string }
  | { role: "user"; content: LanguageModelTextPart[] }
  | { role: "assistant"; content: (LanguageModelTextPart | LanguageModelToolCallPart)[] }
  | { role: "tool"; content: LanguageModelToolResultPart[] }
) & {
  // biome-ignore lint/suspicious/noExplicitAny: the AI SDK types provider options as nested JSON records
  providerOptions?: Record<string, any>;
};

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
  topP?: number;
  seed?: number;
  responseFormat?: { type: "json"; schema?: Record<string, unknown>; name?: string };
  // biome-ignore lint/suspicious/noExplicitAny: the AI SDK types provider options as nested JSON records
  providerOptions?: Record<string, any>;
  abortSignal?: AbortSignal;
}

/**
 * A content part of a `doGenerate` result or a part of a `doStream` stream, loosely: Engram
 * reads `text`, `text-delta` (`delta`), `tool-call` (`input` is JSON text), `finish`
 * (`usage`, `finishReason`) and `error`, and ignores the rest (reasoning, sources, files, tool-input deltas,
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
  /** v2: a string; v3/v4: `{ unified, raw }`. */
  finishReason?: unknown;
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
  doGenerate(options: LanguageModelCallOptions): PromiseLike<{ content: LanguageModelPart[]; usage?: unknown; finishReason?: unknown }>;
  doStream(options: LanguageModelCallOptions): PromiseLike<{ stream: ReadableStream<LanguageModelPart> }>;
}

/**
 * Options of {@link fromLanguageModel}. Retries: `doGenerate`/`doStream` never retry by
 * themselves (the AI SDK retries in `generateText`/`streamText`, which Engram does not call),
 * so the adapter applies the AI SDK's own policy here, once: `maxRetries` (default `2`, the AI
 * SDK's default) with exponential backoff, honouring `Retry-After` from the provider's
 * `APICallError` headers.
 */
export interface LanguageModelAdapterOptions extends RetryOptions {
  /** {@link ChatModel.id}. Default: `"<provider>:<modelId>"`, e.g. `"openai.responses:gpt-4.1"`. */
  id?: string;
  /** Default sampling temperature (a request's `settings.temperature` wins). Default: not sent. */
  temperature?: number;
  /** Default cap on generated tokens (a request's `settings.maxOutputTokens` wins). Default: not sent. */
  maxOutputTokens?: number;
  /** Per attempt: how long to wait for the result, or between two stream parts, in ms; then the
   * attempt fails with `timeout` (retried). `0` disables. Default: `600000`. */
  timeoutMs?: number;
  /** Read tool calls the model wrote as text (see `OpenAICompatibleOptions.textToolCalls`), for
   * providers serving small local models. Default: `false`. */
  textToolCalls?: boolean;
  /**
   * Anthropic models (a `provider` naming Anthropic, e.g. `anthropic.messages`): prompt-cache
   * breakpoints (`cache_control`) after the static system prompt (tools and instructions),
   * after the system context (memory, facts, skills) and on the last message (the
   * conversation so far) — three of the four Anthropic allows — so each call reads what the one
   * before it wrote. `false` sends none, for proxies that reject `cache_control`. Other
   * providers cache prefixes by themselves and get none. Default: `true`.
   */
  promptCache?: boolean;
  /** The model's context window in tokens (input + output), for {@link ChatModel.maxInputTokens}.
   * Default: a table of known hosted models by `modelId`, or the size the provider states when a
   * request outgrows it; else unknown. */
  contextWindow?: number;
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
  readonly #retry: RetryPolicy;
  readonly #timeoutMs: number;
  readonly #window: ContextWindow;
  /** Whether requests carry Anthropic cache breakpoints. */
  readonly #breakpoints: boolean;

  constructor(model: LanguageModelLike, options: LanguageModelAdapterOptions) {
    this.#model = model;
    this.#options = options;
    this.#breakpoints = options.promptCache !== false && cachesByBreakpoints(model.provider);
    this.id = options.id ?? `${model.provider}:${model.modelId}`;
    this.#retry = retryPolicy(options);
    this.#timeoutMs = options.timeoutMs ?? 600_000;
    this.#window = new ContextWindow(model.modelId, options.contextWindow);
  }

  async invoke(request: ModelRequest): Promise<ModelResult> {
    const result = await withRetries(
      this.#retry,
      request.signal,
      () => this.#invokeOnce(request),
      (e) => this.#modelError(e, request.signal),
    );
    const offered = this.#offered(request);
    return offered ? withTextToolCalls(result, offered) : result;
  }

  stream(request: ModelRequest): AsyncGenerator<ModelStreamEvent> {
    return withStreamRetries(
      this.#retry,
      request.signal,
      () => this.#streamOnce(request),
      (e) => this.#modelError(e, request.signal),
    );
  }

  /** The context window (see {@link LanguageModelAdapterOptions.contextWindow}) less `maxOutputTokens`. */
  maxInputTokens(): number | undefined {
    return this.#window.maxInputTokens(this.#options.maxOutputTokens);
  }

  /** A failure as a {@link ModelError}, the context size it states remembered. */
  #modelError(error: unknown, signal: AbortSignal | undefined): ModelError {
    const e = toModelError(error, this.id, signal);
    const body = isPlainObject(e.cause) || e.cause instanceof Error ? (e.cause as { responseBody?: unknown }).responseBody : undefined;
    this.#window.learn(e, typeof body === "string" ? body : "");
    return e;
  }

  #callOptions(request: ModelRequest, signal: AbortSignal): LanguageModelCallOptions {
    const call = toCallOptions(request, this.#options, signal);
    if (this.#breakpoints) call.prompt = withCacheBreakpoints(call.prompt);
    return call;
  }

  #offered(request: ModelRequest): ReadonlySet<string> | undefined {
    if (!this.#options.textToolCalls || request.tools.length === 0 || request.responseFormat) return undefined;
    return new Set(request.tools.map((t) => t.name));
  }

  async #invokeOnce(request: ModelRequest): Promise<ModelResult> {
    throwIfAborted(request.signal);
    const attempt = new AttemptSignal(request.signal, this.#timeoutMs);
    let result: Awaited<ReturnType<LanguageModelLike["doGenerate"]>>;
    try {
      result = await raceAbort(this.#model.doGenerate(this.#callOptions(request, attempt.signal)), attempt.signal);
    } catch (e) {
      throw this.#attemptError(e, request.signal, attempt);
    } finally {
      attempt.dispose();
    }
    throwIfAborted(request.signal);
    if (!result || !Array.isArray(result.content)) throw new ModelError("bad_response", `${this.id}: doGenerate returned no content`);
    const reason = fromFinishReason(result.finishReason);
    let text = "";
    const calls: ToolCall[] = [];
    for (const part of result.content) {
      if (part.type === "text" && typeof part.text === "string") text += part.text;
      const call = toToolCall(part, reason === "length");
      if (call) calls.push(call);
    }
    const out: ModelResult = { message: assistantMessage(text, calls), finishReason: finishReasonFor(reason, calls.length > 0) };
    const usage = fromUsage(result.usage);
    if (usage) out.usage = usage;
    return out;
  }

  async *#streamOnce(request: ModelRequest): AsyncGenerator<ModelStreamEvent> {
    const { signal } = request;
    throwIfAborted(signal);
    const attempt = new AttemptSignal(signal, this.#timeoutMs);
    let stream: ReadableStream<LanguageModelPart>;
    try {
      ({ stream } = await raceAbort(this.#model.doStream(this.#callOptions(request, attempt.signal)), attempt.signal));
    } catch (e) {
      attempt.dispose();
      throw this.#attemptError(e, signal, attempt);
    }
    attempt.touch();
    const reader = stream.getReader();
    // Providers that ignore the signal would leave a read pending forever: cancelling ends it.
    const onAbort = () => void reader.cancel(attempt.signal.reason).catch(() => undefined);
    attempt.signal.addEventListener("abort", onAbort, { once: true });
    const offered = this.#offered(request);
    const holdBack = offered ? new TextToolCallStream(offered) : undefined;
    let text = "";
    const parts: LanguageModelPart[] = [];
    let usage: Usage | undefined;
    let reason: FinishReason | undefined;
    let ended = false;
    try {
      for (;;) {
        let next: ReadableStreamReadResult<LanguageModelPart>;
        try {
          next = await reader.read();
        } catch (e) {
          throw this.#attemptError(e, signal, attempt);
        }
        if (attempt.signal.aborted) throw this.#attemptError(attempt.signal.reason, signal, attempt);
        attempt.touch();
        if (next.done) break;
        const part = next.value;
        if (part.type === "text-delta") {
          const delta = part.delta ?? (part as { textDelta?: string }).textDelta;
          if (typeof delta === "string" && delta) {
            text += delta;
            const shown = holdBack ? holdBack.push(delta) : delta;
            if (shown) yield { type: "text_delta", text: shown };
          }
        } else if (part.type === "tool-call") {
          parts.push(part);
        } else if (part.type === "finish") {
          usage = fromUsage(part.usage);
          reason = fromFinishReason(part.finishReason);
        } else if (part.type === "error") {
          throw toModelError(part.error, this.id, signal);
        }
      }
      ended = true;
    } finally {
      attempt.signal.removeEventListener("abort", onAbort);
      attempt.dispose();
      if (!ended) await reader.cancel().catch(() => undefined);
      reader.releaseLock();
    }
    let calls = parts.map((p) => toToolCall(p, reason === "length")).filter((c): c is ToolCall => c !== undefined);
    let structuredCut = false;
    if (holdBack) {
      const end = holdBack.end(calls.length === 0, reason === "length");
      if (end.text) yield { type: "text_delta", text: end.text };
      text = end.content;
      structuredCut = end.cut;
      if (end.calls.length > 0) {
        calls = textToolCalls(end.calls);
        if (reason === "length") reason = "tool_calls";
      }
    }
    for (const call of calls) yield { type: "tool_call", call };
    const finish: ModelStreamEvent = {
      type: "finish",
      message: assistantMessage(text, calls),
      finishReason: finishReasonFor(reason, calls.length > 0),
    };
    if (usage) finish.usage = usage;
    if (structuredCut) finish.structuredCut = true;
    yield finish;
  }

  /** `aborted` when the caller's signal fired, `timeout` when the attempt timed out, else classified. */
  #attemptError(error: unknown, signal: AbortSignal | undefined, attempt: AttemptSignal): ModelError {
    if (signal?.aborted) return abortedError(signal);
    if (attempt.timedOut) return new ModelError("timeout", `${this.id}: no answer within ${this.#timeoutMs} ms`, { cause: error });
    return toModelError(error, this.id, signal);
  }
}

/**
 * Our request as AI SDK call options: `systemContext` as a second system message,
 * `responseFormat` as `{ type: "json", schema, name }`, `settings` as the matching call options
 * (they win over the adapter's defaults), `signal` (default: the request's) as `abortSignal`.
 */
export function toCallOptions(
  request: ModelRequest,
  options: LanguageModelAdapterOptions = {},
  signal: AbortSignal | undefined = request.signal,
): LanguageModelCallOptions {
  const call: LanguageModelCallOptions = { prompt: toPrompt(request.system, request.messages, request.systemContext) };
  if (request.tools.length > 0) {
    call.tools = request.tools.map((t) => ({ type: "function", name: t.name, description: t.description, inputSchema: t.parameters }));
    call.toolChoice = { type: "auto" };
  }
  const s = request.settings ?? {};
  const temperature = s.temperature ?? options.temperature;
  const maxOutputTokens = s.maxOutputTokens ?? options.maxOutputTokens;
  if (temperature !== undefined) call.temperature = temperature;
  if (maxOutputTokens !== undefined) call.maxOutputTokens = maxOutputTokens;
  if (s.topP !== undefined) call.topP = s.topP;
  if (s.seed !== undefined) call.seed = s.seed;
  if (s.providerOptions) call.providerOptions = s.providerOptions;
  if (request.responseFormat) {
    call.responseFormat = { type: "json", schema: request.responseFormat.schema, name: request.responseFormat.name };
  }
  if (signal) call.abortSignal = signal;
  return call;
}

/**
 * Our conversation as an AI SDK prompt: the system prompt first (when non-empty), then the
 * system context as a second system message (when non-empty), empty assistant text left out, consecutive tool messages grouped into one tool message, each
 * result named after the tool call it answers (`""` when no earlier call has its id).
 */
export function toPrompt(system: string, messages: readonly Message[], systemContext?: string): LanguageModelPromptMessage[] {
  const prompt: LanguageModelPromptMessage[] = system ? [{ role: "system", content: system }] : [];
  if (systemContext) prompt.push({ role: "system", content: systemContext });
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

/** Providers whose prompt cache works by explicit breakpoints: Anthropic's own API and the
 * platforms serving its models under a provider name that says so (`vertex.anthropic`, …). */
function cachesByBreakpoints(provider: string): boolean {
  return /anthropic/i.test(provider);
}

/** The most breakpoints Anthropic accepts in one request. */
export const MAX_CACHE_BREAKPOINTS = 4;

const BREAKPOINT = { anthropic: { cacheControl: { type: "ephemeral" } } } as const;

/**
 * `prompt` with a cache breakpoint on each part that changes less often than what follows it:
 * the static system message (the tools come before it in Anthropic's order, so it caches them
 * too), the system context message, and the last message. A part changed since the last call
 * invalidates its own cache entry and those after it, never those before.
 */
export function withCacheBreakpoints(prompt: readonly LanguageModelPromptMessage[]): LanguageModelPromptMessage[] {
  const marked = new Set<number>();
  let systems = 0;
  for (let i = 0; i < prompt.length && prompt[i]?.role === "system" && systems < 2; i++, systems++) marked.add(i);
  if (prompt.length > 0 && prompt[prompt.length - 1]?.role !== "system") marked.add(prompt.length - 1);
  return prompt.map((m, i) => (marked.has(i) ? { ...m, providerOptions: { ...m.providerOptions, ...BREAKPOINT } } : m));
}

/** A client-side tool call from a `tool-call` part; `undefined` for other parts and provider-executed calls. */
function toToolCall(part: LanguageModelPart, truncated: boolean): ToolCall | undefined {
  if (part.type !== "tool-call" || part.providerExecuted) return undefined;
  return toolCall(part.toolCallId ?? "", part.toolName ?? "", part.input, { truncated });
}

/** Our finish reason from a v2 string (`"tool-calls"`) or a v3/v4 `{ unified }`; `undefined` when absent. */
export function fromFinishReason(raw: unknown): FinishReason | undefined {
  const value = isPlainObject(raw) ? raw.unified : raw;
  switch (value) {
    case undefined:
    case null:
      return undefined;
    case "stop":
      return "stop";
    case "length":
      return "length";
    case "tool-calls":
      return "tool_calls";
    case "content-filter":
      return "content_filter";
    case "error":
      return "error";
    default:
      return "other";
  }
}

/** A reported reason, with `stop` → `tool_calls` when there are calls; unreported: by the calls. */
function finishReasonFor(reason: FinishReason | undefined, hasToolCalls: boolean): FinishReason {
  if (reason === undefined || reason === "stop") return hasToolCalls ? "tool_calls" : "stop";
  return reason;
}

/** Usage from a v2 (`inputTokens: number`, `cachedInputTokens`) or v3/v4 (`inputTokens: { total,
 * cacheRead }`) usage object. */
export function fromUsage(raw: unknown): Usage | undefined {
  if (!isPlainObject(raw)) return undefined;
  const count = (v: unknown): number | undefined =>
    typeof v === "number" ? v : isPlainObject(v) && typeof v.total === "number" ? v.total : undefined;
  const usage: Usage = {};
  const input = count(raw.inputTokens);
  const output = count(raw.outputTokens);
  const cached =
    typeof raw.cachedInputTokens === "number"
      ? raw.cachedInputTokens
      : isPlainObject(raw.inputTokens) && typeof raw.inputTokens.cacheRead === "number"
        ? raw.inputTokens.cacheRead
        : undefined;
  if (input !== undefined) usage.inputTokens = input;
  if (output !== undefined) usage.outputTokens = output;
  if (cached !== undefined) usage.cachedInputTokens = cached;
  return Object.keys(usage).length === 0 ? undefined : usage;
}

/**
 * A provider failure as a {@link ModelError}: an `APICallError` (anything with a `statusCode`) by
 * its status, body and `Retry-After` header; a fetch/connection failure as `network`/`timeout`;
 * an in-band error object (`{ message, type }`, from an `error` stream part) by its type; an
 * aborted `signal` as `aborted`; anything else as `bad_response`.
 */
function toModelError(error: unknown, id: string, signal?: AbortSignal): ModelError {
  if (error instanceof ModelError) return error;
  if (signal?.aborted || isAbortError(error)) return abortedError(signal);
  const rec = (isPlainObject(error) || error instanceof Error ? error : {}) as Record<string, unknown>;
  if (typeof rec.statusCode === "number") {
    const body = typeof rec.responseBody === "string" && rec.responseBody ? rec.responseBody : String(rec.message ?? "");
    const e = errorFromStatus(rec.statusCode, body, id, rec.responseHeaders);
    return new ModelError(e.code, e.message, {
      status: rec.statusCode,
      cause: error,
      ...(e.retryAfterMs !== undefined ? { retryAfterMs: e.retryAfterMs } : {}),
    });
  }
  if (isTransportFailure(error)) return errorFromTransport(error, id);
  if (!(error instanceof Error) && isPlainObject(error) && (typeof error.message === "string" || typeof error.type === "string")) {
    return errorFromWire(error, id);
  }
  const message = error instanceof Error ? error.message : typeof error === "string" ? error : JSON.stringify(error);
  return new ModelError("bad_response", `${id}: ${message}`, { cause: error });
}

/** True for what `fetch` or a body read throws when the connection fails (also wrapped in an
 * `APICallError` without status). */
function isTransportFailure(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && /^(E[A-Z]+|UND_ERR_\w+)$/.test(code)) return true;
    if (e.name === "TypeError" && /fetch failed|terminated|network|failed to fetch|socket/i.test(e.message)) return true;
    if (e.name === "AI_APICallError") return true;
  }
  return false;
}
