/**
 * The messages between `LlamaCppModel` and its child process (`llama-child.ts`), over Node's IPC
 * channel (JSON). What the child sends is read as untrusted: anything that is not one of these
 * messages, exactly, is `undefined` and ends the child.
 * @module
 */
import type { EngineOptions, EngineRequest, Generated, Progress } from "./llama-engine.js";
import { isPlainObject } from "./normalize.js";
import type { FinishReason, Message, ModelErrorCode, ModelStage, ToolCall, Usage } from "./types.js";

/** An error as it crosses the channel. */
export interface WireError {
  code: ModelErrorCode;
  message: string;
}

/** What the parent sends. */
export type ToChild =
  | { type: "load"; options: EngineOptions }
  | { type: "generate"; id: number; request: EngineRequest; stream: boolean }
  | { type: "abort"; id: number };

/** What the child sends. */
export type FromChild =
  | { type: "loaded"; contextSize: number }
  | { type: "load_failed"; error: WireError }
  | { type: "progress"; id: number; event: Progress }
  | { type: "result"; id: number; generated: Generated }
  | { type: "failed"; id: number; error: WireError };

/** The error codes the engine throws; any other code from the child reads as `bad_response`. */
const ENGINE_CODES: ReadonlySet<string> = new Set<ModelErrorCode>([
  "aborted",
  "bad_request",
  "bad_response",
  "context_length",
  "unknown_provider",
]);
const STAGES: ReadonlySet<string> = new Set<ModelStage>(["loading_model", "reading_prompt", "writing"]);
const FINISH_REASONS: ReadonlySet<string> = new Set<FinishReason>(["stop", "tool_calls", "length", "content_filter", "error", "other"]);

/** A child's message, or `undefined` when it is not a well-formed one. */
export function readChildMessage(value: unknown): FromChild | undefined {
  if (!isPlainObject(value)) return undefined;
  switch (value.type) {
    case "loaded":
      return isCount(value.contextSize) && value.contextSize > 0 ? { type: "loaded", contextSize: value.contextSize } : undefined;
    case "load_failed": {
      const error = readError(value.error);
      return error && { type: "load_failed", error };
    }
    case "progress": {
      const event = readProgress(value.event);
      return isId(value.id) && event ? { type: "progress", id: value.id, event } : undefined;
    }
    case "result": {
      const generated = readGenerated(value.generated);
      return isId(value.id) && generated ? { type: "result", id: value.id, generated } : undefined;
    }
    case "failed": {
      const error = readError(value.error);
      return isId(value.id) && error ? { type: "failed", id: value.id, error } : undefined;
    }
    default:
      return undefined;
  }
}

/** A parent's message, or `undefined` (the child ignores it). */
export function readParentMessage(value: unknown): ToChild | undefined {
  if (!isPlainObject(value)) return undefined;
  if (value.type === "load" && isPlainObject(value.options) && typeof value.options.modelPath === "string")
    return { type: "load", options: value.options as unknown as EngineOptions };
  if (value.type === "generate" && isId(value.id) && isPlainObject(value.request))
    return { type: "generate", id: value.id, request: value.request as unknown as EngineRequest, stream: value.stream === true };
  if (value.type === "abort" && isId(value.id)) return { type: "abort", id: value.id };
  return undefined;
}

/** An error for the channel: its code when it is a model error, else `bad_response`. */
export function toWireError(e: unknown): WireError {
  const code = isPlainObject(e) && typeof e.code === "string" && ENGINE_CODES.has(e.code) ? (e.code as ModelErrorCode) : "bad_response";
  return { code, message: e instanceof Error ? e.message : String(e) };
}

function readError(value: unknown): WireError | undefined {
  if (!isPlainObject(value) || typeof value.message !== "string") return undefined;
  const code = typeof value.code === "string" && ENGINE_CODES.has(value.code) ? (value.code as ModelErrorCode) : "bad_response";
  return { code, message: value.message };
}

function readProgress(value: unknown): Progress | undefined {
  if (!isPlainObject(value)) return undefined;
  if (value.type === "text_delta") return typeof value.text === "string" ? { type: "text_delta", text: value.text } : undefined;
  if (value.type !== "status" || typeof value.stage !== "string" || !STAGES.has(value.stage)) return undefined;
  if (value.tokens !== undefined && !isCount(value.tokens)) return undefined;
  return { type: "status", stage: value.stage as ModelStage, ...(value.tokens !== undefined && { tokens: value.tokens }) };
}

function readGenerated(value: unknown): Generated | undefined {
  if (!isPlainObject(value)) return undefined;
  const message = readMessage(value.message);
  const usage = readUsage(value.usage);
  const { finishReason, structuredCut } = value;
  if (!message || !usage || typeof finishReason !== "string" || !FINISH_REASONS.has(finishReason)) return undefined;
  if (structuredCut !== undefined && structuredCut !== true) return undefined;
  return { message, finishReason: finishReason as FinishReason, usage, ...(structuredCut === true && { structuredCut: true }) };
}

function readMessage(value: unknown): Message | undefined {
  if (!isPlainObject(value) || value.role !== "assistant" || typeof value.content !== "string") return undefined;
  if (value.toolCalls === undefined) return { role: "assistant", content: value.content };
  if (!Array.isArray(value.toolCalls)) return undefined;
  const toolCalls: ToolCall[] = [];
  for (const call of value.toolCalls) {
    if (!isPlainObject(call) || typeof call.id !== "string" || typeof call.name !== "string" || !isPlainObject(call.args)) return undefined;
    toolCalls.push({ id: call.id, name: call.name, args: call.args });
  }
  return { role: "assistant", content: value.content, ...(toolCalls.length > 0 && { toolCalls }) };
}

function readUsage(value: unknown): Usage | undefined {
  if (!isPlainObject(value)) return undefined;
  const usage: Usage = {};
  for (const key of ["inputTokens", "outputTokens", "cachedInputTokens"] as const) {
    const n = value[key];
    if (n === undefined) continue;
    if (!isCount(n)) return undefined;
    usage[key] = n;
  }
  return usage;
}

function isCount(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

function isId(value: unknown): value is number {
  return isCount(value) && value > 0;
}
