/**
 * The `prompt.llama.second-turn` row: how many prompt tokens the real local model (llama:,
 * Qwen2.5-Coder-1.5B-Instruct Q4_K_M, node-llama-cpp in its child process) evaluates on the
 * second turn of an agent thread, with a memory extraction (a `responseFormat` request) between
 * the turns — against the new tokens of that turn (what the thread added since the model last
 * read it). The goal is to evaluate only those: the cached prefix of the turn's context
 * sequence survives both the turn and the extraction, which runs on a sequence of its own. The
 * same run with one sequence for both (`structuredSequence: false`) is the comparison: there the
 * extraction evicts the prefix and the second turn reads its whole prompt again.
 *
 *   flock /tmp/realmodel.lock node_modules/.bin/tsx --tsconfig tsconfig.check.json benches/src/llama-tokens.ts
 *
 * prints the row and writes `benches/results/<date>-llama-tokens.json`.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type ChatModel, type ModelRequest, type Usage, createDeepAgent } from "engram";
import { LlamaCppModel } from "engram/llama";

const REPO = join(dirname(fileURLToPath(import.meta.url)), "../..");
const GGUF = process.env.ENGRAM_BENCH_GGUF ?? join(REPO, ".cache/models/Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf");
const RUNTIME = join(REPO, ".cache/llama/node_modules/node-llama-cpp");

/** One model call as the agent made it. */
interface Call {
  purpose: "turn" | "extraction";
  usage: Usage;
}

/** The second turn's prompt, measured with one context sequence per purpose or one for both. */
export interface SecondTurn {
  /** Tokens of the second turn's (first) prompt. */
  promptTokens: number;
  /** Of those, served from the sequence's cache. */
  cachedTokens: number;
  /** Of those, evaluated by the model: `promptTokens - cachedTokens`. */
  evaluatedTokens: number;
  /** What the thread added since the model last read it: this prompt less the last prompt and reply of the first turn. */
  newTokens: number;
}

export interface LlamaTokensRow {
  id: "prompt.llama.second-turn";
  title: string;
  model: string;
  threads: number;
  /** Memory extraction on a sequence of its own (the default). */
  ours: SecondTurn;
  /** One sequence for the turns and the extraction. */
  sharedSequence: SecondTurn;
  /** `ours.evaluatedTokens / ours.newTokens`: 1 when only the new tokens are read. */
  evaluatedPerNewToken: number;
}

/** A model that records the usage of every call. */
function recording(model: LlamaCppModel, calls: Call[]): ChatModel {
  const purpose = (r: ModelRequest): Call["purpose"] => (r.responseFormat ? "extraction" : "turn");
  return {
    id: model.id,
    maxInputTokens: () => model.maxInputTokens(),
    async invoke(request) {
      const out = await model.invoke(request);
      calls.push({ purpose: purpose(request), usage: out.usage ?? {} });
      return out;
    },
    async *stream(request) {
      for await (const ev of model.stream(request)) {
        if (ev.type === "finish") calls.push({ purpose: purpose(request), usage: ev.usage ?? {} });
        yield ev;
      }
    },
  };
}

const EXTRACTION = {
  name: "facts",
  schema: { type: "object", properties: { facts: { type: "array", items: { type: "string" } } }, required: ["facts"] },
};

/** Two turns of one thread with an extraction between them; the second turn's prompt figures. */
async function secondTurn(structuredSequence: boolean, threads: number): Promise<SecondTurn> {
  const model = new LlamaCppModel({ modelPath: GGUF, module: RUNTIME, threads, contextSize: 4096, structuredSequence });
  const calls: Call[] = [];
  const recorded = recording(model, calls);
  const agent = createDeepAgent(recorded, { enableSubagents: false, longTermMemory: false, maxTurns: 4 });
  try {
    const first = await agent.invoke(
      { messages: [{ role: "user", content: "What is 2 + 3? Answer with the number only." }] },
      { threadId: "t" },
    );
    await recorded.invoke({
      system: "List the facts the user stated about themselves.",
      messages: first.messages.filter((m) => m.role === "user" || (m.role === "assistant" && !m.toolCalls)),
      tools: [],
      responseFormat: EXTRACTION,
      settings: { maxOutputTokens: 48 },
    });
    const before = calls.filter((c) => c.purpose === "turn").at(-1)?.usage ?? {};
    const count = calls.length;
    await agent.invoke({ messages: [{ role: "user", content: "And 4 + 5?" }] }, { threadId: "t" });
    const second = calls.slice(count).find((c) => c.purpose === "turn")?.usage ?? {};
    const promptTokens = second.inputTokens ?? 0;
    const cachedTokens = second.cachedInputTokens ?? 0;
    return {
      promptTokens,
      cachedTokens,
      evaluatedTokens: promptTokens - cachedTokens,
      newTokens: promptTokens - (before.inputTokens ?? 0) - (before.outputTokens ?? 0),
    };
  } finally {
    await agent.close();
    await model.dispose();
  }
}

/** Measures the row (two model loads and four agent turns: minutes on a shared CPU). */
export async function measureLlamaSecondTurn(threads = 1): Promise<LlamaTokensRow> {
  if (!existsSync(GGUF)) throw new Error(`no model at ${GGUF} (scripts/fetch-model.sh qwen-1.5b)`);
  const ours = await secondTurn(true, threads);
  const sharedSequence = await secondTurn(false, threads);
  return {
    id: "prompt.llama.second-turn",
    title: "llama: prompt tokens evaluated on a thread's second turn, a memory extraction between the turns",
    model: GGUF.split("/").pop() ?? GGUF,
    threads,
    ours,
    sharedSequence,
    evaluatedPerNewToken: ours.newTokens > 0 ? ours.evaluatedTokens / ours.newTokens : Number.NaN,
  };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const row = await measureLlamaSecondTurn(Number(process.env.ENGRAM_BENCH_THREADS ?? 1));
  console.log(JSON.stringify(row, null, 2));
  const out = join(REPO, "benches/results");
  mkdirSync(out, { recursive: true });
  writeFileSync(
    join(out, `${new Date().toISOString().slice(0, 10)}-llama-tokens.json`),
    `${JSON.stringify({ date: new Date().toISOString(), rows: [row] }, null, 2)}\n`,
  );
}
