/**
 * What every command opens from the configuration: the SQLite store and checkpointer (one file),
 * the per-thread backend (a sandboxed `--root` or the database) with the user's `/memories/`
 * route (and, over a `--root`, what the agent records of the thread, in the database), and the agent.
 * @module
 */
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { SqliteCheckpointer, SqliteStore } from "@engram/sqlite";
import {
  type Backend,
  type ChatModel,
  CompositeBackend,
  ConfigError,
  type DeepAgent,
  type DeepAgentOptions,
  FilesystemBackend,
  type InterruptConfig,
  LongTermMemory,
  MemoryHistory,
  StoreBackend,
  StoreMemoryStorage,
  createDeepAgent,
  parseModelString,
  loadCore,
  redactMemoryWrites,
} from "engram";
import { DEFAULT_OLLAMA_BASE_URL, isLocalModelId } from "engram/kit";
import type { CliConfig } from "./config.js";
import { maskUrlCredentials } from "./masking.js";
import { Permissions, modePolicy, permissionsMiddleware } from "./permissions.js";
import { ReadOnlyBackend } from "./readonly-backend.js";
import { inert } from "./render.js";

/** Where the user's AGENTS.md lives, in the agent's tree (a store route). */
export const USER_MEMORY_PATH = "/memories/AGENTS.md";
/** The project memory file, when `--root` is set. */
export const PROJECT_MEMORY_PATH = "/AGENTS.md";
/** Skill directories: the user's (`$ENGRAM_HOME/skills`, read-only), then the project's (later wins). */
export const SKILLS_SOURCES = ["/user-skills/", "/skills/"];

/** What the agent writes on its own, beside the task's files: summarisation's older messages
 * (`/conversation_history/<thread>.md`) and large tool results (`/large_tool_results/<id>.txt`). */
export const AGENT_RECORD_DIRS = ["conversation_history", "large_tool_results"] as const;

/** The namespace of a thread's `dir` (one of {@link AGENT_RECORD_DIRS}) in the store, when its
 * files are a `--root` directory: a raw transcript belongs with the thread, not in the user's
 * project (where it would be committed). */
export function agentRecordsNamespace(threadId: string, dir: (typeof AGENT_RECORD_DIRS)[number]): string[] {
  return ["engram", "threads", threadId, dir];
}

/** The namespace of a user's `/memories/` files in the store. */
export function userFilesNamespace(user: string): string[] {
  return ["engram", "users", user, "files"];
}

/** Where the memory history is kept in the store (the user id is appended). */
export const HISTORY_NAMESPACE = ["memory-history"];

/** Storage and backends, without a model (enough for `threads`, `memory`, `skills`). */
export interface Storage {
  config: CliConfig;
  store: SqliteStore;
  checkpointer: SqliteCheckpointer;
  /** The backend of a thread: the root (or the thread's files in the database) + `/memories/`. */
  backend(threadId: string): Backend;
  /** The user's `/memories/` files. */
  userFiles: StoreBackend;
  /** The project directory backend, when `--root` is set (read-only unless `--write`). */
  project?: Backend;
  /** Every change to the memory files and long-term facts (store namespace {@link HISTORY_NAMESPACE}). */
  history: MemoryHistory;
  close(): void;
}

/** Opens the database and the backends of `config`. Throws `ConfigError` for a bad `--root`.
 * `home` holds the user's skills (`<home>/skills/<name>/SKILL.md`). */
export function openStorage(config: CliConfig, home: string): Storage {
  let project: Backend | undefined;
  if (config.root !== undefined) {
    if (!existsSync(config.root) || !statSync(config.root).isDirectory()) {
      throw new ConfigError("root", `${config.root} is not a directory`);
    }
    // Commands change the root only where the agent may write (`--write`, or the mode's).
    const { execute } = modePolicy(config.mode, [], { root: true });
    const fs = new FilesystemBackend({ rootDir: config.root, ...(execute && { execute: { readOnly: !config.write } }) });
    // Its AGENTS.md is a memory source: the agent redacts what it writes there.
    project = config.write ? fs : new ReadOnlyBackend(fs, loadCore());
  }
  const store = new SqliteStore({ path: config.database });
  let checkpointer: SqliteCheckpointer;
  try {
    checkpointer = new SqliteCheckpointer({ path: config.database });
  } catch (e) {
    store.close();
    throw e;
  }
  const userFiles = new StoreBackend({ store, namespace: userFilesNamespace(config.user) });
  // Every file of the user's memory route is memory, not only its AGENTS.md: every write to it
  // is redacted (as `engram memory` does).
  const memoryFiles = redactMemoryWrites(userFiles, loadCore());
  const skillsDir = join(home, "skills");
  const userSkills = existsSync(skillsDir) ? new ReadOnlyBackend(new FilesystemBackend({ rootDir: skillsDir }), loadCore()) : undefined;
  const history = new MemoryHistory({
    store,
    namespace: HISTORY_NAMESPACE,
    retention: {
      ...(config.historyMaxChanges !== undefined && { maxChanges: config.historyMaxChanges }),
      ...(config.historyMaxAgeDays !== undefined && { maxAgeDays: config.historyMaxAgeDays }),
    },
  });
  return {
    config,
    store,
    checkpointer,
    userFiles,
    history,
    ...(project && { project }),
    backend(threadId) {
      const base = project ?? new StoreBackend({ store, namespace: ["engram", "threads", threadId, "files"] });
      const records = project
        ? Object.fromEntries(
            AGENT_RECORD_DIRS.map((dir) => [`/${dir}/`, new StoreBackend({ store, namespace: agentRecordsNamespace(threadId, dir) })]),
          )
        : {};
      return new CompositeBackend(base, { "/memories/": memoryFiles, ...(userSkills && { "/user-skills/": userSkills }), ...records });
    },
    close() {
      checkpointer.close();
      store.close();
    },
  };
}

/** Names `--review` takes for several tools: `files` is every tool that changes a file. */
export const REVIEW_GROUPS: Record<string, readonly string[]> = { files: ["write_file", "edit_file", "delete"] };

/** The agent options the CLI derives from the configuration. */
export function agentOptions(storage: Storage, extra: { model: ChatModel }): DeepAgentOptions {
  const { config } = storage;
  const reviewed = config.review.flatMap((name) => (Object.hasOwn(REVIEW_GROUPS, name) ? [...(REVIEW_GROUPS[name] ?? [])] : [name]));
  const policy = modePolicy(config.mode, reviewed, { root: storage.project !== undefined });
  const interruptOn: Record<string, InterruptConfig> = policy.interruptOn;
  const settings = {
    ...(config.temperature !== undefined && { temperature: config.temperature }),
    ...(config.maxOutputTokens !== undefined && { maxOutputTokens: config.maxOutputTokens }),
  };
  return {
    backend: ({ threadId }) => storage.backend(threadId),
    checkpointer: storage.checkpointer,
    store: storage.store,
    memorySources: storage.project ? [USER_MEMORY_PATH, PROJECT_MEMORY_PATH] : [USER_MEMORY_PATH],
    skillsSources: SKILLS_SOURCES,
    interruptOn,
    middleware: [permissionsMiddleware(new Permissions(config.permissions), policy.hidden, config.mode)],
    memoryHistory: storage.history,
    threadRecall: config.threadRecall,
    ...(config.maxTurns !== undefined && { maxTurns: config.maxTurns }),
    ...(Object.keys(settings).length > 0 && { modelSettings: settings }),
    longTermMemory: config.longTermMemory
      ? {
          model: extra.model,
          ...(config.memoryDebounceMs !== undefined && { debounceMs: config.memoryDebounceMs }),
          // One local model serves the turn and the memory: extraction waits for idle time.
          ...(runsLocally(config, extra.model) && { schedule: "idle" as const }),
        }
      : false,
  };
}

/** How long `chat` and `run` let long-term memory extract when they end, in ms; what is not
 * done by then is kept as pending work and extracted in a later session's idle time. */
export const EXIT_MEMORY_BUDGET_MS = 500;

/** Closes the agent as `chat` and `run` end: long-term memory extracts for at most
 * {@link EXIT_MEMORY_BUDGET_MS} and keeps the rest as pending work. Resolves to how many of the
 * user's conversations wait for extraction. */
export async function closeAgent(agent: DeepAgent, user: string): Promise<number> {
  await agent.close({ timeoutMs: EXIT_MEMORY_BUDGET_MS });
  const pending = (await agent.longTermMemory?.pendingWork()) ?? [];
  return pending.filter((entry) => entry.job.userId === user).length;
}

/** Whether the model runs on this machine: a `llama:` file, or a server at a loopback address
 * (`--base-url`, a model string's `@http://…`, `ollama:`'s default: llama.cpp's server, Ollama,
 * LM Studio). */
export function runsLocally(config: CliConfig, model: ChatModel): boolean {
  if (isLocalModelId(model.id)) return true;
  let url = config.baseUrl;
  if (url === undefined && config.model !== undefined) {
    try {
      const spec = parseModelString(config.model);
      url = spec.baseURL ?? (spec.provider === "ollama" ? DEFAULT_OLLAMA_BASE_URL : undefined);
    } catch {
      return false;
    }
  }
  if (url === undefined || !URL.canParse(url)) return false;
  const host = new URL(url).hostname.replace(/^\[|\]$/g, "");
  return host === "localhost" || host === "::1" || /^127\./.test(host);
}

/** The agent of `config` over `storage`. */
export function openAgent(storage: Storage, model: ChatModel, onWarning?: (message: string) => void): DeepAgent {
  const options = agentOptions(storage, { model });
  if (onWarning && typeof options.longTermMemory === "object") options.longTermMemory.onWarning = (m) => onWarning(maskUrlCredentials(m));
  return createDeepAgent(model, options);
}

/** A model for memory commands that never call one: any call is an error. */
const NO_MODEL: ChatModel = {
  id: "none",
  async invoke() {
    throw new ConfigError("model", "this command does not call a model");
  },
  // biome-ignore lint/correctness/useYield: it never yields, it fails
  async *stream() {
    throw new ConfigError("model", "this command does not call a model");
  },
};

/** The long-term memory of the configured user, for the `memory` commands (no model calls). */
export function openLongTermMemory(storage: Storage): LongTermMemory {
  return new LongTermMemory({
    model: NO_MODEL,
    storage: new StoreMemoryStorage({ store: storage.store }),
    store: storage.store,
    onWarning: (m) => process.stderr.write(`warning: ${inert(maskUrlCredentials(m))}\n`),
  });
}
