/**
 * Shared rules every model applies to what a provider returns: assistant messages always have
 * `role: "assistant"` and carry `toolCalls` only when there are some; tool-call arguments are
 * always an object, repaired when the fix is obvious, else kept raw with the reason.
 * @module
 */
import { jsonrepair } from "jsonrepair";
import type { Message, ToolCall } from "./types.js";

/** Key under which unreadable arguments are kept (see {@link ToolCall.argsError}). */
export const RAW_ARGS_KEY = "__raw";

/** Longest excerpt of unreadable arguments quoted in an {@link ToolCall.argsError}. */
const ARGS_EXCERPT_CHARS = 200;

/** Arguments as an object, with what was wrong when they could not be read. */
export interface ParsedToolArgs {
  args: Record<string, unknown>;
  /** Set when the arguments could not be read; see {@link ToolCall.argsError}. */
  argsError?: string;
}

/** Options of {@link parseToolArguments}. */
export interface ParseToolArgsOptions {
  /**
   * The reply was cut off by the output-token limit: unfinished JSON is then reported as cut
   * off instead of being "repaired" into arguments the model never finished. Default: `false`.
   */
  truncated?: boolean;
}

/**
 * Turns provider tool-call arguments into an object, never throwing: an object is kept as is;
 * a JSON object text is parsed; an empty string, `null` or `undefined` gives `{}`. Malformed
 * JSON is repaired with `jsonrepair` when that yields an object (a missing brace, single
 * quotes, a trailing comma, unquoted keys) without inventing values (a repair that fills a
 * missing value with `null` is refused) — unless the reply was `truncated`. Anything else
 * gives `{ __raw: "<text>" }` and an `argsError` that quotes the parse error and the text.
 */
export function parseToolArguments(raw: unknown, options: ParseToolArgsOptions = {}): ParsedToolArgs {
  if (raw === undefined || raw === null) return { args: {} };
  if (isPlainObject(raw)) return { args: raw };
  if (typeof raw !== "string") {
    const text = safeStringify(raw);
    return { args: { [RAW_ARGS_KEY]: text }, argsError: `The arguments must be a JSON object, got ${describe(raw)}: ${excerpt(text)}` };
  }
  if (raw.trim() === "") return { args: {} };
  let error: string;
  try {
    const parsed: unknown = JSON.parse(raw);
    if (isPlainObject(parsed)) return { args: parsed };
    return { args: { [RAW_ARGS_KEY]: raw }, argsError: `The arguments must be a JSON object, got ${describe(parsed)}: ${excerpt(raw)}` };
  } catch (e) {
    error = e instanceof Error ? e.message : String(e);
  }
  if (options.truncated) {
    return {
      args: { [RAW_ARGS_KEY]: raw },
      argsError: `The arguments were cut off by the output-token limit before the JSON was complete (${error}): ${excerpt(raw)}`,
    };
  }
  try {
    const repaired: unknown = JSON.parse(jsonrepair(raw));
    // A `null` the text never said is a value jsonrepair invented for a missing one: not obvious.
    if (isPlainObject(repaired) && !(hasNull(repaired) && !/\bnull\b/.test(raw))) return { args: repaired };
  } catch {
    // Not repairable: report the original parse error.
  }
  return { args: { [RAW_ARGS_KEY]: raw }, argsError: `The arguments are not valid JSON (${error}): ${excerpt(raw)}` };
}

/** {@link parseToolArguments} without the error: just the arguments object. */
export function parseToolArgs(raw: unknown, options: ParseToolArgsOptions = {}): Record<string, unknown> {
  return parseToolArguments(raw, options).args;
}

/** A {@link ToolCall} from provider fields; `argsError` is present only when the arguments are unreadable. */
export function toolCall(id: string, name: string, rawArgs: unknown, options: ParseToolArgsOptions = {}): ToolCall {
  const { args, argsError } = parseToolArguments(rawArgs, options);
  return argsError === undefined ? { id, name, args } : { id, name, args, argsError };
}

/** Builds an assistant message, leaving `toolCalls` out when there are none. */
export function assistantMessage(content: string, toolCalls: readonly ToolCall[] = []): Message {
  return toolCalls.length > 0 ? { role: "assistant", content, toolCalls: [...toolCalls] } : { role: "assistant", content };
}

/** True for a non-null, non-array object. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function hasNull(value: unknown): boolean {
  if (value === null) return true;
  if (typeof value !== "object") return false;
  return Object.values(value as Record<string, unknown>).some(hasNull);
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return `a ${typeof value}`;
}

function excerpt(text: string): string {
  return text.length > ARGS_EXCERPT_CHARS ? `${text.slice(0, ARGS_EXCERPT_CHARS)}…` : text;
}

function safeStringify(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
