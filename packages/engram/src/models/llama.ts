/**
 * `LlamaCppModel` (Node only, `engram/llama`): a local GGUF model run in-process by
 * `node-llama-cpp` 3.x — no server, no key. `node-llama-cpp` is an optional peer dependency:
 * install it next to engram (`npm install node-llama-cpp`), or point `ENGRAM_LLAMA_MODULE` at an
 * installed copy (a `node-llama-cpp` package directory or its entry file) — loading tries the
 * plain `import("node-llama-cpp")` first, then that path. The runtime is CPU-only and never
 * compiles llama.cpp from source (`gpu: false`, `build: "never"`): a missing prebuilt binary is
 * an `unknown_provider` error, not a 20-minute build.
 *
 * Small models do not emit native function calls, so tool calls are grammar-constrained JSON:
 * each reply must be `{"tool": "<offered name>", "arguments": {…}}` (arguments matching that
 * tool's JSON schema) or `{"answer": "<text>"}`. The sampler cannot produce anything else, so
 * every tool call names an offered tool and has schema-shaped arguments. `responseFormat` uses a
 * grammar built from its schema too.
 * @module
 */
import { existsSync, statSync } from "node:fs";
import { availableParallelism } from "node:os";
import { resolve as resolvePath } from "node:path";
import { pathToFileURL } from "node:url";
import { abortedError, raceAbort, throwIfAborted } from "./abort.js";
import { AnswerStream } from "./answer-stream.js";
import { isPlainObject } from "./normalize.js";
import { estimateTokens } from "./tokens.js";
import {
  type ChatModel,
  type CutReply,
  type FinishReason,
  type Message,
  ModelError,
  type ModelRequest,
  type ModelResult,
  type ModelStreamEvent,
  type ToolCall,
  type ToolSpec,
  type Usage,
} from "./types.js";

/** Options of {@link LlamaCppModel}. */
export interface LlamaCppOptions {
  /** Path of the `.gguf` file. Required. */
  modelPath: string;
  /**
   * CPU threads for evaluation. Default: every core (`os.availableParallelism()`); node-llama-cpp's
   * own default of 4 is ~30× slower on a 2-core machine. llama.cpp's worker threads spin while
   * they wait, so they must not share cores with other busy work: on a 2-core machine with other
   * processes running, `threads: 1` measured 52 tokens/s where 2 threads gave 1.7.
   */
  threads?: number;
  /** Context window in tokens. Default: `4096` (or the model's training size, if smaller). */
  contextSize?: number;
  /**
   * Whether structured requests (`responseFormat`: long-term memory extraction) run on a context
   * sequence of their own, so that they never evict the conversation's cached prompt — the turn
   * after an extraction then reads only its new messages, not the whole prompt again. Costs a
   * second KV cache of `contextSize` tokens. Default: `true`.
   */
  structuredSequence?: boolean;
  /** Default cap on generated tokens (a request's `settings.maxOutputTokens` wins). Default: `512`. */
  maxOutputTokens?: number;
  /** Default temperature (a request's `settings.temperature` wins). Default: `0` (greedy, reproducible). */
  temperature?: number;
  /** {@link ChatModel.id}. Default: `"llama:<file name>"`. */
  id?: string;
  /** Where to load `node-llama-cpp` from, as `ENGRAM_LLAMA_MODULE`. Default: the plain import, then
   * `process.env.ENGRAM_LLAMA_MODULE`. */
  module?: string;
}

/** The environment variable naming a `node-llama-cpp` install to use when the plain import fails. */
export const LLAMA_MODULE_ENV = "ENGRAM_LLAMA_MODULE";

/** Context window and output cap when the options set none. */
const DEFAULT_CONTEXT_SIZE = 4096;
const DEFAULT_MAX_OUTPUT_TOKENS = 512;

/** Held in a variable so that bundlers leave the optional package out. */
const LLAMA_PACKAGE = "node-llama-cpp";

// The subset of node-llama-cpp 3.x that Engram uses (the package is optional, so its types are not imported).
interface TokenMeterState {
  usedInputTokens: number;
  usedOutputTokens: number;
}
interface LlamaSequence {
  readonly nextTokenIndex: number;
  readonly tokenMeter: { getState(): TokenMeterState };
}
interface LlamaContext {
  readonly contextSize: number;
  getSequence(): LlamaSequence;
  dispose(): Promise<void>;
}
interface LlamaModelHandle {
  readonly trainContextSize: number;
  tokenize?(text: string): readonly unknown[];
  createContext(options: { contextSize?: number; threads?: number; sequences?: number }): Promise<LlamaContext>;
  dispose(): Promise<void>;
}
interface LlamaGrammarHandle {
  parse?(json: string): unknown;
}
interface Llama {
  loadModel(options: { modelPath: string }): Promise<LlamaModelHandle>;
  createGrammarForJsonSchema(schema: Record<string, unknown>): Promise<LlamaGrammarHandle>;
  dispose(): Promise<void>;
}
type ChatHistoryItem = { type: "system"; text: string } | { type: "user"; text: string } | { type: "model"; response: string[] };
interface LlamaChatResponse {
  response: string;
  metadata: { stopReason: string };
}
interface LlamaChat {
  generateResponse(
    history: ChatHistoryItem[],
    options: {
      grammar?: LlamaGrammarHandle;
      maxTokens?: number;
      temperature?: number;
      topP?: number;
      seed?: number;
      signal?: AbortSignal;
      onTextChunk?: (text: string) => void;
    },
  ): Promise<LlamaChatResponse>;
  dispose(): void;
}
/** What `import("node-llama-cpp")` gives. */
export interface NodeLlamaCppModule {
  getLlama(options: Record<string, unknown>): Promise<Llama>;
  LlamaChat: new (options: { contextSequence: LlamaSequence }) => LlamaChat;
}

/**
 * Imports `node-llama-cpp`: the plain import first, then `path` (default
 * `process.env.ENGRAM_LLAMA_MODULE`: a package directory or an entry file).
 * @throws ModelError (`unknown_provider`) when neither loads.
 */
export async function loadNodeLlamaCpp(path: string | undefined = process.env[LLAMA_MODULE_ENV]): Promise<NodeLlamaCppModule> {
  const failures: string[] = [];
  try {
    return checkModule(await import(LLAMA_PACKAGE));
  } catch (e) {
    failures.push(`import("${LLAMA_PACKAGE}"): ${e instanceof Error ? e.message : String(e)}`);
  }
  if (path) {
    try {
      return checkModule(await import(pathToFileURL(entryOf(path)).href));
    } catch (e) {
      failures.push(`${LLAMA_MODULE_ENV}=${path}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  throw new ModelError(
    "unknown_provider",
    `LlamaCppModel needs node-llama-cpp 3.x (npm install node-llama-cpp, or set ${LLAMA_MODULE_ENV} to an installed copy): ${failures.join("; ")}`,
  );
}

function checkModule(mod: unknown): NodeLlamaCppModule {
  const m = mod as Partial<NodeLlamaCppModule>;
  if (typeof m.getLlama !== "function" || typeof m.LlamaChat !== "function")
    throw new Error("not node-llama-cpp 3.x (no getLlama/LlamaChat)");
  return m as NodeLlamaCppModule;
}

/** A package directory's ESM entry (`dist/index.js` for node-llama-cpp), or the file itself. */
function entryOf(path: string): string {
  const full = resolvePath(path);
  if (existsSync(full) && statSync(full).isDirectory()) return resolvePath(full, "dist/index.js");
  return full;
}

/** The loaded runtime, model and context of one {@link LlamaCppModel}. */
interface Loaded extends Lane {
  mod: NodeLlamaCppModule;
  llama: Llama;
  model: LlamaModelHandle;
  context: LlamaContext;
  /** Where structured requests run when they have a sequence of their own. */
  structured?: Lane;
}

/** A context sequence (its KV cache) and the chat that generates on it. */
interface Lane {
  sequence: LlamaSequence;
  chat: LlamaChat;
}

/** What one generation produced, before it becomes events. */
interface Generated extends CutReply {
  message: Message;
  finishReason: FinishReason;
  usage: Usage;
}

/**
 * A {@link ChatModel} running a GGUF model in-process with node-llama-cpp (CPU). Loads on the
 * first call (runtime, weights, one context); calls are served one at a time. `dispose()` frees
 * the native memory.
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
 * `structuredCut` and no text.
 *
 * `stream` also says what the model is doing (`status` events): `loading_model` on the first
 * call, `reading_prompt` with the prompt's token count, `writing` at the first token. An aborted
 * call returns at once; the native work stops at llama.cpp's next check of the signal, and the
 * next call waits for it.
 *
 * `finishReason`: `length` when the output-token cap cut the reply, else `tool_calls`/`stop`.
 * Usage: prompt tokens (`cachedInputTokens` = the prefix reused from the previous call) and
 * generated tokens, as counted by node-llama-cpp.
 */
export class LlamaCppModel implements ChatModel {
  readonly id: string;
  readonly #options: LlamaCppOptions;
  #loading: Promise<Loaded> | undefined;
  /** The load has finished (a call then reports no `loading_model`). */
  #loaded = false;
  #queue: Promise<unknown> = Promise.resolve();
  /** The loaded context's size, once loaded. */
  #contextSize: number | undefined;

  constructor(options: LlamaCppOptions) {
    if (!options || typeof options.modelPath !== "string" || options.modelPath === "") {
      throw new ModelError("bad_request", "LlamaCppModel needs a modelPath (a .gguf file)");
    }
    this.#options = { ...options };
    this.id = options.id ?? `llama:${options.modelPath.split(/[\\/]/).pop()}`;
  }

  /** The context's size (until it is loaded, the size asked for) less the default output cap. */
  maxInputTokens(): number {
    const size = this.#contextSize ?? this.#options.contextSize ?? DEFAULT_CONTEXT_SIZE;
    return Math.max(1, size - (this.#options.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS));
  }

  /** Loads the runtime, the weights and a context now (otherwise the first call does). */
  load(): Promise<void> {
    return this.#load().then(() => undefined);
  }

  async invoke(request: ModelRequest): Promise<ModelResult> {
    // An abort answers at once; the native call stops when llama.cpp next looks at the signal,
    // and the next call waits for that.
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
          if (settled) return; // an aborted call's native work still winding down
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

  /** Frees the context, the weights and the runtime; the next call loads them again. */
  async dispose(): Promise<void> {
    const loading = this.#loading;
    this.#loading = undefined;
    this.#loaded = false;
    if (!loading) return;
    const loaded = await loading.catch(() => undefined);
    if (!loaded) return;
    await this.#queue.catch(() => undefined);
    loaded.chat.dispose();
    loaded.structured?.chat.dispose();
    await loaded.context.dispose();
    await loaded.model.dispose();
    await loaded.llama.dispose();
  }

  #serialized<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(fn, fn);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  #load(): Promise<Loaded> {
    this.#loading ??= this.#doLoad().then(
      (loaded) => {
        this.#loaded = true;
        return loaded;
      },
      (e: unknown) => {
        this.#loading = undefined;
        throw e;
      },
    );
    return this.#loading;
  }

  async #doLoad(): Promise<Loaded> {
    const o = this.#options;
    const modelPath = resolvePath(o.modelPath);
    if (!existsSync(modelPath)) throw new ModelError("bad_request", `LlamaCppModel: no model file at ${modelPath}`);
    const mod = await loadNodeLlamaCpp(o.module);
    const threads = Math.max(1, Math.floor(o.threads ?? availableParallelism()));
    let llama: Llama;
    try {
      llama = await mod.getLlama({
        gpu: false,
        build: "never",
        skipDownload: true,
        progressLogs: false,
        maxThreads: threads,
        logLevel: "error",
      });
    } catch (e) {
      throw new ModelError("unknown_provider", `LlamaCppModel: node-llama-cpp has no usable prebuilt binary here: ${message(e)}`, {
        cause: e,
      });
    }
    try {
      const model = await llama.loadModel({ modelPath });
      const contextSize = Math.min(o.contextSize ?? DEFAULT_CONTEXT_SIZE, model.trainContextSize || Number.POSITIVE_INFINITY);
      const separate = o.structuredSequence ?? true;
      const context = await model.createContext({ contextSize, threads, ...(separate && { sequences: 2 }) });
      this.#contextSize = context.contextSize || contextSize;
      const lane = (): Lane => {
        const sequence = context.getSequence();
        return { sequence, chat: new mod.LlamaChat({ contextSequence: sequence }) };
      };
      return { mod, llama, model, context, ...lane(), ...(separate && { structured: lane() }) };
    } catch (e) {
      await llama.dispose().catch(() => undefined);
      throw new ModelError("bad_request", `LlamaCppModel: could not load ${modelPath}: ${message(e)}`, { cause: e });
    }
  }

  /** One generation; `report` (when streaming) receives progress and the answer's text. */
  async #generate(request: ModelRequest, report?: (ev: Progress) => void): Promise<Generated> {
    const { signal } = request;
    throwIfAborted(signal);
    if (!this.#loaded) report?.({ type: "status", stage: "loading_model" });
    const loaded = await this.#load();
    throwIfAborted(signal);
    const tools = request.responseFormat ? [] : request.tools;
    const schema = request.responseFormat
      ? toGrammarSchema(request.responseFormat.schema)
      : tools.length > 0
        ? replySchema(tools)
        : undefined;
    let grammar: LlamaGrammarHandle | undefined;
    if (schema) {
      try {
        grammar = await loaded.llama.createGrammarForJsonSchema(schema);
      } catch (e) {
        throw new ModelError("bad_request", `LlamaCppModel: cannot build a grammar for the schema: ${message(e)}`, { cause: e });
      }
    }
    const s = request.settings ?? {};
    const maxTokens = s.maxOutputTokens ?? this.#options.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS;
    const options: Parameters<LlamaChat["generateResponse"]>[1] = {
      maxTokens,
      temperature: s.temperature ?? this.#options.temperature ?? 0,
    };
    if (grammar) options.grammar = grammar;
    if (s.topP !== undefined) options.topP = s.topP;
    if (s.seed !== undefined) options.seed = s.seed;
    if (signal) options.signal = signal;
    const history = toHistory(request, tools);
    if (report) {
      report({ type: "status", stage: "reading_prompt", tokens: promptTokens(loaded.model, history) });
      options.onTextChunk = streamedText(report, grammar && !request.responseFormat ? new AnswerStream() : grammar ? undefined : null);
    }
    const { sequence, chat } = request.responseFormat && loaded.structured ? loaded.structured : loaded;
    const before = sequence.tokenMeter.getState();
    let response: LlamaChatResponse;
    try {
      response = await chat.generateResponse(history, options);
    } catch (e) {
      if (signal?.aborted) throw abortedError(signal);
      const text = message(e);
      const code = /context|too long|exceed/i.test(text) ? "context_length" : "bad_response";
      throw new ModelError(code, `LlamaCppModel: generation failed: ${text}`, { cause: e });
    }
    const after = sequence.tokenMeter.getState();
    const outputTokens = after.usedOutputTokens - before.usedOutputTokens;
    const inputTokens = Math.max(0, sequence.nextTokenIndex - outputTokens);
    const usage: Usage = {
      inputTokens,
      outputTokens,
      cachedInputTokens: Math.max(0, inputTokens - (after.usedInputTokens - before.usedInputTokens)),
    };
    const cut = response.metadata.stopReason === "maxTokens";
    const text = response.response;
    if (!grammar) return { message: { role: "assistant", content: text }, finishReason: cut ? "length" : "stop", usage };
    // A cut constrained reply is unfinished JSON: never text to show or to continue.
    const structuredCut: Generated = { message: { role: "assistant", content: "" }, finishReason: "length", usage, structuredCut: true };
    if (request.responseFormat) return cut ? structuredCut : { message: { role: "assistant", content: text }, finishReason: "stop", usage };
    const reply = parseReply(cut ? completedPart(text) : text, tools);
    if (!reply) return cut ? structuredCut : { message: { role: "assistant", content: text }, finishReason: "stop", usage };
    if ("answer" in reply) return { message: { role: "assistant", content: reply.answer }, finishReason: "stop", usage };
    const call: ToolCall = {
      id: `call_${globalThis.crypto.randomUUID().replace(/-/g, "").slice(0, 24)}`,
      name: reply.tool,
      args: reply.args,
    };
    return { message: { role: "assistant", content: "", toolCalls: [call] }, finishReason: "tool_calls", usage };
  }
}

/** The reply grammar: one of `{"tool": <name>, "arguments": <its schema>}` per tool, or `{"answer": string}`. */
export function replySchema(tools: readonly ToolSpec[]): Record<string, unknown> {
  return {
    oneOf: [
      ...tools.map((t) => ({
        type: "object",
        properties: { tool: { const: t.name }, arguments: toGrammarSchema(t.parameters) },
      })),
      { type: "object", properties: { answer: { type: "string" } } },
    ],
  };
}

/**
 * The complete part of a constrained reply cut by the token cap: the grammar writes the reply's
 * keys in order, so when only the closing brace is missing, its answer string or its tool's
 * arguments object is whole. Otherwise the text as it is (which does not parse).
 */
function completedPart(text: string): string {
  const closed = `${text.trimEnd()}}`;
  try {
    JSON.parse(closed);
    return closed;
  } catch {
    return text;
  }
}

/** A parsed constrained reply; `undefined` when the text is not one (cut off by the token cap). */
function parseReply(
  text: string,
  tools: readonly ToolSpec[],
): { answer: string } | { tool: string; args: Record<string, unknown> } | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isPlainObject(value)) return undefined;
  if (typeof value.answer === "string") return { answer: value.answer };
  const tool = tools.find((t) => t.name === value.tool);
  if (!tool || !isPlainObject(value.arguments)) return undefined;
  return { tool: tool.name, args: dropOptionalNulls(value.arguments, tool.parameters) as Record<string, unknown> };
}

/** Keywords a grammar cannot enforce: an optional property carrying one is left out of the grammar. */
const UNENFORCEABLE = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "pattern", "uniqueItems"];
const GRAMMAR_FORMATS = new Set(["date-time", "time", "date"]);
const SCALARS = new Set(["string", "number", "integer", "boolean", "null"]);
/** A grammar for "any scalar", where a schema allows anything. */
const ANY_SCALAR = { type: ["string", "number", "boolean", "null"] };

/**
 * A JSON schema as node-llama-cpp's grammar subset: `type`, `properties` (optional ones may be
 * left out: see {@link objectShapes}), `items`, `enum`, `const`, `anyOf`/`oneOf`, string lengths
 * and date formats.
 * What the subset lacks (`$ref`, `allOf`, open schemas) becomes "any scalar".
 */
export function toGrammarSchema(schema: unknown): Record<string, unknown> {
  if (!isPlainObject(schema)) return ANY_SCALAR;
  const out: Record<string, unknown> = {};
  if (typeof schema.description === "string") out.description = schema.description;
  if (schema.const !== undefined && (schema.const === null || typeof schema.const !== "object")) return { ...out, const: schema.const };
  if (Array.isArray(schema.enum)) {
    const values = schema.enum.filter((v) => v === null || typeof v !== "object");
    if (values.length > 0) return { ...out, enum: values };
  }
  const alternatives = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined;
  if (alternatives && alternatives.length > 0) return { ...out, oneOf: alternatives.map(toGrammarSchema) };
  if (Array.isArray(schema.allOf) && schema.allOf.length === 1) return toGrammarSchema(schema.allOf[0]);
  const type = schema.type;
  if (Array.isArray(type)) {
    if (type.every((t) => SCALARS.has(t as string))) return { ...out, type };
    return { ...out, oneOf: type.map((t) => toGrammarSchema({ ...schema, type: t })) };
  }
  switch (type) {
    case "string": {
      const s: Record<string, unknown> = { ...out, type: "string" };
      if (typeof schema.format === "string" && GRAMMAR_FORMATS.has(schema.format)) s.format = schema.format;
      else {
        if (typeof schema.minLength === "number") s.minLength = schema.minLength;
        if (typeof schema.maxLength === "number") s.maxLength = schema.maxLength;
      }
      return s;
    }
    case "number":
    case "integer":
    case "boolean":
    case "null":
      return { ...out, type };
    case "array": {
      const a: Record<string, unknown> = { ...out, type: "array", items: toGrammarSchema(schema.items) };
      if (typeof schema.minItems === "number") a.minItems = schema.minItems;
      if (typeof schema.maxItems === "number") a.maxItems = schema.maxItems;
      return a;
    }
    case "object": {
      const props = isPlainObject(schema.properties) ? schema.properties : {};
      if (Object.keys(props).length === 0) {
        const o: Record<string, unknown> = { ...out, type: "object", properties: {} };
        if (schema.additionalProperties !== false) {
          o.additionalProperties = isPlainObject(schema.additionalProperties) ? toGrammarSchema(schema.additionalProperties) : ANY_SCALAR;
        }
        return o;
      }
      const shapes = objectShapes(props, new Set(Array.isArray(schema.required) ? schema.required : []));
      const objects = shapes.map((properties) => ({ type: "object", properties }));
      return objects.length === 1 ? { ...out, ...objects[0] } : { ...out, oneOf: objects };
    }
    default:
      return ANY_SCALAR;
  }
}

/** Optional properties a grammar lets the model choose among, at most: each doubles the shapes. */
const MAX_CHOSEN_OPTIONAL = 5;

/**
 * The property sets an object may be written with, in the schema's key order: the required
 * properties, plus each subset of the optional ones — node-llama-cpp's object grammar writes
 * every listed property, so "optional" is one alternative per subset. Optional properties with
 * bounds a grammar cannot enforce, and those beyond the first {@link MAX_CHOSEN_OPTIONAL}, are
 * left out (the tool's default applies).
 */
function objectShapes(props: Record<string, unknown>, required: ReadonlySet<unknown>): Record<string, unknown>[] {
  const optional = Object.entries(props)
    .filter(([key, sub]) => !required.has(key) && !(isPlainObject(sub) && UNENFORCEABLE.some((k) => k in sub)))
    .slice(0, MAX_CHOSEN_OPTIONAL)
    .map(([key]) => key);
  const shapes: Record<string, unknown>[] = [];
  for (let mask = 0; mask < 2 ** optional.length; mask++) {
    const chosen = new Set(optional.filter((_, i) => mask & (1 << i)));
    const shape: Record<string, unknown> = {};
    for (const [key, sub] of Object.entries(props)) if (required.has(key) || chosen.has(key)) shape[key] = toGrammarSchema(sub);
    shapes.push(shape);
  }
  return shapes;
}

/** Removes `null` values of optional properties (a nullable optional argument left out). */
function dropOptionalNulls(value: unknown, schema: unknown): unknown {
  if (!isPlainObject(value) || !isPlainObject(schema) || !isPlainObject(schema.properties)) return value;
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (v === null && !required.has(key)) continue;
    out[key] = dropOptionalNulls(v, schema.properties[key]);
  }
  return out;
}

/** What {@link LlamaCppModel} streams before its `finish`. */
type Progress = Extract<ModelStreamEvent, { type: "text_delta" | "status" }>;

/**
 * The `onTextChunk` of a streamed generation: `writing` on the first chunk, then the text —
 * as it comes (`answer` null: free text), the answer decoded from the JSON reply, or nothing
 * (`undefined`: a `responseFormat` reply).
 */
function streamedText(report: (ev: Progress) => void, answer: AnswerStream | null | undefined): (text: string) => void {
  let writing = false;
  return (text) => {
    if (!writing) {
      writing = true;
      report({ type: "status", stage: "writing" });
    }
    const shown = answer === null ? text : (answer?.push(text) ?? "");
    if (shown) report({ type: "text_delta", text: shown });
  };
}

/** The prompt's size in tokens: counted by the model's tokenizer where it has one, else estimated. */
function promptTokens(model: LlamaModelHandle, history: readonly ChatHistoryItem[]): number {
  const text = history.map((h) => ("text" in h ? h.text : h.response.join("\n"))).join("\n");
  return typeof model.tokenize === "function" ? model.tokenize(text).length : estimateTokens(text);
}

/** The prompt as node-llama-cpp chat history. */
function toHistory(request: ModelRequest, tools: readonly ToolSpec[]): ChatHistoryItem[] {
  const system = [request.system, tools.length > 0 ? toolsPrompt(tools) : "", request.systemContext ?? ""]
    .filter((p) => p.trim())
    .join("\n\n");
  const history: ChatHistoryItem[] = system ? [{ type: "system", text: system }] : [];
  const names = new Map<string, string>();
  for (const m of request.messages) {
    if (m.role === "user") history.push({ type: "user", text: m.content });
    else if (m.role === "tool") {
      const name = names.get(m.toolCallId ?? "") ?? "tool";
      history.push({ type: "user", text: `Result of ${name}:\n${m.content}` });
    } else {
      const parts: string[] = [];
      for (const c of m.toolCalls ?? []) {
        names.set(c.id, c.name);
        parts.push(JSON.stringify({ tool: c.name, arguments: c.args }));
      }
      if (parts.length === 0) parts.push(tools.length > 0 ? JSON.stringify({ answer: m.content }) : m.content);
      history.push({ type: "model", response: [parts.join("\n")] });
    }
  }
  return history;
}

/** The tool definitions and reply format, as the system prompt states them. */
function toolsPrompt(tools: readonly ToolSpec[]): string {
  const lines = tools.map((t) => `- ${t.name}: ${t.description} Arguments: ${JSON.stringify(argumentsOutline(t.parameters))}`);
  return [
    "Tools:",
    ...lines,
    "",
    'Reply with one JSON object: {"tool": "<tool name>", "arguments": {...}} to call a tool, or {"answer": "<text>"} to answer the user.',
  ].join("\n");
}

/** `{ name: "type (description)" }` for a tool's properties: short enough for a small model. */
function argumentsOutline(schema: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!isPlainObject(schema) || !isPlainObject(schema.properties)) return out;
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  for (const [key, sub] of Object.entries(schema.properties)) {
    const s = isPlainObject(sub) ? sub : {};
    const type = Array.isArray(s.type) ? s.type.join("|") : typeof s.type === "string" ? s.type : "any";
    out[key] = `${type}${required.has(key) ? "" : ", optional"}${typeof s.description === "string" ? `: ${s.description}` : ""}`;
  }
  return out;
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
