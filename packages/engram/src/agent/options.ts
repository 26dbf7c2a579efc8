/**
 * `createDeepAgent` options: every option, its default (stated once, here), and validation that
 * fails fast with a {@link ConfigError}.
 * @module
 */
import type { Backend } from "../backends/protocol.js";
import type { Core } from "../core/types.js";
import type { ChatModel, Message } from "../models/types.js";
import type { Store } from "../stores/types.js";
import type { Tool } from "../tools/types.js";
import type { LongTermMemoryOptions } from "../memory/longterm/longterm.js";
import type { Checkpointer } from "./checkpointer.js";
import type { Middleware } from "./middleware.js";
import type { RunContext } from "./types.js";
import { ConfigError } from "../errors.js";

/** How a tool is reviewed by a human before it runs. */
export type InterruptConfig = boolean | { allow: ("approve" | "edit" | "reject")[] };

/** A named subagent the `task` tool can start. */
export interface SubagentDefinition {
  name: string;
  description: string;
  systemPrompt: string;
  /** Extra tools for this subagent (the filesystem tools are always there). Default: none. */
  tools?: Tool<never>[];
  /** Default: the parent's model. */
  model?: ChatModel;
}

/** Long-term memory options of an agent: those of `LongTermMemory`, all optional. */
export interface LongTermMemoryAgentOptions extends Partial<LongTermMemoryOptions> {
  /** Keeps separate memories per agent for the same user. Default: one memory per user. */
  agentName?: string;
  /** Used for runs without a `userId`. Default: `"default"`. */
  defaultUserId?: string;
}

/** Who a thread's backend is for. */
export interface BackendContext {
  threadId: string;
  userId?: string;
}

/** Options of {@link createDeepAgent}. Every default is in {@link DEFAULT_OPTIONS}. */
export interface DeepAgentOptions {
  /** File backend for tools, memory and skills: an instance shared by every thread, or a
   * factory called once per thread. Default: a fresh `StateBackend` per thread, checkpointed. */
  backend?: Backend | ((context: BackendContext) => Backend);
  /** Static system prompt prefix; memory is appended after it. Default: a built-in prompt. */
  systemPrompt?: string;
  /** Extra tools; a name clash with a built-in is a `ConfigError`. Default: none. */
  tools?: Tool<never>[];
  /** User middleware (slot 7), in order. Default: none. */
  middleware?: Middleware[];
  /** Thread persistence. Default: an in-memory checkpointer private to the agent. */
  checkpointer?: Checkpointer;
  /** Long-term key-value store (namespaces). Default: none. */
  store?: Store;
  /** Token budget of one model call's input. Default: 128,000. */
  maxInputTokens?: number;
  /** Summarise when the estimate exceeds `maxInputTokens × summarizationThreshold` (0–1].
   * Default: 0.85. */
  summarizationThreshold?: number;
  /** Messages kept verbatim after a summary. Default: 6. */
  summarizationKeepMessages?: number;
  /** Runs before summarised messages are dropped (e.g. to save them to long-term memory).
   * Default: none. */
  beforeSummarize?: (dropped: Message[], context: RunContext) => void | Promise<void>;
  /** Tool results larger than this many tokens (× 4 characters) go to a file. Default: 20,000. */
  evictionThreshold?: number;
  /** How deep `task` subagents may nest, per call chain. Default: 3. */
  maxSubagentDepth?: number;
  /** Where `*\/SKILL.md` live. Default: `"/skills"`. */
  skillsDir?: string;
  /** Skill directories, later wins a name clash. Default: `[skillsDir]`. */
  skillsSources?: string[];
  /** The memory file. Default: `"AGENTS.md"`. */
  memoryFile?: string;
  /** Memory files, in order. Default: `[memoryFile]`. */
  memorySources?: string[];
  /** Long-term facts memory (DeerFlow style): facts extracted after each run, per user (and
   * agent), injected within a token budget. `true` uses every default; the model defaults to the
   * agent's, the storage to a `StoreMemoryStorage` over `store` (or an in-memory one). Default: off. */
  longTermMemory?: boolean | LongTermMemoryAgentOptions;
  /** Human review: tool name → `true` (approve/edit/reject) or the decisions allowed.
   * Default: none. */
  interruptOn?: Record<string, InterruptConfig>;
  /** Default: `true`. `false` removes the slot entirely. */
  enableMemory?: boolean;
  /** Default: `true`. */
  enableSkills?: boolean;
  /** Default: `true`. */
  enableFilesystem?: boolean;
  /** Default: `true`. */
  enableSubagents?: boolean;
  /** Named subagents for `task`; a general-purpose one is always there. Default: none. */
  subagents?: SubagentDefinition[];
  /** Model calls per run at most. Default: 100. */
  maxTurns?: number;
  /** The core. Default: {@link loadCore}'s choice. */
  core?: Core | Promise<Core>;
}

/** The defaults of every option, in one place. */
export const DEFAULT_OPTIONS = {
  systemPrompt: undefined as string | undefined,
  tools: [] as Tool<never>[],
  middleware: [] as Middleware[],
  maxInputTokens: 128_000,
  summarizationThreshold: 0.85,
  summarizationKeepMessages: 6,
  evictionThreshold: 20_000,
  maxSubagentDepth: 3,
  skillsDir: "/skills",
  memoryFile: "AGENTS.md",
  longTermMemory: false as const,
  interruptOn: {} as Record<string, InterruptConfig>,
  enableMemory: true,
  enableSkills: true,
  enableFilesystem: true,
  enableSubagents: true,
  subagents: [] as SubagentDefinition[],
  maxTurns: 100,
} as const;

/** Names the built-in tools take; user tools must not reuse them. */
export const BUILT_IN_TOOL_NAMES = ["ls", "read_file", "write_file", "edit_file", "glob", "grep", "delete", "task"] as const;

const KNOWN = new Set<string>([
  "backend",
  "checkpointer",
  "store",
  "beforeSummarize",
  "skillsSources",
  "memorySources",
  "core",
  ...Object.keys(DEFAULT_OPTIONS),
]);

/** Checks options and fills in defaults. */
export function resolveOptions(options: DeepAgentOptions) {
  if (options === null || typeof options !== "object") throw new ConfigError("options", "must be an object");
  for (const key of Object.keys(options)) {
    if (!KNOWN.has(key)) throw new ConfigError(key, "unknown option");
  }
  const o = { ...DEFAULT_OPTIONS, ...stripUndefined(options) };
  const positiveInt = (name: keyof typeof o, min = 1) => {
    const v = o[name] as number;
    if (!Number.isInteger(v) || v < min) throw new ConfigError(name, `must be an integer ≥ ${min}, got ${v}`);
  };
  positiveInt("maxInputTokens");
  positiveInt("evictionThreshold");
  positiveInt("maxTurns");
  positiveInt("maxSubagentDepth", 0);
  positiveInt("summarizationKeepMessages", 0);
  if (!(o.summarizationThreshold > 0 && o.summarizationThreshold <= 1)) {
    throw new ConfigError("summarizationThreshold", `must be in (0, 1], got ${o.summarizationThreshold}`);
  }
  const names = new Set<string>();
  for (const t of o.tools) {
    if ((BUILT_IN_TOOL_NAMES as readonly string[]).includes(t.name))
      throw new ConfigError("tools", `'${t.name}' clashes with a built-in tool`);
    if (names.has(t.name)) throw new ConfigError("tools", `two tools are named '${t.name}'`);
    names.add(t.name);
  }
  const mwNames = new Set<string>();
  for (const m of o.middleware) {
    if (!m?.name) throw new ConfigError("middleware", "every middleware needs a name");
    if (mwNames.has(m.name)) throw new ConfigError("middleware", `two middleware are named '${m.name}'`);
    mwNames.add(m.name);
  }
  for (const s of o.subagents) {
    if (!s?.name || !s.description || typeof s.systemPrompt !== "string") {
      throw new ConfigError("subagents", "each subagent needs a name, a description and a systemPrompt");
    }
  }
  for (const [tool, cfg] of Object.entries(o.interruptOn)) {
    if (typeof cfg === "object" && (!Array.isArray(cfg.allow) || cfg.allow.some((d) => !["approve", "edit", "reject"].includes(d)))) {
      throw new ConfigError("interruptOn", `'${tool}': allow must list approve / edit / reject`);
    }
  }
  return {
    ...o,
    memorySources: options.memorySources ?? [o.memoryFile],
    skillsSources: options.skillsSources ?? [o.skillsDir],
  };
}

/** The options with their defaults filled in. */
export type ResolvedOptions = ReturnType<typeof resolveOptions>;

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
