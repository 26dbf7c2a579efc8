/**
 * Slot 4 for an agent level: the `task` tool, whose subagents run as child levels of this
 * agent on the same backend with a fresh context.
 * @module
 */
import { resolveModel } from "../../models/resolve.js";
import { type SubagentDefinition, subagentsMiddleware } from "../../middleware/subagents.js";
import type { Middleware } from "../../middleware/types.js";
import type { AgentLevel, RunScope } from "../runtime.js";
import type { AgentOutput } from "../types.js";

/** Runs a child level to its end on a fresh thread state (provided by the loop, which this
 * module must not import). */
export type RunChild = (child: AgentLevel, scope: RunScope, task: string) => Promise<AgentOutput>;

/** The child level a `task` call starts. */
export function childLevel(parent: AgentLevel, definition: SubagentDefinition | undefined): AgentLevel {
  const o = parent.options;
  return {
    model: definition?.model === undefined ? parent.model : resolveModel(definition.model),
    options: {
      ...o,
      systemPrompt: definition?.systemPrompt ?? o.systemPrompt,
      tools: definition?.tools ?? o.tools,
      interruptOn: {},
    },
    depth: parent.depth + 1,
    services: parent.services,
    // Subagent conversations are internal: they neither see nor feed long-term memory.
    captureLongTerm: false,
    injectLongTerm: false,
  };
}

export function subagentsSlot(scope: RunScope, runChild: RunChild): Middleware | undefined {
  const { level } = scope;
  const o = level.options;
  if (!o.enableSubagents) return undefined;
  return subagentsMiddleware(o.subagents, o.maxSubagentDepth, async ({ definition, task }) => {
    const child = childLevel(level, definition);
    const out = await runChild(child, { ...scope, level: child, threadId: `${scope.threadId}:task`, usage: {} }, task);
    if (out.interrupt) return { content: "Error: the subagent stopped for human review, which subagents cannot ask for.", isError: true };
    const last = [...out.messages].reverse().find((m) => m.role === "assistant");
    return { content: last?.content || "(the subagent returned no answer)" };
  });
}
