/**
 * Shared rules every model applies to what a provider returns: assistant messages always have
 * `role: "assistant"` and carry `toolCalls` only when there are some; tool-call arguments are
 * always an object.
 * @module
 */
import type { Message, ToolCall } from "./types.js";

/** Key under which {@link parseToolArgs} keeps arguments it could not parse. */
export const RAW_ARGS_KEY = "__raw";

/**
 * Turns provider tool-call arguments into an object, never throwing:
 * an object is kept as is; a JSON string is parsed; an empty string, `null` or `undefined`
 * gives `{}`; anything else (malformed JSON, JSON that is not an object, other types) gives
 * `{ __raw: "<text>" }` so a repair step can fix it later.
 */
export function parseToolArgs(raw: unknown): Record<string, unknown> {
  if (raw === undefined || raw === null) return {};
  if (isPlainObject(raw)) return raw;
  if (typeof raw !== "string") return { [RAW_ARGS_KEY]: safeStringify(raw) };
  if (raw.trim() === "") return {};
  try {
    const parsed: unknown = JSON.parse(raw);
    if (isPlainObject(parsed)) return parsed;
  } catch {
    // Fall through: keep the text for repair.
  }
  return { [RAW_ARGS_KEY]: raw };
}

/** Builds an assistant message, leaving `toolCalls` out when there are none. */
export function assistantMessage(content: string, toolCalls: readonly ToolCall[] = []): Message {
  return toolCalls.length > 0 ? { role: "assistant", content, toolCalls: [...toolCalls] } : { role: "assistant", content };
}

/** True for a non-null, non-array object. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function safeStringify(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
