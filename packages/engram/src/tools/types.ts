/**
 * Tools as the model sees them: a name, a description, a zod input schema and a function whose
 * result is text for the model. Bad input becomes an error result, never an exception.
 * @module
 */
import * as z from "zod/mini";
import { parseParams } from "../zod.js";

/** A binary part of a tool result (an image an MCP tool returned, …). */
export interface ToolAttachment {
  type: "image" | "audio";
  mimeType: string;
  /** Base64. */
  data: string;
}

/** What a tool returns to the model. */
export interface ToolResult {
  content: string;
  /** True when the call failed; the model sees the content as an error message. */
  isError?: boolean;
  /** Binary parts (images, audio), described in `content` for the model and passed on in the
   * agent's `tool_end` event. Default: none. */
  attachments?: ToolAttachment[];
}

/** Per-call information a tool may use. */
export interface ToolContext {
  toolCallId?: string;
  signal?: AbortSignal;
  /** The agent run calling the tool, when there is one. */
  run?: RunContext;
}

/** What middleware and tools know about the current agent run. */
export interface RunContext {
  threadId: string;
  userId?: string;
  signal?: AbortSignal;
  /** Depth of this agent in a chain of `task` subagents (0 = the top agent). */
  depth: number;
  /** Reports a warning event (e.g. a memory file that could not be read). */
  warn(message: string): void;
}

/** A tool the agent can call. `I` is the validated input type. */
export interface Tool<I = unknown> {
  name: string;
  description: string;
  /** Validates the model's arguments before `run`: a zod 4 schema, classic (`zod`) or mini
   * (`zod/mini`). */
  schema: z.core.$ZodType<I>;
  /** The JSON Schema of the arguments as the model is given it, as is (an MCP server's schema).
   * Default: derived from `schema`. */
  jsonSchema?: Record<string, unknown>;
  /**
   * Whether running the call twice has the effect of running it once (reads; a write that
   * carries the version it read). A durable run whose process died while the call ran runs an
   * idempotent call again; any other is answered as interrupted — it may or may not have taken
   * effect — and the model decides. Default: false.
   */
  idempotent?: boolean;
  run(input: I, context: ToolContext): Promise<ToolResult>;
}

/** Validates raw model arguments against the tool's schema, then runs it. */
export async function invokeTool<I>(tool: Tool<I>, args: unknown, context: ToolContext = {}): Promise<ToolResult> {
  const parsed = z.safeParse(tool.schema, args ?? {}, parseParams());
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "input"}: ${i.message}`).join("; ");
    return { content: `Error: invalid arguments for ${tool.name}: ${issues}`, isError: true };
  }
  try {
    return await tool.run(parsed.data, context);
  } catch (e) {
    return { content: `Error: ${tool.name} failed: ${e instanceof Error ? e.message : String(e)}`, isError: true };
  }
}
