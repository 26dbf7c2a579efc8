/**
 * The agent's public types: input, output, events, interrupts and the per-run context.
 * @module
 */
import type { Decision } from "../middleware/hitl.js";
import type { Message, ToolCall, Usage } from "../models/types.js";

export type { RunContext } from "../tools/types.js";
export type { Decision } from "../middleware/hitl.js";

/** What `invoke` and `stream` take: new messages for the thread, or a resume of an interrupt. */
export type AgentInput = { messages: Message[] } | ResumeInput;

/** Continues an interrupted run (see {@link resume}). */
export interface ResumeInput {
  resume: Record<string, Decision>;
}

/** Builds the input that continues an interrupted run: tool call id → decision. */
export function resume(decisions: Record<string, Decision>): ResumeInput {
  return { resume: decisions };
}

/** A run stopped for human review of these tool calls. */
export interface Interrupt {
  toolCalls: { id: string; name: string; args: Record<string, unknown>; allow: Decision["type"][] }[];
}

/** The result of `invoke`. */
export interface AgentOutput {
  /** The whole thread, in order. */
  messages: Message[];
  /** Present when the run stopped for human review. */
  interrupt?: Interrupt;
  usage?: Usage;
}

/** Per-call options of `invoke` and `stream`. */
export interface RunOptions {
  /** The conversation; state is kept per thread when a checkpointer is set. Default: a new id. */
  threadId?: string;
  userId?: string;
  signal?: AbortSignal;
}

/** Events `stream` yields, in order. */
export type AgentEvent =
  | { type: "model_delta"; text: string }
  | { type: "tool_start"; call: ToolCall }
  | { type: "tool_end"; call: ToolCall; result: string; isError: boolean }
  | { type: "interrupt"; interrupt: Interrupt }
  | { type: "warning"; message: string }
  | { type: "final"; output: AgentOutput };
