/**
 * `OpenAICompatibleModel`: any server speaking OpenAI's chat-completions protocol — OpenAI,
 * Ollama, vLLM, llama.cpp's server, LM Studio — over plain `fetch`, so it also runs at the edge.
 * @module
 */
import { abortedError, isAbortError, raceAbort, throwIfAborted } from "./abort.js";
import { StreamAccumulator, fromWireResponse, toRequestBody } from "./openai-wire.js";
import { readSseData } from "./sse.js";
import { type ChatModel, type ModelRequest, type ModelResult, type ModelStreamEvent, ModelError } from "./types.js";

/** Options of {@link OpenAICompatibleModel}. */
export interface OpenAICompatibleOptions {
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
  /** Sampling temperature. Default: not sent (the server's default). */
  temperature?: number;
  /** Cap on generated tokens, sent as `max_tokens`. Default: not sent (the server's default). */
  maxTokens?: number;
  /** Ask for token usage at the end of a stream (`stream_options.include_usage`); turn off for
   * servers that reject the field. Default: `true`. */
  streamUsage?: boolean;
  /** Extra fields merged into every request body (e.g. `top_p`, `seed`, `tool_choice`); they
   * cannot replace `model`, `messages`, `tools` or `stream`. Default: none. */
  body?: Record<string, unknown>;
  /** The `fetch` to use. Default: `globalThis.fetch`, looked up at call time. */
  fetch?: typeof globalThis.fetch;
}

/** Longest excerpt of an error body quoted in a {@link ModelError} message. */
const EXCERPT_CHARS = 300;

/**
 * A {@link ChatModel} for `POST /chat/completions`. `invoke` makes a non-streaming request;
 * `stream` reads server-sent events, yielding text as it arrives and each tool call once
 * complete (deltas are accumulated by `index` across chunks).
 *
 * Errors: a non-2xx status or no connection → `http_error` (with `status` and a short excerpt
 * of the body); a body that is not valid JSON or lacks `choices`, or a stream that ends
 * before `[DONE]` or a `finish_reason` → `bad_response`; `signal` fired → `aborted`.
 * Tool-call ids are passed through as the server sent them (`""` when it sent none).
 */
export class OpenAICompatibleModel implements ChatModel {
  /** `"openai-compatible:<model>"`. */
  readonly id: string;
  readonly #url: string;
  readonly #options: OpenAICompatibleOptions;

  constructor(options: OpenAICompatibleOptions) {
    this.#options = { ...options };
    this.#url = `${options.baseURL.replace(/\/+$/, "")}/chat/completions`;
    this.id = `openai-compatible:${options.model}`;
  }

  async invoke(request: ModelRequest): Promise<ModelResult> {
    const response = await this.#post(request, false);
    let text: string;
    try {
      text = await raceAbort(response.text(), request.signal);
    } catch (e) {
      throw this.#transportError(e, request.signal);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (e) {
      throw new ModelError("bad_response", `Invalid JSON from ${this.#url}: ${excerpt(text)}`, { cause: e });
    }
    return fromWireResponse(json);
  }

  async *stream(request: ModelRequest): AsyncGenerator<ModelStreamEvent> {
    const response = await this.#post(request, true);
    if (!response.body) throw new ModelError("bad_response", `Empty stream from ${this.#url}`);
    const acc = new StreamAccumulator();
    let done = false;
    try {
      for await (const data of readSseData(response.body, request.signal)) {
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
        const text = acc.add(chunk);
        if (text) yield { type: "text_delta", text };
      }
    } catch (e) {
      if (e instanceof ModelError) throw e;
      throw this.#transportError(e, request.signal);
    }
    throwIfAborted(request.signal);
    if (!done && !acc.finished) throw new ModelError("bad_response", `The stream from ${this.#url} ended before [DONE]`);
    for (const call of acc.toolCalls()) yield { type: "tool_call", call };
    const finish: ModelStreamEvent = { type: "finish", message: acc.message() };
    if (acc.usage) finish.usage = acc.usage;
    yield finish;
  }

  async #post(request: ModelRequest, stream: boolean): Promise<Response> {
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
      const init: RequestInit = { method: "POST", headers, body: JSON.stringify(body), ...(signal ? { signal } : {}) };
      response = await raceAbort(fetchFn(this.#url, init), signal);
    } catch (e) {
      throw this.#transportError(e, signal);
    }
    if (!response.ok) {
      const text = await response.text().catch(() => "");
      throw new ModelError("http_error", `HTTP ${response.status} from ${this.#url}: ${excerpt(text) || response.statusText}`, {
        status: response.status,
      });
    }
    return response;
  }

  /** Maps a thrown `fetch`/stream error: `aborted` when the signal fired, else `http_error`. */
  #transportError(error: unknown, signal?: AbortSignal): ModelError {
    if (signal?.aborted || isAbortError(error)) return abortedError(signal);
    const reason = error instanceof Error ? error.message : String(error);
    return new ModelError("http_error", `Request to ${this.#url} failed: ${reason}`, { cause: error });
  }
}

/** The first {@link EXCERPT_CHARS} characters of `text`, whitespace collapsed. */
function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > EXCERPT_CHARS ? `${flat.slice(0, EXCERPT_CHARS)}…` : flat;
}
