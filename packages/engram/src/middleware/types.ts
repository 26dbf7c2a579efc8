/**
 * The middleware contract: hooks around the agent loop. The agent assembles its stack in the
 * fixed slot order of DESIGN §2; `before*`/`after*` hooks run in slot order, `wrap*` hooks nest
 * with slot 1 outermost. This module depends on models and tools only, so the agent can build
 * on middleware without an import cycle.
 * @module
 */
import type { Message, ModelRequest, ToolCall, Usage } from "../models/types.js";
import type { RunContext, ToolResult, Tool } from "../tools/types.js";

/** What a model call produced. */
export interface ModelResponse {
  message: Message;
  usage?: Usage;
  /** Why the model stopped (`"length"`: cut off at the output limit). Absent when the model
   * did not say. */
  finishReason?: string;
}

/** The thread's state during a run; middleware may read and change it. */
export interface AgentState {
  messages: Message[];
  /** Middleware-owned data that is checkpointed with the thread (JSON-serialisable). */
  data: Record<string, unknown>;
}

/** A decision type a human reviewer can take on a pending tool call. */
export type DecisionType = "approve" | "edit" | "reject";

/** Everything a hook receives besides its subject. */
export interface HookContext extends RunContext {
  state: AgentState;
  /** Stops the run after this model call with an interrupt for these calls (used by HITL). */
  interrupt(calls: { call: ToolCall; allow: DecisionType[] }[]): void;
}

/** A middleware: any subset of the hooks, plus tools it contributes. */
export interface Middleware {
  /** Unique within a stack. */
  name: string;
  tools?: Tool<never>[];
  beforeAgent?(ctx: HookContext): void | Promise<void>;
  /** May return a replacement request. */
  beforeModel?(request: ModelRequest, ctx: HookContext): ModelRequest | void | Promise<ModelRequest | void>;
  wrapModelCall?(request: ModelRequest, next: (request: ModelRequest) => Promise<ModelResponse>, ctx: HookContext): Promise<ModelResponse>;
  /** May return a replacement response. */
  afterModel?(response: ModelResponse, ctx: HookContext): ModelResponse | void | Promise<ModelResponse | void>;
  wrapToolCall?(call: ToolCall, next: (call: ToolCall) => Promise<ToolResult>, ctx: HookContext): Promise<ToolResult>;
  afterAgent?(ctx: HookContext): void | Promise<void>;
}

/** Nests `wrap` hooks around `inner`, the first middleware outermost. */
export function chain<A, R>(
  stack: readonly Middleware[],
  pick: (m: Middleware) => ((arg: A, next: (arg: A) => Promise<R>, ctx: HookContext) => Promise<R>) | undefined,
  inner: (arg: A) => Promise<R>,
  ctx: HookContext,
): (arg: A) => Promise<R> {
  let next = inner;
  for (let i = stack.length - 1; i >= 0; i--) {
    const m = stack[i] as Middleware;
    const hook = pick(m);
    if (!hook) continue;
    const after = next;
    next = (arg) => hook.call(m, arg, after, ctx);
  }
  return next;
}
