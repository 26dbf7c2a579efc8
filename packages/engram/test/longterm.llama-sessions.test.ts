/** Long-term memory over three chat sessions with a real local model (Qwen2.5-Coder-1.5B-Instruct,
 * Q4_K_M GGUF from `scripts/fetch-model.sh qwen-1.5b`, llama.cpp on the CPU), through the library
 * API: the user states their name, a preference and their job, one per session, and asks
 * something else in each; extraction runs after each session. At the end memory holds exactly
 * the user's three facts — no example value of the prompt or schema, no assistant claim, no
 * duplicate, none in the first person — and a new session answers the name from memory.
 *
 * Slow (a 1.5B model on a shared CPU: ten model calls, several minutes): it runs only when
 * ENGRAM_TEST_LTM_SESSIONS is set, and then never skips (a missing model is a failure). Run one
 * real-model test at a time on a shared machine:
 *
 *   ENGRAM_TEST_LTM_SESSIONS=1 flock /tmp/realmodel.lock \
 *     node_modules/.bin/vitest run packages/engram/test/longterm.llama-sessions.test.ts --project native
 */
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LlamaCppModel } from "engram/llama";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Message } from "../src/models/types.js";
import { LongTermMemory } from "../src/memory/longterm/index.js";
import { FileMemoryStorage, FilePendingWork } from "../src/memory/longterm/node.js";
import { contentWords, isFramingWord } from "../src/memory/longterm/words.js";
import { exampleValues } from "./fixtures/longterm/examples.js";

const ROOT = join(import.meta.dirname, "../../..");
const GGUF = process.env.ENGRAM_TEST_LTM_GGUF ?? join(ROOT, ".cache/models/Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf");
const RUNTIME = join(ROOT, ".cache/llama/node_modules/node-llama-cpp");
if (!process.env.ENGRAM_LLAMA_MODULE && existsSync(RUNTIME)) process.env.ENGRAM_LLAMA_MODULE = RUNTIME;
const wanted = !!process.env.ENGRAM_TEST_LTM_SESSIONS && process.env.ENGRAM_CORE !== "wasm";

/** One session each: a statement about the user, then an unrelated question. The first opens
 * with the question after which the 1.5B model once stored the schema's example name. */
const SESSIONS: string[][] = [
  ["What is my name and how do I like my code indented?", "Hi! My name is Priya.", "How do I reverse a list in Python?"],
  ["I prefer tabs over spaces for indentation.", "What does git rebase do? One sentence, please."],
  ["I work as a backend developer at a bank.", "What is my name and how do I like my code indented?"],
];
/** What each of the user's facts must mention (one fact each). */
const TOPICS: [topic: string, pattern: RegExp][] = [
  ["name", /\bPriya\b/i],
  ["preference", /\btabs?\b/i],
  ["job", /\bbackend\b|\bbank\b/i],
];

describe.skipIf(!wanted)("long-term memory over three sessions with a real local model", () => {
  let dir: string;
  let model: LlamaCppModel;
  beforeAll(async () => {
    if (!existsSync(GGUF) || !process.env.ENGRAM_LLAMA_MODULE)
      throw new Error(`the test model or runtime is missing: ${GGUF} (run scripts/fetch-model.sh qwen-1.5b)`);
    dir = await mkdtemp(join(tmpdir(), "engram-llama-sessions-"));
    // One thread: llama.cpp's spinning workers are far slower when they share a core.
    model = new LlamaCppModel({ modelPath: GGUF, threads: 1, contextSize: 4096 });
  });
  afterAll(async () => {
    await model?.dispose();
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 60_000);

  it("stores exactly the user's name, preference and job, and a new session answers the name", async () => {
    const warnings: string[] = [];
    const memory = new LongTermMemory({
      model,
      storage: new FileMemoryStorage({ dir }),
      pendingWork: new FilePendingWork({ dir: join(dir, "pending") }),
      debounceMs: 0,
      retryBackoffMs: 0,
      extractionAttempts: 2,
      modelTimeoutMs: 900_000, // a loaded 2-core machine can be very slow; this is not a speed test
      onWarning: (m) => warnings.push(m),
    });
    const chat = async (messages: Message[]) => {
      const block = await memory.inject("priya", undefined, messages.at(-1)?.content ?? "");
      const reply = await model.invoke({
        system: `You are a helpful coding assistant. Answer briefly.${block ? `\n\n${block}` : ""}`,
        messages,
        tools: [],
        settings: { temperature: 0, maxOutputTokens: 80 },
      });
      return reply.message.content;
    };

    const said: string[] = [];
    for (const [i, turns] of SESSIONS.entries()) {
      const messages: Message[] = [];
      for (const text of turns) {
        said.push(text);
        messages.push({ role: "user", content: text });
        messages.push({ role: "assistant", content: await chat(messages) });
      }
      memory.capture(messages, { threadId: `session-${i + 1}`, userId: "priya" });
      await memory.flush();
      console.log(`[sessions] after session ${i + 1}: ${JSON.stringify((await memory.listFacts("priya")).map((f) => f.content))}`);
    }
    const facts = (await memory.listFacts("priya")).map((f) => f.content);
    const answer = await chat([{ role: "user", content: "What is my name?" }]);
    await memory.close();
    console.log(`[sessions] facts ${JSON.stringify(facts)}; name answer ${JSON.stringify(answer)}; warnings:\n${warnings.join("\n")}`);

    // No example value the user did not say, in any fact.
    const spoken = new Set(said.flatMap((t) => contentWords(t)));
    const exampleWords = new Set(
      exampleValues()
        .flatMap((e) => contentWords(e))
        .filter((w) => !isFramingWord(w) && !spoken.has(w)),
    );
    for (const fact of facts)
      expect(
        contentWords(fact).filter((w) => exampleWords.has(w)),
        fact,
      ).toEqual([]);
    // Third person, and each fact is one of the user's three, once.
    for (const fact of facts) expect(fact).not.toMatch(/^(?:I|My)\b|\bI\b/);
    for (const fact of facts)
      expect(TOPICS.filter(([, p]) => p.test(fact)).length, `${fact} is none of the user's facts`).toBeGreaterThan(0);
    for (const [topic, pattern] of TOPICS)
      expect(
        facts.filter((f) => pattern.test(f)),
        topic,
      ).toHaveLength(1);
    expect(answer).toMatch(/\bPriya\b/);
  }, 3_600_000);
});
