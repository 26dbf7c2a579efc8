/**
 * Middleware: hooks around the agent loop. The stack is assembled in the fixed slot order of
 * DESIGN §2; `before*`/`after*` hooks run in slot order, `wrap*` hooks nest with slot 1 outermost.
 * @module
 */
import type { Message, ModelRequest, Usage } from "../models/types.js";
import type { Tool, ToolResult } from "../tools/types.js";
import type { ToolCall } from "../models/types.js";
import type { RunContext } from "./types.js";

/** What a model call produced. */
export interface ModelResponse {
  message: Message;
  usage?: Usage;
}

/** The thread's state during a run; middleware may read and change it. */
export interface AgentState {
  messages: Message[];
  /** Middleware-owned data that is checkpointed with the thread (JSON-serialisable). */
  data: Record<string, unknown>;
}

/** Everything a hook receives besides its subject. */
export interface HookContext extends RunContext {
  state: AgentState;
  /** Stops the run after this model call with an interrupt for these calls (used by HITL). */
  interrupt(calls: { call: ToolCall; allow: ("approve" | "edit" | "reject")[] }[]): void;
}

/** A middleware: any subset of the hooks, plus tools it contributes. */
export interface Middleware {
  /** Unique within a stack. */
  name: string;
  tools?: Tool<never>[];
  beforeAgent?(ctx: HookContext): void | Promise<void>;
  /** May return a replacement request. */
  beforeModel?(request: ModelRequest, ctx: HookContext): ModelRequest | undefined | Promise<ModelRequest | undefined>;
  wrapModelCall?(request: ModelRequest, next: (request: ModelRequest) => Promise<ModelResponse>, ctx: HookContext): Promise<ModelResponse>;
  /** May return a replacement response. */
  afterModel?(response: ModelResponse, ctx: HookContext): ModelResponse | undefined | Promise<ModelResponse | undefined>;
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
