/**
 * `createDeepAgent(model, options)`: validates the options, builds the services every run
 * shares (core, checkpointer, long-term memory) and runs threads through {@link runThread}.
 * The stack is assembled per run in `stack.ts`, one module per slot; the loop is `loop.ts`.
 * @module
 */
import { loadCore } from "../core/loader.js";
import type { Core } from "../core/types.js";
import { type McpServerConfig, McpToolset } from "../mcp/toolset.js";
import { type CloseOptions, LongTermMemory } from "../memory/longterm/longterm.js";
import { StoreMemoryStorage } from "../memory/longterm/store-storage.js";
import type { MemoryStorage } from "../memory/longterm/storage.js";
import type { MemoryHistory } from "../memory/history/history.js";
import { recordFactChanges } from "../memory/history/facts.js";
import { InMemoryStore } from "../stores/memory.js";
import type { MemoryCacheEntry } from "../memory/sources/load.js";
import type { LanguageModelLike } from "../models/ai-sdk.js";
import { resolveModel } from "../models/resolve.js";
import type { ChatModel } from "../models/types.js";
import type { Tool } from "../tools/types.js";
import { InMemoryCheckpointer } from "./checkpointer.js";
import { type DeepAgentOptions, resolveOptions } from "./options.js";
import { checkBackendOption } from "./thread-backend.js";
import type { AgentLevel, AgentServices } from "./runtime.js";
import { runThread } from "./thread.js";
import { ThreadTurns } from "./turns.js";
import type { AgentEvent, AgentInput, AgentOutput, RunOptions } from "./types.js";

/** An agent: run it with `invoke` or `stream`; `close` when done. */
export interface DeepAgent {
  invoke(input: AgentInput, options?: RunOptions): Promise<AgentOutput>;
  stream(input: AgentInput, options?: RunOptions): AsyncGenerator<AgentEvent, void>;
  /** Finishes pending background work (long-term memory; `timeoutMs` bounds it, see
   * {@link LongTermMemory.close}) and closes the MCP servers (stdio servers stop). A later run
   * connects them again. */
  close(options?: CloseOptions): Promise<void>;
  /** The agent's long-term memory, when enabled: list, add, edit and delete facts, or clear a
   * user's memory. */
  readonly longTermMemory?: LongTermMemory;
}

/**
 * Creates a deep agent. Throws a {@link ConfigError} for an invalid option.
 * @param model - a {@link ChatModel}, a Vercel AI SDK language model, or a `"provider:model"`
 *   string such as `"openai:gpt-4.1"` or `"ollama:llama3.1"` (see {@link resolveModel})
 */
/** The long-term memory storage, recording facts changes when a memory history is configured. */
function factsStorage(storage: MemoryStorage, history: MemoryHistory | undefined): MemoryStorage {
  return history ? recordFactChanges(storage, { history }) : storage;
}

export function createDeepAgent(model: ChatModel | LanguageModelLike | string, options: DeepAgentOptions = {}): DeepAgent {
  const o = resolveOptions(options);
  checkBackendOption(o.backend);
  const chatModel = resolveModel(model);
  const core: Promise<Core> = Promise.resolve(o.core ?? loadCore());
  const ltmOptions = o.longTermMemory === true ? {} : o.longTermMemory || undefined;
  const longTerm = ltmOptions
    ? new LongTermMemory({
        ...ltmOptions,
        model: ltmOptions.model ?? chatModel,
        core: ltmOptions.core ?? core,
        storage: factsStorage(ltmOptions.storage ?? new StoreMemoryStorage({ store: o.store ?? new InMemoryStore() }), o.memoryHistory),
      })
    : undefined;
  // MCP servers: connected on the first run that needs them; a failed connection is retried.
  let mcp: Promise<McpToolset> | undefined;
  const connectMcp = (servers: Record<string, McpServerConfig>) =>
    (mcp ??= McpToolset.connect(servers).catch((e: unknown) => {
      mcp = undefined;
      throw e;
    }));
  const memoryCaches = new Map<string, Map<string, MemoryCacheEntry>>();
  const services: AgentServices = {
    core,
    checkpointer: o.checkpointer ?? new InMemoryCheckpointer({ core }),
    longTerm,
    longTermOptions: ltmOptions,
    backendOwners: new WeakMap(),
    turns: new ThreadTurns(),
    async mcpTools() {
      if (!o.mcpServers) return [];
      return (await (await connectMcp(o.mcpServers)).tools()) as unknown as Tool<never>[];
    },
    memoryCache(threadId) {
      let cache = memoryCaches.get(threadId);
      if (!cache) {
        if (memoryCaches.size >= 256) memoryCaches.delete(memoryCaches.keys().next().value as string);
        cache = new Map();
        memoryCaches.set(threadId, cache);
      }
      return cache;
    },
  };
  const top: AgentLevel = {
    name: ltmOptions?.agentName ?? "agent",
    model: chatModel,
    options: o,
    depth: 0,
    services,
    captureLongTerm: true,
    injectLongTerm: true,
  };
  return {
    ...(longTerm && { longTermMemory: longTerm }),
    stream: (input, opts) => asTurn(longTerm, runThread(top, input, opts)),
    async invoke(input, opts) {
      let output: AgentOutput | undefined;
      // Only the final event: the others would be queued and dropped.
      for await (const ev of asTurn(longTerm, runThread(top, input, opts, false))) if (ev.type === "final") output = ev.output;
      return output as AgentOutput;
    },
    async close(closeOptions) {
      const servers = mcp;
      mcp = undefined;
      await Promise.all([longTerm?.close(closeOptions), servers?.then((m) => m.close()).catch(() => undefined)]);
    },
  };
}

/** A run's events, the run marked as a turn for long-term memory (which then holds idle-time
 * extraction back, see {@link LongTermMemory.beginTurn}) from its first step to its end. */
async function* asTurn(longTerm: LongTermMemory | undefined, events: AsyncGenerator<AgentEvent, void>): AsyncGenerator<AgentEvent, void> {
  const endTurn = longTerm?.beginTurn();
  try {
    yield* events;
  } finally {
    endTurn?.();
  }
}
