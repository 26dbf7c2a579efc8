/**
 * The chat-completions wire format (OpenAI, Ollama, vLLM, llama.cpp, ...): request bodies from
 * our messages and tools, and our messages from responses and stream chunks. Pure functions,
 * no I/O.
 * @module
 */
import { assistantMessage, isPlainObject, parseToolArgs } from "./normalize.js";
import { type Message, ModelError, type ModelRequest, type ToolCall, type ToolSpec, type Usage } from "./types.js";

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

/** Our messages as wire messages: the system prompt first (when non-empty), arguments as JSON text. */
export function toWireMessages(system: string, messages: readonly Message[]): WireMessage[] {
  const wire: WireMessage[] = system ? [{ role: "system", content: system }] : [];
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
  temperature?: number;
  maxTokens?: number;
  streamUsage: boolean;
  body?: Record<string, unknown>;
}

/** The JSON body of one `/chat/completions` request; `tools` is left out when there are none. */
export function toRequestBody(request: ModelRequest, settings: WireSettings, stream: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = {
    ...settings.body,
    model: settings.model,
    messages: toWireMessages(request.system, request.messages),
  };
  if (request.tools.length > 0) body.tools = toWireTools(request.tools);
  if (settings.temperature !== undefined) body.temperature = settings.temperature;
  if (settings.maxTokens !== undefined) body.max_tokens = settings.maxTokens;
  body.stream = stream;
  if (stream && settings.streamUsage) body.stream_options = { include_usage: true };
  return body;
}

/** Usage from a wire `usage` object, or `undefined` when it has no counts. */
export function fromWireUsage(raw: unknown): Usage | undefined {
  if (!isPlainObject(raw)) return undefined;
  const usage: Usage = {};
  if (typeof raw.prompt_tokens === "number") usage.inputTokens = raw.prompt_tokens;
  if (typeof raw.completion_tokens === "number") usage.outputTokens = raw.completion_tokens;
  return usage.inputTokens === undefined && usage.outputTokens === undefined ? undefined : usage;
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

/** Describes a provider's `error` object for a {@link ModelError} message. */
export function describeWireError(raw: unknown): string {
  if (isPlainObject(raw) && typeof raw.message === "string") return raw.message;
  return typeof raw === "string" ? raw : JSON.stringify(raw);
}

/** Our assistant message and usage from a non-streaming response body (already JSON-parsed). */
export function fromWireResponse(raw: unknown): { message: Message; usage?: Usage } {
  if (!isPlainObject(raw)) throw new ModelError("bad_response", "The chat completion is not a JSON object");
  const choice = firstChoice(raw);
  const message = choice?.message;
  if (!isPlainObject(message)) {
    const detail = raw.error !== undefined ? `: ${describeWireError(raw.error)}` : "";
    throw new ModelError("bad_response", `The chat completion has no choices[0].message${detail}`);
  }
  const calls: ToolCall[] = Array.isArray(message.tool_calls)
    ? message.tool_calls.filter(isPlainObject).map((c) => {
        const fn = isPlainObject(c.function) ? c.function : {};
        return {
          id: typeof c.id === "string" ? c.id : "",
          name: typeof fn.name === "string" ? fn.name : "",
          args: parseToolArgs(fn.arguments),
        };
      })
    : [];
  const usage = fromWireUsage(raw.usage);
  const result: { message: Message; usage?: Usage } = { message: assistantMessage(contentText(message.content), calls) };
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
  readonly #calls: PendingCall[] = [];
  readonly #byIndex = new Map<number, PendingCall>();

  /** Applies one parsed chunk and returns the text it added (`""` when none). */
  add(chunk: unknown): string {
    if (!isPlainObject(chunk)) throw new ModelError("bad_response", "A stream chunk is not a JSON object");
    if (chunk.error !== undefined) {
      const status = isPlainObject(chunk.error) && typeof chunk.error.code === "number" ? chunk.error.code : undefined;
      throw new ModelError(
        "http_error",
        `The server reported an error mid-stream: ${describeWireError(chunk.error)}`,
        status === undefined ? {} : { status },
      );
    }
    const usage = fromWireUsage(chunk.usage);
    if (usage) this.usage = usage;
    const choice = firstChoice(chunk);
    if (!choice) return "";
    if (typeof choice.finish_reason === "string" && choice.finish_reason) this.finished = true;
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
    return this.#calls.map((c) => ({ id: c.id, name: c.name, args: c.argsObject ?? parseToolArgs(c.args) }));
  }

  /** The whole assistant message. */
  message(): Message {
    return assistantMessage(this.content, this.toolCalls());
  }
}
