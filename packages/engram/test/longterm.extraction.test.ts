/** Long-term memory extraction with the replies small local models really give:
 * one schema for the request, the prompt and the parser; per-part acceptance of near-JSON;
 * fact identity (no churn, no mass removal, no assistant claims); redaction-aware facts;
 * retries, pending work and chunking so that nothing is silently lost. */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfigError, ModelError } from "../src/errors.js";
import { FakeChatModel } from "../src/models/fake.js";
import type { Message, ModelRequest } from "../src/models/types.js";
import { InMemoryStore } from "../src/stores/memory.js";
import {
  LongTermMemory,
  type LongTermMemoryOptions,
  type MemoryData,
  type MemoryStorage,
  NO_REVISION,
  StoreMemoryStorage,
  FACTS_JSON_SCHEMA,
  UPDATE_EXAMPLE,
  UPDATE_JSON_SCHEMA,
  type UpdateOutcome,
  createEmptyMemory,
  extractionFormat,
  factsUpdateSchema,
  memoryUpdateSchema,
  parseMemoryUpdate,
} from "../src/memory/longterm/index.js";
import { FileMemoryStorage, FilePendingWork } from "../src/memory/longterm/node.js";
import { REPLY_FIXTURES, type StoredFact } from "./fixtures/longterm/small-model-replies.js";

const user = (content: string): Message => ({ role: "user", content });
const assistant = (content: string): Message => ({ role: "assistant", content });
const promptOf = (r: ModelRequest) => `${r.system}\n${r.messages.map((m) => m.content).join("\n")}`;
/** The conversation part of an extraction request's prompt. */
const conversationPart = (req: ModelRequest) => (req.messages[0]?.content ?? "").split("<conversation>")[1] ?? "";
/** How many user turns a prompt's conversation holds. */
const userTurnsIn = (text: string) => (text.match(/^User: /gm) ?? []).length;
const conversationOf = (turns: string[]) => turns.map((t, i) => (i % 2 === 0 ? user(t) : assistant(t)));

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "engram-ltx-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function seed(storage: MemoryStorage, facts: StoredFact[]): Promise<void> {
  const memory: MemoryData = createEmptyMemory();
  memory.facts = facts.map((f) => ({ ...f, confidence: 0.95, createdAt: "2026-01-01T00:00:00.000Z", source: "t0" }));
  const saved = await storage.save("u", undefined, memory, NO_REVISION);
  expect(saved.ok).toBe(true);
}

function setup(
  turns: string[] | ((req: ModelRequest, i: number) => string | undefined | Promise<string | undefined>),
  options: Partial<LongTermMemoryOptions> = {},
) {
  const model = new FakeChatModel(turns);
  const warnings: string[] = [];
  const outcomes: UpdateOutcome[] = [];
  const memory = new LongTermMemory({
    model,
    debounceMs: 0,
    retryBackoffMs: 0,
    onWarning: (m) => warnings.push(m),
    onUpdate: (o) => outcomes.push(o),
    ...options,
  });
  return { model, memory, warnings, outcomes };
}

describe("replies of small models (fixtures)", () => {
  it.each(REPLY_FIXTURES.map((f) => [f.name, f] as const))("%s", async (_, fixture) => {
    const storage = new StoreMemoryStorage({ store: new InMemoryStore() });
    await seed(storage, fixture.facts);
    const { memory } = setup([fixture.reply], { storage });
    expect(memory.capture(conversationOf(fixture.conversation), { threadId: "t1", userId: "u" })).toBe(true);
    await memory.close();
    const facts = await memory.listFacts("u");
    const contents = facts.map((f) => f.content);
    expect(contents.sort()).toEqual([...fixture.stored].sort());
    for (const bad of fixture.absent) expect(JSON.stringify(facts)).not.toContain(bad);
    for (const id of fixture.keptIds ?? []) expect(facts.map((f) => f.id)).toContain(id);
  });
});

describe("one schema: request, prompt, parser", () => {
  it("sends the JSON schema, shows the memory in the shape it must come back in, and never shows a placeholder id", async () => {
    const storage = new StoreMemoryStorage({ store: new InMemoryStore() });
    await seed(storage, [{ id: "fact_3a7c91d2", content: "Is a data engineer at Orbital", category: "context" }]);
    const seen: (ModelRequest & { responseFormat?: { name: string; schema: unknown } })[] = [];
    const { memory } = setup(
      (req) => {
        seen.push(req);
        return JSON.stringify({ newFacts: [], factsToRemove: [] });
      },
      { storage },
    );
    memory.capture([user("hello"), assistant("hi")], { threadId: "t", userId: "u" });
    await memory.close();
    const request = seen[0] as ModelRequest & { responseFormat?: { name: string; schema: unknown } };
    expect(request.responseFormat).toEqual({ name: "memory_update", schema: UPDATE_JSON_SCHEMA });
    const prompt = promptOf(request);
    expect(prompt).toContain(UPDATE_EXAMPLE);
    expect(prompt).not.toContain('"fact_id"');
    // The current memory: sections exactly as the update returns them, facts with short ids.
    const shown = JSON.parse(/<current_memory>\n([\s\S]*?)\n<\/current_memory>/.exec(request.messages[0]?.content ?? "")?.[1] ?? "null");
    expect(memoryUpdateSchema.shape.user.safeParse(shown.user).success).toBe(true);
    expect(memoryUpdateSchema.shape.history.safeParse(shown.history).success).toBe(true);
    expect(shown.facts).toEqual([{ id: "3a7c", content: "Is a data engineer at Orbital", category: "context", confidence: 0.95 }]);
    // The example in the prompt is a valid update, and the parser takes it as one.
    expect(memoryUpdateSchema.safeParse(JSON.parse(UPDATE_EXAMPLE)).success).toBe(true);
    expect(parseMemoryUpdate(UPDATE_EXAMPLE)).toMatchObject({ ok: true, issues: [] });
  });

  it('a local model gets the "facts" extraction: the facts schema, only the facts shown, sourceError only after a correction', async () => {
    const storage = new StoreMemoryStorage({ store: new InMemoryStore() });
    await seed(storage, [{ id: "fact_3a7c91d2", content: "Is a data engineer at Orbital", category: "context" }]);
    const model = new FakeChatModel(() => JSON.stringify({ newFacts: [], factsToRemove: [] }), { id: "llama:qwen.gguf" });
    const memory = new LongTermMemory({ model, storage, debounceMs: 0, onWarning: () => {} });
    memory.capture([user("hello"), assistant("hi")], { threadId: "t1", userId: "u" });
    await memory.flush();
    memory.capture([user("Use pnpm?"), assistant("Run npm install."), user("No, that's wrong: I use pnpm"), assistant("Noted.")], {
      threadId: "t2",
      userId: "u",
    });
    await memory.close();
    const [plain, correction] = model.requests as [ModelRequest, ModelRequest];
    expect(plain.responseFormat).toEqual({ name: "memory_facts_update", schema: FACTS_JSON_SCHEMA });
    expect(JSON.stringify(plain.responseFormat)).not.toContain("sourceError");
    const prompt = promptOf(plain);
    expect(prompt).toContain(extractionFormat("facts").example);
    expect(prompt).not.toMatch(/sourceError|workContext|shouldUpdate/);
    const shown = JSON.parse(/<current_memory>\n([\s\S]*?)\n<\/current_memory>/.exec(plain.messages[0]?.content ?? "")?.[1] ?? "null");
    expect(shown).toEqual({ facts: [{ id: "3a7c", content: "Is a data engineer at Orbital", category: "context", confidence: 0.95 }] });
    expect(factsUpdateSchema.safeParse(JSON.parse(extractionFormat("facts").example)).success).toBe(true);
    expect(parseMemoryUpdate(extractionFormat("facts").example)).toMatchObject({ ok: true, issues: [] });
    // After a correction the schema offers sourceError again, and the prompt asks for it.
    expect(JSON.stringify(correction.responseFormat)).toContain("sourceError");
    expect(promptOf(correction)).toContain('put the mistaken approach in "sourceError"');
    // "full" on request, and for a hosted model by default.
    for (const [id, extraction] of [
      ["llama:qwen.gguf", "full"],
      ["openai:gpt-4.1-mini", undefined],
    ] as const) {
      const m = new FakeChatModel(() => JSON.stringify({ newFacts: [], factsToRemove: [] }), { id });
      const lt = new LongTermMemory({ model: m, debounceMs: 0, onWarning: () => {}, ...(extraction && { extraction }) });
      lt.capture([user("hello"), assistant("hi")], { threadId: "t", userId: "u" });
      await lt.close();
      expect(m.requests[0]?.responseFormat).toEqual({ name: "memory_update", schema: UPDATE_JSON_SCHEMA });
    }
    expect(() => new LongTermMemory({ model, extraction: "summaries" as "full" })).toThrow(ConfigError);
  });

  it("the prompt's JSON is compact: the one layout every JSON grammar allows (no newline the sampler would refuse)", async () => {
    for (const mode of ["full", "facts"] as const) {
      const storage = new StoreMemoryStorage({ store: new InMemoryStore() });
      await seed(storage, [{ id: "fact_3a7c91d2", content: "Is a data engineer at Orbital", category: "context" }]);
      const { memory, model } = setup(() => JSON.stringify({ newFacts: [], factsToRemove: [] }), { storage, extraction: mode });
      memory.capture([user("hello"), assistant("hi")], { threadId: "t", userId: "u" });
      await memory.close();
      const request = model.requests[0] as ModelRequest;
      const { example } = extractionFormat(mode);
      expect(example).toBe(JSON.stringify(JSON.parse(example)));
      expect(request.system).toContain(example);
      const shown = /<current_memory>\n([\s\S]*?)\n<\/current_memory>/.exec(request.messages[0]?.content ?? "")?.[1] ?? "";
      expect(shown).toBe(JSON.stringify(JSON.parse(shown)));
    }
  });

  it("a removal may name the short id it was shown", async () => {
    const storage = new StoreMemoryStorage({ store: new InMemoryStore() });
    await seed(storage, [{ id: "fact_5d20aa87", content: "Lives in Lyon", category: "context" }]);
    const { memory } = setup(
      [JSON.stringify({ newFacts: [{ content: "Lives in Berlin", category: "context", confidence: 0.95 }], factsToRemove: ["5d20"] })],
      { storage },
    );
    memory.capture([user("I moved from Lyon to Berlin"), assistant("Welcome to Berlin!")], { threadId: "t", userId: "u" });
    await memory.close();
    expect((await memory.listFacts("u")).map((f) => f.content)).toEqual(["Lives in Berlin"]);
  });
});

describe("fact identity", () => {
  const four: StoredFact[] = [
    { id: "fact_00000001", content: "Is a data engineer at Orbital", category: "context" },
    { id: "fact_00000002", content: "Uses Neovim as editor", category: "preference" },
    { id: "fact_00000003", content: "Lives in Lyon", category: "context" },
    { id: "fact_00000004", content: "Prefers tabs over spaces", category: "preference" },
  ];

  it("an explicit request to forget allows a large removal; the share is configurable", async () => {
    const storage = new StoreMemoryStorage({ store: new InMemoryStore() });
    await seed(storage, four);
    const removeThree = JSON.stringify({ newFacts: [], factsToRemove: ["fact_00000001", "fact_00000002", "fact_00000003"] });
    const { memory, warnings } = setup([removeThree, removeThree], { storage });
    memory.capture([user("What's new in Go?"), assistant("Generics.")], { threadId: "t1", userId: "u" });
    await memory.flush();
    expect(await memory.listFacts("u")).toHaveLength(4);
    expect(warnings.some((w) => /removal of 3 of 4 facts ignored/.test(w))).toBe(true);
    memory.capture([user("Please forget my job, my editor and where I live."), assistant("Done.")], { threadId: "t2", userId: "u" });
    await memory.close();
    expect((await memory.listFacts("u")).map((f) => f.id)).toEqual(["fact_00000004"]);

    const loose = new StoreMemoryStorage({ store: new InMemoryStore() });
    await seed(loose, four);
    const other = setup(
      [
        JSON.stringify({
          newFacts: [{ content: "Likes Go", category: "preference", confidence: 0.9 }],
          factsToRemove: ["fact_00000001", "fact_00000002", "fact_00000003"],
        }),
      ],
      {
        storage: loose,
        maxRemovalShare: 0.8,
      },
    );
    other.memory.capture([user("I like Go now")], { threadId: "t3", userId: "u" });
    await other.memory.close();
    expect((await other.memory.listFacts("u")).map((f) => f.content)).toEqual(["Prefers tabs over spaces", "Likes Go"]);
  });

  it("what the user confirmed counts as said; what the assistant only suggested does not", async () => {
    const { memory, warnings } = setup([
      JSON.stringify({
        newFacts: [
          { content: "Is based in Lyon", category: "context", confidence: 0.9 },
          { content: "Works on payments at Stripe", category: "context", confidence: 0.9 },
        ],
        factsToRemove: [],
      }),
    ]);
    memory.capture(
      [
        user("Any meetups near me?"),
        assistant("You're based in Lyon, right?"),
        user("Yes, exactly."),
        assistant("Since you work on payments at Stripe, try the fintech meetup."),
        user("Thanks"),
      ],
      { threadId: "t", userId: "u" },
    );
    await memory.close();
    expect((await memory.listFacts("u")).map((f) => f.content)).toEqual(["Is based in Lyon"]);
    expect(warnings.some((w) => /Stripe.*did not say or confirm/.test(w))).toBe(true);
  });
});

describe("redaction", () => {
  it("every write path redacts, categories included; summaries that are only a placeholder are refused", async () => {
    const secret = "ghp_Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8";
    const { memory } = setup([
      JSON.stringify({
        newFacts: [],
        factsToRemove: [],
        user: {
          workContext: { summary: `token=${secret}`, shouldUpdate: true },
          topOfMind: { summary: `Rotating ${secret} today.`, shouldUpdate: true },
        },
      }),
    ]);
    memory.capture([user(`I am rotating ${secret} today`), assistant("ok")], { threadId: "t", userId: "u" });
    await memory.flush();
    const doc = await memory.read("u");
    expect(doc.user.workContext.summary).toBe("");
    expect(doc.user.topOfMind.summary).toBe("Rotating [REDACTED] today.");
    const added = await memory.addFact("u", undefined, { content: "Prefers short answers" });
    const edited = await memory.editFact("u", undefined, added.fact?.id as string, { category: `api_key=${secret}` });
    expect(edited.fact?.category).toBe("context");
    const edited2 = await memory.editFact("u", undefined, added.fact?.id as string, { category: `coding style ${secret} notes` });
    expect(edited2.fact?.category).toBe("coding style [REDACTED] notes");
    expect(JSON.stringify(await memory.read("u"))).not.toContain(secret);
    await memory.close();
  });
});

describe("nothing silently lost", () => {
  const hang = (req: ModelRequest) =>
    new Promise<string>((_, reject) => req.signal?.addEventListener("abort", () => reject(new ModelError("aborted", "aborted"))));

  it("retries an unusable reply with backoff, then keeps the work pending in the store and finishes it in the next process", async () => {
    const store = new InMemoryStore();
    const storage = new StoreMemoryStorage({ store });
    const first = setup(() => "I cannot do that.", { storage, extractionAttempts: 2 });
    first.memory.capture([user("I live in Lyon"), assistant("Nice city.")], { threadId: "t", userId: "u" });
    await first.memory.close();
    expect(first.model.requests).toHaveLength(2);
    expect(first.outcomes).toEqual([expect.objectContaining({ status: "pending", attempts: 2 })]);
    expect(first.warnings.some((w) => /kept as pending work .* retried on the next run or flush\(\)/.test(w))).toBe(true);
    expect(await first.memory.pendingWork()).toHaveLength(1);

    // The next process, same store: flush() picks the work up.
    const second = setup(
      [JSON.stringify({ newFacts: [{ content: "Lives in Lyon", category: "context", confidence: 0.9 }], factsToRemove: [] })],
      {
        storage: new StoreMemoryStorage({ store }),
      },
    );
    await second.memory.flush();
    expect((await second.memory.listFacts("u")).map((f) => f.content)).toEqual(["Lives in Lyon"]);
    expect(await second.memory.pendingWork()).toEqual([]);
    await second.memory.close();
  });

  it("a timed-out extraction is split, retried and, when it keeps timing out, kept as pending (file storage + FilePendingWork)", async () => {
    const pendingDir = join(dir, "pending");
    const storage = new FileMemoryStorage({ dir });
    const conversation = [user("I live in Lyon"), assistant("ok"), user("I use Neovim"), assistant("ok")];
    // Answers only for at most two messages: the whole conversation times out, its halves do not.
    const { memory, model } = setup(
      (req) => {
        const text = req.messages[0]?.content ?? "";
        if (userTurnsIn(text) > 1) return hang(req);
        const conversationBlock = text.slice(text.indexOf("<conversation>"));
        const fact = conversationBlock.includes("Lyon") ? "Lives in Lyon" : "Uses Neovim";
        return JSON.stringify({ newFacts: [{ content: fact, category: "context", confidence: 0.9 }], factsToRemove: [] });
      },
      { storage, modelTimeoutMs: 50, pendingWork: new FilePendingWork({ dir: pendingDir }) },
    );
    memory.capture(conversation, { threadId: "t", userId: "u" });
    await memory.close();
    expect(model.requests).toHaveLength(3);
    expect((await memory.listFacts("u")).map((f) => f.content).sort()).toEqual(["Lives in Lyon", "Uses Neovim"]);

    const stuck = setup(hang, {
      storage,
      modelTimeoutMs: 20,
      extractionAttempts: 2,
      pendingWork: new FilePendingWork({ dir: pendingDir }),
    });
    stuck.memory.capture([user("I like tea")], { threadId: "t2", userId: "u" });
    await stuck.memory.close();
    const pending = await new FilePendingWork({ dir: pendingDir }).list();
    expect(pending.map((p) => p.job.conversation.messages)).toEqual([[user("I like tea")]]);
    expect(pending[0]?.reason).toMatch(/did not answer within/);
  });

  it("an answer that copies the prompt's example facts is asked again in halves; facts the user said are not a copy", async () => {
    const example = [
      { content: "Works as a nurse in Porto", category: "context", confidence: 0.95 },
      { content: "Is called Sam", category: "context", confidence: 0.95 },
    ];
    // Copies the example for a conversation of more than one user turn, reads a single turn.
    const { memory, model, warnings } = setup((req) => {
      const block = conversationPart(req);
      if (userTurnsIn(block) > 1) return JSON.stringify({ newFacts: example, factsToRemove: [] });
      const fact = block.includes("Lyon") ? "Lives in Lyon" : "Uses Neovim";
      return JSON.stringify({ newFacts: [{ content: fact, category: "context", confidence: 0.9 }], factsToRemove: [] });
    });
    memory.capture([user("I live in Lyon"), assistant("ok"), user("I use Neovim"), assistant("ok")], { threadId: "t", userId: "u" });
    await memory.close();
    expect(model.requests).toHaveLength(3);
    expect((await memory.listFacts("u")).map((f) => f.content).sort()).toEqual(["Lives in Lyon", "Uses Neovim"]);
    expect(warnings.some((w) => w.includes("copied the prompt's example facts"))).toBe(true);

    // A user who is a nurse in Porto called Sam: the same facts are theirs, stored at once.
    const real = setup(() => JSON.stringify({ newFacts: example, factsToRemove: [] }));
    real.memory.capture([user("I'm Sam, I work as a nurse in Porto"), assistant("ok"), user("Hello"), assistant("hi")], {
      threadId: "t",
      userId: "u",
    });
    await real.memory.close();
    expect(real.model.requests).toHaveLength(1);
    expect((await real.memory.listFacts("u")).map((f) => f.content).sort()).toEqual(["Is called Sam", "Works as a nurse in Porto"]);

    // Copies every time: split while attempts are left, then applied (and refused) — no loop.
    const stubborn = setup(() => JSON.stringify({ newFacts: example, factsToRemove: [] }), { extractionAttempts: 2 });
    stubborn.memory.capture([user("I live in Lyon"), assistant("ok"), user("I use Neovim"), assistant("ok")], {
      threadId: "t",
      userId: "u",
    });
    await stubborn.memory.close();
    expect(stubborn.model.requests).toHaveLength(3);
    expect(await stubborn.memory.listFacts("u")).toEqual([]);
  });

  it("a fact read from one half is the user's when they said its words in the other half", async () => {
    // The memory evaluation's pref-07: asked again in halves, the second half ("How do I
    // parametrize a test?" and a reply naming pytest) gave "Parametrizes tests in pytest", and
    // "pytest" counted as only the assistant's word — the user had said it in the first half.
    const example = [{ content: "Is called Sam", category: "context", confidence: 0.95 }];
    const { memory, model } = setup((req) => {
      const block = conversationPart(req);
      if (userTurnsIn(block) > 1) return JSON.stringify({ newFacts: example, factsToRemove: [] });
      if (block.includes("unittest")) return JSON.stringify({ newFacts: [], factsToRemove: [] });
      return JSON.stringify({
        newFacts: [{ content: "Parametrizes tests in pytest", category: "context", confidence: 0.9 }],
        factsToRemove: [],
      });
    });
    memory.capture(
      [
        user("I write my tests with pytest, never unittest."),
        assistant("Noted."),
        user("How do I parametrize a test?"),
        assistant("Use @pytest.mark.parametrize with pytest."),
      ],
      { threadId: "t", userId: "u" },
    );
    await memory.close();
    expect(model.requests).toHaveLength(3);
    expect((await memory.listFacts("u")).map((f) => f.content)).toEqual(["Parametrizes tests in pytest"]);
  });

  it("an example fact is stored only when the user said its words themselves, not through an 'ok'", async () => {
    const sam = JSON.stringify({ newFacts: [{ content: "Is called Sam", category: "context", confidence: 0.95 }], factsToRemove: [] });
    const confirmed = setup(() => sam);
    confirmed.memory.capture([user("Sign the email for me."), assistant("Signed it as Sam, your name."), user("Ok."), assistant("Done.")], {
      threadId: "t",
      userId: "u",
    });
    await confirmed.memory.close();
    expect(await confirmed.memory.listFacts("u")).toEqual([]);
    expect(confirmed.warnings.join("\n")).toContain("it is the prompt's example");
    const own = setup(() => sam);
    own.memory.capture([user("Sign the email as Sam, that is my name."), assistant("Done.")], { threadId: "t", userId: "u" });
    await own.memory.close();
    expect((await own.memory.listFacts("u")).map((f) => f.content)).toEqual(["Is called Sam"]);
  });

  it("a timed-out chunk is split at a user message; a half without one is not sent", async () => {
    const { memory, model } = setup(
      (req) => {
        const block = conversationPart(req);
        if (/Assistant: /.test(block)) return hang(req);
        return JSON.stringify({ newFacts: [{ content: "Lives in Lyon", category: "context", confidence: 0.9 }], factsToRemove: [] });
      },
      { modelTimeoutMs: 50 },
    );
    memory.capture([user("I live in Lyon"), assistant("Nice, Lyon has great food.")], { threadId: "t", userId: "u" });
    await memory.close();
    expect(model.requests).toHaveLength(2);
    expect((await memory.listFacts("u")).map((f) => f.content)).toEqual(["Lives in Lyon"]);
  });

  it("long conversations are extracted in chunks within the token budget, each seeing the memory so far", async () => {
    const turns: Message[] = [];
    for (let i = 0; i < 30; i++) turns.push(user(`Note ${i}: my hobby number ${i} is ${"very ".repeat(20)}interesting`), assistant("ok"));
    turns.push(user("Also, I live in Lyon"), assistant("ok"));
    const { memory, model } = setup(
      (req) => {
        const text = req.messages[0]?.content ?? "";
        const facts = text.includes("Lyon") ? [{ content: "Lives in Lyon", category: "context", confidence: 0.9 }] : [];
        if (text.includes("Note 0:")) facts.push({ content: "Hobby number 0 is interesting", category: "context", confidence: 0.9 });
        return JSON.stringify({ newFacts: facts, factsToRemove: [] });
      },
      { maxConversationTokens: 400 },
    );
    memory.capture(turns, { threadId: "t", userId: "u" });
    await memory.close();
    expect(model.requests.length).toBeGreaterThan(3);
    for (const r of model.requests) expect(r.messages[0]?.content).not.toMatch(/earlier messages? left out/);
    expect((await memory.listFacts("u")).map((f) => f.content).sort()).toEqual(["Hobby number 0 is interesting", "Lives in Lyon"]);
    // The last chunk saw the fact learnt from the first one.
    expect(model.requests.at(-1)?.messages[0]?.content).toContain("Hobby number 0");
  });

  it("runs that end at maxTurns or with an empty reply are captured", async () => {
    const { memory } = setup(() =>
      JSON.stringify({ newFacts: [{ content: "Lives in Lyon", category: "context", confidence: 0.9 }], factsToRemove: [] }),
    );
    const maxTurns: Message[] = [
      user("I live in Lyon; list my files"),
      { role: "assistant", content: "", toolCalls: [{ id: "c", name: "ls", args: {} }] },
    ];
    expect(memory.capture(maxTurns, { threadId: "t1", userId: "u" })).toBe(true);
    expect(memory.capture([user("I live in Lyon"), assistant("")], { threadId: "t2", userId: "u" })).toBe(true);
    expect(memory.capture([], { threadId: "t3", userId: "u" })).toBe(false);
    await memory.close();
    expect((await memory.listFacts("u")).map((f) => f.content)).toEqual(["Lives in Lyon"]);
  });

  it("local models get smaller chunks, an output cap and a timeout that grows with the request", async () => {
    const seen: (ModelRequest & { settings?: { maxOutputTokens?: number } })[] = [];
    const model = new FakeChatModel(
      (req) => {
        seen.push(req);
        return JSON.stringify({ newFacts: [], factsToRemove: [] });
      },
      { id: "llama:SmolLM2-135M-Instruct.Q4_1.gguf" },
    );
    const memory = new LongTermMemory({ model, debounceMs: 0, onWarning: () => {} });
    const long: Message[] = [];
    for (let i = 0; i < 12; i++) long.push(user(`${"word ".repeat(150)}${i}`), assistant("ok"));
    memory.capture(long, { threadId: "t", userId: "u" });
    await memory.close();
    expect(model.requests.length).toBeGreaterThan(1); // 1,500-token chunks instead of 6,000
    expect(seen[0]?.settings?.maxOutputTokens).toBe(512);
  });
});
