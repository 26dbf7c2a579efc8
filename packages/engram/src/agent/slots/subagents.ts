/**
 * Slot 4 for an agent level: the `task` tool, whose subagents run as child levels of this
 * agent on the same backend with a fresh context. A subagent inherits the parent's review
 * policy (its definition can only make it stricter); when it stops for review, its state is
 * handed to the parent (`scope.suspended`) and the parent's whole run pauses; on resume the
 * same `task` call runs again and continues inside the saved subagent.
 * @module
 */
import { stricterPolicy } from "../../middleware/hitl.js";
import { type SubagentDefinition, TASK_TOOL_NAME, subagentsMiddleware } from "../../middleware/subagents.js";
import type { HookContext, Middleware } from "../../middleware/types.js";
import { resolveModel } from "../../models/resolve.js";
import type { RunContext } from "../../tools/types.js";
import type { AgentLevel, LevelState, RunScope } from "../runtime.js";
import { ModelError } from "../../errors.js";
import { addUsage } from "../usage.js";
import type { AgentEvent, AgentInput, AgentOutput, EventSink, StopReason } from "../types.js";

/** Runs a child level (provided by the loop, which this module must not import). */
export type RunChild = (scope: RunScope, input: AgentInput, state: LevelState) => Promise<AgentOutput>;

/** The child level a `task` call starts. */
export function childLevel(parent: AgentLevel, definition: SubagentDefinition | undefined, name: string): AgentLevel {
  const o = parent.options;
  return {
    name,
    model: definition?.model === undefined ? parent.model : resolveModel(definition.model),
    options: {
      ...o,
      systemPrompt: definition?.systemPrompt ?? o.systemPrompt,
      tools: definition?.tools ?? o.tools,
      interruptOn: stricterPolicy(o.interruptOn, definition?.interruptOn),
      enableMemory: o.enableMemory && o.subagentMemory,
      // A subagent answers its task in text.
      structured: undefined,
    },
    depth: parent.depth + 1,
    services: parent.services,
    // Subagent conversations are internal: they never feed long-term memory, and read it
    // only when `subagentMemory` is on.
    captureLongTerm: false,
    injectLongTerm: o.subagentMemory,
  };
}

/** Why a subagent's run that threw ended. */
function stopReasonOf(e: unknown, signal: AbortSignal | undefined): StopReason {
  if (signal?.aborted) return "cancelled";
  return e instanceof ModelError && e.code === "truncated" ? "truncated" : "error";
}

/** 1-based position of `toolCallId` among the `task` calls of the parent's thread. */
function ordinal(parent: RunContext, toolCallId: string): number {
  let n = 0;
  for (const m of (parent as HookContext).state?.messages ?? []) {
    for (const c of m.toolCalls ?? []) {
      if (c.name !== TASK_TOOL_NAME) continue;
      n++;
      if (c.id === toolCallId) return n;
    }
  }
  return n + 1;
}

export function subagentsSlot(scope: RunScope, runChild: RunChild): Middleware | undefined {
  const { level } = scope;
  const o = level.options;
  if (!o.enableSubagents) return undefined;
  return subagentsMiddleware(o.subagents, o.maxSubagentDepth, async ({ definition, name, task, parent, toolCallId }) => {
    const child = childLevel(level, definition, name);
    const resuming = scope.resuming.get(toolCallId);
    const path = resuming?.suspension.path ?? `${scope.path === "" ? "" : `${scope.path}/`}task:${name}/${ordinal(parent, toolCallId)}`;
    const state: LevelState = resuming ? structuredClone(resuming.suspension.state) : { messages: [], data: {} };
    // The subagent's events reach the run's stream tagged with its path (deeper subagents'
    // keep their own).
    const events: EventSink = {
      push: (ev) => scope.events.push("path" in ev && ev.path !== undefined ? ev : ({ ...ev, path } as AgentEvent)),
    };
    const childScope: RunScope = { ...scope, level: child, threadId: `${scope.threadId}:task`, usage: {}, path, events };
    const input: AgentInput = resuming ? { resume: resuming.decisions } : { messages: [{ role: "user", content: task }] };
    const identity = { name, depth: child.depth, path, toolCallId };
    scope.events.push({ type: "subagent_start", ...identity, task });
    let out: AgentOutput;
    try {
      // The `task` call's slot is free while its subagent runs: the subagent needs slots too.
      out = await scope.run.limit.without(() => runChild(childScope, input, state));
    } catch (e) {
      addUsage(scope.usage, childScope.usage);
      scope.events.push({ type: "subagent_end", ...identity, stopReason: stopReasonOf(e, parent.signal), usage: childScope.usage });
      throw e;
    }
    addUsage(scope.usage, childScope.usage);
    scope.events.push({ type: "subagent_end", ...identity, stopReason: out.stopReason, usage: childScope.usage });
    if (out.interrupt) {
      scope.suspended.set(toolCallId, {
        name,
        depth: child.depth,
        path,
        state: { messages: state.messages, data: state.data, ...(state.interrupt && { interrupt: state.interrupt }) },
      });
      return { content: "(waiting for human review)" };
    }
    const last = [...out.messages].reverse().find((m) => m.role === "assistant");
    const note = out.stopReason === "done" ? "" : `\n(the subagent stopped early: ${out.stopReason})`;
    return { content: `${last?.content || "(the subagent returned no answer)"}${note}` };
  });
}
