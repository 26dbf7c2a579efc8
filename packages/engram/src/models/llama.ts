/**
 * `LlamaCppModel` (Node only, `engram/llama`): a local GGUF model run by `node-llama-cpp` 3.x — no
 * server, no key — in a child process of its own, so that stopping it never waits for llama.cpp.
 * `node-llama-cpp` is an optional peer dependency: install it next to engram (`npm install
 * node-llama-cpp`), or point `ENGRAM_LLAMA_MODULE` at an installed copy (a `node-llama-cpp`
 * package directory or its entry file) — loading tries the plain `import("node-llama-cpp")`
 * first, then that path. The runtime is CPU-only and never compiles llama.cpp from source
 * (`gpu: false`, `build: "never"`): a missing prebuilt binary is an `unknown_provider` error, not
 * a 20-minute build.
 *
 * Small models do not emit native function calls, so tool calls are grammar-constrained JSON:
 * each reply must be `{"tool": "<offered name>", "arguments": {…}}` (arguments matching that
 * tool's JSON schema) or `{"answer": "<text>"}`. The sampler cannot produce anything else, so
 * every tool call names an offered tool and has schema-shaped arguments. `responseFormat` uses a
 * grammar built from its schema too.
 * @module
 */
import { abortedError, raceAbort, throwIfAborted } from "./abort.js";
import {
  DEFAULT_CONTEXT_SIZE,
  DEFAULT_MAX_OUTPUT_TOKENS,
  type EngineOptions,
  type Generated,
  type LlamaCppOptions,
  type Progress,
} from "./llama-engine.js";
import { ModelProcess } from "./llama-process.js";
import { ModelError, type ModelRequest, type ModelResult, type ModelStreamEvent, type ChatModel } from "./types.js";

export { LLAMA_MODULE_ENV, type LlamaCppOptions, loadNodeLlamaCpp, type NodeLlamaCppModule } from "./llama-engine.js";
export { replySchema, toGrammarSchema } from "./llama-grammar.js";

/**
 * How long an aborted generation may take to stop by itself before its process is killed, in
 * ms: while the prompt is read, llama.cpp looks at the signal only between native calls of
 * several seconds; once it writes, it stops at the next token.
 */
const STOP_GRACE_READING_MS = 250;
const STOP_GRACE_WRITING_MS = 2000;

/**
 * A {@link ChatModel} running a GGUF model with node-llama-cpp (CPU), in a child process that
 * starts on the first call (or {@link LlamaCppModel.load}) and loads the runtime, the weights and
 * one context; calls are served one at a time. `dispose()` ends the process.
 *
 * The prompt: the static system prompt, then (with tools) the tool definitions and the reply
 * format, then `systemContext`, as one system message; tool results come back as user
 * messages naming the call. Without tools or `responseFormat` the reply is free text, streamed
 * token by token; otherwise it is grammar-constrained JSON, parsed into tool calls or an
 * answer; `stream` streams an answer's text as it is generated (decoded from the JSON) and
 * emits a tool call once complete. Optional tool arguments may be left out (the
 * grammar offers each subset of them); those with bounds a grammar cannot express (minimum,
 * pattern, …) always are, so the tool's default applies. A reply cut by the token cap keeps
 * what is complete (an answer string, a tool call whose arguments closed) or is reported with
 * `structuredCut` and no text. Structured requests (`responseFormat`: memory extraction) run on
 * a context sequence of their own (see {@link LlamaCppOptions.structuredSequence}).
 *
 * `stream` also says what the model is doing (`status` events): `loading_model` when the
 * process loads it, `reading_prompt` with the prompt's token count, `writing` at the first
 * token. An aborted call returns at once. A model that is writing stops at its next token; one
 * still reading the prompt (native work no signal reaches) is killed with its process, and the
 * next call starts a new one, which loads the model again. The process also ends with this one,
 * at once, and when it dies on its own, the call fails with a `server` {@link ModelError}.
 *
 * `finishReason`: `length` when the output-token cap cut the reply, else `tool_calls`/`stop`.
 * Usage: prompt tokens (`cachedInputTokens` = the prefix reused from the previous call on the
 * same sequence) and generated tokens, as counted by node-llama-cpp.
 */
export class LlamaCppModel implements ChatModel {
  readonly id: string;
  readonly #options: EngineOptions;
  #process: ModelProcess | undefined;
  #queue: Promise<unknown> = Promise.resolve();
  /** The loaded context's size, once loaded. */
  #contextSize: number | undefined;

  constructor(options: LlamaCppOptions) {
    if (!options || typeof options.modelPath !== "string" || options.modelPath === "") {
      throw new ModelError("bad_request", "LlamaCppModel needs a modelPath (a .gguf file)");
    }
    for (const key of ["reusePrompt", "structuredSequence"] as const) {
      if (options[key] !== undefined && typeof options[key] !== "boolean")
        throw new ModelError("bad_request", `LlamaCppModel's ${key} must be true or false, not ${JSON.stringify(options[key])}`);
    }
    const { id: _id, ...engine } = options;
    this.#options = engine;
    this.id = options.id ?? `llama:${options.modelPath.split(/[\\/]/).pop()}`;
  }

  /** The context's size (until it is loaded, the size asked for) less the default output cap. */
  maxInputTokens(): number {
    const size = this.#contextSize ?? this.#options.contextSize ?? DEFAULT_CONTEXT_SIZE;
    return Math.max(1, size - (this.#options.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS));
  }

  /** Starts the process and loads the model now (otherwise the first call does). */
  async load(): Promise<void> {
    await this.#started().ready;
  }

  async invoke(request: ModelRequest): Promise<ModelResult> {
    const g = await raceAbort(
      this.#serialized(() => this.#generate(request)),
      request.signal,
    );
    return { message: g.message, finishReason: g.finishReason, usage: g.usage, ...(g.structuredCut && { structuredCut: true }) };
  }

  async *stream(request: ModelRequest): AsyncGenerator<ModelStreamEvent> {
    const queued: Progress[] = [];
    let wake: (() => void) | undefined;
    let settled = false;
    const job = raceAbort(
      this.#serialized(() =>
        this.#generate(request, (ev) => {
          if (settled) return; // an aborted call's model still winding down
          queued.push(ev);
          wake?.();
        }),
      ),
      request.signal,
    ).finally(() => {
      settled = true;
      wake?.();
    });
    job.catch(() => undefined); // observed below
    let streamed = "";
    while (!settled || queued.length > 0) {
      const ev = queued.shift();
      if (!ev) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          if (settled || queued.length > 0) resolve();
        });
        wake = undefined;
        continue;
      }
      if (ev.type === "text_delta") streamed += ev.text;
      yield ev;
    }
    const g = await job;
    if (g.message.content.length > streamed.length && g.message.content.startsWith(streamed)) {
      yield { type: "text_delta", text: g.message.content.slice(streamed.length) };
    }
    for (const call of g.message.toolCalls ?? []) yield { type: "tool_call", call };
    yield {
      type: "finish",
      message: g.message,
      finishReason: g.finishReason,
      usage: g.usage,
      ...(g.structuredCut && { structuredCut: true }),
    };
  }

  /** Ends the model's process once the calls under way are done; the next call starts a new one. */
  async dispose(): Promise<void> {
    const child = this.#process;
    if (!child) return;
    await this.#queue.catch(() => undefined);
    if (this.#process === child) this.#process = undefined;
    child.kill(new ModelError("aborted", "LlamaCppModel: disposed"));
    await child.exited;
  }

  #serialized<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(fn, fn);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /** The running process, started (and loading) if there is none. */
  #started(): ModelProcess {
    if (this.#process?.alive) return this.#process;
    const child = new ModelProcess(this.#options);
    this.#process = child;
    child.ready.then(
      (size) => {
        this.#contextSize = size;
      },
      () => {
        if (this.#process === child) this.#process = undefined;
      },
    );
    return child;
  }

  /** One generation in the process; `report` (when streaming) receives progress and the answer's text. */
  async #generate(request: ModelRequest, report?: (ev: Progress) => void): Promise<Generated> {
    const { signal, ...rest } = request;
    throwIfAborted(signal);
    const child = this.#started();
    if (!child.loaded) report?.({ type: "status", stage: "loading_model" });
    // An abort while the model loads lets it load: the next call needs it.
    await raceAbort(child.ready, signal);
    const { settings, ...wire } = rest;
    const sent = { ...wire, ...(settings && { settings: { ...settings, providerOptions: undefined } }) };
    const { id, result } = child.generate(JSON.parse(JSON.stringify(sent)), report);
    if (!signal) return result;
    const onAbort = () => {
      const writing = child.abort(id);
      setTimeout(
        () => {
          if (child.pending(id)) child.kill(abortedError(signal));
        },
        writing ? STOP_GRACE_WRITING_MS : STOP_GRACE_READING_MS,
      ).unref();
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
    try {
      return await result;
    } catch (e) {
      throw signal.aborted ? abortedError(signal) : e;
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  }
}
