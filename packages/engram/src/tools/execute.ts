/**
 * The `execute` tool: a shell command over the backend's files, offered only when the backend
 * has an `execute` method (see {@link Backend.execute}).
 * @module
 */
import * as z from "zod/mini";
import { capability } from "../backends/capabilities.js";
import type { Backend, ExecuteResult } from "../backends/protocol.js";
import { errorResult } from "./format.js";
import type { Tool, ToolResult } from "./types.js";

export const EXECUTE_TOOL_NAME = "execute";

const schema = z.object({
  command: z.string().check(z.minLength(1), z.describe("The shell command (run with /bin/sh -c in /).")),
  timeout: z.optional(
    z.coerce.number().check(z.int(), z.gt(0), z.lte(3600), z.describe("Seconds before the command is killed. Default 120.")),
  ),
});

/** The tool's answer: the output, then one line saying how the command ended. */
export function describeOutcome(r: ExecuteResult): ToolResult {
  const ending = r.timedOut
    ? "[Command killed: it ran past its timeout]"
    : r.cancelled
      ? "[Command killed: the run was cancelled]"
      : r.exitCode === 0
        ? "[Command succeeded with exit code 0]"
        : r.exitCode === null
          ? "[Command ended by a signal]"
          : `[Command failed with exit code ${r.exitCode}]`;
  const cut = r.truncated ? "\n[Output was cut to its head and tail]" : "";
  return {
    content: `${r.output}${r.output.endsWith("\n") || r.output === "" ? "" : "\n"}${ending}${cut}`,
    isError: ending !== "[Command succeeded with exit code 0]",
  };
}

/** The `execute` tool over `backend`, or `undefined` when the backend runs no commands. */
export function createExecuteTool(backend: Backend): Tool<never> | undefined {
  if (typeof backend.execute !== "function") return undefined;
  const run = backend.execute.bind(backend);
  const tool: Tool<z.output<typeof schema>> = {
    name: EXECUTE_TOOL_NAME,
    // A cut output says so itself ("[Output was cut to its head and tail]").
    description:
      capability(backend, "commandsConfined")?.() === true
        ? "Run a shell command in the project (sandboxed: it can write only inside the project, has no network, and is killed at its timeout)."
        : "Run a shell command in the project (it is killed at its timeout).",
    schema,
    async run({ command, timeout }, context) {
      const r = await run(command, {
        ...(timeout !== undefined ? { timeoutMs: timeout * 1000 } : {}),
        ...(context.signal ? { signal: context.signal } : {}),
      });
      return r.error ? errorResult(r.error) : describeOutcome(r);
    },
  };
  return tool as Tool<never>;
}
