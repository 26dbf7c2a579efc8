/**
 * The long-term memory evaluation: replays each case's sessions through `createDeepAgent` with a
 * real model, asks the question in a new thread and scores the answer (see `score.ts`), for three
 * configurations measured the same way:
 *
 * - `engram`: long-term memory on, a fresh store per case, each session a thread of its own at its
 *   own time (the agent's clock, the memory's and the checkpoint's), extraction awaited after each
 *   session; the threads are checkpointed (in memory) and recall injection is on
 *   (`threadRecall: { inject }`): the question's first model call gets the best-matching things
 *   the user said in the earlier threads, dated, without a tool call;
 * - `no-memory`: the question alone (nothing of the sessions can reach a new thread, so they are
 *   not replayed);
 * - `full-history`: the question with every session's user turns, dated, pasted into the prompt.
 *
 * ```sh
 * # the 20-case smoke subset on the project's 1.5B model (CPU), under the real-model lock
 * flock /tmp/realmodel.lock npx tsx benches/src/memory-eval/run.ts --smoke
 * # the whole set on any OpenAI-compatible endpoint (the key only from the environment)
 * ENGRAM_EVAL_API_KEY=… npx tsx benches/src/memory-eval/run.ts --base-url https://…/v1 --model gpt-4.1-mini
 * ```
 *
 * Options: `--smoke`; `--category <name>` (one category); `--cases id,id`; `--configs engram,no-memory,full-history`; `--model
 * <name>` (with `--base-url`, or `llama:<path.gguf>`; default the 1.5B GGUF); `--base-url <url>`
 * (or `ENGRAM_EVAL_BASE_URL`; `ENGRAM_EVAL_MODEL` for the model); `--fresh-prompts` (llama.cpp
 * reads every prompt from its start, so an answer does not depend on the cases run before it in
 * the process: slower, for runs that are compared case by case); `--out <file.json>` (default
 * `benches/results/memory-eval/<date>-<model>-<smoke|full>.json`); `--resume` keeps the case
 * results already in `--out`; `--threads <n>` for llama.cpp (default 1); `--render <file.json>[,<file.json>…]`
 * writes saved results into docs/benchmarks.md (its own section between `memory-eval` markers),
 * running nothing; `--merge <file.json>,<file.json>… --out <file.json> [--subset <name>] [--note
 * <text>] [--smoke] [--rescore]` writes one report of several saved runs (one table over all
 * their cases, or only the smoke subset's; each run named in its notes; a later file's result of
 * a case and configuration replaces an earlier file's; with `--rescore` every saved answer is
 * scored again with the current checks, and the note lists what changed); `--replay
 * <file.json>` asks each case's question again with the facts that saved run stored and the
 * sessions' user turns checkpointed, nothing extracted (`engram` only, minutes instead of an
 * hour: for a change to what the question is sent). Results are
 * written after every case, so an interrupted run resumes with `--resume`; cases run
 * round-robin over the categories. `npm run bench -- --only memory-eval`
 * runs the same (see `runMemoryEval`). Every request is counted in o200k tokens (`tokens.ts`):
 * the question's, the replayed sessions' and the extraction's, whatever model answers.
 * @module
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type ChatModel,
  type Checkpoint,
  type Fact,
  InMemoryCheckpointer,
  InMemoryStore,
  OpenAICompatibleModel,
  FakeChatModel,
  StoreMemoryStorage,
  createDeepAgent,
} from "../../../packages/engram/src/index.js";
import { createEmptyMemory } from "../../../packages/engram/src/kit.js";
import { estimateTokens } from "../../../packages/engram/src/models/tokens.js";

import {
  type CaseResult,
  CONFIGS,
  type Config,
  type EvalReport,
  type StoredFact,
  mergeReports,
  renderMarkdown,
  renderReports,
  summarize,
  withSection,
} from "./report.js";
import { CATEGORIES, type Category, type EvalCase, interleave, parseEvalSet, scoreAnswer, supersededIn } from "./score.js";
import { keepCutReplies } from "./cut-replies.js";
import { meteredModel, textTokens, type TokenTally } from "./tokens.js";

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, "..", "..", "..");
const CASES_FILE = join(repo, "benches", "memory-eval", "cases.json");
const DEFAULT_GGUF = join(repo, ".cache", "models", "Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf");
const LLAMA_RUNTIME = join(repo, ".cache", "llama", "node_modules", "node-llama-cpp");
const USER = "eval-user";
/** Output cap of the answer to the question: short answers keep a CPU run bounded and are all a
 * check needs. */
const ANSWER_TOKENS = 96;
/** Output cap of the assistant's replies in the replayed sessions (only context for extraction). */
const SESSION_REPLY_TOKENS = 48;
/** Recall injection of the `engram` configuration: snippets, characters each, block tokens. */
const RECALL = { inject: 6, snippetChars: 240, injectTokens: 400, tool: false } as const;

/** Checkpoints in memory, saved at the evaluation's clock (a session's day), not the wall
 * clock's: recall dates its snippets by their thread's save. */
export class DatedCheckpointer extends InMemoryCheckpointer {
  at = 0;
  override put(threadId: string, checkpoint: Checkpoint, options?: Parameters<InMemoryCheckpointer["put"]>[2]): Promise<number> {
    return super.put(threadId, { ...checkpoint, savedAt: this.at }, options);
  }
}

interface Args {
  smoke: boolean;
  category?: Category;
  cases?: string[];
  configs: Config[];
  model: string;
  baseURL?: string;
  out?: string;
  resume: boolean;
  threads: number;
  /** A saved run whose stored facts the questions are asked with (see {@link replaySessions}). */
  replay?: string;
  /** llama.cpp reads every prompt from its start (`reusePrompt: false`): each answer then
   * depends on its request alone, not on the cases run before it in the process. */
  freshPrompts: boolean;
}

const VALUE_FLAGS = ["--category", "--cases", "--configs", "--model", "--base-url", "--out", "--threads", "--replay"];
const SWITCHES = ["--smoke", "--resume", "--fresh-prompts"];

/** The options, or an error naming the first one not understood: a mistyped flag (or `--help`)
 * must not start a run of the whole set on a CPU model, which takes hours. */
function parseArgs(argv: readonly string[]): Args {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (VALUE_FLAGS.includes(a)) i++;
    else if (!SWITCHES.includes(a))
      throw new Error(
        `${a}: not an option of the memory evaluation (options: ${[...SWITCHES, ...VALUE_FLAGS].join(", ")}, or --render; see the head of benches/src/memory-eval/run.ts)`,
      );
  }
  const get = (flag: string) => {
    const i = argv.indexOf(flag);
    if (i < 0) return undefined;
    const v = argv[i + 1];
    if (v === undefined || v.startsWith("--")) throw new Error(`${flag} needs a value`);
    return v;
  };
  const replay = get("--replay");
  const configs = (get("--configs")?.split(",") ?? (replay ? ["engram"] : [...CONFIGS])) as Config[];
  for (const c of configs) if (!CONFIGS.includes(c)) throw new Error(`--configs: ${c} is not one of ${CONFIGS.join(", ")}`);
  if (replay && configs.some((c) => c !== "engram")) throw new Error("--replay replays the engram configuration only");
  const baseURL = get("--base-url") ?? process.env.ENGRAM_EVAL_BASE_URL;
  const model = get("--model") ?? process.env.ENGRAM_EVAL_MODEL ?? (baseURL ? undefined : `llama:${DEFAULT_GGUF}`);
  if (!model) throw new Error("--base-url needs --model (or ENGRAM_EVAL_MODEL)");
  // An endpoint's cache is not ours to clear: the report must not say its prompts were read fresh.
  if (argv.includes("--fresh-prompts") && baseURL)
    throw new Error("--fresh-prompts applies to a llama: model only (an endpoint's prompt cache is the provider's)");
  const threads = Number(get("--threads") ?? 1);
  if (!Number.isInteger(threads) || threads < 1) throw new Error("--threads must be a positive integer");
  const cases = get("--cases")?.split(",");
  const out = get("--out");
  const category = get("--category") as Category | undefined;
  if (category !== undefined && !CATEGORIES.includes(category)) throw new Error(`--category must be one of ${CATEGORIES.join(", ")}`);
  return {
    smoke: argv.includes("--smoke"),
    ...(category && { category }),
    configs,
    model,
    resume: argv.includes("--resume"),
    freshPrompts: argv.includes("--fresh-prompts"),
    threads,
    ...(cases && { cases }),
    ...(baseURL && { baseURL }),
    ...(out && { out }),
    ...(replay && { replay }),
  };
}

async function makeModel(a: Args): Promise<{ model: ChatModel; label: string; dispose?: () => Promise<void> }> {
  if (a.baseURL) {
    const apiKey = process.env.ENGRAM_EVAL_API_KEY;
    return {
      model: new OpenAICompatibleModel({ baseURL: a.baseURL, model: a.model, ...(apiKey && { apiKey }) }),
      label: a.model,
    };
  }
  if (!a.model.startsWith("llama:")) throw new Error("--model without --base-url must be llama:<path.gguf>");
  const path = a.model.slice("llama:".length);
  if (!existsSync(path)) throw new Error(`no model at ${path} (scripts/fetch-model.sh qwen-1.5b)`);
  if (!process.env.ENGRAM_LLAMA_MODULE && existsSync(LLAMA_RUNTIME)) process.env.ENGRAM_LLAMA_MODULE = LLAMA_RUNTIME;
  const { LlamaCppModel } = await import("engram/llama");
  const model = new LlamaCppModel({
    modelPath: path,
    threads: a.threads,
    contextSize: 4096,
    ...(a.freshPrompts && { reusePrompt: false }),
  });
  return { model, label: basename(path).replace(/\.gguf$/i, ""), dispose: () => model.dispose() };
}

const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
/** `Friday 2026-11-20`. */
export function dayText(iso: string): string {
  const d = new Date(iso);
  return `${DAYS[d.getUTCDay()]} ${iso.slice(0, 10)}`;
}

/** The same system prompt for every configuration (the history baseline appends its history). */
function systemPrompt(at: string, history?: string): string {
  const base = `You are a helpful assistant. Today is ${dayText(at)}. Answer in one or two short sentences. Use what you know about the user from earlier conversations; if the answer is not there, say that you do not know.`;
  return history ? `${base}\n\nEarlier conversations with this user (what they said, with dates):\n${history}` : base;
}

/** Every session's user turns, one dated line each. */
export function historyText(c: EvalCase): string {
  return c.sessions.flatMap((s) => s.turns.map((t) => `[${dayText(s.at)}] User: ${t}`)).join("\n");
}

/** An agent with the evaluation's settings; `extra` adds long-term memory. */
function agentFor(model: ChatModel, system: string, extra: Parameters<typeof createDeepAgent>[1] = {}, replyTokens = ANSWER_TOKENS) {
  return createDeepAgent(model, {
    systemPrompt: system,
    // Long-term memory lives in the memory slot; with no AGENTS.md it adds nothing else.
    enableMemory: true,
    memorySources: [],
    enableSkills: false,
    enableFilesystem: false,
    enableSubagents: false,
    modelSettings: { temperature: 0, maxOutputTokens: replyTokens },
    maxModelCalls: 4,
    ...extra,
  });
}

/** One case in one configuration; `take` returns (and restarts) the tally of what `model` was
 * sent (see `meteredModel`). */
async function runCase(
  model: ChatModel,
  take: () => TokenTally,
  c: EvalCase,
  askedAt: string,
  config: Config,
  log: (m: string) => void,
  replayOf?: CaseResult,
): Promise<CaseResult> {
  const started = performance.now();
  take();
  let totalInput = 0;
  const warnings: string[] = [];
  const storage = new StoreMemoryStorage({ store: new InMemoryStore() });
  const checkpointer = new DatedCheckpointer();
  const memoryOptions = (at: string) => {
    checkpointer.at = Date.parse(at);
    return { checkpointer, threadRecall: RECALL, ...longTermOptions(at) };
  };
  const longTermOptions = (at: string) => ({
    longTermMemory: {
      storage,
      // Nothing runs until the session's flush: a debounce longer than a session.
      debounceMs: 300_000,
      retryBackoffMs: 0,
      extractionAttempts: 3,
      modelTimeoutMs: 1_800_000, // a loaded 2-core machine is slow; this is not a speed test
      now: () => Date.parse(at),
      onWarning: (m: string) => warnings.push(m),
      onUpdate: (o: { status: string }) => warnings.push(`extraction: ${JSON.stringify(o).slice(0, 600)}`),
    },
  });
  if (config === "engram" && replayOf) await replaySessions(c, replayOf, storage, checkpointer);
  else if (config === "engram") {
    for (const [j, session] of c.sessions.entries()) {
      const agent = agentFor(keepCutReplies(model), systemPrompt(session.at), memoryOptions(session.at), SESSION_REPLY_TOKENS);
      const threadId = `${c.id}-session-${j + 1}`;
      const t0 = performance.now();
      for (const turn of session.turns) {
        const out = await agent.invoke({ messages: [{ role: "user", content: turn }] }, { threadId, userId: USER });
        totalInput += out.usage?.inputTokens ?? 0;
      }
      const t1 = performance.now();
      await agent.longTermMemory?.flush();
      await agent.close();
      const stored = (await agent.longTermMemory?.listFacts(USER))?.length ?? 0;
      log(
        `${c.id} session ${j + 1}/${c.sessions.length}: ${session.turns.length} turns in ${Math.round((t1 - t0) / 1000)} s, extraction ${Math.round((performance.now() - t1) / 1000)} s, ${stored} facts`,
      );
    }
  }
  const sessions = take();
  const system = systemPrompt(askedAt, config === "full-history" ? historyText(c) : undefined);
  const agent = agentFor(model, system, config === "engram" ? memoryOptions(askedAt) : {});
  const facts: Fact[] = (await agent.longTermMemory?.listFacts(USER)) ?? [];
  const questionThread = `${c.id}-question`;
  // A failed answer (the model cut off twice, …) is scored as the empty answer it is.
  let failure = "";
  const out = await agent
    .invoke({ messages: [{ role: "user", content: c.question }] }, { threadId: questionThread, userId: USER })
    .catch((e: unknown) => {
      failure = e instanceof Error ? e.message : String(e);
      return { messages: [], usage: undefined };
    });
  const question = take();
  // What the question's first model call was sent: the memory block and the recalled block.
  const block = section(question.firstContext, "memory");
  const recalled = section(question.firstContext, "past_threads");
  // The question's own extraction is not part of the measurement.
  await agent.close({ timeoutMs: 0 });
  const answer = out.messages.at(-1)?.role === "assistant" ? (out.messages.at(-1)?.content ?? "") : "";
  const questionInput =
    out.usage?.inputTokens ?? estimateTokens(system) + estimateTokens(question.firstContext) + estimateTokens(c.question);
  totalInput += questionInput;
  const score = failure ? { pass: false, reason: `failed: ${failure}` } : scoreAnswer(answer, c.check);
  const result: CaseResult = {
    id: c.id,
    category: c.category,
    config,
    answer,
    pass: score.pass,
    reason: score.reason,
    questionInputTokens: questionInput,
    totalInputTokens: totalInput,
    turns: c.sessions.reduce((n, s) => n + s.turns.length, 0),
    promptTokens: {
      question: question.agent.tokens,
      questionCalls: question.agent.calls,
      sessions: sessions.agent.tokens,
      extraction: sessions.extraction.tokens,
      extractionCalls: sessions.extraction.calls,
    },
    ...(config === "full-history" && { historyTokens: textTokens(historyText(c)) }),
    seconds: Math.round((performance.now() - started) / 100) / 10,
    ...(config === "engram" && {
      facts: facts.map((f) => `${f.content} [${(f.confirmedAt ?? f.createdAt).slice(0, 10)}]`),
      storedFacts: facts.map((f) => ({
        content: f.content,
        category: f.category,
        confidence: f.confidence,
        createdAt: f.createdAt,
        ...(f.confirmedAt && { confirmedAt: f.confirmedAt }),
      })),
      supersededInjected: supersededIn(block, c.superseded),
      supersededRecalled: supersededIn(recalled, c.superseded),
      memoryBlockTokens: textTokens(block),
      memoryBlock: block,
      recallBlockTokens: textTokens(recalled),
      recalled,
      warnings,
    }),
  };
  log(
    `${c.id} ${config}: ${score.pass ? "PASS" : `FAIL (${score.reason})`} ${JSON.stringify(answer.slice(0, 160))} · ${question.agent.tokens} o200k tokens${config === "engram" ? ` (memory block ${result.memoryBlockTokens}, recalled ${result.recallBlockTokens})` : ""} · ${result.seconds} s`,
  );
  return result;
}

/**
 * What a saved run left before `c`'s question, without a model: its stored facts (from
 * `storedFacts`; a run saved before that field from `facts`, as context facts of confidence 0.9
 * confirmed on their day) and each session's user turns checkpointed at the session's time (the
 * assistant's replies are not kept: recall shows what the user said).
 */
export async function replaySessions(
  c: EvalCase,
  saved: CaseResult,
  storage: StoreMemoryStorage,
  checkpointer: DatedCheckpointer,
): Promise<void> {
  const memory = createEmptyMemory();
  memory.facts = savedFacts(saved).map((f, i) => ({ ...f, id: `fact_${i}`, source: `${c.id}-replay` }));
  const { revision } = await storage.load(USER, undefined);
  await storage.save(USER, undefined, memory, revision);
  for (const [j, session] of c.sessions.entries()) {
    checkpointer.at = Date.parse(session.at);
    const agent = createDeepAgent(new FakeChatModel(() => "Ok."), {
      enableMemory: false,
      enableSkills: false,
      enableFilesystem: false,
      enableSubagents: false,
      checkpointer,
    });
    for (const turn of session.turns) {
      await agent.invoke({ messages: [{ role: "user", content: turn }] }, { threadId: `${c.id}-session-${j + 1}`, userId: USER });
    }
    await agent.close();
  }
}

/** The engram results of the saved run `file`, or an error saying why there are none to replay. */
function engramResultsOf(file: string): CaseResult[] {
  let report: unknown;
  try {
    report = JSON.parse(readFileSync(file, "utf8"));
  } catch (e) {
    throw new Error(`--replay: cannot read ${file}: ${e instanceof Error ? e.message : String(e)}`);
  }
  const results = (report as Partial<EvalReport> | null)?.results;
  if (!Array.isArray(results)) throw new Error(`--replay: ${file} is not a memory evaluation report (no results)`);
  const engram = results.filter((r) => r?.config === "engram");
  if (engram.length === 0) throw new Error(`--replay: ${file} has no engram results to replay`);
  return engram;
}

function savedFacts(saved: CaseResult): StoredFact[] {
  if (saved.storedFacts) return saved.storedFacts;
  return (saved.facts ?? []).map((line) => {
    const [, content = line, day] = /^(.*) \[(\d{4}-\d\d-\d\d)\]$/.exec(line) ?? [];
    return { content, category: "context", confidence: 0.9, createdAt: `${day ?? "2026-01-01"}T09:00:00.000Z` };
  });
}

/** The `<tag>` block of a request's system context, or `""`. */
function section(context: string, tag: string): string {
  return new RegExp(`<${tag}>\\n[\\s\\S]*?\\n</${tag}>`).exec(context)?.[0] ?? "";
}

/** The longest start, up to a "-", that every one of several `names` shares and none is all
 * of; `""` for one name. */
function sharedStem(names: readonly string[]): string {
  if (names.length < 2) return "";
  let stem = names[0] as string;
  for (const n of names) while (!n.startsWith(stem)) stem = stem.slice(0, -1);
  stem = stem.slice(0, stem.lastIndexOf("-") + 1);
  return names.some((n) => n.length <= stem.length) ? "" : stem;
}

/** `r` scored again from its saved answer with its case's check as it is now (a failed model
 * call stays failed), and its superseded values found again in its saved blocks; a change is
 * added to `changed` as "id config fail→pass" or "id superseded injected [Sublime]→[]". */
function rescore(r: CaseResult, cases: readonly EvalCase[], changed: string[]): CaseResult {
  const c = cases.find((x) => x.id === r.id);
  if (!c) return r;
  const out = { ...r };
  if (r.memoryBlock !== undefined) out.supersededInjected = supersededIn(r.memoryBlock, c.superseded);
  if (r.recalled !== undefined) out.supersededRecalled = supersededIn(r.recalled, c.superseded);
  for (const [name, was, now] of [
    ["injected", r.supersededInjected, out.supersededInjected],
    ["recalled", r.supersededRecalled, out.supersededRecalled],
  ] as const) {
    if (JSON.stringify(was) !== JSON.stringify(now)) changed.push(`${r.id} superseded ${name} [${was ?? ""}]→[${now ?? ""}]`);
  }
  if (r.reason.startsWith("failed:")) return out;
  const score = scoreAnswer(r.answer, c.check);
  if (score.pass !== r.pass) changed.push(`${r.id} ${r.config} ${r.pass ? "pass" : "fail"}→${score.pass ? "pass" : "fail"}`);
  return { ...out, pass: score.pass, reason: score.reason };
}

/** The bench page, where the evaluation writes its own section. */
const DOCS_PAGE = join(repo, "docs", "benchmarks.md");

/** Runs the evaluation with command-line `argv` (see the module's options), or renders saved
 * results with `--render`. */
export async function runMemoryEval(argv: readonly string[]): Promise<void> {
  const render = argv.indexOf("--render");
  if (render >= 0) {
    // Docs from saved results, nothing run: one or more files, comma-separated, each its own part.
    const files = argv[render + 1]?.split(",").filter((f) => f !== "");
    if (!files?.length) throw new Error("--render needs a results file (or several, comma-separated)");
    const saved = files.map((file) => JSON.parse(readFileSync(file, "utf8")) as EvalReport);
    for (const [i, file] of files.entries()) writeFileSync(file.replace(/\.json$/, ".md"), renderMarkdown(saved[i] as EvalReport));
    writeFileSync(DOCS_PAGE, withSection(readFileSync(DOCS_PAGE, "utf8"), renderReports(saved)));
    process.stderr.write(`[memory-eval] docs/benchmarks.md and the .md beside ${files.join(", ")}: rendered from them\n`);
    return;
  }
  const merge = argv.indexOf("--merge");
  if (merge >= 0) {
    // One report of several saved runs, nothing run: `--merge a.json,b.json --out all.json`.
    const files = argv[merge + 1]?.split(",").filter((f) => f !== "");
    const outAt = argv.indexOf("--out");
    const out = outAt >= 0 ? argv[outAt + 1] : undefined;
    if (!files?.length || !out) throw new Error("--merge needs results files (comma-separated) and --out <file.json>");
    const value = (flag: string) => (argv.includes(flag) ? argv[argv.indexOf(flag) + 1] : undefined);
    const set = parseEvalSet(JSON.parse(readFileSync(CASES_FILE, "utf8")));
    const rescored: string[] = [];
    // Each part named by what its file name adds to the others' (`<date>-<model>-` said once).
    const names = files.map((file) => basename(file));
    const shared = sharedStem(names);
    const parts = files.map((file, i) => {
      const report = JSON.parse(readFileSync(file, "utf8")) as EvalReport;
      // With --rescore, each saved answer is scored again with the checks as they are now.
      if (argv.includes("--rescore")) report.results = report.results.map((r) => rescore(r, set.cases, rescored));
      return { label: (names[i] as string).slice(shared.length), report };
    });
    const smoke = new Set(set.cases.filter((c) => c.smoke).map((c) => c.id));
    const note = [
      ...(shared !== "" ? [`(Each file is benches/results/memory-eval/${shared}<name>.)`] : []),
      ...(argv.includes("--rescore")
        ? [`Every saved answer scored again with the current checks: ${rescored.length === 0 ? "no result changed" : rescored.join(", ")}.`]
        : []),
      ...(value("--note") !== undefined ? [value("--note")] : []),
    ].join(" ");
    const merged = mergeReports(parts, value("--subset") ?? "merged", {
      ...(argv.includes("--smoke") && { keep: (r: CaseResult) => smoke.has(r.id) }),
      ...(note !== "" && { note }),
    });
    writeFileSync(out, `${JSON.stringify(merged, null, 2)}\n`);
    writeFileSync(out.replace(/\.json$/, ".md"), renderMarkdown(merged));
    process.stderr.write(`[memory-eval] ${out}: ${merged.results.length} results of ${merged.cases} cases from ${files.length} files\n`);
    return;
  }
  const a = parseArgs(argv);
  const set = parseEvalSet(JSON.parse(readFileSync(CASES_FILE, "utf8")));
  let cases = set.cases.filter((c) => (!a.smoke || c.smoke) && (!a.category || c.category === a.category));
  if (a.cases) {
    const unknown = a.cases.filter((id) => !set.cases.some((c) => c.id === id));
    if (unknown.length > 0) throw new Error(`--cases: no case ${unknown.join(", ")}`);
    cases = cases.filter((c) => a.cases?.includes(c.id));
  }
  const replayed = a.replay ? engramResultsOf(a.replay) : undefined;
  if (replayed) cases = cases.filter((c) => replayed.some((r) => r.id === c.id));
  // Round-robin over the categories, so that a run cut short has measured every category.
  cases = interleave(cases);
  const made = await makeModel(a);
  const { label, dispose } = made;
  const { model, take } = meteredModel(made.model);
  const subset = [a.replay ? "replay" : a.smoke ? "smoke" : a.cases ? "some" : "full", ...(a.category ? [a.category] : [])].join("-");
  const out =
    a.out ??
    join(repo, "benches", "results", "memory-eval", `${new Date().toISOString().slice(0, 10)}-${label.toLowerCase()}-${subset}.json`);
  mkdirSync(dirname(out), { recursive: true });
  const earlier: CaseResult[] = a.resume && existsSync(out) ? (JSON.parse(readFileSync(out, "utf8")) as EvalReport).results : [];
  const report: EvalReport = {
    date: new Date().toISOString(),
    model: label,
    subset,
    cases: cases.length,
    results: earlier.filter((r) => cases.some((c) => c.id === r.id)),
    summary: [],
    ...(a.configs.includes("engram") && {
      recall: { inject: RECALL.inject, snippetChars: RECALL.snippetChars, injectTokens: RECALL.injectTokens },
    }),
    ...(a.freshPrompts && { freshPrompts: true }),
    ...(a.replay && {
      notes: [
        `Questions only, asked with the facts ${basename(a.replay)} stored (nothing extracted: its extraction tokens are not counted).`,
      ],
    }),
  };
  const log = (m: string) => process.stderr.write(`[memory-eval] ${m}\n`);
  const save = () => {
    report.summary = summarize(report.results);
    writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
    writeFileSync(out.replace(/\.json$/, ".md"), renderMarkdown(report));
  };
  try {
    // Configuration by configuration: a baseline's table is complete long before the memory's.
    for (const config of a.configs) {
      for (const c of cases) {
        if (report.results.some((r) => r.id === c.id && r.config === config)) continue;
        const replayOf = replayed?.find((r) => r.id === c.id);
        report.results.push(await runCase(model, take, c, set.askedAt, config, log, replayOf));
        save();
      }
    }
  } finally {
    save();
    await dispose?.();
  }
  log(`wrote ${out}`);
  process.stdout.write(renderMarkdown(report));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await runMemoryEval(process.argv.slice(2));
