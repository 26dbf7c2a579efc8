/** Long-term memory extraction end to end on a real local model (Qwen2.5-Coder-1.5B-Instruct,
 * Q4_K_M GGUF from `scripts/fetch-model.sh qwen-1.5b`, llama.cpp on the CPU), grammar-constrained
 * through `responseFormat`, with the local-model defaults (`"facts"` extraction). Two extractions
 * (a 1.5B model on a shared CPU takes a minute or two each): a fact the user stated is stored,
 * every stored fact is supported by what the user said, and the secret in the conversation is
 * stored nowhere; a pet's name the model proposes as the user's is refused. In CI (env CI set) it never skips: a missing model file is a failure. */
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LlamaCppModel } from "engram/llama";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChatModel, ModelRequest, ModelResult } from "../src/models/types.js";
import {
  LongTermMemory,
  FACTS_JSON_SCHEMA,
  type UpdateOutcome,
  factsUpdateSchema,
  parseMemoryUpdate,
} from "../src/memory/longterm/index.js";
import { FileMemoryStorage, FilePendingWork } from "../src/memory/longterm/node.js";
import { slotOf } from "../src/memory/longterm/slots.js";

const ROOT = join(import.meta.dirname, "../../..");
const GGUF = process.env.ENGRAM_TEST_LTM_GGUF ?? join(ROOT, ".cache/models/Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf");
const RUNTIME = join(ROOT, ".cache/llama/node_modules/node-llama-cpp");
if (!process.env.ENGRAM_LLAMA_MODULE && existsSync(RUNTIME)) process.env.ENGRAM_LLAMA_MODULE = RUNTIME;
const present = existsSync(GGUF) && !!process.env.ENGRAM_LLAMA_MODULE;
/** The model is Node-only and the extraction does not depend on the core beyond redaction, which
 * both cores share: the native project runs it once (a CPU model is slow). */
const native = process.env.ENGRAM_CORE !== "wasm";
const SECRET = "sk-proj-Zx9Qw8Er7Ty6Ui5Op4As3Df2";

/** Records every request and raw reply of the wrapped model. */
function recording(model: ChatModel) {
  const calls: { request: ModelRequest; reply: string; finishReason: string | undefined }[] = [];
  const wrapped: ChatModel = {
    id: model.id,
    async invoke(request: ModelRequest): Promise<ModelResult> {
      const result = await model.invoke(request);
      calls.push({ request, reply: result.message.content, finishReason: result.finishReason });
      return result;
    },
    stream: (request) => model.stream(request),
  };
  return { wrapped, calls };
}

describe.skipIf(!native || (!present && !process.env.CI))("long-term memory on a real local model", () => {
  let dir: string;
  let model: LlamaCppModel;
  beforeAll(async () => {
    if (!present)
      throw new Error(`the test model or runtime is missing: ${GGUF} (run scripts/setup.sh --test, or scripts/fetch-model.sh qwen-1.5b)`);
    dir = await mkdtemp(join(tmpdir(), "engram-llama-ltm-"));
    // One thread: vitest runs other suites on the same cores, and llama.cpp's spinning workers
    // are ~30× slower when they share a core (see models.llama.test.ts).
    model = new LlamaCppModel({ modelPath: GGUF, threads: 1, contextSize: 4096 });
  });
  afterAll(async () => {
    await model?.dispose();
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 60_000);

  it("one extraction: a schema-valid, accepted update; a stated fact stored, supported by the user; no secret stored", async () => {
    const { wrapped, calls } = recording(model);
    const outcomes: UpdateOutcome[] = [];
    const warnings: string[] = [];
    const storage = new FileMemoryStorage({ dir });
    const memory = new LongTermMemory({
      model: wrapped,
      storage,
      pendingWork: new FilePendingWork({ dir: join(dir, "pending") }),
      debounceMs: 0,
      retryBackoffMs: 0,
      // A CPU model on a shared machine: one attempt (the local defaults otherwise: "facts"
      // extraction, output cap 512).
      extractionAttempts: 1,
      modelTimeoutMs: 600_000, // a loaded 2-core machine can be very slow; this is not a speed test
      onWarning: (m) => warnings.push(m),
      onUpdate: (o) => outcomes.push(o),
    });
    const said = `My name is Dana and I live in Lyon. I prefer Python for data work. My API key is ${SECRET}, keep it.`;
    memory.capture(
      [
        { role: "user", content: said },
        { role: "assistant", content: "Nice to meet you, Dana. I will not keep keys." },
      ],
      { threadId: "t1", userId: "dana" },
    );
    await memory.close();

    // Grammar-constrained by the schema that was sent: a finished answer is valid against it, and
    // one cut off by the token cap is still accepted (repaired, part by part).
    expect(calls, warnings.join("\n")).toHaveLength(1);
    const call = calls[0] as (typeof calls)[number];
    expect(call.request.responseFormat?.schema).toEqual(FACTS_JSON_SCHEMA);
    expect(JSON.stringify(call.request.messages)).not.toContain(SECRET); // the model never saw the secret
    expect(JSON.stringify(call.request.messages)).toContain("[REDACTED]");
    if (call.finishReason === "stop") expect(factsUpdateSchema.safeParse(JSON.parse(call.reply)).success, call.reply).toBe(true);
    else expect(call.finishReason).toBe("length");
    expect(parseMemoryUpdate(call.reply).ok, call.reply).toBe(true);
    expect(
      outcomes.map((o) => o.status),
      `${call.reply}\n${JSON.stringify(outcomes)}`,
    ).toEqual(["saved"]);

    // A stated fact is stored, and whatever was stored is something the user said (a small model
    // may also copy the prompt's example: that is refused); the secret is nowhere on disk.
    const doc = await memory.read("dana");
    expect(doc.facts.length, call.reply).toBeGreaterThan(0);
    for (const fact of doc.facts) expect(fact.content).toMatch(/Dana|Lyon|Python|data/i);
    const bytes = await readFile(await storage.pathFor("dana"), "utf8").catch(() => "");
    expect(bytes).not.toContain(SECRET.slice(3));
    expect(JSON.stringify(doc)).not.toContain(SECRET.slice(3));
    expect(await memory.pendingWork()).toEqual([]);
    console.log(
      `[longterm.llama] ${call.finishReason}; facts ${JSON.stringify(doc.facts.map((f) => f.content))}; warnings ${warnings.length}; reply: ${call.reply.slice(0, 300)}`,
    );
  }, 700_000);

  it("a pet's name never becomes the user's: the model's 'Is called Pixel' is refused", async () => {
    // The model fills the prompt's "Is called …" with the dog's name (the memory evaluation's
    // temporal-03, at temperature 0): a name fact read as the user's own.
    const { wrapped, calls } = recording(model);
    const warnings: string[] = [];
    const memory = new LongTermMemory({
      model: wrapped,
      storage: new FileMemoryStorage({ dir: join(dir, "pet") }),
      debounceMs: 0,
      retryBackoffMs: 0,
      extractionAttempts: 1,
      modelTimeoutMs: 600_000,
      onWarning: (m) => warnings.push(m),
    });
    memory.capture(
      [
        { role: "user", content: "I adopted a rescue dog named Pixel." },
        { role: "assistant", content: "Congratulations on adopting Pixel!" },
      ],
      { threadId: "pet", userId: "owner" },
    );
    await memory.close();
    const reply = calls[0]?.reply ?? "";
    const facts = (await memory.read("owner")).facts.map((f) => f.content);
    console.log(`[longterm.llama] pet: facts ${JSON.stringify(facts)}; reply: ${reply.slice(0, 300)}`);
    expect(calls, warnings.join("\n")).toHaveLength(1);
    for (const fact of facts) expect(slotOf(fact), `${fact}\n${reply}`).not.toBe("name");
    // What the test is about: the model did propose the name fact, and it was refused.
    expect(reply).toMatch(/"(?:Is called|Is named|(?:The user's )?name is) Pixel"/i);
    expect(warnings.join("\n")).toMatch(/"Pixel" is the name of someone or something else/);
  }, 700_000);
});
