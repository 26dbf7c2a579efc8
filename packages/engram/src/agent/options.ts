/**
 * `createDeepAgent` options, declared once: one zod schema per options object holds every
 * option — its documentation (typedoc shows it, default included, on the interface that
 * extends the schema's input type), its TypeScript type, its default ({@link DEFAULT_OPTIONS}
 * is read from the schema) and its validation, which fails fast with a {@link ConfigError}
 * naming the option.
 * @module
 */
import type { Backend } from "../backends/protocol.js";
import type { StateBackend } from "../backends/state.js";
import type { Core } from "../core/types.js";
import { type McpServerConfig, namespacedToolName } from "../mcp/toolset.js";
import type { MemoryHistory } from "../memory/history/history.js";
import { memorySourcePaths } from "../memory/sources/paths.js";
import type { AgentTracing } from "../tracing/tracing.js";
import type { Message } from "../models/types.js";
import type { Store } from "../stores/types.js";
import type { Tool } from "../tools/types.js";
import type { LongTermMemoryOptions } from "../memory/longterm/longterm.js";
import type { Checkpointer } from "./checkpointer.js";
import { type HistoryRetention, hasStepOperations } from "./run-steps.js";
import { type InterruptConfig, stricterPolicy } from "../middleware/hitl.js";
import { type SubagentDefinition, TASK_TOOL_NAME } from "../middleware/subagents.js";
import { EXECUTE_TOOL_NAME } from "../tools/execute.js";
import { PAST_THREADS_TOOL_NAME } from "../middleware/past-threads.js";
import { MESSAGE_SEARCH_LIMIT, SNIPPET_CHARS } from "../memory/recall/types.js";
import { canSearchThreads } from "../memory/recall/search.js";
import { FILESYSTEM_TOOL_NAMES } from "../tools/filesystem.js";
import type { Middleware } from "../middleware/types.js";
import type { RunContext } from "../tools/types.js";
import { ConfigError } from "../errors.js";
import * as z from "zod/mini";
import { parseParams } from "../zod.js";
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

/** Names the built-in tools take; user tools must not reuse them. */
export const BUILT_IN_TOOL_NAMES = [...FILESYSTEM_TOOL_NAMES, EXECUTE_TOOL_NAME, TASK_TOOL_NAME, PAST_THREADS_TOOL_NAME] as const;

// ---- the schemas: one per options object; every failure is a ConfigError naming the option's
// path (`interruptOn.write_file`, `subagents[0].model`). The schemas use `zod/mini` (functions
// instead of methods, so a bundle carries only what they use); zod's English messages, for the
// few checks without a message of their own, come from `parseParams`.

/**
 * `schema` with its values typed `T`, for an option whose TypeScript type says more than a
 * check can (a class, a function's signature, an interface checked by its methods): the check
 * is the schema's, and `T` must be a type the check accepts (else a compile-time error), so the
 * two cannot drift apart.
 */
function typed<T>() {
  return <S extends z.core.$ZodType>(schema: S & ([T] extends [z.output<S>] ? unknown : never)): z.ZodMiniType<T, T> =>
    schema as unknown as z.ZodMiniType<T, T>;
}

const fn = (what = "a function") => z.custom<(...args: never[]) => unknown>((v) => typeof v === "function", { message: `must be ${what}` });
const hasMethods = (names: string[], what: string) =>
  z.custom<object>(
    (v) => typeof v === "object" && v !== null && names.every((n) => typeof (v as Record<string, unknown>)[n] === "function"),
    {
      message: `must be ${what} (with ${names.join(", ")})`,
    },
  );
const num = () => z.number({ message: "must be a number" });
const int = (min: number) => num().check(z.int({ message: "must be an integer" }), z.gte(min, { message: `must be an integer ≥ ${min}` }));
/** A number in [min, max]. */
const between = (min: number, max: number) => num().check(z.gte(min), z.lte(max));
const bool = z.boolean({ message: "must be true or false" });
const str = z.string({ message: "must be a string" });
const nonEmpty = str.check(z.minLength(1, { message: "must not be empty" }));
const absPath = str.check(z.regex(/^\//, { message: "must be an absolute path starting with /" }));
const toolName = str.check(z.regex(/^[A-Za-z0-9_-]{1,64}$/, { message: "must be 1–64 letters, digits, _ or -" }));

/** A zod 4 schema (classic or mini): tools need one to validate arguments and describe them. */
const zod4Schema = z.custom<z.core.$ZodType>(
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
    schema: zod4Schema.check(z.refine((s) => schemaConvertible(s), { message: "cannot be described as JSON Schema for the model" })),
    run: fn("a function (input, context) => Promise<ToolResult>"),
    idempotent: z.optional(z.boolean({ message: "must be a boolean" })),
  },
  { message: "must be a tool { name, description, schema, run }" },
);

function schemaConvertible(schema: z.core.$ZodType): boolean {
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
      allow: z.array(decisionType, { message: "must be an array of approve / edit / reject" }).check(
        z.minLength(1, { message: "must allow at least one decision (an interrupt nobody can resume is refused)" }),
        z.refine((a) => new Set(a).size === a.length, { message: "must not repeat a decision" }),
      ),
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
    name: toolName.check(z.refine((n) => n !== "general-purpose", { message: "'general-purpose' is the built-in subagent's name" })),
    description: nonEmpty,
    systemPrompt: str,
    tools: z.optional(z.array(toolSchema, { message: "must be an array of tools" })),
    model: z.optional(chatModelLike),
    interruptOn: z.optional(interruptOnSchema),
  },
  { message: "must be { name, description, systemPrompt, tools?, model?, interruptOn? }" },
);

/** Long-term memory options as the agent passes them to `LongTermMemory` (which checks the
 * ranges it owns). */
export const longTermMemoryOptionsSchema = z.strictObject({
  model: z.optional(chatModelLike),
  storage: z.optional(hasMethods(["load", "save"], "a MemoryStorage")),
  debounceMs: z.optional(num()),
  confidenceThreshold: z.optional(between(0, 1)),
  maxFacts: z.optional(int(1)),
  maxInjectionTokens: z.optional(int(1)),
  correctionBudgetTokens: z.optional(int(0)),
  recall: z.optional(z.enum(["confidence", "relevance"], { message: "must be confidence or relevance" })),
  maxSaveAttempts: z.optional(int(1)),
  maxConversationTokens: z.optional(int(1)),
  modelTimeoutMs: z.optional(int(1)),
  maxOutputTokens: z.optional(int(1)),
  localModel: z.optional(bool),
  extraction: z.optional(z.enum(["full", "facts"], { message: "must be full or facts" })),
  schedule: z.optional(z.enum(["background", "idle"], { message: "must be background or idle" })),
  onExtracting: z.optional(fn()),
  extractionAttempts: z.optional(int(1)),
  retryBackoffMs: z.optional(int(0)),
  maxRemovalShare: z.optional(between(0, 1)),
  minUserSupport: z.optional(between(0, 1)),
  pendingWork: z.optional(hasMethods(["list", "put", "delete"], "a PendingWorkStore")),
  store: z.optional(hasMethods(["get", "put", "delete", "list"], "a Store")),
  onWarning: z.optional(fn()),
  onUpdate: z.optional(fn()),
  now: z.optional(fn()),
  core: z.optional(z.custom<object>((v) => typeof v === "object" && v !== null, { message: "must be a core or a promise of one" })),
  agentName: z.optional(nonEmpty),
  defaultUserId: z.optional(nonEmpty),
});

/** Whether `A` and `B` have the same keys (for checks at compile time). */
type SameKeys<A, B> = [Exclude<keyof A, keyof B> | Exclude<keyof B, keyof A>] extends [never] ? true : false;

// The strict schemas name every option of the types they check, no more (else a new option would
// be refused at run time): checked at compile time.
true satisfies SameKeys<LongTermMemoryAgentOptions, z.output<typeof longTermMemoryOptionsSchema>>;
true satisfies SameKeys<SubagentDefinition, z.output<typeof subagentSchema>>;

const middlewareSchema = z.object(
  {
    name: nonEmpty,
    tools: z.optional(z.array(toolSchema)),
    beforeAgent: z.optional(fn()),
    beforeModel: z.optional(fn()),
    wrapModelCall: z.optional(fn()),
    afterModel: z.optional(fn()),
    wrapToolCall: z.optional(fn()),
    afterAgent: z.optional(fn()),
  },
  { message: "must be a middleware { name, hooks… }" },
);

/** The `threadRecall` object. */
const threadRecallSchema = z.strictObject({
  /** Threads per answer at most (1–50). Default: 5. */
  maxResults: z.optional(int(1).check(z.lte(MESSAGE_SEARCH_LIMIT.max, { message: `must be at most ${MESSAGE_SEARCH_LIMIT.max}` }))),
  /** Characters per snippet at most (40–2000). Default: 300. */
  snippetChars: z.optional(int(SNIPPET_CHARS.min).check(z.lte(SNIPPET_CHARS.max, { message: `must be at most ${SNIPPET_CHARS.max}` }))),
  /** Recall without a tool call: at a new user message, the run's first model call gets this
   * many of the best-matching messages the user wrote in earlier threads (0–50), dated, in a
   * `<past_threads>` block after the memory. 0 is off. Default: 0. */
  inject: z.optional(int(0).check(z.lte(MESSAGE_SEARCH_LIMIT.max, { message: `must be at most ${MESSAGE_SEARCH_LIMIT.max}` }))),
  /** Estimated tokens of the injected block at most (tags included; 64–8000). Default: 400. */
  injectTokens: z.optional(int(64).check(z.lte(8000, { message: "must be at most 8000" }))),
  /** Whether the model gets the `search_past_threads` tool. Default: true. */
  tool: z.optional(bool),
});

/** Options of the `search_past_threads` tool (`threadRecall`). */
export interface ThreadRecallOptions extends z.input<typeof threadRecallSchema> {}

/** `modelSettings`. */
const modelSettingsSchema = z.strictObject(
  {
    temperature: z.optional(between(0, 2)),
    maxOutputTokens: z.optional(int(1)),
    topP: z.optional(num().check(z.gt(0), z.lte(1))),
    seed: z.optional(num().check(z.int({ message: "must be an integer" }))),
    /** Passed through to the provider as is. */
    providerOptions: z.optional(z.record(str, z.unknown(), { message: "must be an object" })),
  },
  { message: "must be { temperature?, maxOutputTokens?, topP?, seed?, providerOptions? }" },
);

/** Sampling settings for every model request (the contract's `ModelSettings`). */
export interface AgentModelSettings extends z.input<typeof modelSettingsSchema> {}

/** `mcpServers`: server name → how to reach it. */
const mcpServersSchema = z.record(
  str.check(z.regex(/^[A-Za-z0-9_-]{1,32}$/, { message: "a server name is 1–32 letters, digits, _ or -" })),
  z.union(
    [
      z.strictObject({
        command: nonEmpty,
        args: z.optional(z.array(str, { message: "must be an array of strings" })),
        env: z.optional(z.record(str, str, { message: "must be an object of strings" })),
        cwd: z.optional(str),
      }),
      z.strictObject({
        url: z.union([str.check(z.url({ message: "must be a URL" })), z.instanceof(URL)], { message: "must be a URL" }),
        headers: z.optional(z.record(str, str, { message: "must be an object of strings" })),
      }),
    ],
    { message: "must be { command, args?, env?, cwd? } or { url, headers? }" },
  ),
  { message: "must be an object: server name → { command, … } or { url, … }" },
);

/** Every option of {@link createDeepAgent}: what it is, its default, its type and its check. */
export const deepAgentOptionsSchema = z.strictObject(
  {
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
    backend: z.optional(
      typed<Backend | ((context: BackendContext) => Backend)>()(
        z.union([fn(), hasMethods(["ls", "read", "write", "edit", "grep", "glob", "delete", "stat"], "a Backend")], {
          message: "must be a Backend or a function (context) => Backend",
        }),
      ),
    ),
    /**
     * The static system prompt: sent as `request.system`, identical on every model call of a run,
     * so providers can cache it. What changes between calls — the skills index, the AGENTS.md
     * memory, the memory guidelines and the long-term facts, each before what changes more often —
     * is sent after it as `request.systemContext` (a second system message), in that order. User middleware sees and
     * may change both. Default: a built-in prompt describing the tools ({@link DEFAULT_SYSTEM_PROMPT}).
     */
    systemPrompt: z.optional(str),
    /** Extra tools; a name clash with a built-in is a `ConfigError`. Default: none. */
    tools: z._default(typed<Tool<never>[]>()(z.array(toolSchema, { message: "must be an array of tools" })), []),
    /** User middleware (slot 7), in order. Default: none. */
    middleware: z._default(typed<Middleware[]>()(z.array(middlewareSchema, { message: "must be an array of middleware" })), []),
    /** Thread persistence. Default: an in-memory checkpointer private to the agent. */
    checkpointer: z.optional(typed<Checkpointer>()(hasMethods(["get", "put", "delete"], "a Checkpointer"))),
    /**
     * When a run's progress is committed. `"step"`: after every model turn, before every tool call
     * runs and after its result — a crash loses at most the step in flight, and the next run of
     * the thread resumes the dead run (see the durable runs guide). Each step writes only what
     * changed (new messages, changed files): a row insert per step, about the cost of one small
     * transaction of the checkpointer (see the bench), three per tool call. `"run"`: when the run
     * ends or stops for review, as one save. `"step"` needs a checkpointer with `claimThread`,
     * `putStep`, `getSteps` and `deleteSteps`. Default: `"step"` for a checkpointer that has them
     * and is `durable` (SQLite, PostgreSQL), else `"run"`.
     */
    durability: z.optional(z.enum(["step", "run"], { message: 'must be "step" or "run"' })),
    /** The thread history runs keep with `durability: "step"` (each committed step a point to
     * list, read, fork from or rewind to; see the durable runs guide): how many points and how
     * old, or `false` for none. Default: 100 points, 30 days, on a checkpointer with `getHistory`. */
    history: z.optional(
      typed<false | HistoryRetention>()(
        z.union(
          [
            z.literal(false),
            z.strictObject({ maxPoints: z.optional(int(1)), maxAgeMs: z.optional(num().check(z.gt(0, { message: "must be > 0" }))) }),
          ],
          {
            message: "must be false or { maxPoints, maxAgeMs }",
          },
        ),
      ),
    ),
    /** Long-term key-value store (namespaces). Default: none. */
    store: z.optional(typed<Store>()(hasMethods(["get", "put", "delete", "list"], "a Store"))),
    /** Token budget of one model call's input. Default: the model's own
     * (`ChatModel.maxInputTokens()`: a local model's loaded context, a provider's known or stated
     * window, less the output cap), else 128,000. */
    maxInputTokens: z.optional(int(1)),
    /** Summarise when the estimate exceeds `maxInputTokens × summarizationThreshold` (0–1].
     * Default: 0.85. */
    summarizationThreshold: z._default(
      num().check(z.gt(0, { message: "must be in (0, 1]" }), z.lte(1, { message: "must be in (0, 1]" })),
      0.85,
    ),
    /** Messages kept verbatim after a summary. Default: 6. */
    summarizationKeepMessages: z._default(int(0), 6),
    /** Runs before summarised messages are dropped (e.g. to save them to long-term memory).
     * Default: none. */
    beforeSummarize: z.optional(typed<(dropped: Message[], context: RunContext) => void | Promise<void>>()(fn())),
    /** Tool results larger than this many tokens (× 4 characters) go to a file. Default: 20,000. */
    evictionThreshold: z._default(int(1), 20_000),
    /** How deep `task` subagents may nest, per call chain. Default: 3. */
    maxSubagentDepth: z._default(int(0), 3),
    /** Where `*\/SKILL.md` live. Default: `"/skills"`. */
    skillsDir: z._default(absPath, "/skills"),
    /** Skill directories, later wins a name clash. Default: `[skillsDir]`. */
    skillsSources: z.optional(z.array(absPath, { message: "must be an array of paths" })),
    /** The memory file. Default: `"AGENTS.md"`. */
    memoryFile: z._default(nonEmpty, "AGENTS.md"),
    /** Memory files, in order. Default: `[memoryFile]`. */
    memorySources: z.optional(z.array(nonEmpty, { message: "must be an array of paths" })),
    /** Long-term facts memory (DeerFlow style): facts extracted after each run, per user (and
     * agent), injected within a token budget. `true` uses every default; the model defaults to the
     * agent's, the storage to a `StoreMemoryStorage` over `store` (or an in-memory one). Default: off. */
    longTermMemory: z._default(
      typed<boolean | LongTermMemoryAgentOptions>()(
        z.union([bool, longTermMemoryOptionsSchema], { message: "must be true, false or an options object" }),
      ),
      false,
    ),
    /**
     * The `search_past_threads` tool: the model searches the run's user's earlier threads (their
     * user and assistant messages, BM25 — or the checkpointer's own full-text index when it has
     * `searchMessages`) and gets back the best threads with a snippet each, so it can answer "what
     * did we decide about X last time" when no long-term fact holds it. Every checkpoint records
     * its run's `userId`; only threads saved with the same `userId` are searched, never the
     * current one, and a run without a `userId` gets an error from the tool. The checkpointer
     * must have `searchMessages` or `list`. The top agent's tool (subagents do not get it). `true`
     * uses every default. With `inject: n` the best n messages the user wrote in earlier threads
     * are also placed in the prompt at each new user message, without a tool call (`tool: false`
     * keeps only that). Default: off.
     */
    threadRecall: z._default(
      typed<boolean | ThreadRecallOptions>()(
        z.union([bool, threadRecallSchema], {
          message: "must be true, false or { maxResults?, snippetChars?, inject?, injectTokens?, tool? }",
        }),
      ),
      false,
    ),
    /** Human review: tool name → `true` (approve/edit/reject) or the decisions allowed.
     * Default: none. */
    interruptOn: z._default(typed<Record<string, InterruptConfig>>()(interruptOnSchema), {}),
    /** Default: `true`. `false` removes the slot entirely. */
    enableMemory: z._default(bool, true),
    /** Default: `true`. */
    enableSkills: z._default(bool, true),
    /** Default: `true`. */
    enableFilesystem: z._default(bool, true),
    /** Default: `true`. */
    enableSubagents: z._default(bool, true),
    /** Named subagents for `task`; a general-purpose one is always there. Default: none. */
    subagents: z._default(
      typed<SubagentDefinition[]>()(z.array(subagentSchema, { message: "must be an array of subagent definitions" })),
      [],
    ),
    /** Model turns of one agent level per run at most (each subagent has its own count); the
     * level then stops with `stopReason: "max_turns"`. Default: 100. */
    maxTurns: z._default(int(1), 100),
    /** Sampling settings copied into every model request of the run (`request.settings`),
     * subagents included. Default: none (the provider's defaults). */
    modelSettings: z.optional(typed<AgentModelSettings>()(modelSettingsSchema)),
    /** What to do when a model stops at its output limit (`finishReason: "length"`):
     * `"continue"` asks it once to continue where it stopped, then fails with a `ModelError`
     * of code `truncated`; `"error"` fails at once. Default: `"continue"`. */
    onTruncated: z._default(z.enum(["continue", "error"], { message: "must be continue or error" }), "continue"),
    /** Model calls per run at most, counting every nested subagent's calls (one budget per
     * `invoke`/`stream`, each call reserved from it before it is made, so subagents running side
     * by side never overspend it together); the run then stops with
     * `stopReason: "max_model_calls"`. Default: 200. */
    maxModelCalls: z._default(int(1), 200),
    /** Model calls and tool calls running at the same time, at most, in the whole run: one limit
     * per `invoke`/`stream` shared by every nested subagent (the rest wait). A `task` call holds
     * no slot while its subagent runs, so parents waiting on subagents never starve them.
     * Default: 8. */
    maxParallelToolCalls: z._default(int(1), 8),
    /**
     * How often one level may make the same failing tool call (same tool, same arguments) with
     * no call succeeding in between. The failure that reaches this count comes back to the model
     * with a firm note not to repeat the call; if the model asks for it again anyway, the level
     * stops without running that turn's calls (each answered "not run"), with a warning event and
     * `stopReason: "repeated_tool_failure"` (a subagent's `task` result says so; the parent goes
     * on). Default: 3.
     */
    maxRepeatedToolFailures: z._default(int(1), 3),
    /** Whether `task` subagents see the user's long-term memory block (read-only: they never
     * capture) and the AGENTS.md memory. Default: `true`. */
    subagentMemory: z._default(bool, true),
    /**
     * Model Context Protocol servers, by name (1–32 of `[A-Za-z0-9_-]`): `{ command, args?, env?,
     * cwd? }` (stdio) or `{ url, headers? }` (Streamable HTTP). Needs the optional package
     * `@modelcontextprotocol/sdk`. The servers are connected once, on the agent's first run (a
     * failed connection fails that run and is retried by the next), and closed by
     * `agent.close()`. Their tools are listed at the start of every run (cached until a server
     * reports `tools/list_changed`), reach the model — and every subagent — as `<server>__<tool>`
     * with the server's JSON Schema as is, and are reviewed by that name in `interruptOn`
     * (e.g. `{ files__delete: true }`). A server tool whose name is already taken is left out with
     * a warning. A connection lost meanwhile (the server stopped, or sent a result over the 10 MiB
     * a stdio message may take — the model is told that result was too large) is made again on
     * the next call; after 3 failed attempts in a row the server's calls fail until `close()`.
     * Default: none.
     */
    mcpServers: z.optional(typed<Record<string, McpServerConfig>>()(mcpServersSchema)),
    /**
     * The schema the run's final answer must match — a zod 4 schema (classic or mini) or a JSON
     * Schema object (validated by `@cfworker/json-schema`, any draft from 4 to 2020-12). The
     * run then ends with the validated (parsed) value as `structuredResponse` on its output and
     * final event. How the answer is obtained is `responseMode`. An answer that does not match
     * is sent back to the model once with the validation errors; a second mismatch fails the run
     * with an {@link EngramError} of code `invalid_response`. Only the top agent answers in this
     * form (subagents answer their `task` in text). Default: none (a text answer).
     */
    responseFormat: z.optional(
      z.union([zod4Schema, z.custom<Record<string, unknown>>((v) => typeof v === "object" && v !== null && !Array.isArray(v))], {
        message: "must be a zod 4 schema or a JSON Schema object",
      }),
    ),
    /**
     * How a `responseFormat` answer is obtained. `"native"`: when the model ends in prose, one more
     * call asks for the answer with `request.responseFormat` (the provider's JSON-schema mode; an
     * answer already in valid JSON is taken as is). `"tool"`: the model is given a `respond` tool
     * whose arguments are the schema, and calling it ends the run (for models without a JSON
     * mode). Default: `"native"`.
     */
    responseMode: z._default(z.enum(["native", "tool"], { message: "must be native or tool" }), "native"),
    /**
     * Records every change the agent makes to the memory sources (`memorySources`: write_file,
     * edit_file and delete, by the agent or a subagent) in this {@link MemoryHistory}, with the
     * run's user (`userId`, else long-term memory's `defaultUserId`, else `"default"`), thread and
     * run id; list, diff and revert them there (`history.revert(userId, id, restoreThrough(backend))`).
     * Default: none.
     */
    memoryHistory: z.optional(typed<MemoryHistory>()(hasMethods(["record", "list", "revert"], "a MemoryHistory"))),
    /**
     * OpenTelemetry spans (GenAI conventions), from `await AgentTracing.create(true | { tracer })`
     * of `engram/tracing`: an `invoke_agent` span per run of every level (a subagent's nested under
     * the `execute_tool task` span that started it), `chat` and `execute_tool` spans around every
     * model and tool call (outermost, so they time the whole stack), and a span per backend
     * operation of the tools, memory and skills. Nesting needs an async context manager (Node:
     * `AsyncLocalStorageContextManager`). Default: none.
     */
    tracing: z.optional(
      typed<AgentTracing>()(
        hasMethods(["run", "middleware", "backend"], "an AgentTracing (await AgentTracing.create(…) from engram/tracing)"),
      ),
    ),
    /** The core. Default: {@link loadCore}'s choice. */
    core: z.optional(
      typed<Core | Promise<Core>>()(
        z.custom<object>((v) => typeof v === "object" && v !== null, { message: "must be a core or a promise of one" }),
      ),
    ),
  },
  { message: "must be an object" },
);

/** Options of {@link createDeepAgent}: each one documented with its default. */
export interface DeepAgentOptions extends z.input<typeof deepAgentOptionsSchema> {}

/** Every option's value once defaults are filled in. */
type OptionValues = z.output<typeof deepAgentOptionsSchema>;

type OptionShape = typeof deepAgentOptionsSchema.shape;

/** The options that have a default, by name. */
type Defaulted = { [K in keyof OptionShape as OptionShape[K] extends z.core.$ZodDefault ? K : never]: z.output<OptionShape[K]> };

/** The options of {@link DeepAgentOptions} that have a fixed default, each with it. */
export interface DefaultOptions extends Readonly<Defaulted> {}

/** The defaults of every option that has a fixed one, read from the options' schema (the others
 * are resolved per agent: see each option of {@link DeepAgentOptions}). */
export const DEFAULT_OPTIONS: DefaultOptions = Object.freeze(
  Object.fromEntries(
    Object.entries(deepAgentOptionsSchema.shape).flatMap(([name, schema]) =>
      schema instanceof z.ZodMiniDefault ? [[name, schema._zod.def.defaultValue]] : [],
    ),
  ) as Defaulted,
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

function fail(error: z.core.$ZodError): never {
  const issue = deepest(error.issues[0] as z.core.$ZodIssue);
  throw new ConfigError(optionPath(issuePath(issue)), issue.code === "unrecognized_keys" ? "unknown option" : issue.message);
}

/** The tool names a run may know of: built-in, the options', the middleware's and the
 * subagents' (MCP tools are known only once listed: any `<server>__<tool>` of a configured
 * server is fine). */
interface KnownTools {
  names: Set<string>;
  servers: string[];
}

/** Checks the names of tools, middleware and subagents (unique, no built-in taken) and resolves
 * the subagents' models; answers the names the run's tools may have and the subagents. */
function checkNames(o: OptionValues): { tools: KnownTools; subagents: SubagentDefinition[]; userTools: Set<string> } {
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
  const tools = { names: new Set<string>([...BUILT_IN_TOOL_NAMES, ...names]), servers: Object.keys(o.mcpServers ?? {}) };
  return { tools, subagents, userTools: names };
}

/** Whether `tool` names a tool of one of the configured MCP servers (`<server>__<tool>`). */
const fromServer = (known: KnownTools, tool: string) => known.servers.some((s) => tool.startsWith(`${s}__`) && tool.length > s.length + 2);

/** Every entry of an `interruptOn` (at `prefix`) names a tool the run may have. */
function checkReviewed(known: KnownTools, interruptOn: Record<string, InterruptConfig>, prefix: string): void {
  for (const tool of Object.keys(interruptOn)) {
    if (!known.names.has(tool) && !fromServer(known, tool))
      throw new ConfigError(
        `${prefix}.${tool}`,
        `no tool is named '${tool}' (known: ${[...known.names, ...known.servers.map((s) => `${s}__*`)].join(", ")})`,
      );
  }
}

/**
 * The review policy by the names the model sees. A server's tool reaches the model (and the
 * review) as `<server>__<tool>` with the characters a tool name cannot hold replaced and a long
 * name cut (`namespacedToolName`): an entry naming it as the server spells it
 * (`files__delete.all`) reviews that name too, never nothing. Two entries landing on one name
 * give the stricter review.
 */
function reviewed(known: KnownTools, interruptOn: Record<string, InterruptConfig>): Record<string, InterruptConfig> {
  let out: Record<string, InterruptConfig> = {};
  for (const [tool, cfg] of Object.entries(interruptOn)) {
    const as = new Set([tool]);
    if (!known.names.has(tool)) {
      for (const s of known.servers)
        if (tool.startsWith(`${s}__`) && tool.length > s.length + 2) as.add(namespacedToolName(s, tool.slice(s.length + 2)));
    }
    for (const name of as) out = stricterPolicy(out, { [name]: cfg });
  }
  return out;
}

/** `durability`: `"step"` only with the step operations; by default for a durable checkpointer
 * that has them. */
function resolveDurability(options: DeepAgentOptions): "step" | "run" {
  const stepCapable = options.checkpointer !== undefined && hasStepOperations(options.checkpointer);
  if (options.durability === "step" && !stepCapable)
    throw new ConfigError("durability", '"step" needs a checkpointer with claimThread, putStep, getSteps and deleteSteps');
  return options.durability ?? (stepCapable && options.checkpointer?.durable === true ? "step" : "run");
}

/** Checks options and fills in defaults. Throws a {@link ConfigError} naming the option. */
export function resolveOptions(options: DeepAgentOptions) {
  if (options === null || typeof options !== "object" || Array.isArray(options)) throw new ConfigError("options", "must be an object");
  const parsed = deepAgentOptionsSchema.safeParse(stripUndefined(options), parseParams());
  if (!parsed.success) fail(parsed.error);
  const o: OptionValues = { ...DEFAULT_OPTIONS, ...stripUndefined(options) };
  const { tools, subagents, userTools } = checkNames(o);
  checkReviewed(tools, o.interruptOn, "interruptOn");
  o.subagents.forEach((s, i) => {
    if (s.interruptOn) checkReviewed(tools, s.interruptOn, `subagents[${i}].interruptOn`);
  });
  const durability = resolveDurability(options);
  if (options.longTermMemory && options.enableMemory === false)
    throw new ConfigError(
      "enableMemory",
      "false removes the memory slot, which also injects and captures the long-term facts: drop longTermMemory, or keep enableMemory on",
    );
  if (o.threadRecall && options.checkpointer && !canSearchThreads(options.checkpointer))
    throw new ConfigError("threadRecall", "needs a checkpointer with searchMessages or list (to find the user's threads)");
  if (o.responseFormat !== undefined && o.responseMode === "tool" && userTools.has(RESPOND_TOOL))
    throw new ConfigError("tools", `'${RESPOND_TOOL}' is the tool that gives the final answer when responseMode is "tool"`);
  return {
    ...o,
    durability,
    interruptOn: reviewed(tools, o.interruptOn),
    threadRecall: resolveThreadRecall(o.threadRecall),
    structured: o.responseFormat === undefined ? undefined : structuredFormat(o.responseFormat),
    subagents: subagents.map((s) => (s.interruptOn ? { ...s, interruptOn: reviewed(tools, s.interruptOn) } : s)),
    memorySources: memorySourcePaths(options.memorySources, o.memoryFile),
    skillsSources: options.skillsSources ?? [o.skillsDir],
  };
}

/** `threadRecall` with its defaults, or `undefined` when off. */
function resolveThreadRecall(option: boolean | ThreadRecallOptions): Required<ThreadRecallOptions> | undefined {
  if (!option) return undefined;
  const given = option === true ? {} : option;
  return {
    maxResults: given.maxResults ?? MESSAGE_SEARCH_LIMIT.default,
    snippetChars: given.snippetChars ?? SNIPPET_CHARS.default,
    inject: given.inject ?? 0,
    injectTokens: given.injectTokens ?? 400,
    tool: given.tool ?? true,
  };
}

/** The options with their defaults filled in. */
export type ResolvedOptions = ReturnType<typeof resolveOptions>;

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
