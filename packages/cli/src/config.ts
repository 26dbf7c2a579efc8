/**
 * The `engram` command's configuration: flags > environment (`ENGRAM_*`) > project file
 * (`engram.config.json` or `.engram/config.json` in the working directory) > user file
 * (`$ENGRAM_HOME/config.json`, `ENGRAM_HOME` defaulting to `~/.engram`) > defaults. Every value
 * remembers where it came from (`engram config` prints it). Files are validated with zod; an
 * error names the key and the file.
 *
 * **A project file is not trusted.** It comes with the repository, written by whoever wrote
 * that (a clone is enough to run `engram` under it), so it may only narrow what the agent may do
 * or describe the project; flags, `ENGRAM_*` variables and the user file are the user's own and
 * may set anything. A project file that tries to widen is refused with a `ConfigError` naming the
 * key, the file, and the flag, variable or user file to set it in instead (see
 * {@link PROJECT_REFUSED}), even when a flag or variable would override the value (such a file
 * is either hostile or misplaced, and is shown rather than silently skipped):
 * - `model`, `baseUrl`, `apiKey`: where the conversation (and every file the agent reads) is sent,
 *   and with which credentials (a model string can carry a server: `openai-compatible:m@http://…`);
 * - `user`, `database`: whose memory, and which file threads and memory are read from and
 *   written to;
 * - `historyMaxChanges`, `historyMaxAgeDays`: how much of the user's memory history is kept (for
 *   every project: a project must not prune it);
 * - `threads`, `contextSize`: how much of the user's machine a `llama:` model takes (a context
 *   size is memory: a large one can exhaust it);
 * - `write`, `longTermMemory` or `threadRecall` other than `false`, `maxTurns` above the value
 *   it overrides (the user file's, else the agent's default of 100);
 * - `root` outside the project directory (the file's directory, the working directory; symbolic
 *   links are followed): `"."` and `"src"` are fine, `"/"`, `".."` or a link to `/` are not;
 * - `mode` wider than the one it overrides (`plan` < `ask` < `auto-edit` < `auto`), and
 *   `permissions.allow` (a project cannot let a call skip its review).
 *
 * A project `review` list is added to the user file's, never replaces it (a project can ask for
 * more reviews, not remove the user's); `--review` and `ENGRAM_REVIEW` still replace. Its
 * `permissions.deny` rules are added to the user's the same way. The other keys (`temperature`,
 * `maxOutputTokens`, `memoryDebounceMs`) are taken as they are.
 *
 * `mode` sets `write`: `plan` turns it off, `auto-edit` and `auto` on (unless a project file
 * turned it off: then `execute` is not offered either, as `write` is needed for it).
 * @module
 */
import { existsSync, realpathSync } from "node:fs";
import { homedir, userInfo } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { defaultDatabasePath } from "@engram/sqlite";
import { ConfigError } from "engram";
import { validateNamespace } from "engram/kit";
import { z } from "zod";
import { parseConfigJson, readConfigText, within } from "./config-file.js";
import { maskApiKey, maskUrlCredentials } from "./masking.js";
import { MODES, type Mode, type PermissionRules, RULE_SYNTAX } from "./permissions.js";

/** The effective configuration of one `engram` invocation. */
export interface CliConfig {
  /** `provider:model` (`openai:gpt-4.1`, `openai-compatible:qwen2.5`, `llama:./model.gguf`). Default: none. */
  model?: string;
  /** OpenAI-compatible server root (`http://127.0.0.1:8080/v1`); implies `openai-compatible`. Default: none. */
  baseUrl?: string;
  /** Bearer key for the OpenAI-compatible server. Default: none (only `ENGRAM_API_KEY` or the user file set it). */
  apiKey?: string;
  /** A host directory exposed to the agent as `/` (sandboxed). Default: none (files live in the database). */
  root?: string;
  /** Whether the agent may write under `root`. Default: `false` (read-only). */
  write: boolean;
  /** Whose memory and threads these are. Default: the OS user name. */
  user: string;
  /** Tools whose calls a human reviews before they run (a project file's are added to the user
   * file's). Default: none. */
  review: string[];
  /** Long-term facts memory for `user`. Default: `true`. */
  longTermMemory: boolean;
  /** The `search_past_threads` tool: the agent searches `user`'s earlier threads. Default: `true`. */
  threadRecall: boolean;
  /** The SQLite file (store, checkpointer, long-term memory). Default: `defaultDatabasePath()`. */
  database: string;
  /** Model turns per run at most. Default: the agent's (100). */
  maxTurns?: number;
  /** Sampling temperature. Default: the provider's. */
  temperature?: number;
  /** Output tokens per model call at most. Default: the provider's. */
  maxOutputTokens?: number;
  /** Delay before long-term memory extraction, ms (0 or 1000–300000). Default: the library's (30000). */
  memoryDebounceMs?: number;
  /** CPU threads of a `llama:` model. Default: every core. */
  threads?: number;
  /** Context window of a `llama:` model, in tokens. Default: the library's (4096, or the
   * model's training size if smaller). */
  contextSize?: number;
  /** Memory history: changes kept per user at most. Default: the library's (1,000). */
  historyMaxChanges?: number;
  /** Memory history: changes older than this many days are dropped. Default: the library's (365). */
  historyMaxAgeDays?: number;
  /** What the agent may do unreviewed (see `permissions.ts`). Default: `ask`. */
  mode: Mode;
  /** Allow and deny rules, `tool` or `tool(pattern)` (a project file's denials are added to the
   * user's; it may not allow). Default: none. */
  permissions: PermissionRules;
}

/** Where a value came from. */
export type ConfigSource = "default" | "flag" | `env ${string}` | `file ${string}`;

/** The configuration and the source of each key. */
export interface LoadedConfig {
  config: CliConfig;
  sources: Record<keyof CliConfig, ConfigSource>;
  /** The files that were read, in precedence order (lowest first). */
  files: string[];
  /** `$ENGRAM_HOME`, else `~/.engram`. */
  home: string;
}

const int = (min: number) =>
  z
    .number({ message: "must be a number" })
    .int({ message: "must be an integer" })
    .min(min, { message: `must be an integer ≥ ${min}` });
const str = z.string({ message: "must be a string" }).min(1, { message: "must not be empty" });
const rule = z.string({ message: "must be a string" }).regex(RULE_SYNTAX, { message: 'must be a rule: "tool" or "tool(pattern)"' });
const toolName = z.string({ message: "must be a string" }).regex(/^[A-Za-z0-9_-]{1,64}$/, { message: "must be a tool name" });

/** The keys a configuration file may hold (a project file: fewer, see the module documentation). */
export const configFileSchema = z.strictObject({
  model: str.regex(/^[^:\s]+:\S+$/, { message: 'must be "provider:model" (e.g. "openai:gpt-4.1")' }).optional(),
  baseUrl: z.url({ message: "must be a URL (http://host:port/v1)", protocol: /^https?$/ }).optional(),
  apiKey: str.optional(),
  root: str.optional(),
  write: z.boolean({ message: "must be true or false" }).optional(),
  user: str.optional(),
  review: z.array(toolName, { message: "must be an array of tool names" }).optional(),
  longTermMemory: z.boolean({ message: "must be true or false" }).optional(),
  threadRecall: z.boolean({ message: "must be true or false" }).optional(),
  database: str.optional(),
  maxTurns: int(1).optional(),
  temperature: z.number({ message: "must be a number" }).min(0, { message: "must be ≥ 0" }).max(2, { message: "must be ≤ 2" }).optional(),
  maxOutputTokens: int(1).optional(),
  memoryDebounceMs: int(0)
    .refine((v) => v === 0 || (v >= 1000 && v <= 300_000), { message: "must be 0 or 1000–300000" })
    .optional(),
  historyMaxChanges: int(1).optional(),
  historyMaxAgeDays: int(1).optional(),
  threads: int(1).optional(),
  contextSize: int(256).optional(),
  mode: z.enum(MODES, { message: `must be one of ${MODES.join(", ")}` }).optional(),
  permissions: z
    .strictObject(
      {
        allow: z.array(rule, { message: "must be an array of rules" }).optional(),
        deny: z.array(rule, { message: "must be an array of rules" }).optional(),
      },
      { message: 'must be { "allow": [rules], "deny": [rules] }' },
    )
    .optional(),
});

type FileConfig = z.infer<typeof configFileSchema>;
type Key = keyof CliConfig;

/** Environment variable of each key. */
export const ENV_VARS: Record<Key, string> = {
  model: "ENGRAM_MODEL",
  baseUrl: "ENGRAM_BASE_URL",
  apiKey: "ENGRAM_API_KEY",
  root: "ENGRAM_ROOT",
  write: "ENGRAM_WRITE",
  user: "ENGRAM_USER",
  review: "ENGRAM_REVIEW",
  longTermMemory: "ENGRAM_LONG_TERM_MEMORY",
  threadRecall: "ENGRAM_THREAD_RECALL",
  database: "ENGRAM_DATABASE",
  maxTurns: "ENGRAM_MAX_TURNS",
  temperature: "ENGRAM_TEMPERATURE",
  maxOutputTokens: "ENGRAM_MAX_OUTPUT_TOKENS",
  memoryDebounceMs: "ENGRAM_MEMORY_DEBOUNCE_MS",
  historyMaxChanges: "ENGRAM_HISTORY_MAX_CHANGES",
  historyMaxAgeDays: "ENGRAM_HISTORY_MAX_AGE_DAYS",
  threads: "ENGRAM_THREADS",
  contextSize: "ENGRAM_CONTEXT_SIZE",
  mode: "ENGRAM_MODE",
  permissions: "ENGRAM_PERMISSIONS",
};

const KEYS = Object.keys(ENV_VARS) as Key[];
/** Keys holding paths: relative values are resolved against their source's directory. */
const PATH_KEYS: Key[] = ["root", "database"];

/** The flag of each key that has one (the others are set by variable or file only). */
const FLAGS: Partial<Record<Key, string>> = {
  model: "--model",
  baseUrl: "--base-url",
  root: "--root",
  write: "--write",
  user: "--user",
  review: "--review",
  database: "--database",
  maxTurns: "--max-turns",
  temperature: "--temperature",
  maxOutputTokens: "--max-output-tokens",
  threads: "--threads",
  contextSize: "--context-size",
  mode: "--mode",
};

/** The keys a project file may not hold at all, and why: each widens what the agent may do or
 * where data goes. (`write`, `longTermMemory`, `threadRecall`, `maxTurns` and `root` are refused only when they
 * widen; see the module documentation.) */
export const PROJECT_REFUSED: Partial<Record<Key, string>> = {
  model: "it chooses where the conversation and the files the agent reads are sent",
  baseUrl: "it chooses the server the conversation and the files the agent reads are sent to",
  apiKey: "it chooses the credentials sent to the model server",
  user: "it chooses whose memory and threads are read and written",
  database: "it chooses the file threads and memory are read from and written to",
  historyMaxChanges: "it decides how much of your memory history is kept, for every project",
  historyMaxAgeDays: "it decides how much of your memory history is kept, for every project",
  threads: "it decides how much of your machine's CPU a local model takes",
  contextSize: "it decides how much of your machine's memory a local model takes",
};

/** The agent's default `maxTurns` (a project file may only lower the value it overrides). */
const DEFAULT_MAX_TURNS = 100;

/** The refusal of `key` (of `value`, when only some values are refused) in the project file
 * `path`: why, and where to set it instead. */
function refused(key: Key, path: string, why: string, userFile: string, value?: unknown): ConfigError {
  const flag = key === "longTermMemory" || key === "threadRecall" ? undefined : FLAGS[key];
  const where = [flag, ENV_VARS[key]].filter(Boolean).join(", ");
  const what = value === undefined ? "not allowed" : `${JSON.stringify(value)} is not allowed`;
  return new ConfigError(
    key,
    `${what} in a project file (${path}): ${why}. A project file comes with the repository, not from you: ` +
      `set it with ${where} or in your own ${userFile}`,
  );
}

/** `path` (absolute) with its symbolic links resolved: those of its longest existing ancestor
 * when it does not exist (`link-to-root/missing`). */
function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    const parent = dirname(path);
    return parent === path ? path : join(realPath(parent), basename(path));
  }
}

/** Whether `path` is `dir` or inside it, symbolic links followed. */
function isInside(path: string, dir: string): boolean {
  return within(realPath(path), realPath(dir));
}

/** Throws the `ConfigError` of the first key of a project file that would widen what the agent
 * may do or where data goes, given the configuration below it (`below`: defaults and user file). */
function checkProject(values: FileConfig, path: string, base: string, below: CliConfig, userFile: string): void {
  for (const key of KEYS) {
    const v = values[key];
    if (v === undefined) continue;
    const why = PROJECT_REFUSED[key];
    if (why) throw refused(key, path, why, userFile);
  }
  if (values.write !== undefined && values.write !== false) {
    throw refused(
      "write",
      path,
      "it would let the agent change the files under root (a project file may only set false)",
      userFile,
      values.write,
    );
  }
  if (values.longTermMemory !== undefined && values.longTermMemory !== false) {
    throw refused("longTermMemory", path, "a project file may only turn it off (false)", userFile, values.longTermMemory);
  }
  if (values.threadRecall !== undefined && values.threadRecall !== false) {
    throw refused("threadRecall", path, "a project file may only turn it off (false)", userFile, values.threadRecall);
  }
  const turns = below.maxTurns ?? DEFAULT_MAX_TURNS;
  if (values.maxTurns !== undefined && values.maxTurns > turns) {
    throw refused(
      "maxTurns",
      path,
      `a project file may only lower it, to at most ${turns} (the value it overrides)`,
      userFile,
      values.maxTurns,
    );
  }
  const mode = below.mode;
  if (values.mode !== undefined && MODES.indexOf(values.mode) > MODES.indexOf(mode)) {
    throw refused("mode", path, `a project file may only narrow it, to at most ${mode} (the mode it overrides)`, userFile, values.mode);
  }
  if (values.permissions?.allow !== undefined) {
    throw refused(
      "permissions",
      path,
      "allow rules let calls skip their review (a project file may only add deny rules)",
      userFile,
      values.permissions.allow,
    );
  }
  if (values.root !== undefined && !isInside(resolve(base, values.root), base)) {
    throw refused(
      "root",
      path,
      `it is outside the project directory ${base} (a project file may only name a directory inside it, like "." or "src")`,
      userFile,
      values.root,
    );
  }
}

/** Flag values as commander parsed them (strings, booleans, or absent). */
export type FlagValues = Partial<Record<Key, unknown>>;

/** `$ENGRAM_HOME`, else `~/.engram`. */
export function engramHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.ENGRAM_HOME ? resolve(env.ENGRAM_HOME) : join(homedir(), ".engram");
}

function osUser(env: NodeJS.ProcessEnv): string {
  try {
    const name = userInfo().username;
    if (name) return name;
  } catch {
    // No passwd entry (containers): fall back to the environment.
  }
  return env.USER || env.USERNAME || "default";
}

/** The default user id for an OS user name: the name, with what a store namespace cannot hold
 * (spaces, `/`, letters beyond ASCII: "John Smith", "José") replaced by `_`, so that every
 * command works for any login; `--user` names anyone else. */
export function defaultUserId(osName: string): string {
  return osName.replace(/[^A-Za-z0-9\-_.@+:~]/g, "_").slice(0, 128) || "default";
}

function parseBool(text: string): boolean | undefined {
  const t = text.trim().toLowerCase();
  if (["1", "true", "yes", "on"].includes(t)) return true;
  if (["0", "false", "no", "off", ""].includes(t)) return false;
  return undefined;
}

/** Turns a text value (environment, flag) into the typed value of `key`, or throws. */
function fromText(key: Key, text: string, where: string): unknown {
  switch (key) {
    case "write":
    case "longTermMemory":
    case "threadRecall": {
      const b = parseBool(text);
      if (b === undefined) throw new ConfigError(key, `must be true or false, got ${JSON.stringify(text)} (${where})`);
      return b;
    }
    case "review":
      return text
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean);
    case "permissions":
      try {
        return JSON.parse(text) as unknown;
      } catch {
        throw new ConfigError(key, `must be JSON: {"allow": [rules], "deny": [rules]} (${where})`);
      }
    case "maxTurns":
    case "maxOutputTokens":
    case "memoryDebounceMs":
    case "historyMaxChanges":
    case "historyMaxAgeDays":
    case "threads":
    case "contextSize":
    case "temperature": {
      const n = Number(text);
      if (text.trim() === "" || !Number.isFinite(n)) throw new ConfigError(key, `must be a number, got ${JSON.stringify(text)} (${where})`);
      return n;
    }
    default:
      return text;
  }
}

/** Validates one layer against the file schema; errors name the key and where it came from. */
function check(layer: Record<string, unknown>, where: string): FileConfig {
  const parsed = configFileSchema.safeParse(layer);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const key = issue?.path.length ? issue.path.map(String).join(".") : "(config)";
  let message = issue?.message ?? "is invalid";
  if (issue?.code === "unrecognized_keys") {
    const keys = (issue as { keys?: string[] }).keys ?? [];
    throw new ConfigError(keys[0] ?? key, `is not a configuration key (known: ${KEYS.join(", ")}) (${where})`);
  }
  if (issue?.code === "too_small" || issue?.code === "too_big") message = message.replace(/^Too (small|big): /i, "must be ");
  throw new ConfigError(key, `${message} (${where})`);
}

/** The configuration file `path`, read as {@link readConfigText} does (`project`: the directory a
 * project file must stay in) and validated. */
function readFile(path: string, project?: string): FileConfig {
  const json = parseConfigJson(readConfigText(path, project), path);
  if (typeof json !== "object" || json === null || Array.isArray(json)) throw new ConfigError("(file)", `${path} must hold a JSON object`);
  return check(json as Record<string, unknown>, `in ${path}`);
}

/** The project file of `cwd`: `engram.config.json`, else `.engram/config.json`; and the directory
 * its relative paths are resolved against (the project directory). */
export function projectConfigFile(cwd: string): { path: string; base: string } | undefined {
  const direct = join(cwd, "engram.config.json");
  if (existsSync(direct)) return { path: direct, base: cwd };
  const nested = join(cwd, ".engram", "config.json");
  if (existsSync(nested)) return { path: nested, base: cwd };
  return undefined;
}

/** Options of {@link loadConfig}. */
export interface LoadConfigOptions {
  /** Default: `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Where the project file is looked for. Default: `process.cwd()`. */
  cwd?: string;
  /** The OS user name (the default `user`). Default: the logged-in user's. */
  osUser?: string;
}

/**
 * Resolves the configuration. Throws a `ConfigError` (naming the key, and the file or variable)
 * for an invalid value, and for a project file that would widen what the agent may do or where
 * data goes (the rule is in this module's documentation).
 */
export function loadConfig(flags: FlagValues, options: LoadConfigOptions = {}): LoadedConfig {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const home = engramHome(env);
  const layers: { values: FileConfig; source: ConfigSource; base: string; path: string; project: boolean }[] = [];
  const files: string[] = [];

  const userFile = join(home, "config.json");
  if (existsSync(userFile)) {
    layers.push({ values: readFile(userFile), source: `file ${userFile}`, base: home, path: userFile, project: false });
    files.push(userFile);
  }
  const project = projectConfigFile(cwd);
  if (project && resolve(project.path) !== resolve(userFile)) {
    const values = readFile(project.path, project.base);
    layers.push({ values, source: `file ${project.path}`, base: project.base, path: project.path, project: true });
    files.push(project.path);
  }
  const fromEnv: Record<string, unknown> = {};
  for (const key of KEYS) {
    const v = env[ENV_VARS[key]];
    if (v !== undefined && v !== "") fromEnv[key] = fromText(key, v, `environment ${ENV_VARS[key]}`);
  }
  const envSources = Object.fromEntries(Object.keys(fromEnv).map((k) => [k, `env ${ENV_VARS[k as Key]}`]));
  for (const [k, v] of Object.entries(fromEnv)) {
    check({ [k]: v }, `environment ${ENV_VARS[k as Key]}`);
  }
  const fromFlags: Record<string, unknown> = {};
  for (const key of KEYS) {
    const v = flags[key];
    if (v === undefined) continue;
    fromFlags[key] = typeof v === "string" && key !== "model" && key !== "baseUrl" ? fromText(key, v, `flag`) : v;
  }
  for (const [k, v] of Object.entries(fromFlags)) check({ [k]: v }, `flag --${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`);

  const config: CliConfig = {
    write: false,
    user: defaultUserId(options.osUser ?? osUser(env)),
    review: [],
    longTermMemory: true,
    threadRecall: true,
    mode: "ask",
    permissions: {},
    database: env === process.env ? defaultDatabasePath() : join(home, "engram.db"),
  };
  const sources = Object.fromEntries(KEYS.map((k) => [k, "default"])) as Record<Key, ConfigSource>;
  const apply = (values: Record<string, unknown>, source: (k: Key) => ConfigSource, base: string) => {
    for (const key of KEYS) {
      const v = values[key];
      if (v === undefined) continue;
      (config as unknown as Record<string, unknown>)[key] = PATH_KEYS.includes(key) && typeof v === "string" ? resolve(base, v) : v;
      sources[key] = source(key);
    }
  };
  for (const layer of layers) {
    if (!layer.project) {
      apply(layer.values, () => layer.source, layer.base);
      continue;
    }
    // The project file (not trusted): refused if it widens anything; its reviews are added.
    checkProject(layer.values, layer.path, layer.base, config, userFile);
    const { review, permissions, ...rest } = layer.values;
    apply(rest, () => layer.source, layer.base);
    const added = (review ?? []).filter((tool) => !config.review.includes(tool));
    if (added.length > 0) apply({ review: [...config.review, ...added] }, () => layer.source, layer.base);
    const denials = (permissions?.deny ?? []).filter((rule) => !(config.permissions.deny ?? []).includes(rule));
    if (denials.length > 0) {
      const deny = [...(config.permissions.deny ?? []), ...denials];
      apply({ permissions: { ...config.permissions, deny } }, () => layer.source, layer.base);
    }
  }
  apply(fromEnv, (k) => (envSources[k] as ConfigSource) ?? "default", cwd);
  apply(fromFlags, () => "flag", cwd);
  applyModeToWrite(config, sources, layers.find((layer) => layer.project)?.source);
  // The user names store namespaces: a name they cannot hold is a usage error here, not a
  // failure of whichever command first opens them.
  try {
    validateNamespace([config.user]);
  } catch (e) {
    throw new ConfigError("user", `${(e as Error).message} (${sources.user})`);
  }
  return { config, sources, files, home };
}

/** `mode` decides `write`: `plan` never writes, `auto-edit` and `auto` do, unless the project
 * file (`projectSource`) said `write: false` (it may narrow). */
function applyModeToWrite(config: CliConfig, sources: Record<Key, ConfigSource>, projectSource: ConfigSource | undefined): void {
  if (config.mode === "plan" && config.write) {
    config.write = false;
    sources.write = sources.mode;
  } else if ((config.mode === "auto-edit" || config.mode === "auto") && !config.write && sources.write !== projectSource) {
    config.write = true;
    sources.write = sources.mode;
  }
}

/** The configuration as printable rows: the API key masked, and the password of every URL
 * (`baseUrl`, a model string's `@http://…` suffix). */
export function describeConfig(loaded: LoadedConfig): { key: string; value: string; source: ConfigSource }[] {
  return KEYS.map((key) => {
    const v = loaded.config[key];
    let value =
      v === undefined
        ? "(unset)"
        : Array.isArray(v)
          ? v.join(",") || "(none)"
          : typeof v === "object"
            ? JSON.stringify(v)
            : maskUrlCredentials(String(v));
    if (key === "apiKey" && typeof v === "string") value = maskApiKey(v);
    return { key, value, source: loaded.sources[key] };
  });
}

/** The directory of the user file (for messages). */
export function userConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(engramHome(env), "config.json");
}
