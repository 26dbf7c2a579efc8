/**
 * `createDeepAgent` options: every option, its default (stated once, here), and validation that
 * fails fast with a {@link ConfigError}.
 * @module
 */
import type { Backend } from "../backends/protocol.js";
import type { StateBackend } from "../backends/state.js";
import type { Core } from "../core/types.js";
import type { McpServerConfig } from "../mcp/toolset.js";
import type { MemoryHistory } from "../memory/history/history.js";
import type { AgentTracing } from "../tracing/tracing.js";
import type { Message } from "../models/types.js";
import type { Store } from "../stores/types.js";
import type { Tool } from "../tools/types.js";
import type { LongTermMemoryOptions } from "../memory/longterm/longterm.js";
import type { Checkpointer } from "./checkpointer.js";
import type { InterruptConfig } from "../middleware/hitl.js";
import { type SubagentDefinition, TASK_TOOL_NAME } from "../middleware/subagents.js";
import { FILESYSTEM_TOOL_NAMES } from "../tools/filesystem.js";
import type { Middleware } from "../middleware/types.js";
import type { RunContext } from "../tools/types.js";
import { ConfigError } from "../errors.js";
import * as z from "zod";
import { resolveModel } from "../models/resolve.js";
import { structuredFormat } from "./structured.js";

/** The tool that ends a run with the final answer when `responseMode` is `"tool"`. */
export const RESPOND_TOOL = "respond";

export type { InterruptConfig } from "../middleware/hitl.js";
export type { SubagentDefinition } from "../middleware/subagents.js";

/** Long-term memory options of an agent: those of `LongTermMemory`, all optional. */
export interface LongTermMemoryAgentOptions extends Partial<LongTermMemoryOptions> {
  /** Keeps separate memories per agent for the same user. Default: one memory per user. */
  agentName?: string;
  /** Used for runs without a `userId`. Default: `"default"`. */
  defaultUserId?: string;
}

/** What a `backend` factory is given: who the thread's backend is for, and the thread's own
 * state backend. */
export interface BackendContext {
  threadId: string;
  userId?: string;
  /** The thread's own {@link StateBackend}, checkpointed with the thread when the factory uses
   * it (returns it, or builds it into what it returns, e.g. as a `CompositeBackend`'s default
   * route). Its files are loaded from the thread's checkpoint after the factory returns, so use
   * it only through the returned backend. Created on first access. */
  readonly state: StateBackend;
}

/** Options of {@link createDeepAgent}. Every default is in {@link DEFAULT_OPTIONS}. */
export interface DeepAgentOptions {
  /**
   * File backend for tools, memory and skills. Thread-scoped files (a {@link StateBackend}'s)
   * always belong to one thread and are checkpointed with it, however they are configured:
   * - a `StateBackend` instance is a template: each thread starts from a copy of its files (as
   *   they are when the thread first runs) and works on its own copy; the instance itself is
   *   never changed by a run;
   * - any other instance (`FilesystemBackend`, `StoreBackend`, a `CompositeBackend` …) is shared
   *   by every thread as is — a `StateBackend` inside a composite instance is shared too, so
   *   build a composite per thread with the factory and `context.state` instead;
   * - a factory `(context) => Backend` is called at the start of every run. A `StateBackend` it
   *   returns is checkpointed with the thread (its files are replaced by the checkpoint's when
   *   there is one); so is `context.state` when the factory uses it, e.g.
   *   `({ state }) => new CompositeBackend(state, { "/memories/": store })`. Returning the same
   *   `StateBackend` for two threads throws a {@link ConfigError} (`backend`) from that run.
   *
   * Default: a fresh `StateBackend` per thread, checkpointed.
   */
  backend?: Backend | ((context: BackendContext) => Backend);
  /**
   * The static system prompt: sent as `request.system`, identical on every model call of a run,
   * so providers can cache it. What changes between calls — the AGENTS.md memory, the skills
   * index, the long-term facts and the memory guidelines — is sent after it as
   * `request.systemContext` (a second system message), in that order. User middleware sees and
   * may change both. Default: a built-in prompt describing the tools ({@link DEFAULT_SYSTEM_PROMPT}).
   */
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
  /** Model turns of one agent level per run at most (each subagent has its own count); the
   * level then stops with `stopReason: "max_turns"`. Default: 100. */
  maxTurns?: number;
  /** The core. Default: {@link loadCore}'s choice. */
  core?: Core | Promise<Core>;
  /** Sampling settings copied into every model request of the run (`request.settings`),
   * subagents included. Default: none (the provider's defaults). */
  modelSettings?: AgentModelSettings;
  /** What to do when a model stops at its output limit (`finishReason: "length"`):
   * `"continue"` asks it once to continue where it stopped, then fails with a `ModelError`
   * of code `truncated`; `"error"` fails at once. Default: `"continue"`. */
  onTruncated?: "continue" | "error";
  /** Model calls per run at most, counting every nested subagent's calls (one budget per
   * `invoke`/`stream`); the run then stops with `stopReason: "max_model_calls"`. Default: 200. */
  maxModelCalls?: number;
  /** Tool calls of one model turn executed at the same time, at most (the rest wait).
   * Default: 8. */
  maxParallelToolCalls?: number;
  /** Whether `task` subagents see the user's long-term memory block (read-only: they never
   * capture) and the AGENTS.md memory. Default: `true`. */
  subagentMemory?: boolean;
  /**
   * Model Context Protocol servers, by name (1–32 of `[A-Za-z0-9_-]`): `{ command, args?, env?,
   * cwd? }` (stdio) or `{ url, headers? }` (Streamable HTTP). Needs the optional package
   * `@modelcontextprotocol/sdk`. The servers are connected once, on the agent's first run (a
   * failed connection fails that run and is retried by the next), and closed by
   * `agent.close()`. Their tools are listed at the start of every run (cached until a server
   * reports `tools/list_changed`), reach the model — and every subagent — as `<server>__<tool>`
   * with the server's JSON Schema as is, and are reviewed by that name in `interruptOn`
   * (e.g. `{ files__delete: true }`). A server tool whose name is already taken is left out with
   * a warning. Default: none.
   */
  mcpServers?: Record<string, McpServerConfig>;
  /**
   * OpenTelemetry spans (GenAI conventions), from `await AgentTracing.create(true | { tracer })`
   * of `engram/tracing`: an `invoke_agent` span per run of every level (a subagent's nested under
   * the `execute_tool task` span that started it), `chat` and `execute_tool` spans around every
   * model and tool call (outermost, so they time the whole stack), and a span per backend
   * operation of the tools, memory and skills. Nesting needs an async context manager (Node:
   * `AsyncLocalStorageContextManager`). Default: none.
   */
  tracing?: AgentTracing;
  /**
   * Records every change the agent makes to the memory sources (`memorySources`: write_file,
   * edit_file and delete, by the agent or a subagent) in this {@link MemoryHistory}, with the
   * run's user (`userId`, else long-term memory's `defaultUserId`, else `"default"`), thread and
   * run id; list, diff and revert them there (`history.revert(userId, id, restoreThrough(backend))`).
   * Default: none.
   */
  memoryHistory?: MemoryHistory;
  /**
   * The schema the run's final answer must match — a zod 4 schema or a JSON Schema object. The
   * run then ends with the validated (parsed) value as `structuredResponse` on its output and
   * final event. How the answer is obtained is `responseMode`. An answer that does not match
   * is sent back to the model once with the validation errors; a second mismatch fails the run
   * with an {@link EngramError} of code `invalid_response`. Only the top agent answers in this
   * form (subagents answer their `task` in text). Default: none (a text answer).
   */
  responseFormat?: z.ZodType | Record<string, unknown>;
  /**
   * How a `responseFormat` answer is obtained. `"native"`: when the model ends in prose, one more
   * call asks for the answer with `request.responseFormat` (the provider's JSON-schema mode; an
   * answer already in valid JSON is taken as is). `"tool"`: the model is given a `respond` tool
   * whose arguments are the schema, and calling it ends the run (for models without a JSON
   * mode). Default: `"native"`.
   */
  responseMode?: "native" | "tool";
}

/** Sampling settings for every model request (the contract's `ModelSettings`). */
export interface AgentModelSettings {
  temperature?: number;
  maxOutputTokens?: number;
  topP?: number;
  seed?: number;
  /** Passed through to the provider as is. */
  providerOptions?: Record<string, unknown>;
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
  modelSettings: undefined as AgentModelSettings | undefined,
  onTruncated: "continue" as "continue" | "error",
  maxModelCalls: 200,
  maxParallelToolCalls: 8,
  subagentMemory: true,
  mcpServers: undefined as Record<string, McpServerConfig> | undefined,
  tracing: undefined as AgentTracing | undefined,
  memoryHistory: undefined as MemoryHistory | undefined,
  responseFormat: undefined as z.ZodType | Record<string, unknown> | undefined,
  responseMode: "native" as "native" | "tool",
} as const;

/** Names the built-in tools take; user tools must not reuse them. */
export const BUILT_IN_TOOL_NAMES = [...FILESYSTEM_TOOL_NAMES, TASK_TOOL_NAME] as const;

// ---- validation: one zod schema per options object; every failure is a ConfigError naming the
// option's path (`interruptOn.write_file`, `subagents[0].model`).

const fn = (what = "a function") => z.custom<(...args: never[]) => unknown>((v) => typeof v === "function", { message: `must be ${what}` });
const hasMethods = (names: string[], what: string) =>
  z.custom<object>(
    (v) => typeof v === "object" && v !== null && names.every((n) => typeof (v as Record<string, unknown>)[n] === "function"),
    {
      message: `must be ${what} (with ${names.join(", ")})`,
    },
  );
const int = (min: number) =>
  z
    .number({ message: "must be a number" })
    .int({ message: "must be an integer" })
    .min(min, { message: `must be an integer ≥ ${min}` });
const bool = z.boolean({ message: "must be true or false" });
const str = z.string({ message: "must be a string" });
const nonEmpty = str.min(1, { message: "must not be empty" });
const absPath = str.regex(/^\//, { message: "must be an absolute path starting with /" });
const toolName = str.regex(/^[A-Za-z0-9_-]{1,64}$/, { message: "must be 1–64 letters, digits, _ or -" });

/** A zod 4 schema (classic or mini): tools need one to validate arguments and describe them. */
const zod4Schema = z.custom<z.ZodType>(
  (v) => typeof v === "object" && v !== null && "_zod" in v && typeof (v as { safeParse?: unknown }).safeParse === "function",
  {
    message: 'must be a zod 4 schema (import { z } from "zod"; a zod 3 schema or a plain JSON Schema is not accepted)',
  },
);

/** A tool as an option. */
export const toolSchema = z.object(
  {
    name: toolName,
    description: str,
    schema: zod4Schema.refine((s) => schemaConvertible(s), { message: "cannot be described as JSON Schema for the model" }),
    run: fn("a function (input, context) => Promise<ToolResult>"),
  },
  { message: "must be a tool { name, description, schema, run }" },
);

function schemaConvertible(schema: z.ZodType): boolean {
  try {
    z.toJSONSchema(schema, { io: "input", unrepresentable: "any" });
    return true;
  } catch {
    return false;
  }
}

const decisionType = z.enum(["approve", "edit", "reject"], { message: "must be approve, edit or reject" });

/** One `interruptOn` entry. */
export const interruptConfigSchema = z.union(
  [
    bool,
    z.strictObject({
      allow: z
        .array(decisionType, { message: "must be an array of approve / edit / reject" })
        .min(1, { message: "must allow at least one decision (an interrupt nobody can resume is refused)" })
        .refine((a) => new Set(a).size === a.length, { message: "must not repeat a decision" }),
    }),
  ],
  { message: "must be true, false or { allow: [...] }" },
);

const interruptOnSchema = z.record(str, interruptConfigSchema, { message: "must be an object: tool name → true | { allow }" });

const chatModelLike = z.custom<object | string>(
  (v) =>
    (typeof v === "string" && /^[^:\s]+:\S+$/.test(v)) ||
    (typeof v === "object" &&
      v !== null &&
      ((typeof (v as Record<string, unknown>).id === "string" &&
        typeof (v as Record<string, unknown>).invoke === "function" &&
        typeof (v as Record<string, unknown>).stream === "function") ||
        (typeof (v as Record<string, unknown>).doGenerate === "function" &&
          typeof (v as Record<string, unknown>).doStream === "function"))),
  { message: 'must be a ChatModel, an AI SDK language model or a "provider:model" string' },
);

/** A subagent definition. */
export const subagentSchema = z.strictObject(
  {
    name: toolName.refine((n) => n !== "general-purpose", { message: "'general-purpose' is the built-in subagent's name" }),
    description: nonEmpty,
    systemPrompt: str,
    tools: z.array(toolSchema, { message: "must be an array of tools" }).optional(),
    model: chatModelLike.optional(),
    interruptOn: interruptOnSchema.optional(),
  },
  { message: "must be { name, description, systemPrompt, tools?, model?, interruptOn? }" },
);

/** Long-term memory options as the agent passes them to `LongTermMemory` (which checks the
 * ranges it owns). */
export const longTermMemoryOptionsSchema = z.strictObject({
  model: chatModelLike.optional(),
  storage: hasMethods(["load", "save"], "a MemoryStorage").optional(),
  debounceMs: z.number({ message: "must be a number" }).optional(),
  confidenceThreshold: z.number({ message: "must be a number" }).min(0).max(1).optional(),
  maxFacts: int(1).optional(),
  maxInjectionTokens: int(1).optional(),
  correctionBudgetTokens: int(0).optional(),
  recall: z.enum(["confidence", "relevance"], { message: "must be confidence or relevance" }).optional(),
  maxSaveAttempts: int(1).optional(),
  maxConversationTokens: int(1).optional(),
  modelTimeoutMs: int(1).optional(),
  maxOutputTokens: int(1).optional(),
  localModel: bool.optional(),
  extractionAttempts: int(1).optional(),
  retryBackoffMs: int(0).optional(),
  maxRemovalShare: z.number({ message: "must be a number" }).min(0).max(1).optional(),
  minUserSupport: z.number({ message: "must be a number" }).min(0).max(1).optional(),
  pendingWork: hasMethods(["list", "put", "delete"], "a PendingWorkStore").optional(),
  store: hasMethods(["get", "put", "delete", "list"], "a Store").optional(),
  onWarning: fn().optional(),
  onUpdate: fn().optional(),
  core: z.custom<object>((v) => typeof v === "object" && v !== null, { message: "must be a core or a promise of one" }).optional(),
  agentName: nonEmpty.optional(),
  defaultUserId: nonEmpty.optional(),
});

const middlewareSchema = z.object(
  {
    name: nonEmpty,
    tools: z.array(toolSchema).optional(),
    beforeAgent: fn().optional(),
    beforeModel: fn().optional(),
    wrapModelCall: fn().optional(),
    afterModel: fn().optional(),
    wrapToolCall: fn().optional(),
    afterAgent: fn().optional(),
  },
  { message: "must be a middleware { name, hooks… }" },
);

/** Every option of {@link createDeepAgent}. */
export const deepAgentOptionsSchema = z.strictObject(
  {
    backend: z
      .union([fn(), hasMethods(["ls", "read", "write", "edit", "grep", "glob", "delete", "stat"], "a Backend")], {
        message: "must be a Backend or a function (context) => Backend",
      })
      .optional(),
    systemPrompt: str.optional(),
    tools: z.array(toolSchema, { message: "must be an array of tools" }).optional(),
    middleware: z.array(middlewareSchema, { message: "must be an array of middleware" }).optional(),
    checkpointer: hasMethods(["get", "put", "delete"], "a Checkpointer").optional(),
    store: hasMethods(["get", "put", "delete", "list"], "a Store").optional(),
    maxInputTokens: int(1).optional(),
    summarizationThreshold: z
      .number({ message: "must be a number" })
      .gt(0, { message: "must be in (0, 1]" })
      .max(1, { message: "must be in (0, 1]" })
      .optional(),
    summarizationKeepMessages: int(0).optional(),
    beforeSummarize: fn().optional(),
    evictionThreshold: int(1).optional(),
    maxSubagentDepth: int(0).optional(),
    skillsDir: absPath.optional(),
    skillsSources: z.array(absPath, { message: "must be an array of paths" }).optional(),
    memoryFile: nonEmpty.optional(),
    memorySources: z.array(nonEmpty, { message: "must be an array of paths" }).optional(),
    longTermMemory: z.union([bool, longTermMemoryOptionsSchema], { message: "must be true, false or an options object" }).optional(),
    interruptOn: interruptOnSchema.optional(),
    enableMemory: bool.optional(),
    enableSkills: bool.optional(),
    enableFilesystem: bool.optional(),
    enableSubagents: bool.optional(),
    subagents: z.array(subagentSchema, { message: "must be an array of subagent definitions" }).optional(),
    maxTurns: int(1).optional(),
    modelSettings: z
      .strictObject(
        {
          temperature: z.number({ message: "must be a number" }).min(0).max(2).optional(),
          maxOutputTokens: int(1).optional(),
          topP: z.number({ message: "must be a number" }).gt(0).max(1).optional(),
          seed: z.number({ message: "must be a number" }).int({ message: "must be an integer" }).optional(),
          providerOptions: z.record(str, z.unknown(), { message: "must be an object" }).optional(),
        },
        { message: "must be { temperature?, maxOutputTokens?, topP?, seed?, providerOptions? }" },
      )
      .optional(),
    onTruncated: z.enum(["continue", "error"], { message: "must be continue or error" }).optional(),
    maxModelCalls: int(1).optional(),
    maxParallelToolCalls: int(1).optional(),
    subagentMemory: bool.optional(),
    mcpServers: z
      .record(
        str.regex(/^[A-Za-z0-9_-]{1,32}$/, { message: "a server name is 1–32 letters, digits, _ or -" }),
        z.union(
          [
            z.strictObject({
              command: nonEmpty,
              args: z.array(str, { message: "must be an array of strings" }).optional(),
              env: z.record(str, str, { message: "must be an object of strings" }).optional(),
              cwd: str.optional(),
            }),
            z.strictObject({
              url: z.union([str.url({ message: "must be a URL" }), z.instanceof(URL)], { message: "must be a URL" }),
              headers: z.record(str, str, { message: "must be an object of strings" }).optional(),
            }),
          ],
          { message: "must be { command, args?, env?, cwd? } or { url, headers? }" },
        ),
        { message: "must be an object: server name → { command, … } or { url, … }" },
      )
      .optional(),
    responseFormat: z
      .union([zod4Schema, z.custom<Record<string, unknown>>((v) => typeof v === "object" && v !== null && !Array.isArray(v))], {
        message: "must be a zod 4 schema or a JSON Schema object",
      })
      .optional(),
    responseMode: z.enum(["native", "tool"], { message: "must be native or tool" }).optional(),
    memoryHistory: hasMethods(["record", "list", "revert"], "a MemoryHistory").optional(),
    tracing: hasMethods(["run", "middleware", "backend"], "an AgentTracing (await AgentTracing.create(…) from engram/tracing)").optional(),
    core: z.custom<object>((v) => typeof v === "object" && v !== null, { message: "must be a core or a promise of one" }).optional(),
  },
  { message: "must be an object" },
);

/** `a.b[0].c` from a zod issue path. */
function optionPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const k of path) out += typeof k === "number" ? `[${k}]` : out === "" ? String(k) : `.${String(k)}`;
  return out || "options";
}

/** An issue's option path; an unknown key is named in it. */
function issuePath(issue: z.core.$ZodIssue): PropertyKey[] {
  return issue.code === "unrecognized_keys" ? [...issue.path, issue.keys[0] as string] : [...issue.path];
}

/** The most specific issue: zod reports a failed union as one issue with the branches' issues
 * inside; pick the branch that got furthest (a plain type mismatch of a branch says nothing). */
function deepest(issue: z.core.$ZodIssue): z.core.$ZodIssue {
  if (issue.code === "invalid_union" && issue.errors.length > 0) {
    const candidates = issue.errors
      .flat()
      .filter((i) => i.code !== "invalid_type" || i.path.length > 0)
      .map((i) => deepest({ ...i, path: [...issue.path, ...i.path] } as z.core.$ZodIssue));
    const best = candidates.sort((a, b) => issuePath(b).length - issuePath(a).length)[0];
    if (best && issuePath(best).length > issue.path.length) return best;
  }
  return issue;
}

function fail(error: z.ZodError): never {
  const issue = deepest(error.issues[0] as z.core.$ZodIssue);
  throw new ConfigError(optionPath(issuePath(issue)), issue.code === "unrecognized_keys" ? "unknown option" : issue.message);
}

/** Checks options and fills in defaults. Throws a {@link ConfigError} naming the option. */
export function resolveOptions(options: DeepAgentOptions) {
  if (options === null || typeof options !== "object" || Array.isArray(options)) throw new ConfigError("options", "must be an object");
  const parsed = deepAgentOptionsSchema.safeParse(stripUndefined(options));
  if (!parsed.success) fail(parsed.error);
  const o = { ...DEFAULT_OPTIONS, ...stripUndefined(options) };
  const names = new Set<string>();
  o.tools.forEach((t, i) => {
    if ((BUILT_IN_TOOL_NAMES as readonly string[]).includes(t.name))
      throw new ConfigError(`tools[${i}].name`, `'${t.name}' clashes with a built-in tool`);
    if (names.has(t.name)) throw new ConfigError(`tools[${i}].name`, `two tools are named '${t.name}'`);
    names.add(t.name);
  });
  const mwNames = new Set<string>();
  o.middleware.forEach((m, i) => {
    if (mwNames.has(m.name)) throw new ConfigError(`middleware[${i}].name`, `two middleware are named '${m.name}'`);
    mwNames.add(m.name);
    for (const t of m.tools ?? []) names.add(t.name);
  });
  const subNames = new Set<string>();
  const subagents = o.subagents.map((s, i): SubagentDefinition => {
    if (subNames.has(s.name)) throw new ConfigError(`subagents[${i}].name`, `two subagents are named '${s.name}'`);
    subNames.add(s.name);
    for (const t of s.tools ?? []) names.add(t.name);
    if (s.model === undefined) return s;
    try {
      return { ...s, model: resolveModel(s.model) };
    } catch (e) {
      throw new ConfigError(`subagents[${i}].model`, e instanceof Error ? e.message : String(e));
    }
  });
  const known = new Set<string>([...BUILT_IN_TOOL_NAMES, ...names]);
  // MCP tools are known only once listed: any `<server>__<tool>` of a configured server is fine.
  const servers = Object.keys(o.mcpServers ?? {});
  const fromServer = (tool: string) => servers.some((s) => tool.startsWith(`${s}__`) && tool.length > s.length + 2);
  const checkTools = (interruptOn: Record<string, InterruptConfig>, prefix: string) => {
    for (const tool of Object.keys(interruptOn)) {
      if (!known.has(tool) && !fromServer(tool))
        throw new ConfigError(
          `${prefix}.${tool}`,
          `no tool is named '${tool}' (known: ${[...known, ...servers.map((s) => `${s}__*`)].join(", ")})`,
        );
    }
  };
  checkTools(o.interruptOn, "interruptOn");
  o.subagents.forEach((s, i) => {
    if (s.interruptOn) checkTools(s.interruptOn, `subagents[${i}].interruptOn`);
  });
  if (o.responseFormat !== undefined && o.responseMode === "tool" && names.has(RESPOND_TOOL))
    throw new ConfigError("tools", `'${RESPOND_TOOL}' is the tool that gives the final answer when responseMode is "tool"`);
  return {
    ...o,
    structured: o.responseFormat === undefined ? undefined : structuredFormat(o.responseFormat),
    subagents,
    memorySources: options.memorySources ?? [o.memoryFile],
    skillsSources: options.skillsSources ?? [o.skillsDir],
  };
}

/** The options with their defaults filled in. */
export type ResolvedOptions = ReturnType<typeof resolveOptions>;

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
