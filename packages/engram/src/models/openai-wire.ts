/**
 * The chat-completions wire format (OpenAI, Ollama, vLLM, llama.cpp, ...): request bodies from
 * our messages and tools, and our messages from responses and stream chunks. Pure functions,
 * no I/O.
 * @module
 */
import { errorFromWire } from "./classify.js";
import { assistantMessage, isPlainObject, toolCall } from "./normalize.js";
import { type FinishReason, type Message, ModelError, type ModelRequest, type ToolCall, type ToolSpec, type Usage } from "./types.js";

/** A message in the wire format. */
export interface WireMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: string;
  tool_calls?: { id: string; type: "function"; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

/** A tool in the wire format. */
export interface WireTool {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

/**
 * Our messages as wire messages: the static system prompt first (when non-empty), then the
 * volatile `systemContext` as a second system message (when non-empty), arguments as JSON text.
 */
export function toWireMessages(system: string, messages: readonly Message[], systemContext?: string): WireMessage[] {
  const wire: WireMessage[] = system ? [{ role: "system", content: system }] : [];
  if (systemContext) wire.push({ role: "system", content: systemContext });
  for (const m of messages) {
    if (m.role === "tool") {
      wire.push({ role: "tool", content: m.content, tool_call_id: m.toolCallId ?? "" });
    } else if (m.role === "assistant" && m.toolCalls && m.toolCalls.length > 0) {
      wire.push({
        role: "assistant",
        content: m.content,
        tool_calls: m.toolCalls.map((c) => ({
          id: c.id,
          type: "function",
          function: { name: c.name, arguments: JSON.stringify(c.args) },
        })),
      });
    } else {
      wire.push({ role: m.role, content: m.content });
    }
  }
  return wire;
}

/** Our tool specs as wire tools. */
export function toWireTools(tools: readonly ToolSpec[]): WireTool[] {
  return tools.map((t) => ({ type: "function", function: { name: t.name, description: t.description, parameters: t.parameters } }));
}

/** Settings that shape a request body besides the conversation. */
export interface WireSettings {
  model: string;
  /** Default temperature (the request's `settings.temperature` wins). */
  temperature?: number;
  /** Default `max_tokens` (the request's `settings.maxOutputTokens` wins). */
  maxTokens?: number;
  streamUsage: boolean;
  body?: Record<string, unknown>;
}

/** Body fields the conversation owns: extras never replace them. */
const RESERVED = new Set(["model", "messages", "tools", "stream", "stream_options", "response_format"]);

/**
 * The JSON body of one `/chat/completions` request: extra `body` fields, then the request's
 * `settings.providerOptions`, then the conversation; `tools` is left out when there are none;
 * `responseFormat` becomes `response_format: { type: "json_schema", json_schema: { name, schema } }`.
 */
export function toRequestBody(request: ModelRequest, settings: WireSettings, stream: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const extra of [settings.body, request.settings?.providerOptions]) {
    for (const [k, v] of Object.entries(extra ?? {})) if (!RESERVED.has(k)) body[k] = v;
  }
  body.model = settings.model;
  body.messages = toWireMessages(request.system, request.messages, request.systemContext);
  if (request.tools.length > 0) body.tools = toWireTools(request.tools);
  const s = request.settings ?? {};
  const temperature = s.temperature ?? settings.temperature;
  const maxTokens = s.maxOutputTokens ?? settings.maxTokens;
  if (temperature !== undefined) body.temperature = temperature;
  if (maxTokens !== undefined) body.max_tokens = maxTokens;
  if (s.topP !== undefined) body.top_p = s.topP;
  if (s.seed !== undefined) body.seed = s.seed;
  if (request.responseFormat) {
    body.response_format = {
      type: "json_schema",
      json_schema: { name: request.responseFormat.name, schema: request.responseFormat.schema },
    };
  }
  body.stream = stream;
  if (stream && settings.streamUsage) body.stream_options = { include_usage: true };
  return body;
}

/** Usage from a wire `usage` object (cached prompt tokens from `prompt_tokens_details.cached_tokens`),
 * or `undefined` when it has no counts. */
export function fromWireUsage(raw: unknown): Usage | undefined {
  if (!isPlainObject(raw)) return undefined;
  const usage: Usage = {};
  if (typeof raw.prompt_tokens === "number") usage.inputTokens = raw.prompt_tokens;
  if (typeof raw.completion_tokens === "number") usage.outputTokens = raw.completion_tokens;
  const details = raw.prompt_tokens_details;
  if (isPlainObject(details) && typeof details.cached_tokens === "number") usage.cachedInputTokens = details.cached_tokens;
  return Object.keys(usage).length === 0 ? undefined : usage;
}

/** Our finish reason for a wire `finish_reason`; without one, `tool_calls` when there are calls, else `stop`. */
export function fromWireFinishReason(raw: unknown, hasToolCalls: boolean): FinishReason {
  switch (raw) {
    case "stop":
    case "eos":
      return hasToolCalls ? "tool_calls" : "stop";
    case "length":
      return "length";
    case "tool_calls":
    case "function_call":
      return "tool_calls";
    case "content_filter":
      return "content_filter";
    case "error":
      return "error";
    case undefined:
    case null:
    case "":
      return hasToolCalls ? "tool_calls" : "stop";
    default:
      return "other";
  }
}

/** Text of a wire `content`: a string, `null`, or (some servers) an array of text parts. */
function contentText(raw: unknown): string {
  if (typeof raw === "string") return raw;
  if (Array.isArray(raw)) {
    return raw.map((p) => (isPlainObject(p) && typeof p.text === "string" ? p.text : "")).join("");
  }
  return "";
}

/** The first choice of a response or chunk, or `undefined`. */
function firstChoice(raw: Record<string, unknown>): Record<string, unknown> | undefined {
  const choices = raw.choices;
  if (!Array.isArray(choices)) return undefined;
  const choice = choices.find((c) => isPlainObject(c) && (c.index === undefined || c.index === 0)) as unknown;
  return isPlainObject(choice) ? choice : undefined;
}

/** What a response or a stream says once complete. */
export interface WireResult {
  message: Message;
  finishReason: FinishReason;
  usage?: Usage;
}

/** Our assistant message, finish reason and usage from a non-streaming response body (already JSON-parsed). */
export function fromWireResponse(raw: unknown, where = "the server"): WireResult {
  if (!isPlainObject(raw)) throw new ModelError("bad_response", "The chat completion is not a JSON object");
  const choice = firstChoice(raw);
  const message = choice?.message;
  if (!isPlainObject(message)) {
    if (raw.error !== undefined) throw errorFromWire(raw.error, where);
    throw new ModelError("bad_response", "The chat completion has no choices[0].message");
  }
  const truncated = choice?.finish_reason === "length";
  const calls: ToolCall[] = Array.isArray(message.tool_calls)
    ? message.tool_calls.filter(isPlainObject).map((c) => {
        const fn = isPlainObject(c.function) ? c.function : {};
        return toolCall(typeof c.id === "string" ? c.id : "", typeof fn.name === "string" ? fn.name : "", fn.arguments, { truncated });
      })
    : [];
  const usage = fromWireUsage(raw.usage);
  const result: WireResult = {
    message: assistantMessage(contentText(message.content), calls),
    finishReason: fromWireFinishReason(choice?.finish_reason, calls.length > 0),
  };
  if (usage) result.usage = usage;
  return result;
}

interface PendingCall {
  id: string;
  name: string;
  args: string;
  /** Set when a server sends arguments as an object instead of JSON text. */
  argsObject?: Record<string, unknown>;
}

/**
 * Folds streamed chunks into one assistant message: text deltas are appended, tool-call
 * deltas are accumulated by their `index` (or, when a server omits it, by `id`, else onto the
 * last call) across chunks.
 */
export class StreamAccumulator {
  content = "";
  usage: Usage | undefined;
  /** True once a choice reported a `finish_reason`. */
  finished = false;
  /** The wire `finish_reason`, once reported. */
  rawFinishReason: string | undefined;
  readonly #where: string;
  readonly #calls: PendingCall[] = [];
  readonly #byIndex = new Map<number, PendingCall>();

  /** `where` names the server in error messages. */
  constructor(where = "the server") {
    this.#where = where;
  }

  /** Applies one parsed chunk and returns the text it added (`""` when none). */
  add(chunk: unknown): string {
    if (!isPlainObject(chunk)) throw new ModelError("bad_response", "A stream chunk is not a JSON object");
    if (chunk.error !== undefined) throw errorFromWire(chunk.error, `${this.#where} (mid-stream)`);
    const usage = fromWireUsage(chunk.usage);
    if (usage) this.usage = usage;
    const choice = firstChoice(chunk);
    if (!choice) return "";
    if (typeof choice.finish_reason === "string" && choice.finish_reason) {
      this.finished = true;
      this.rawFinishReason = choice.finish_reason;
    }
    const delta = isPlainObject(choice.delta) ? choice.delta : isPlainObject(choice.message) ? choice.message : {};
    if (Array.isArray(delta.tool_calls)) for (const d of delta.tool_calls) if (isPlainObject(d)) this.#addCall(d);
    const text = contentText(delta.content);
    this.content += text;
    return text;
  }

  #addCall(delta: Record<string, unknown>): void {
    const id = typeof delta.id === "string" ? delta.id : "";
    const fn = isPlainObject(delta.function) ? delta.function : {};
    let call: PendingCall | undefined;
    if (typeof delta.index === "number") call = this.#byIndex.get(delta.index);
    else if (id) call = this.#calls.find((c) => c.id === id);
    else call = this.#calls[this.#calls.length - 1];
    if (!call) {
      call = { id: "", name: "", args: "" };
      this.#calls.push(call);
      if (typeof delta.index === "number") this.#byIndex.set(delta.index, call);
    }
    if (id && !call.id) call.id = id;
    if (typeof fn.name === "string" && fn.name && fn.name !== call.name) call.name += fn.name;
    if (typeof fn.arguments === "string") call.args += fn.arguments;
    else if (isPlainObject(fn.arguments)) call.argsObject = fn.arguments;
  }

  /** The complete tool calls, in the order they started. */
  toolCalls(): ToolCall[] {
    const truncated = this.rawFinishReason === "length";
    return this.#calls.map((c) => toolCall(c.id, c.name, c.argsObject ?? c.args, { truncated }));
  }

  /** The whole assistant message. */
  message(): Message {
    return assistantMessage(this.content, this.toolCalls());
  }

  /** Our finish reason for what was received. */
  finishReason(): FinishReason {
    return fromWireFinishReason(this.rawFinishReason, this.#calls.length > 0);
  }
}
