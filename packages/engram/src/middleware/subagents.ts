/**
 * Slot 4: the `task` tool. A subagent gets a fresh context (only the task description), shares
 * the backend, and returns its final answer. Depth is bounded per call chain: each child knows
 * its own depth, so parallel siblings never count against each other.
 * @module
 */
import { z } from "zod";
import type { Middleware } from "../agent/middleware.js";
import type { SubagentDefinition } from "../agent/options.js";
import type { AgentOutput, RunContext } from "../agent/types.js";
import type { Tool } from "../tools/types.js";

/** Starts a subagent run at the given depth. */
export type SpawnSubagent = (definition: SubagentDefinition | undefined, task: string, parent: RunContext) => Promise<AgentOutput>;

export const GENERAL_PURPOSE = "general-purpose";

export function subagentsMiddleware(definitions: SubagentDefinition[], maxDepth: number, spawn: SpawnSubagent): Middleware {
  const byName = new Map(definitions.map((d) => [d.name, d]));
  const kinds = [
    `- ${GENERAL_PURPOSE}: any multi-step task, with the same tools as you`,
    ...definitions.map((d) => `- ${d.name}: ${d.description}`),
  ];
  const schema = z.object({
    description: z.string().min(1).describe("The complete task, with every detail the subagent needs: it sees nothing else."),
    subagent_type: z
      .string()
      .default(GENERAL_PURPOSE)
      .describe(`Which subagent: ${[GENERAL_PURPOSE, ...byName.keys()].join(", ")}.`),
  });
  const task: Tool<z.output<typeof schema>> = {
    name: "task",
    description: `Delegate a self-contained task to a subagent with a fresh context; it returns its final answer.\nSubagents:\n${kinds.join("\n")}`,
    schema,
    async run({ description, subagent_type }, context) {
      const parent = context.run;
      if (!parent) return { content: "Error: task needs an agent run", isError: true };
      if (parent.depth + 1 > maxDepth) {
        return { content: `Error: subagent depth limit (${maxDepth}) reached; do this task yourself.`, isError: true };
      }
      const definition = byName.get(subagent_type);
      if (!definition && subagent_type !== GENERAL_PURPOSE) {
        return {
          content: `Error: unknown subagent '${subagent_type}'. Available: ${[GENERAL_PURPOSE, ...byName.keys()].join(", ")}`,
          isError: true,
        };
      }
      const out = await spawn(definition, description, parent);
      if (out.interrupt) return { content: "Error: the subagent stopped for human review, which subagents cannot ask for.", isError: true };
      const last = [...out.messages].reverse().find((m) => m.role === "assistant");
      return { content: last?.content || "(the subagent returned no answer)" };
    },
  };
  return { name: "subagents", tools: [task as unknown as Tool<never>] };
}
