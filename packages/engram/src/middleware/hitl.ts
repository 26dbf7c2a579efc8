/**
 * Human in the loop (last in slot 7): the run stops before tools named in `interruptOn` run;
 * a resume applies approve / edit / reject per call.
 * @module
 */
import type { Message, ToolCall } from "../models/types.js";
import type { DecisionType, Middleware } from "./types.js";

/** How a tool is reviewed by a human before it runs: `true` allows every decision, `false`
 * means no review, `{ allow }` lists the decisions allowed (at least one). */
export type InterruptConfig = boolean | { allow: DecisionType[] };

/** A human's decision on one pending tool call. */
export type Decision = { type: "approve" } | { type: "edit"; args: Record<string, unknown> } | { type: "reject"; message?: string };

/** The decisions allowed for a tool, or `undefined` when it is not reviewed. */
export function allowedDecisions(cfg: InterruptConfig | undefined): DecisionType[] | undefined {
  if (!cfg) return undefined;
  return cfg === true ? ["approve", "edit", "reject"] : cfg.allow;
}
const allowed = allowedDecisions;

/** A subagent's review policy: the parent's, made stricter by the subagent's own entries (a
 * tool reviewed by either is reviewed; the decisions allowed are those both allow). Never
 * weaker than `parent`. */
export function stricterPolicy(
  parent: Record<string, InterruptConfig>,
  child: Record<string, InterruptConfig> | undefined,
): Record<string, InterruptConfig> {
  const out: Record<string, InterruptConfig> = { ...parent };
  for (const [tool, cfg] of Object.entries(child ?? {})) {
    const p = allowed(parent[tool]);
    const c = allowed(cfg);
    if (!c) continue;
    if (!p) out[tool] = { allow: [...c] };
    else {
      const both = p.filter((d) => c.includes(d));
      out[tool] = { allow: both.length > 0 ? both : ["reject"] };
    }
  }
  return out;
}

export function hitlMiddleware(interruptOn: Record<string, InterruptConfig>): Middleware {
  return {
    name: "human_in_the_loop",
    afterModel(response, ctx) {
      const pending = (response.message.toolCalls ?? [])
        .map((call) => ({ call, allow: allowed(interruptOn[call.name]) }))
        .filter((p): p is { call: ToolCall; allow: DecisionType[] } => p.allow !== undefined);
      if (pending.length > 0) ctx.interrupt(pending);
    },
  };
}

/** What to do with each call of an interrupted assistant message. */
export interface Resolution {
  /** The calls to run (edited arguments applied). */
  run: ToolCall[];
  /** Tool messages for rejected calls. */
  rejected: Message[];
  /** The assistant message with edited arguments, to replace the original. */
  message: Message;
}

/** Applies decisions; calls without a decision that needed one are an error message. */
export function applyDecisions(
  message: Message,
  decisions: Record<string, Decision>,
  interruptOn: Record<string, InterruptConfig>,
): Resolution | { error: string } {
  const run: ToolCall[] = [];
  const rejected: Message[] = [];
  const calls: ToolCall[] = [];
  for (const call of message.toolCalls ?? []) {
    const allow = allowed(interruptOn[call.name]);
    const d = decisions[call.id];
    if (!allow) {
      calls.push(call);
      run.push(call);
      continue;
    }
    if (!d) return { error: `no decision for tool call '${call.id}' (${call.name})` };
    if (!allow.includes(d.type)) return { error: `'${d.type}' is not allowed for ${call.name} (allowed: ${allow.join(", ")})` };
    if (d.type === "reject") {
      calls.push(call);
      rejected.push({
        role: "tool",
        toolCallId: call.id,
        content: `The user rejected this ${call.name} call${d.message ? `: ${d.message}` : "."} Do not retry it unchanged.`,
      });
    } else {
      const edited = d.type === "edit" ? { ...call, args: d.args } : call;
      calls.push(edited);
      run.push(edited);
    }
  }
  return { run, rejected, message: { ...message, toolCalls: calls } };
}
