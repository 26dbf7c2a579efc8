/**
 * Slot 6: repairs malformed tool calls from the model (fenced or string JSON arguments, empty or
 * duplicate ids, nameless calls) and answers dangling calls left by an interrupted run.
 * @module
 */
import type { Middleware } from "./types.js";
import type { Message, ToolCall } from "../models/types.js";

function parseArgs(raw: unknown): Record<string, unknown> {
  if (raw && typeof raw === "object" && !Array.isArray(raw)) {
    const rec = raw as Record<string, unknown>;
    if (typeof rec.__raw === "string" && Object.keys(rec).length === 1) return parseArgs(rec.__raw);
    return rec;
  }
  if (typeof raw !== "string") return {};
  const text = raw
    .trim()
    .replace(/^```(?:json)?\s*/i, "")
    .replace(/\s*```$/, "");
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : { value: parsed };
  } catch {
    return { __raw: raw };
  }
}

/** Repaired calls: names required, ids unique and non-empty, arguments an object. */
export function patchToolCalls(calls: ToolCall[], used: Set<string>): ToolCall[] {
  const out: ToolCall[] = [];
  for (const c of calls) {
    if (!c?.name) continue;
    let id = c.id;
    if (!id || used.has(id)) {
      let n = used.size;
      do id = `patched_${n++}`;
      while (used.has(id));
    }
    used.add(id);
    // The model layer already tried to repair arguments it flagged; keep its verdict.
    out.push(c.argsError ? { id, name: c.name, args: c.args, argsError: c.argsError } : { id, name: c.name, args: parseArgs(c.args) });
  }
  return out;
}

/** Tool results for calls that never got one (an aborted or failed run), so the history the
 * model sees is well formed. */
export function answerDangling(messages: Message[]): Message[] {
  const answered = new Set(messages.filter((m) => m.role === "tool").map((m) => m.toolCallId));
  const out: Message[] = [];
  messages.forEach((m, i) => {
    out.push(m);
    if (m.role !== "assistant" || !m.toolCalls) return;
    const last = i === messages.length - 1;
    for (const c of m.toolCalls) {
      // The newest assistant message's calls are about to run; only older ones can dangle.
      if (!last && !answered.has(c.id)) {
        out.push({ role: "tool", toolCallId: c.id, content: `Tool call '${c.name}' was cancelled before it ran.` });
      }
    }
  });
  return out;
}

export function patchToolCallsMiddleware(): Middleware {
  return {
    name: "patch_tool_calls",
    beforeModel(request) {
      return { ...request, messages: answerDangling(request.messages) };
    },
    afterModel(response, ctx) {
      const calls = response.message.toolCalls;
      if (!calls || calls.length === 0) return;
      const used = new Set<string>();
      for (const m of ctx.state.messages) for (const c of m.toolCalls ?? []) used.add(c.id);
      const patched = patchToolCalls(calls, used);
      const message = { ...response.message };
      if (patched.length > 0) message.toolCalls = patched;
      else delete message.toolCalls;
      return { ...response, message };
    },
  };
}
