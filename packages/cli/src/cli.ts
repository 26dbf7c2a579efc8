/**
 * The `engram` command line (commander): global options shared by every command, then `chat`,
 * `run`, `threads`, `memory`, `skills` and `config`.
 * @module
 */
import { Command, CommanderError, Option } from "commander";
import type { FlagValues, LoadedConfig } from "./config.js";
import type { Context } from "./context.js";
import { EXIT } from "./exit-codes.js";

// The library and the commands load when a command runs (about 0.1 s), not for --help or
// --version: only commander is imported up front.
const chat = () => import("./commands/chat.js");
const config = () => import("./commands/config.js");
const history = () => import("./commands/history.js");
const memoryCommands = () => import("./commands/memory.js");
const run = () => import("./commands/run.js");
const skills = () => import("./commands/skills.js");
const threadsCommands = () => import("./commands/threads.js");
const threadHistoryCommands = () => import("./commands/thread-history.js");

/** Global options and the configuration key each one sets. */
const GLOBAL_FLAGS: [flag: string, key: keyof FlagValues, description: string][] = [
  [
    "-m, --model <provider:model>",
    "model",
    "the model: openai:gpt-4.1, anthropic:<model>, openai-compatible:<model>, llama:<file.gguf> (ENGRAM_MODEL)",
  ],
  [
    "--base-url <url>",
    "baseUrl",
    "an OpenAI-compatible server (llama.cpp, Ollama, vLLM, LM Studio), e.g. http://127.0.0.1:8080/v1 (ENGRAM_BASE_URL)",
  ],
  ["--root <dir>", "root", "expose this directory to the agent as / (sandboxed, read-only unless --write) (ENGRAM_ROOT)"],
  ["--write", "write", "let the agent write under --root (ENGRAM_WRITE)"],
  [
    "--mode <mode>",
    "mode",
    "plan (no writes, no commands), ask (default: execute and --review tools reviewed), auto-edit (writes unreviewed), auto (no review; commands sandboxed) (ENGRAM_MODE)",
  ],
  ["-u, --user <name>", "user", "whose memory and threads: default the OS user name (ENGRAM_USER)"],
  ["--review <tools>", "review", "tools reviewed before they run, comma-separated; files = write_file,edit_file,delete (ENGRAM_REVIEW)"],
  ["--no-long-term-memory", "longTermMemory", "turn long-term facts memory off (ENGRAM_LONG_TERM_MEMORY=false)"],
  ["--no-thread-recall", "threadRecall", "no search_past_threads tool over your earlier threads (ENGRAM_THREAD_RECALL=false)"],
  ["--database <file>", "database", "the SQLite file: default $ENGRAM_HOME/engram.db (ENGRAM_DATABASE)"],
  ["--max-turns <n>", "maxTurns", "model turns per run at most (ENGRAM_MAX_TURNS)"],
  ["--temperature <t>", "temperature", "sampling temperature (ENGRAM_TEMPERATURE)"],
  ["--max-output-tokens <n>", "maxOutputTokens", "output tokens per model call at most (ENGRAM_MAX_OUTPUT_TOKENS)"],
  ["--threads <n>", "threads", "CPU threads of a llama: model; default every core (ENGRAM_THREADS)"],
  ["--context-size <n>", "contextSize", "context window of a llama: model, in tokens; default 4096 (ENGRAM_CONTEXT_SIZE)"],
];

const EXIT_HELP = `
Exit codes:
  0  done            3  max turns         5  waits for review (--yes / --deny)
  1  error           4  max model calls   6  truncated (output limit)
  2  usage / config  130  cancelled (Ctrl-C)`;

const CONFIG_HELP = `
Configuration: flags > environment (ENGRAM_*) > ./engram.config.json or ./.engram/config.json
> $ENGRAM_HOME/config.json (ENGRAM_HOME defaults to ~/.engram). See \`engram config\`.
A project file comes with the repository: it may only narrow (root inside the project, more
reviews, write/longTermMemory/threadRecall false, a lower maxTurns, a narrower mode, permissions.deny rules);
model, baseUrl, apiKey, user, database, history retention, threads, contextSize, write true,
permissions.allow and a root outside the project are refused there.
Your config.json may hold "permissions": {"allow": [...], "deny": [...]}: rules "tool" or
"tool(pattern)", e.g. "execute(npm test*)", "write_file(/docs/*)" (ENGRAM_PERMISSIONS as JSON).`;

/** The flag values the user actually typed (commander fills defaults for --no-* flags). */
function typedFlags(cmd: Command): FlagValues {
  const all = cmd.optsWithGlobals() as Record<string, unknown>;
  const flags: FlagValues = {};
  for (const [, key] of GLOBAL_FLAGS) {
    if (cmd.getOptionValueSourceWithGlobals(key) === "cli" && all[key] !== undefined) flags[key] = all[key];
  }
  return flags;
}

/** Builds the program. `run` receives each command's exit code. */
export function buildProgram(done: (code: number) => void): Command {
  const program = new Command("engram")
    .description("Deep agents with durable memory, in your terminal.")
    .version("0.1.0")
    .showHelpAfterError("(engram --help for usage)")
    .option("--no-color", "no colours (also NO_COLOR, and whenever output is not a terminal)")
    .addHelpText("after", CONFIG_HELP);
  for (const [flag, , description] of GLOBAL_FLAGS) program.addOption(new Option(flag, description));
  program.exitOverride();

  /** Wraps a command: resolves the configuration, builds the context, records the exit code. */
  const act =
    (fn: (ctx: Context, ...args: never[]) => number | Promise<number>) =>
    async (...args: unknown[]) => {
      const cmd = args.at(-1) as Command;
      const [{ loadConfig }, { createContext }, { describeError, exitCodeForError }, { inert }] = await Promise.all([
        import("./config.js"),
        import("./context.js"),
        import("./exit.js"),
        import("./render.js"),
      ]);
      let loaded: LoadedConfig;
      try {
        loaded = loadConfig(typedFlags(cmd));
      } catch (e) {
        process.stderr.write(`engram: ${inert(describeError(e))}\n`);
        done(exitCodeForError(e));
        return;
      }
      const color = (cmd.optsWithGlobals() as { color?: boolean }).color;
      const ctx = createContext(loaded, color === false ? { color: false } : {});
      done(await fn(ctx, ...(args.slice(0, -2) as never[]), args.at(-2) as never));
    };

  program
    .command("chat")
    .description("talk with the agent (streamed answers, tool calls, reviews; Ctrl-C cancels a turn, twice exits)")
    .option("-t, --thread <id>", "continue this thread (default: a new one)")
    .action(act(async (ctx, options: { thread?: string }) => (await chat()).chatCommand(ctx, options)));

  program
    .command("run")
    .description("run one task non-interactively (for scripts); the task may come on stdin")
    .argument("[task...]", "what to do")
    .option("-t, --thread <id>", "run on this thread (default: a new one); with --yes/--deny and no task, decide its pending review")
    .option("--json", "one JSON event per line on stdout")
    .option("-y, --yes", "approve every review")
    .option("--deny", "reject every review")
    .addHelpText("after", EXIT_HELP)
    .action(
      act(async (ctx, task: string[], options: { thread?: string; json?: boolean; yes?: boolean; deny?: boolean }) =>
        (await run()).runCommand(ctx, task, options),
      ),
    );

  const threads = program.command("threads").description("saved conversations");
  threads
    .command("list")
    .description("threads, most recent first")
    .option("--json", "one JSON object per line")
    .option("-n, --limit <n>", "at most this many (default 20)")
    .action(act(async (ctx, options: { json?: boolean; limit?: string }) => (await threadsCommands()).threadsList(ctx, options)));
  threads
    .command("show")
    .description("the messages of a thread")
    .argument("<id>")
    .option("--json", "the checkpoint as JSON")
    .action(act(async (ctx, id: string, options: { json?: boolean }) => (await threadsCommands()).threadsShow(ctx, id, options)));
  threads
    .command("history")
    .description("the steps a thread's runs committed, oldest first (fork or rewind to one)")
    .argument("<id>")
    .option("--json", "one JSON object per line")
    .action(act(async (ctx, id: string, options: { json?: boolean }) => (await threadHistoryCommands()).threadsHistory(ctx, id, options)));
  threads
    .command("fork")
    .description("a new thread with the state of a thread at one of its steps")
    .argument("<id>")
    .requiredOption("--at <step>", "the step (engram threads history <id>)")
    .option("--as <new-id>", "the new thread's id (default: a new one)")
    .option("--json", "as JSON")
    .action(
      act(async (ctx, id: string, options: { at?: string; as?: string; json?: boolean }) =>
        (await threadHistoryCommands()).threadsFork(ctx, id, options),
      ),
    );
  threads
    .command("resume")
    .description("chat on a saved thread (a pending review is asked first)")
    .argument("<id>")
    .action(act(async (ctx, id: string) => (await threadsCommands()).threadsResume(ctx, id)));

  const memory = program.command("memory").description("the current user's AGENTS.md and long-term facts");
  memory
    .command("show")
    .description("AGENTS.md files and long-term memory")
    .option("--json", "as JSON")
    .action(act(async (ctx, options: { json?: boolean }) => (await memoryCommands()).memoryShow(ctx, options)));
  memory
    .command("facts")
    .description("long-term facts (id, category, confidence, text)")
    .option("--json", "one JSON object per line")
    .action(act(async (ctx, options: { json?: boolean }) => (await memoryCommands()).memoryFacts(ctx, options)));
  memory
    .command("add")
    .description("add a long-term fact (or, with --agents-md, a line of AGENTS.md); secrets are redacted")
    .argument("<text...>")
    .option("-c, --category <category>", "preference, knowledge, context, behavior, goal or correction")
    .option("--agents-md", "append to /memories/AGENTS.md instead")
    .action(
      act(async (ctx, text: string[], options: { category?: string; agentsMd?: boolean }) =>
        (await memoryCommands()).memoryAdd(ctx, text, options),
      ),
    );
  memory
    .command("forget")
    .description("delete long-term facts by id (a unique prefix is enough)")
    .argument("<id...>")
    .action(act(async (ctx, ids: string[]) => (await memoryCommands()).memoryForget(ctx, ids)));
  memory
    .command("edit")
    .description("edit AGENTS.md in $EDITOR (secrets are redacted when saved)")
    .option("--project", "edit <root>/AGENTS.md instead (needs --root and --write)")
    .action(act(async (ctx, options: { project?: boolean }) => (await memoryCommands()).memoryEdit(ctx, options)));
  memory
    .command("clear")
    .description("forget the user's long-term memory")
    .option("-y, --yes", "do not ask")
    .option("--agents-md", "also delete /memories/AGENTS.md")
    .action(act(async (ctx, options: { yes?: boolean; agentsMd?: boolean }) => (await memoryCommands()).memoryClear(ctx, options)));
  memory
    .command("history")
    .description("changes to AGENTS.md and long-term facts, newest first (id, time, actor, thread, target, +/- lines)")
    .option("-n, --limit <n>", "at most this many changes", "20")
    .option("--json", "one JSON object per line (without the texts)")
    .action(act(async (ctx, options: { limit?: string; json?: boolean }) => (await history()).memoryHistory(ctx, options)));
  memory
    .command("diff")
    .description("one change as a unified diff (a unique id prefix is enough)")
    .argument("<id>")
    .action(act(async (ctx, id: string) => (await history()).memoryDiff(ctx, id)));
  memory
    .command("revert")
    .description("restore the text before a change, unless it changed since (conflict: exit 1)")
    .argument("<id>")
    .action(act(async (ctx, id: string) => (await history()).memoryRevert(ctx, id)));

  program
    .command("skills")
    .description("skills the agent sees")
    .command("list")
    .description("name, description and SKILL.md path of each skill")
    .option("--json", "one JSON object per line")
    .action(act(async (ctx, options: { json?: boolean }) => (await skills()).skillsList(ctx, options)));

  program
    .command("config")
    .description("the effective configuration and where each value came from")
    .option("--json", "as JSON")
    .action(act(async (ctx, options: { json?: boolean }) => (await config()).configCommand(ctx, options)));

  for (const cmd of [program, ...program.commands, ...program.commands.flatMap((c) => c.commands)]) cmd.exitOverride();
  return program;
}

/** Runs the command line; resolves to the exit code. */
export async function main(argv: string[]): Promise<number> {
  let code: number = EXIT.ok;
  const program = buildProgram((c) => {
    code = c;
  });
  try {
    await program.parseAsync(argv);
  } catch (e) {
    if (e instanceof CommanderError) {
      // Help and version exit 0; every parse error is a usage error.
      return e.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    const [{ describeError, exitCodeForError }, { inert }] = await Promise.all([import("./exit.js"), import("./render.js")]);
    process.stderr.write(`engram: ${inert(describeError(e))}\n`);
    return exitCodeForError(e);
  }
  return code;
}
