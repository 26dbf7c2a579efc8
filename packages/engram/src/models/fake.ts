/**
 * `FakeChatModel`: replays scripted assistant turns. For tests and the offline demo — it
 * records every request it receives, streams like a real model and honours `signal`.
 * @module
 */
import { EngramError } from "../errors.js";
import { sleep, throwIfAborted } from "./abort.js";
import { assistantMessage, toolCall } from "./normalize.js";
import {
  type ChatModel,
  type FinishReason,
  type Message,
  type ModelRequest,
  type ModelResult,
  type ModelStreamEvent,
  ModelError,
  type ToolCall,
  type Usage,
} from "./types.js";

/** A scripted tool call: `id` is generated when omitted, `args` may be a JSON string (parsed like a provider's). */
export interface FakeToolCall {
  /** Default: `call_<n>`, numbered from 1 per model instance. */
  id?: string;
  name: string;
  /** Default: `{}`. A string is parsed like a provider's: obvious syntax errors are repaired,
   * unreadable JSON becomes `{ __raw }` with an `argsError`. */
  args?: Record<string, unknown> | string;
}

/**
 * One scripted assistant turn: a string is a plain text reply. `role` is always `"assistant"`.
 * `finishReason` defaults to `"tool_calls"` when the turn has calls, else `"stop"`; `usage` to none.
 */
export type FakeTurn =
  | string
  | (Omit<Partial<Message>, "toolCalls"> & { toolCalls?: FakeToolCall[]; finishReason?: FinishReason; usage?: Usage });

/**
 * The script: a list of turns served in order, or a function called with each request and its
 * 0-based index. Running out of turns (or the function returning `undefined`) rejects with
 * `script_exhausted`.
 */
export type FakeScript =
  | readonly FakeTurn[]
  | ((request: ModelRequest, index: number) => FakeTurn | undefined | Promise<FakeTurn | undefined>);

/** Options of {@link FakeChatModel}. */
export interface FakeChatModelOptions {
  /** {@link ChatModel.id}. Default: `"fake"`. */
  id?: string;
  /** Pause before `invoke` resolves and before each streamed event, in ms; lets tests abort
   * mid-call. Default: `0` (no pause). */
  delayMs?: number;
  /** How many `text_delta`s `stream` splits a text reply into (fewer for very short text). Default: `3`. */
  streamChunks?: number;
}

/** A request as {@link FakeChatModel} recorded it: deep-copied (`systemContext`, `responseFormat`
 * and `settings` as given), `signal` kept by reference. */
export type RecordedRequest = ModelRequest;

/**
 * A {@link ChatModel} that replays a script.
 *
 * ```ts
 * const model = new FakeChatModel([
 *   { toolCalls: [{ name: "ls", args: { path: "/" } }] },
 *   "Done.",
 * ]);
 * ```
 */
export class FakeChatModel implements ChatModel {
  readonly id: string;
  /** Every request received, in order (deep copies, so later mutation by the caller does not show). */
  readonly requests: RecordedRequest[] = [];
  readonly #script: FakeScript;
  readonly #delayMs: number;
  readonly #chunks: number;
  #nextId = 1;

  constructor(turns: FakeScript, options: FakeChatModelOptions = {}) {
    if (!Array.isArray(turns) && typeof turns !== "function") {
      throw new EngramError("unsupported", "FakeChatModel needs an array of turns or a function (request, index) => turn");
    }
    this.#script = turns;
    this.id = options.id ?? "fake";
    this.#delayMs = options.delayMs ?? 0;
    this.#chunks = Math.max(1, Math.floor(options.streamChunks ?? 3));
  }

  async invoke(request: ModelRequest): Promise<ModelResult> {
    const { message, finishReason, usage } = await this.#next(request);
    await this.#pause(request.signal);
    return usage ? { message, finishReason, usage } : { message, finishReason };
  }

  async *stream(request: ModelRequest): AsyncGenerator<ModelStreamEvent> {
    const { message, finishReason, usage } = await this.#next(request);
    for (const text of splitText(message.content, this.#chunks)) {
      await this.#pause(request.signal);
      yield { type: "text_delta", text };
    }
    for (const call of message.toolCalls ?? []) {
      await this.#pause(request.signal);
      yield { type: "tool_call", call: structuredClone(call) };
    }
    await this.#pause(request.signal);
    yield usage ? { type: "finish", message, finishReason, usage } : { type: "finish", message, finishReason };
  }

  /** Records the request and serves the next scripted turn as an assistant message. */
  async #next(request: ModelRequest): Promise<ModelResult & { finishReason: FinishReason }> {
    throwIfAborted(request.signal);
    const index = this.requests.length;
    this.requests.push(record(request));
    const turn = typeof this.#script === "function" ? await this.#script(request, index) : (this.#script as readonly FakeTurn[])[index];
    if (turn === undefined) {
      const size = typeof this.#script === "function" ? "its function returned no turn" : `only ${this.#script.length} turns`;
      throw new ModelError("script_exhausted", `FakeChatModel has no turn for call ${index + 1}: ${size}`);
    }
    return this.#toResult(turn);
  }

  #toResult(turn: FakeTurn): ModelResult & { finishReason: FinishReason } {
    if (typeof turn === "string") return { message: assistantMessage(turn), finishReason: "stop" };
    const calls: ToolCall[] = (turn.toolCalls ?? []).map((c) => {
      const id = c.id ?? `call_${this.#nextId++}`;
      return typeof c.args === "string" ? toolCall(id, c.name, c.args) : { id, name: c.name, args: structuredClone(c.args ?? {}) };
    });
    const result: ModelResult & { finishReason: FinishReason } = {
      message: assistantMessage(turn.content ?? "", calls),
      finishReason: turn.finishReason ?? (calls.length > 0 ? "tool_calls" : "stop"),
    };
    if (turn.usage) result.usage = structuredClone(turn.usage);
    return result;
  }

  async #pause(signal?: AbortSignal): Promise<void> {
    if (this.#delayMs > 0) await sleep(this.#delayMs, signal);
    throwIfAborted(signal);
  }
}

function record(request: ModelRequest): RecordedRequest {
  const copy: RecordedRequest = {
    system: request.system,
    messages: structuredClone(request.messages),
    tools: structuredClone(request.tools),
  };
  if (request.systemContext !== undefined) copy.systemContext = request.systemContext;
  if (request.responseFormat) copy.responseFormat = structuredClone(request.responseFormat);
  if (request.settings) copy.settings = structuredClone(request.settings);
  if (request.signal) copy.signal = request.signal;
  return copy;
}

/** Splits `text` into at most `parts` non-empty pieces on code-point boundaries. */
function splitText(text: string, parts: number): string[] {
  const points = Array.from(text);
  if (points.length === 0) return [];
  const size = Math.ceil(points.length / parts);
  const out: string[] = [];
  for (let i = 0; i < points.length; i += size) out.push(points.slice(i, i + size).join(""));
  return out;
}
