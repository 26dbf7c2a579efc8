/**
 * `OpenAICompatibleModel`: any server speaking OpenAI's chat-completions protocol — OpenAI,
 * Ollama, vLLM, llama.cpp's server, LM Studio — over plain `fetch`, so it also runs at the edge.
 * @module
 */
import { ConfigError } from "../errors.js";
import { AttemptSignal, abortedError, isAbortError, raceAbort, throwIfAborted } from "./abort.js";
import { errorFromStatus, errorFromTransport, excerpt } from "./classify.js";
import { ContextWindow } from "./context-window.js";
import { StreamAccumulator, type WireResult, fromWireResponse, toRequestBody } from "./openai-wire.js";
import { type RetryOptions, type RetryPolicy, retryPolicy, withRetries, withStreamRetries } from "./retry.js";
import { readSseData } from "./sse.js";
import { TextToolCallStream, textToolCalls, withTextToolCalls } from "./text-tool-calls.js";
import { type ChatModel, type ModelRequest, type ModelResult, type ModelStreamEvent, ModelError } from "./types.js";

/** Options of {@link OpenAICompatibleModel}. */
export interface OpenAICompatibleOptions extends RetryOptions {
  /** The API root, requests go to `${baseURL}/chat/completions`; a trailing `/` is ignored.
   * Required, e.g. `"https://api.openai.com/v1"`, `"http://127.0.0.1:11434/v1"` (Ollama). */
  baseURL: string;
  /** The model name the server expects, e.g. `"gpt-4.1"`, `"llama3.1:8b"`. Required. */
  model: string;
  /** Sent as `Authorization: Bearer <apiKey>`. Default: none (no Authorization header). */
  apiKey?: string;
  /** Extra HTTP headers; they override the defaults (`content-type`, `accept`, `authorization`),
   * whatever their case. Default: none. */
  headers?: Record<string, string>;
  /** Default sampling temperature (a request's `settings.temperature` wins). Default: not sent. */
  temperature?: number;
  /** Default cap on generated tokens, sent as `max_tokens` (a request's
   * `settings.maxOutputTokens` wins). Default: not sent (the server's default). */
  maxTokens?: number;
  /** Ask for token usage at the end of a stream (`stream_options.include_usage`); turn off for
   * servers that reject the field. Default: `true`. */
  streamUsage?: boolean;
  /** Extra fields merged into every request body (e.g. `tool_choice`); they cannot replace
   * `model`, `messages`, `tools`, `stream`, `stream_options` or `response_format`. Default: none. */
  body?: Record<string, unknown>;
  /**
   * Per attempt: how long to wait for the response headers, for a whole non-streamed body, and
   * between two chunks of a stream, in ms; then the attempt fails with `timeout` (retried).
   * `0` disables. Default: `600000` (10 minutes, as OpenAI's own client).
   */
  timeoutMs?: number;
  /**
   * Read tool calls that the model wrote as text (Hermes/Qwen `<tool_call>` tags, fenced or
   * bare JSON `{"name", "arguments"|"parameters"}`) when it made no native ones; only offered
   * tools are accepted. Default: `true` for a custom `baseURL` (local servers, whose small
   * models do this), `false` for `api.openai.com`.
   */
  textToolCalls?: boolean;
  /** The `fetch` to use. Default: `globalThis.fetch`, looked up at call time. */
  fetch?: typeof globalThis.fetch;
  /** The model's context window in tokens (input + output), for {@link ChatModel.maxInputTokens}.
   * Default: a table of known hosted models, or the size the server states when a request
   * outgrows it (llama.cpp, vLLM, OpenAI do); else unknown. */
  contextWindow?: number;
}

/** `baseURL` when it is an http(s) URL without credentials: `fetch` refuses a URL holding a
 * user or password, and every error naming the server would print them. The value is never
 * echoed (it may hold a password). */
function checkBaseUrl(baseURL: unknown): string {
  let url: URL | undefined;
  try {
    url = typeof baseURL === "string" ? new URL(baseURL) : undefined;
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:"))
    throw new ConfigError("baseURL", "must be an http(s) URL, such as http://127.0.0.1:8080/v1");
  if (url.username || url.password)
    throw new ConfigError("baseURL", "must not hold credentials (user:password@host): give the key as apiKey, or in headers");
  return baseURL as string;
}

/**
 * A {@link ChatModel} for `POST /chat/completions`. `invoke` makes a non-streaming request;
 * `stream` reads server-sent events, yielding text as it arrives and each tool call once
 * complete (deltas are accumulated by `index` across chunks).
 *
 * Errors are classified the same way before and during a stream: 401/403 `auth`, 429
 * `rate_limited` (with `retryAfterMs`), a 4xx about the context window `context_length`, other
 * 4xx `bad_request`, 5xx or an in-band server error `server`, no connection or a cut stream
 * `network`, no answer within `timeoutMs` `timeout`; a body that is not a valid response
 * `bad_response`; `signal` fired `aborted`. `rate_limited`, `server`, `network` and `timeout`
 * are retried (see {@link RetryOptions}); a stream only until its first output reaches the
 * caller. Tool-call ids are passed through as the server sent them (`""` when it sent none).
 */
export class OpenAICompatibleModel implements ChatModel {
  /** `"openai-compatible:<model>"`. */
  readonly id: string;
  readonly #url: string;
  readonly #options: OpenAICompatibleOptions;
  readonly #retry: RetryPolicy;
  readonly #timeoutMs: number;
  readonly #textToolCalls: boolean;
  readonly #window: ContextWindow;

  constructor(options: OpenAICompatibleOptions) {
    this.#options = { ...options };
    this.#url = `${checkBaseUrl(options.baseURL).replace(/\/+$/, "")}/chat/completions`;
    this.id = `openai-compatible:${options.model}`;
    this.#retry = retryPolicy(options);
    this.#timeoutMs = options.timeoutMs ?? 600_000;
    this.#textToolCalls = options.textToolCalls ?? !isOpenAIHost(options.baseURL);
    this.#window = new ContextWindow(options.model, options.contextWindow);
  }

  /** The context window (see {@link OpenAICompatibleOptions.contextWindow}) less `maxTokens`. */
  maxInputTokens(): number | undefined {
    return this.#window.maxInputTokens(this.#options.maxTokens);
  }

  async invoke(request: ModelRequest): Promise<ModelResult> {
    const result = await withRetries(
      this.#retry,
      request.signal,
      () => this.#invokeOnce(request),
      (e) => this.#toError(e, request.signal),
    );
    return this.#withTextToolCalls(request, result);
  }

  stream(request: ModelRequest): AsyncGenerator<ModelStreamEvent> {
    return withStreamRetries(
      this.#retry,
      request.signal,
      () => this.#streamOnce(request),
      (e) => this.#toError(e, request.signal),
    );
  }

  async #invokeOnce(request: ModelRequest): Promise<WireResult> {
    const attempt = new AttemptSignal(request.signal, this.#timeoutMs);
    try {
      const response = await this.#post(request, false, attempt);
      let text: string;
      try {
        text = await raceAbort(response.text(), attempt.signal);
      } catch (e) {
        throw this.#transportError(e, request.signal, attempt);
      }
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch (e) {
        throw new ModelError("bad_response", `Invalid JSON from ${this.#url}: ${excerpt(text)}`, { cause: e });
      }
      return fromWireResponse(json, this.#url);
    } finally {
      attempt.dispose();
    }
  }

  /** One streamed attempt, without retries. */
  async *#streamOnce(request: ModelRequest): AsyncGenerator<ModelStreamEvent> {
    const attempt = new AttemptSignal(request.signal, this.#timeoutMs);
    try {
      const response = await this.#post(request, true, attempt);
      if (!response.body) throw new ModelError("bad_response", `Empty stream from ${this.#url}`);
      const acc = new StreamAccumulator(this.#url);
      const offered = this.#offered(request);
      const holdBack = offered ? new TextToolCallStream(offered) : undefined;
      let done = false;
      try {
        for await (const data of readSseData(response.body, { signal: attempt.signal, onChunk: () => attempt.touch() })) {
          if (data.trim() === "[DONE]") {
            done = true;
            break;
          }
          let chunk: unknown;
          try {
            chunk = JSON.parse(data);
          } catch (e) {
            throw new ModelError("bad_response", `Invalid JSON in a stream chunk from ${this.#url}: ${excerpt(data)}`, { cause: e });
          }
          const delta = acc.add(chunk);
          const text = holdBack ? holdBack.push(delta) : delta;
          if (text) yield { type: "text_delta", text };
        }
      } catch (e) {
        throw this.#transportError(e, request.signal, attempt);
      }
      if (attempt.timedOut) throw this.#transportError(undefined, request.signal, attempt);
      throwIfAborted(request.signal);
      if (!done && !acc.finished) {
        throw new ModelError("network", `The stream from ${this.#url} ended before [DONE] (the connection was closed mid-answer)`);
      }
      const result: WireResult = { message: acc.message(), finishReason: acc.finishReason() };
      if (acc.usage) result.usage = acc.usage;
      let structuredCut = false;
      if (holdBack) {
        const cut = result.finishReason === "length";
        const end = holdBack.end(!result.message.toolCalls, cut);
        if (end.text) yield { type: "text_delta", text: end.text };
        structuredCut = end.cut;
        if (end.calls.length > 0) {
          result.message = { role: "assistant", content: end.content, toolCalls: textToolCalls(end.calls) };
          if (result.finishReason === "stop" || cut) result.finishReason = "tool_calls";
        } else {
          result.message = { ...result.message, content: end.content };
        }
      }
      for (const call of result.message.toolCalls ?? []) yield { type: "tool_call", call };
      const finish: ModelStreamEvent = { type: "finish", message: result.message, finishReason: result.finishReason };
      if (result.usage) finish.usage = result.usage;
      if (structuredCut) finish.structuredCut = true;
      yield finish;
    } finally {
      attempt.dispose();
    }
  }

  /** The offered tool names when text tool calls are read for this request, else undefined. */
  #offered(request: ModelRequest): ReadonlySet<string> | undefined {
    if (!this.#textToolCalls || request.tools.length === 0 || request.responseFormat) return undefined;
    return new Set(request.tools.map((t) => t.name));
  }

  /** A non-streamed result with text tool calls read (when enabled and the model made no native ones). */
  #withTextToolCalls(request: ModelRequest, result: WireResult): ModelResult {
    const offered = this.#offered(request);
    const out: ModelResult = { message: result.message, finishReason: result.finishReason };
    if (result.usage) out.usage = result.usage;
    return offered ? withTextToolCalls(out, offered) : out;
  }

  async #post(request: ModelRequest, stream: boolean, attempt: AttemptSignal): Promise<Response> {
    const { signal } = request;
    throwIfAborted(signal);
    const o = this.#options;
    const body = toRequestBody(
      request,
      { model: o.model, temperature: o.temperature, maxTokens: o.maxTokens, streamUsage: o.streamUsage ?? true, body: o.body },
      stream,
    );
    const headers = new Headers({ "content-type": "application/json", accept: stream ? "text/event-stream" : "application/json" });
    if (o.apiKey) headers.set("authorization", `Bearer ${o.apiKey}`);
    for (const [name, value] of Object.entries(o.headers ?? {})) headers.set(name, value); // case-insensitive override
    const fetchFn = o.fetch ?? globalThis.fetch;
    let response: Response;
    try {
      const init: RequestInit = { method: "POST", headers, body: JSON.stringify(body), signal: attempt.signal };
      response = await raceAbort(fetchFn(this.#url, init), attempt.signal);
    } catch (e) {
      throw this.#transportError(e, signal, attempt);
    }
    attempt.touch();
    if (!response.ok) {
      const text = await raceAbort(response.text(), attempt.signal).catch(() => "");
      const error = errorFromStatus(response.status, text || response.statusText, this.#url, response.headers);
      this.#window.learn(error, text);
      throw error;
    }
    return response;
  }

  /** Maps a thrown `fetch`/stream error: `aborted` when the caller's signal fired, `timeout` when
   * the attempt timed out, else a classified transport error. */
  #transportError(error: unknown, signal: AbortSignal | undefined, attempt: AttemptSignal): ModelError {
    if (error instanceof ModelError && error.code !== "aborted") return error;
    if (signal?.aborted) return abortedError(signal);
    if (attempt.timedOut) {
      return new ModelError("timeout", `No answer from ${this.#url} within ${this.#timeoutMs} ms`, { cause: error });
    }
    if (isAbortError(error)) return abortedError(signal);
    return errorFromTransport(error, this.#url);
  }

  #toError(error: unknown, signal?: AbortSignal): ModelError {
    if (signal?.aborted) return abortedError(signal);
    const e = error instanceof ModelError ? error : errorFromTransport(error, this.#url);
    this.#window.learn(e);
    return e;
  }
}

/** True for OpenAI's own API host (whose models call tools natively). */
function isOpenAIHost(baseURL: string): boolean {
  try {
    return new URL(baseURL).hostname === "api.openai.com";
  } catch {
    return false;
  }
}
