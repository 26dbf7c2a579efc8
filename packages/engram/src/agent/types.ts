/**
 * The agent's public types: input, output, events, interrupts and the per-run context.
 * @module
 */
import type { Decision } from "../middleware/hitl.js";
import type { Message, ModelStage, ToolCall, Usage } from "../models/types.js";
import type { ToolAttachment } from "../tools/types.js";

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
  toolCalls: InterruptedCall[];
}

/** Which `task` subagent made a call. */
export interface SubagentIdentity {
  /** The subagent's name (`"general-purpose"` or a definition's). */
  name: string;
  /** Its depth: 1 for a subagent of the top agent. */
  depth: number;
  /** The chain of `task` calls leading to it, e.g. `task:researcher/1` or
   * `task:researcher/1/task:general-purpose/2` (`/n`: the parent's n-th `task` call). */
  path: string;
}

/** One tool call waiting for a decision. */
export interface InterruptedCall {
  /** The key of its decision in {@link resume}. A subagent's calls are qualified by the `task`
   * call that started it: `<taskCallId>/<callId>`. */
  id: string;
  name: string;
  args: Record<string, unknown>;
  allow: Decision["type"][];
  /** Present when a `task` subagent made the call. */
  subagent?: SubagentIdentity;
}

/** Why a run ended. `interrupted`: waiting for human review (resume it); `max_turns` /
 * `max_model_calls`: a bound was reached; `repeated_tool_failure`: the model asked again for a
 * call that had failed `maxRepeatedToolFailures` times in a row; `truncated`: the model hit its
 * output limit; `cancelled`: the signal fired; `error`: a failure (the run's promise rejects). */
export type StopReason =
  | "done"
  | "max_turns"
  | "max_model_calls"
  | "repeated_tool_failure"
  | "interrupted"
  | "truncated"
  | "cancelled"
  | "error";

/** The result of `invoke`. */
export interface AgentOutput {
  /** The whole thread, in order. */
  messages: Message[];
  /** Present when the run stopped for human review. */
  interrupt?: Interrupt;
  /** Tokens used by every model call of the run, subagents included. */
  usage?: Usage;
  /** Why the run ended. */
  stopReason: StopReason;
  /** The final answer validated against `responseFormat` (as the schema parses it), when the
   * option is set and the run ended with `stopReason: "done"`. */
  structuredResponse?: unknown;
}

/** Per-call options of `invoke` and `stream`. */
export interface RunOptions {
  /**
   * The conversation; state is kept per thread when a checkpointer is set. Default: a new id.
   * Runs of one thread on one agent take turns: a run started while another of its thread is
   * under way waits until that one has saved, then continues from it (nothing either saved is
   * lost). A run must not wait on a run of its own thread (e.g. from a tool): that never ends.
   */
  threadId?: string;
  userId?: string;
  /** Cancels the run; a run still waiting for its turn stops with the signal's reason and
   * leaves the thread as it was. */
  signal?: AbortSignal;
}

/**
 * Events `stream` yields, in order. A `task` subagent's run is framed by `subagent_start` and
 * `subagent_end`, and its own `model_delta`, `model_status`, `tool_start`, `tool_end` and `warning` events carry
 * its `path` (see {@link SubagentIdentity.path}); the top agent's carry none. Parallel
 * subagents' events interleave: tell them apart by `path`.
 */
export type AgentEvent =
  | { type: "model_delta"; text: string; path?: string }
  /** What the model is busy with before its text (see {@link ModelStage}; local models report
   * it): for a status line. */
  | { type: "model_status"; stage: ModelStage; tokens?: number; path?: string }
  | { type: "tool_start"; call: ToolCall; path?: string }
  | { type: "tool_end"; call: ToolCall; result: string; isError: boolean; attachments?: ToolAttachment[]; path?: string }
  | { type: "interrupt"; interrupt: Interrupt }
  | { type: "warning"; message: string; path?: string }
  | ({ type: "subagent_start"; task: string; toolCallId: string } & SubagentIdentity)
  | ({
      type: "subagent_end";
      toolCallId: string;
      stopReason: StopReason;
      /** Tokens of the subagent's model calls, its own subagents' included. */
      usage: Usage;
    } & SubagentIdentity)
  | { type: "final"; output: AgentOutput; stopReason: StopReason };

/** Where a run's events go (the top level's channel, or a subagent's tagging view of it). */
export interface EventSink {
  push(event: AgentEvent): void;
}
