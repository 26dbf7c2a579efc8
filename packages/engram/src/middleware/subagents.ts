/**
 * Slot 4: the `task` tool. A subagent gets a fresh context (only the task description), shares
 * the backend, and returns its final answer. Depth is bounded per call chain: each child knows
 * its own depth, so parallel siblings never count against each other. How a subagent runs is
 * the agent's business ({@link SpawnSubagent}); this module is the tool the model sees.
 * @module
 */
import * as z from "zod/mini";
import type { LanguageModelLike } from "../models/ai-sdk.js";
import type { ChatModel } from "../models/types.js";
import type { RunContext, Tool, ToolResult } from "../tools/types.js";
import type { InterruptConfig } from "./hitl.js";

/** The name of the tool that starts a subagent. */
export const TASK_TOOL_NAME = "task";
import type { Middleware } from "./types.js";

/** A named subagent the `task` tool can start. */
export interface SubagentDefinition {
  /** Unique among the subagents; not `"general-purpose"`. */
  name: string;
  /** Shown to the model in the `task` tool's description. */
  description: string;
  systemPrompt: string;
  /** Extra tools for this subagent (the filesystem tools are always there). Default: the
   * parent's extra tools. */
  tools?: Tool<never>[];
  /** A {@link ChatModel}, an AI SDK language model or a `"provider:model"` string (resolved
   * when the agent is created). Default: the parent's model. */
  model?: ChatModel | LanguageModelLike | string;
  /** Human review for this subagent, merged with the parent's `interruptOn`: it can add tools
   * or narrow the decisions allowed, never remove a review the parent requires.
   * Default: the parent's policy. */
  interruptOn?: Record<string, InterruptConfig>;
}

/** One `task` call to run. */
export interface SubagentRequest {
  /** The named definition, or `undefined` for the general-purpose subagent. */
  definition: SubagentDefinition | undefined;
  /** The subagent's name (`"general-purpose"` or the definition's). */
  name: string;
  /** The task description, the child's only input. */
  task: string;
  /** The run calling `task`. */
  parent: RunContext;
  /** The id of the `task` tool call. */
  toolCallId: string;
}

/** Starts (or resumes) a subagent run and returns what the `task` call answers. */
export type SpawnSubagent = (request: SubagentRequest) => Promise<ToolResult>;

export const GENERAL_PURPOSE = "general-purpose";

export function subagentsMiddleware(definitions: SubagentDefinition[], maxDepth: number, spawn: SpawnSubagent): Middleware {
  const byName = new Map(definitions.map((d) => [d.name, d]));
  const kinds = [
    `- ${GENERAL_PURPOSE}: any multi-step task, with the same tools as you`,
    ...definitions.map((d) => `- ${d.name}: ${d.description}`),
  ];
  const names: [string, ...string[]] = [GENERAL_PURPOSE, ...byName.keys()];
  const schema = z.object({
    description: z
      .string()
      .check(z.minLength(1), z.describe("The complete task, with every detail the subagent needs: it sees nothing else.")),
    // An enum, so that the JSON Schema (and a grammar built from it) names the only choices.
    subagent_type: z._default(z.enum(names), GENERAL_PURPOSE).check(z.describe("Which subagent.")),
  });
  const task: Tool<z.output<typeof schema>> = {
    name: TASK_TOOL_NAME,
    description: `Delegate a self-contained task to a subagent with a fresh context; it returns its final answer.\nSubagents:\n${kinds.join("\n")}`,
    schema,
    async run({ description, subagent_type }, context) {
      const parent = context.run;
      if (!parent) return { content: "Error: task needs an agent run", isError: true };
      if (parent.depth + 1 > maxDepth) {
        return { content: `Error: subagent depth limit (${maxDepth}) reached; do this task yourself.`, isError: true };
      }
      // The schema already refused names that are not configured.
      const definition = byName.get(subagent_type);
      return spawn({ definition, name: subagent_type, task: description, parent, toolCallId: context.toolCallId ?? "" });
    },
  };
  return { name: "subagents", tools: [task as unknown as Tool<never>] };
}
