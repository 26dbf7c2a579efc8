/**
 * The node-llama-cpp side of `LlamaCppModel`: loads the runtime, the weights and one context, and
 * runs one generation at a time. It runs in the model's child process (`llama-child.ts`), so that
 * the parent can stop it at once — llama.cpp reads a prompt in native calls that no signal
 * interrupts, and a process does not exit while one runs.
 * @module
 */
import { existsSync, statSync } from "node:fs";
import { availableParallelism } from "node:os";
import { resolve as resolvePath } from "node:path";
import { pathToFileURL } from "node:url";
import { abortedError, throwIfAborted } from "./abort.js";
import { AnswerStream } from "./answer-stream.js";
import { completedPart, parseReply, replySchema, toGrammarSchema } from "./llama-grammar.js";
import { isPlainObject } from "./normalize.js";
import {
  type CutReply,
  type FinishReason,
  type Message,
  ModelError,
  type ModelRequest,
  type ModelStreamEvent,
  type ToolCall,
  type ToolSpec,
  type Usage,
} from "./types.js";

/** The environment variable naming a `node-llama-cpp` install to use when the plain import fails. */
export const LLAMA_MODULE_ENV = "ENGRAM_LLAMA_MODULE";

/** Context window and output cap when the options set none. */
export const DEFAULT_CONTEXT_SIZE = 4096;
export const DEFAULT_MAX_OUTPUT_TOKENS = 512;

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
  clearHistory(): Promise<void>;
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

/** Options of `LlamaCppModel`. */
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
  /**
   * Whether a request reuses what the sequence's KV cache holds of its prompt from the requests
   * before it. With `false` every prompt is read from its start: slower, but a reply then depends
   * on its request alone, as an evaluation that compares runs needs — the same prompt read after
   * other requests is read in other pieces, which can round differently and turn a greedy reply.
   * Default: `true`.
   */
  reusePrompt?: boolean;
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

/** What the engine needs to load a model. */
export type EngineOptions = Omit<LlamaCppOptions, "id">;

/** A request without its signal (the engine takes that separately). */
export type EngineRequest = Omit<ModelRequest, "signal">;

/** What one generation produced, before it becomes events. */
export interface Generated extends CutReply {
  message: Message;
  finishReason: FinishReason;
  usage: Usage;
}

/** What a generation reports before its result: progress and the answer's text. */
export type Progress = Extract<ModelStreamEvent, { type: "text_delta" | "status" }>;

/** The loaded runtime, model and context. */
interface Loaded extends Lane {
  mod: NodeLlamaCppModule;
  llama: Llama;
  model: LlamaModelHandle;
  context: LlamaContext;
  /** The loaded context's size. */
  contextSize: number;
  /** Where structured requests run when they have a sequence of their own. */
  structured?: Lane;
}

/** A context sequence (its KV cache) and the chat that generates on it. */
interface Lane {
  sequence: LlamaSequence;
  chat: LlamaChat;
}

/**
 * One model in this process: {@link LlamaEngine.load} once, then {@link LlamaEngine.generate}
 * one request at a time (the caller serialises them).
 */
export class LlamaEngine {
  readonly #options: EngineOptions;
  #loaded: Loaded | undefined;
  /** Replies as the model wrote them, by what they said: the history repeats them token for
   * token, so that the sequence's cached prefix covers them on the next call. */
  readonly #written = new Map<string, string>();

  #remember(key: string, text: string): void {
    this.#written.delete(key);
    this.#written.set(key, text);
    if (this.#written.size > WRITTEN_KEPT) this.#written.delete(this.#written.keys().next().value as string);
  }

  constructor(options: EngineOptions) {
    this.#options = options;
  }

  /** Loads the runtime, the weights and a context; resolves to the context's size. */
  async load(): Promise<number> {
    this.#loaded ??= await this.#doLoad();
    return this.#loaded.contextSize;
  }

  async dispose(): Promise<void> {
    const loaded = this.#loaded;
    this.#loaded = undefined;
    if (!loaded) return;
    loaded.chat.dispose();
    loaded.structured?.chat.dispose();
    await loaded.context.dispose();
    await loaded.model.dispose();
    await loaded.llama.dispose();
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
      const lane = (): Lane => {
        const sequence = context.getSequence();
        return { sequence, chat: new mod.LlamaChat({ contextSequence: sequence }) };
      };
      const size = context.contextSize || contextSize;
      return { mod, llama, model, context, contextSize: size, ...lane(), ...(separate && { structured: lane() }) };
    } catch (e) {
      await llama.dispose().catch(() => undefined);
      throw new ModelError("bad_request", `LlamaCppModel: could not load ${modelPath}: ${message(e)}`, { cause: e });
    }
  }

  /** One generation; `report` (when streaming) receives progress and the answer's text. */
  async generate(request: EngineRequest, signal?: AbortSignal, report?: (ev: Progress) => void): Promise<Generated> {
    throwIfAborted(signal);
    await this.load();
    const loaded = this.#loaded as Loaded;
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
    const history = toHistory(request, tools, (key) => this.#written.get(key));
    if (report) {
      const tokens = promptTokens(loaded.model, history);
      report({ type: "status", stage: "reading_prompt", ...(tokens !== undefined && { tokens }) });
      options.onTextChunk = streamedText(report, grammar && !request.responseFormat ? new AnswerStream() : grammar ? undefined : null);
    }
    const { sequence, chat } = request.responseFormat && loaded.structured ? loaded.structured : loaded;
    if (this.#options.reusePrompt === false) await sequence.clearHistory();
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
    if ("answer" in reply) {
      if (!cut) this.#remember(answerKey(reply.answer), text);
      return { message: { role: "assistant", content: reply.answer }, finishReason: "stop", usage };
    }
    const call: ToolCall = {
      id: `call_${globalThis.crypto.randomUUID().replace(/-/g, "").slice(0, 24)}`,
      name: reply.tool,
      args: reply.args,
    };
    if (!cut) this.#remember(callKey(call), text);
    return { message: { role: "assistant", content: "", toolCalls: [call] }, finishReason: "tool_calls", usage };
  }
}

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

/** The prompt's size in tokens, counted by the model's tokenizer (`undefined` without one). */
function promptTokens(model: LlamaModelHandle, history: readonly ChatHistoryItem[]): number | undefined {
  const text = history.map((h) => ("text" in h ? h.text : h.response.join("\n"))).join("\n");
  return typeof model.tokenize === "function" ? model.tokenize(text).length : undefined;
}

/** How many written replies an engine keeps for {@link toHistory}. */
const WRITTEN_KEPT = 256;
const answerKey = (answer: string) => `answer\u0000${answer}`;
const callKey = (call: Pick<ToolCall, "id" | "name" | "args">) =>
  `call\u0000${call.id}\u0000${call.name}\u0000${JSON.stringify(call.args)}`;

/** The prompt as node-llama-cpp chat history; `written` gives a reply as the model wrote it. */
function toHistory(request: EngineRequest, tools: readonly ToolSpec[], written: (key: string) => string | undefined): ChatHistoryItem[] {
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
        parts.push(written(callKey(c)) ?? JSON.stringify({ tool: c.name, arguments: c.args }));
      }
      if (parts.length === 0)
        parts.push(tools.length > 0 ? (written(answerKey(m.content)) ?? JSON.stringify({ answer: m.content })) : m.content);
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
