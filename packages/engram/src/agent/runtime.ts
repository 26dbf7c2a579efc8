/**
 * What one agent level runs with: the top agent, or a `task` subagent derived from its parent.
 * Shared services (core, checkpointer, long-term memory, memory caches) are built once per
 * `createDeepAgent`; everything per run lives in a {@link RunScope}.
 * @module
 */
import type { Backend } from "../backends/protocol.js";
import type { Core } from "../core/types.js";
import type { LongTermMemory } from "../memory/longterm/longterm.js";
import type { MemoryCacheEntry } from "../memory/sources/load.js";
import type { Decision } from "../middleware/hitl.js";
import type { AgentState } from "../middleware/types.js";
import type { ChatModel, Message, Usage } from "../models/types.js";
import type { Tool } from "../tools/types.js";
import type { Checkpointer } from "./checkpointer.js";
import type { LongTermMemoryAgentOptions, ResolvedOptions } from "./options.js";
import type { ConcurrencyLimit, ModelCallBudget } from "./run-limits.js";
import type { ThreadTurns } from "./turns.js";
import type { EventSink, Interrupt } from "./types.js";

/** Built once per agent, shared by every run and every subagent level. */
export interface AgentServices {
  core: Promise<Core>;
  checkpointer: Checkpointer;
  longTerm: LongTermMemory | undefined;
  longTermOptions: LongTermMemoryAgentOptions | undefined;
  /** Tools of the MCP servers, listed for one run (connects on first use); none without servers. */
  mcpTools(): Promise<Tool<never>[]>;
  /** Which thread each StateBackend a `backend` factory returned belongs to. */
  backendOwners: WeakMap<object, string>;
  /** Runs of one thread take turns (see {@link ThreadTurns}). */
  turns: ThreadTurns;
  /** Memory text by path and version for a thread, so an unchanged file is not read again. */
  memoryCache(threadId: string): Map<string, MemoryCacheEntry>;
}

/** One agent level. */
export interface AgentLevel {
  /** The agent's name in traces and events: the subagent's name, or the top agent's. */
  name: string;
  model: ChatModel;
  /** This level's options (a subagent's are derived from its parent's). */
  options: ResolvedOptions;
  /** 0 for the top agent. */
  depth: number;
  services: AgentServices;
  /** Whether this level captures conversations into long-term memory (the top agent only). */
  captureLongTerm: boolean;
  /** Whether this level sees the long-term memory block. */
  injectLongTerm: boolean;
}

/** Everything one run of one level needs besides its state. */
export interface RunScope {
  level: AgentLevel;
  threadId: string;
  userId?: string;
  signal?: AbortSignal;
  backend: Backend;
  core: Core;
  /** Events of the whole run (a subagent's are tagged with its path on the way). */
  events: EventSink;
  /** Token usage of this level's model calls and, once they end, its subagents'. */
  usage: Usage;
  /** Shared by the whole run, subagents included. */
  run: RunShared;
  /** Tools listed for this run besides the options' (MCP servers'), shared by every level. */
  runTools: Tool<never>[];
  /** The chain of `task` calls to this level (`""` at the top). */
  path: string;
  /** `task` calls of the current tool phase whose subagent stopped for review. */
  suspended: Map<string, Suspension>;
  /** `task` calls being resumed: the saved subagent and the decisions meant for it. */
  resuming: Map<string, { suspension: Suspension; decisions: Record<string, Decision> }>;
}

/** Where a level's run stands: its state, and the interrupt it is waiting on (if any). */
export interface LevelState extends AgentState {
  interrupt?: Interrupt;
}

/** One budget, one concurrency limit and one usage total per `invoke`/`stream`, shared by
 * every nested subagent. */
export interface RunShared {
  /** `maxModelCalls` for the whole run: a level reserves each model call before making it. */
  budget: ModelCallBudget;
  /** `maxParallelToolCalls` for the whole run: every model call and tool call runs in a slot;
   * a `task` call gives its slot up while its subagent runs. */
  limit: ConcurrencyLimit;
  usage: Usage;
}

/** A subagent waiting for human review, saved inside its parent's state. */
export interface Suspension {
  name: string;
  depth: number;
  path: string;
  /** The subagent's state (JSON): messages, data, the interrupt it waits on. */
  state: { messages: Message[]; data: Record<string, unknown>; interrupt?: Interrupt };
}

/** Whose memory a run reads and writes. */
export function memoryIdentity(services: AgentServices, ctx: { threadId: string; userId?: string }) {
  const o = services.longTermOptions;
  return {
    threadId: ctx.threadId,
    userId: ctx.userId ?? o?.defaultUserId ?? "default",
    ...(o?.agentName !== undefined && { agentName: o.agentName }),
  };
}
