/** Updates supersede: a new fact that changes an old one replaces it (one-value slots by rule, other
 * facts when the model names them and the user spoke of a change), the replaced fact stays in the
 * memory history with what replaced it, restated facts are confirmed anew, and the injection shows
 * the newest of two facts of one slot, each with the day it was last confirmed, leaving out a fact
 * that a recalled line shown beside it updates and a recalled line that a shown fact already
 * says. Scripted models. */
import { beforeAll, describe, expect, it } from "vitest";
import { loadCore } from "../src/core/loader.js";
import { FakeChatModel } from "../src/models/fake.js";
import { InMemoryStore } from "../src/stores/memory.js";
import {
  type Fact,
  LongTermMemory,
  NO_REVISION,
  StoreMemoryStorage,
  createEmptyMemory,
  formatMemoryBlock,
  memoryInjection,
  factRestatesLine,
  lineUpdatesFact,
  notRestatedBy,
  notUpdatedBy,
  parseMemoryUpdate,
} from "../src/memory/longterm/index.js";
import { slotOf, newestPerSlot } from "../src/memory/longterm/slots.js";
import { calendarWeek, daysAgo } from "../src/memory/longterm/inject.js";
import { shortFactIds } from "../src/memory/longterm/update-schema.js";
import { buildUpdateRequest } from "../src/memory/longterm/prompt.js";
import { MemoryHistory, recordFactChanges } from "../src/memory/history/index.js";
import { contentWords, isQuestion, negated, sameWord } from "../src/memory/longterm/words.js";
import { prng } from "../src/testing/index.js";
import { estimateTokens } from "../src/models/tokens.js";

const fact = (id: string, content: string, createdAt: string, extra: Partial<Fact> = {}): Fact => ({
  id,
  content,
  category: "context",
  confidence: 0.95,
  createdAt,
  source: "earlier",
  ...extra,
});

interface Run {
  facts: Fact[];
  memory: LongTermMemory;
  history: MemoryHistory;
  warnings: string[];
}

/** Stores `stored`, then extracts from one conversation in which the user says `said`, the model
 * answering `newFacts` (a function of the short ids it was shown); the clock reads `now`. */
async function extract(
  stored: Fact[],
  said: string[],
  newFacts: (ids: (id: string) => string) => Record<string, unknown>[],
  now = "2026-11-15T09:00:00.000Z",
): Promise<Run> {
  const store = new InMemoryStore();
  const history = new MemoryHistory({ store });
  const storage = recordFactChanges(new StoreMemoryStorage({ store }), { history });
  const doc = createEmptyMemory();
  doc.facts = stored;
  expect((await storage.save("u", undefined, doc, NO_REVISION)).ok).toBe(true);
  const shown = shortFactIds(stored.map((f) => f.id));
  const reply = JSON.stringify({ newFacts: newFacts((id) => shown.get(id) ?? id), factsToRemove: [] });
  const warnings: string[] = [];
  const memory = new LongTermMemory({
    model: new FakeChatModel([reply]),
    storage,
    debounceMs: 0,
    now: () => Date.parse(now),
    onWarning: (m) => warnings.push(m),
  });
  memory.capture(
    said.flatMap((content) => [
      { role: "user" as const, content },
      { role: "assistant" as const, content: "Noted." },
    ]),
    { threadId: "t-new", userId: "u" },
  );
  await memory.close();
  return { facts: await memory.listFacts("u"), memory, history, warnings };
}

// The core (redaction, packing) loads once, outside any test's time limit.
beforeAll(() => loadCore().then(() => undefined), 120_000);

describe("slots: facts that hold one value at a time", () => {
  it.each([
    ["Is called Tomasz", "name"],
    ["Name is Jo Smith", "name"],
    ["The user's name is now Jo Okafor", "name"],
    ["Lives in Berlin", "location"],
    ["Now lives in Lisbon", "location"],
    ["Moved to Lisbon last week", "location"],
    ["Works as a data analyst at an insurance company", "job"],
    ["Works at Northwind Bank", "employer"],
    ["Favourite editor is Sublime Text", "favourite:editor"],
    ["Favorite editor is now Zed", "favourite:editor"],
    ["Switched editors: the user's favourite editor is now Zed", "favourite:editor"],
    ["Has two cats", "count:cat"],
    ["Has 3 cats now", "count:cat"],
    ["Is 34 years old", "age"],
  ])("%s → %s", (content, slot) => {
    expect(slotOf(content)).toBe(slot);
  });

  it.each(["Prefers tabs over spaces", "Has a cat named Miso", "Uses pnpm", "Is learning Japanese", "Likes living in the city"])(
    "%s holds no slot",
    (content) => {
      expect(slotOf(content)).toBeUndefined();
    },
  );

  it("keeps the most recently confirmed fact of each slot, in order", () => {
    const berlin = fact("fact_00000001", "Lives in Berlin", "2026-10-20T09:00:00.000Z");
    const tabs = fact("fact_00000002", "Prefers tabs", "2026-10-01T09:00:00.000Z");
    const lisbon = fact("fact_00000003", "Lives in Lisbon", "2026-11-15T09:00:00.000Z");
    expect(newestPerSlot([berlin, tabs, lisbon])).toEqual([tabs, lisbon]);
    const confirmedBerlin = { ...berlin, confirmedAt: "2026-11-18T09:00:00.000Z" };
    expect(newestPerSlot([confirmedBerlin, tabs, lisbon])).toEqual([confirmedBerlin, tabs]);
  });
});

describe("a new fact replaces the old one", () => {
  const berlin = fact("fact_0000000a", "Lives in Berlin", "2026-10-20T09:00:00.000Z");
  const tabs = fact("fact_0000000b", "Prefers tabs over spaces", "2026-10-01T09:00:00.000Z");

  it("of the same slot, by rule, even when the model names nothing; the history keeps the old one with what replaced it", async () => {
    const run = await extract([berlin, tabs], ["I moved to Lisbon last week, so now I live in Lisbon."], () => [
      { content: "Lives in Lisbon", category: "context", confidence: 0.95, replaces: "" },
    ]);
    expect(run.facts.map((f) => f.content)).toEqual(["Prefers tabs over spaces", "Lives in Lisbon"]);
    const lisbon = run.facts.find((f) => f.content === "Lives in Lisbon");
    expect(lisbon?.replaced).toEqual([berlin.id]);
    expect(lisbon?.createdAt).toBe("2026-11-15T09:00:00.000Z");
    const [change] = await run.history.list("u", { kind: "facts" });
    expect(change?.before).toContain(`${berlin.id} Lives in Berlin`);
    expect(change?.after).not.toContain("Berlin");
    expect(change?.after).toContain(`Lives in Lisbon (replaces ${berlin.id})`);
    const block = await run.memory.inject("u");
    expect(block).not.toContain("Berlin");
    expect(block).toContain("Lives in Lisbon (as of 2026-11-15, today)");
  });

  it("named by the model, when it is about the same thing and the user spoke of a change", async () => {
    const light = fact("fact_0000000c", "Prefers light mode in every app", "2026-10-10T09:00:00.000Z");
    const run = await extract([light, tabs], ["My eyes hurt lately, so I prefer dark mode everywhere now."], (id) => [
      { content: "Prefers dark mode everywhere", category: "preference", confidence: 0.95, replaces: id(light.id) },
    ]);
    expect(run.facts.map((f) => f.content)).toEqual(["Prefers tabs over spaces", "Prefers dark mode everywhere"]);
    expect(run.facts[1]?.replaced).toEqual([light.id]);
  });

  it("named by the model is refused without a change in what the user said", async () => {
    const cat = fact("fact_0000000d", "Has a cat named Miso", "2026-11-04T09:00:00.000Z");
    const run = await extract([cat], ["I also have a parrot named Kiwi."], (id) => [
      { content: "Has a parrot named Kiwi", category: "context", confidence: 0.95, replaces: id(cat.id) },
    ]);
    expect(run.facts.map((f) => f.content)).toEqual(["Has a cat named Miso", "Has a parrot named Kiwi"]);
    expect(run.warnings.join("\n")).toMatch(/replacement of fact_0000000d .* ignored: the user did not speak of a change/);
  });

  it("named by the model is refused when the two facts share no word", async () => {
    const pnpm = fact("fact_0000000e", "Uses pnpm", "2026-11-01T09:00:00.000Z");
    const run = await extract([pnpm], ["These days I prefer dark mode."], (id) => [
      { content: "Prefers dark mode", category: "preference", confidence: 0.95, replaces: id(pnpm.id) },
    ]);
    expect(run.facts.map((f) => f.content)).toEqual(["Uses pnpm", "Prefers dark mode"]);
    expect(run.warnings.join("\n")).toMatch(/about different things/);
  });

  it("of a count and of a favourite, by rule", async () => {
    const cats = fact("fact_0000000f", "Has two cats", "2026-10-08T09:00:00.000Z");
    const editor = fact("fact_00000010", "Favourite editor is Sublime Text", "2026-10-05T09:00:00.000Z");
    const run = await extract(
      [cats, editor],
      ["We adopted another kitten, so I have three cats now.", "I switched editors: my favourite editor is now Zed."],
      () => [
        { content: "Has three cats", category: "context", confidence: 0.95, replaces: "" },
        { content: "Favourite editor is Zed", category: "preference", confidence: 0.95, replaces: "" },
      ],
    );
    expect(run.facts.map((f) => f.content)).toEqual(["Has three cats", "Favourite editor is Zed"]);
  });

  it("two values of one slot in one update: the later one stands", async () => {
    const run = await extract([], ["I lived in Berlin until October; now I live in Lisbon."], () => [
      { content: "Lives in Berlin", category: "context", confidence: 0.95, replaces: "" },
      { content: "Lives in Lisbon", category: "context", confidence: 0.95, replaces: "" },
    ]);
    expect(run.facts.map((f) => f.content)).toEqual(["Lives in Lisbon"]);
    expect(run.facts[0]?.replaced).toBeUndefined();
  });

  it("a different value in another slot is not a replacement", async () => {
    const job = fact("fact_00000011", "Works as a nurse", "2026-10-05T09:00:00.000Z");
    const run = await extract([job], ["I work at St Mary's hospital now."], () => [
      { content: "Works at St Mary's hospital", category: "context", confidence: 0.95, replaces: "" },
    ]);
    expect(run.facts.map((f) => f.content)).toEqual(["Works as a nurse", "Works at St Mary's hospital"]);
  });
});

describe("facts carry when they were last confirmed", () => {
  const name = fact("fact_00000020", "Is called Tomasz", "2026-10-01T09:00:00.000Z");
  const pnpm = fact("fact_00000021", "Uses pnpm for every project", "2026-10-02T09:00:00.000Z");

  it("a fact the user states again is confirmed now, whether the model lists it again or not", async () => {
    const listed = await extract([name, pnpm], ["I'm Tomasz, by the way."], () => [
      { content: "Is called Tomasz", category: "context", confidence: 0.95, replaces: "" },
    ]);
    expect(listed.facts.find((f) => f.id === name.id)?.confirmedAt).toBe("2026-11-15T09:00:00.000Z");
    const unlisted = await extract([name, pnpm], ["Tomasz here again."], () => []);
    expect(unlisted.facts.find((f) => f.id === name.id)?.confirmedAt).toBe("2026-11-15T09:00:00.000Z");
    expect(unlisted.facts.find((f) => f.id === pnpm.id)?.confirmedAt).toBeUndefined();
  });

  it("a fact the model copies from memory without the user saying it is not confirmed", async () => {
    const run = await extract([name, pnpm], ["How do I add a dev dependency?"], () => [
      { content: "Uses pnpm for every project", category: "preference", confidence: 0.95, replaces: "" },
    ]);
    expect(run.facts.find((f) => f.id === pnpm.id)?.confirmedAt).toBeUndefined();
    expect(run.facts).toHaveLength(2);
  });

  it("a fact that takes the user's new words is dated by them (update-03 of the memory evaluation)", async () => {
    // The model restated the old fact with the change; it took the new words in place of the old
    // and kept showing the day of the old ones.
    const sublime = fact("fact_00000050", "The user's favourite editor is Sublime Text", "2026-10-05T08:00:00.000Z");
    const run = await extract(
      [sublime],
      ["I switched editors: my favourite editor is now Zed."],
      () => [{ content: "Switched editors from Sublime Text to Zed", category: "preference", confidence: 0.9 }],
      "2026-11-14T08:00:00.000Z",
    );
    expect(run.facts.map((f) => [f.content, f.confirmedAt])).toEqual([
      ["Switched editors from Sublime Text to Zed", "2026-11-14T08:00:00.000Z"],
    ]);
    // Copied from the memory shown with nothing the user said here: the day stays.
    const copied = await extract([sublime], ["What is a good theme?"], () => [
      { content: "The user's favourite editor is Sublime Text", category: "preference", confidence: 0.9 },
    ]);
    expect(copied.facts[0]?.confirmedAt).toBeUndefined();
  });

  it("a confirmation never moves the time back", async () => {
    const recent = { ...name, confirmedAt: "2026-11-20T09:00:00.000Z" };
    const run = await extract([recent], ["I'm Tomasz."], () => [], "2026-11-15T09:00:00.000Z");
    expect(run.facts[0]?.confirmedAt).toBe("2026-11-20T09:00:00.000Z");
  });
});

describe("how long ago a fact's day was", () => {
  it("counts whole UTC days from the day written for, then weeks, months and years", () => {
    const at = Date.parse("2026-11-20T23:30:00Z");
    const ago = (day: string) => daysAgo(day, at);
    expect(
      ["2026-11-20", "2026-11-19", "2026-11-07", "2026-11-06", "2026-09-22", "2026-09-21", "2025-11-21", "2025-11-20"].map(ago),
    ).toEqual(["today", "yesterday", "13 days ago", "2 weeks ago", "8 weeks ago", "2 months ago", "12 months ago", "1 year ago"]);
    expect([ago("2024-11-20"), ago("2026-11-21"), daysAgo("2026-11-20", Number.NaN)]).toEqual(["2 years ago", undefined, undefined]);
  });

  it("names the calendar week of a day two or more days back when it is this week or last (weeks from Monday, UTC)", () => {
    const friday = Date.parse("2026-11-20T23:30:00Z");
    const week = (day: string) => calendarWeek(day, friday);
    expect(
      ["2026-11-20", "2026-11-19", "2026-11-18", "2026-11-16", "2026-11-15", "2026-11-09", "2026-11-08", "2026-11-21"].map(week),
    ).toEqual([undefined, undefined, "this week", "this week", "last week", "last week", undefined, undefined]);
    // On a Monday, the day before yesterday was last week.
    expect(calendarWeek("2026-11-21", Date.parse("2026-11-23T08:00:00Z"))).toBe("last week");
    expect(calendarWeek("2026-11-18", Number.NaN)).toBeUndefined();
  });

  it("shows both in the block: the day count, then the calendar week", async () => {
    const storage = new StoreMemoryStorage({ store: new InMemoryStore() });
    const memory = createEmptyMemory();
    memory.facts = [
      fact("fact_00000041", "Started reading Middlemarch", "2026-10-28T10:00:00.000Z"),
      fact("fact_00000042", "Started taking cello lessons", "2026-11-12T10:00:00.000Z"),
      fact("fact_00000043", "Finished the first draft", "2026-11-17T10:00:00.000Z"),
    ];
    await storage.save("u", undefined, memory, NO_REVISION);
    const longTerm = new LongTermMemory({ model: new FakeChatModel([]), storage, now: () => Date.parse("2026-11-20T10:00:00Z") });
    const block = await longTerm.inject("u");
    expect(block).toContain("Started reading Middlemarch (as of 2026-10-28, 3 weeks ago)\n");
    expect(block).toContain("Started taking cello lessons (as of 2026-11-12, 8 days ago, last week)\n");
    expect(block).toContain("Finished the first draft (as of 2026-11-17, 3 days ago, this week)\n");
  });

  it("is written again on a new day, though the memory did not change", async () => {
    let now = Date.parse("2026-11-15T09:00:00Z");
    const storage = new StoreMemoryStorage({ store: new InMemoryStore() });
    const memory = createEmptyMemory();
    memory.facts = [fact("fact_00000040", "Lives in Lisbon", "2026-11-15T09:00:00.000Z")];
    await storage.save("u", undefined, memory, NO_REVISION);
    const longTerm = new LongTermMemory({ model: new FakeChatModel([]), storage, now: () => now });
    expect(await longTerm.inject("u")).toContain("Lives in Lisbon (as of 2026-11-15, today)");
    now = Date.parse("2026-11-16T08:00:00Z");
    expect(await longTerm.inject("u")).toContain("Lives in Lisbon (as of 2026-11-15, yesterday)");
  });
});

describe("the injection prefers the newest on a conflict", () => {
  it("shows one fact per slot, the most recently confirmed, each with its day", () => {
    const memory = createEmptyMemory();
    memory.facts = [
      fact("fact_00000030", "Lives in Berlin", "2026-10-20T09:00:00.000Z", { confidence: 0.99 }),
      fact("fact_00000031", "Prefers tabs", "2026-10-01T09:00:00.000Z", { confirmedAt: "2026-11-19T09:00:00.000Z" }),
      fact("fact_00000032", "Lives in Lisbon", "2026-11-15T09:00:00.000Z", { confidence: 0.8 }),
    ];
    const block = formatMemoryBlock(memory, { maxTokens: 2000, correctionBudgetTokens: 500 });
    expect(block).not.toContain("Berlin");
    expect(block).toContain("Lives in Lisbon (as of 2026-11-15)");
    expect(block).toContain("Prefers tabs (as of 2026-11-19)");
    // Written for a day, each fact also says how long ago its day was.
    const on = formatMemoryBlock(memory, { maxTokens: 2000, correctionBudgetTokens: 500, now: Date.parse("2026-11-20T10:00:00Z") });
    expect(on).toContain("Lives in Lisbon (as of 2026-11-15, 5 days ago, last week)");
    expect(on).toContain("Prefers tabs (as of 2026-11-19, yesterday)");
    expect(formatMemoryBlock(memory, { maxTokens: 2000, correctionBudgetTokens: 500, dates: false })).toContain("] Prefers tabs\n");
  });
});

describe("a newer line the user said updates a fact", () => {
  const at = (day: string) => Date.parse(`${day}T09:00:00.000Z`);
  const practice = fact("fact_00000040", "Lena's football practice is on Thursdays", "2026-10-19T09:00:00.000Z");
  const cat = fact("fact_00000041", "Has a cat named Tiger", "2026-10-05T09:00:00.000Z");
  const editor = fact("fact_00000042", "Uses Zed as an editor", "2026-10-05T09:00:00.000Z");
  const moved = { text: "Lena's football practice moved to Fridays.", at: at("2026-11-09") };

  it("when it is newer, states a change and shares two words of what the fact says", () => {
    expect(lineUpdatesFact(moved, practice)).toBe(true);
    // Not newer than the fact was last confirmed: the same day, or before.
    expect(lineUpdatesFact({ ...moved, at: at("2026-10-19") }, practice)).toBe(false);
    expect(lineUpdatesFact(moved, { ...practice, confirmedAt: "2026-11-10T09:00:00.000Z" })).toBe(false);
    // A question, or a statement without a change cue, updates nothing.
    expect(lineUpdatesFact({ ...moved, text: "Has Lena's football practice moved to Fridays?" }, practice)).toBe(false);
    expect(lineUpdatesFact({ ...moved, text: "Lena's football practice is fun." }, practice)).toBe(false);
  });

  it("or when it says the user stopped what the fact names (one word is then enough)", () => {
    // The 1.5B model's facts in the memory evaluation's update-07: no slot, no named replacement.
    const spanish = fact("fact_00000043", "Learning Spanish on Duolingo", "2026-10-02T09:00:00.000Z");
    const japanese = fact("fact_00000044", "Learning Japanese on Duolingo", "2026-11-01T09:00:00.000Z");
    const gaveUp = { text: "I gave up Spanish; I'm learning Japanese now.", at: at("2026-11-11") };
    expect(lineUpdatesFact(gaveUp, spanish)).toBe(true);
    expect(lineUpdatesFact(gaveUp, japanese)).toBe(false);
    expect(
      lineUpdatesFact(
        { text: "I quit Acme last month.", at: at("2026-11-11") },
        fact("fact_00000045", "Works at Acme", "2026-10-01T09:00:00.000Z"),
      ),
    ).toBe(true);
    expect(
      lineUpdatesFact(
        { text: "I no longer use Vim.", at: at("2026-11-11") },
        fact("fact_00000046", "Edits code in Vim", "2026-10-01T09:00:00.000Z"),
      ),
    ).toBe(true);
    // Something else stopped: the fact stays.
    expect(lineUpdatesFact({ text: "I gave up coffee now.", at: at("2026-11-11") }, spanish)).toBe(false);
  });

  it("keeps an unrelated fact: one shared word, or only framing words and change cues, is not enough", () => {
    expect(lineUpdatesFact({ text: "My cat now eats only wet food.", at: at("2026-11-09") }, cat)).toBe(false);
    expect(lineUpdatesFact({ text: "I now use tabs in my editor.", at: at("2026-11-09") }, editor)).toBe(false);
    expect(notUpdatedBy([practice, cat, editor], [moved])).toEqual([cat, editor]);
    expect(notUpdatedBy([practice, cat], [])).toEqual([practice, cat]);
  });

  it("leaves the updated fact out of the memory block, and only with the lines given", async () => {
    const memory = createEmptyMemory();
    memory.facts = [practice, cat];
    const options = { maxTokens: 2000, correctionBudgetTokens: 500 };
    const block = formatMemoryBlock(memory, { ...options, updatedBy: [moved] });
    expect(block).not.toContain("Thursdays");
    expect(block).toContain("Has a cat named Tiger");
    expect(formatMemoryBlock(memory, options)).toContain("Thursdays");
    // LongTermMemory.inject caches its block: a call with other lines is not answered from it.
    const storage = new StoreMemoryStorage({ store: new InMemoryStore() });
    expect((await storage.save("u", undefined, memory, NO_REVISION)).ok).toBe(true);
    const longTerm = new LongTermMemory({ model: new FakeChatModel(["{}"]), storage, debounceMs: 60_000 });
    expect(await longTerm.inject("u", undefined, "When is practice?")).toContain("Thursdays");
    expect(await longTerm.inject("u", undefined, "When is practice?", [moved])).not.toContain("Thursdays");
    expect(await longTerm.inject("u", undefined, "When is practice?")).toContain("Thursdays");
    await longTerm.close();
  });
});

describe("the extraction asks which fact a new one replaces", () => {
  it("shows the facts with ids and takes `replaces` from the answer", () => {
    const memory = createEmptyMemory();
    memory.facts = [fact("fact_00000040", "Lives in Berlin", "2026-10-20T09:00:00.000Z")];
    const { request, shortIds } = buildUpdateRequest(
      memory,
      { messages: [{ role: "user", content: "I live in Lisbon now." }], correction: false, reinforcement: false },
      { maxConversationTokens: 1000, maxMessageChars: 2000, mode: "facts" },
    );
    expect(request.system).toMatch(/replaces: "" for a new fact/);
    expect(JSON.stringify(request.responseFormat?.schema)).toContain('"replaces"');
    const shown = shortIds.get("fact_00000040") as string;
    expect(request.messages[0]?.content).toContain(`"id":"${shown}"`);
    const parsed = parseMemoryUpdate(
      JSON.stringify({
        newFacts: [{ content: "Lives in Lisbon", category: "context", confidence: 0.9, replaces: shown }],
        factsToRemove: [],
      }),
    );
    expect(parsed.ok && parsed.update.newFacts[0]?.replaces).toBe(shown);
    const none = parseMemoryUpdate(JSON.stringify({ newFacts: [{ content: "Uses Vim", category: "preference", confidence: 0.9 }] }));
    expect(none.ok && "replaces" in (none.update.newFacts[0] ?? {})).toBe(false);
  });
});

describe("a recalled line that a shown fact already says is left out of the recalled block", () => {
  it("when every word of the line is the fact's, it is a statement, and negated alike", () => {
    // The memory evaluation's multi-10 and multi-05: fact and line said the same, twice the tokens.
    expect(factRestatesLine("Grows tomatoes on balcony", "I grow tomatoes on my balcony.")).toBe(true);
    expect(factRestatesLine("The user's sister lives in Montreal", "My sister lives in Montreal.")).toBe(true);
    expect(factRestatesLine("Does not eat meat", "I do not eat meat.")).toBe(true);
    // A line that says more, a question, or another negation: the line stays.
    expect(factRestatesLine("Lives in Lisbon", "I moved to Lisbon last week, so now I live in Lisbon.")).toBe(false);
    expect(factRestatesLine("Grows tomatoes on balcony", "Should I grow tomatoes on my balcony?")).toBe(false);
    expect(factRestatesLine("Does not eat meat", "I eat meat again.")).toBe(false);
    expect(factRestatesLine("Grows tomatoes on balcony", "Thanks!")).toBe(false);
    const lines = ["I grow basil on my balcony too.", "I grow tomatoes on my balcony."];
    expect(notRestatedBy(lines, ["Grows tomatoes on balcony"], (l) => l)).toEqual(["I grow basil on my balcony too."]);
    expect(notRestatedBy(lines, [], (l) => l)).toEqual(lines);
  });
  it("counts as shown only the facts the block has a line for, not one inside another's text", () => {
    const memory = createEmptyMemory();
    memory.facts = [
      fact("fact_00000060", "Uses Google Docs for notes", "2026-11-02T09:00:00.000Z", { confidence: 0.99 }),
      fact("fact_00000061", "Uses Go", "2026-11-02T09:00:00.000Z", { confidence: 0.71 }),
      fact("fact_00000062", "Prefers <b>bold</b> headings", "2026-11-02T09:00:00.000Z", { confidence: 0.98 }),
    ];
    const all = memoryInjection(memory, { maxTokens: 2000, correctionBudgetTokens: 0 });
    // The tag is escaped in the block: that fact's text is not there as written.
    expect(all.shownFacts()).toEqual(["Uses Google Docs for notes", "Uses Go"]);
    for (const dates of [true, false]) {
      // A budget that leaves the least confident fact out: "Uses Go" is inside the other's text.
      const first = memoryInjection({ ...memory, facts: memory.facts.slice(0, 1) }, { maxTokens: 2000, correctionBudgetTokens: 0, dates });
      const tight = memoryInjection(memory, { maxTokens: estimateTokens(first.block) + 2, correctionBudgetTokens: 0, dates });
      expect(tight.block).not.toContain("] Uses Go\n");
      expect(tight.shownFacts()).toEqual(["Uses Google Docs for notes"]);
    }
  });

  it("finds the same lines through its word index as by reading each fact against each line", () => {
    const random = prng(23);
    const vocabulary =
      "I my grow grows growing tomatoes tomato basil balcony not do eat meat lives live Lisbon moved now v16 same Sam the".split(" ");
    const sentence = () =>
      Array.from({ length: 1 + Math.floor(random() * 5) }, () => vocabulary[Math.floor(random() * vocabulary.length)]).join(" ");
    // The rule as written: a statement, negated alike, every content word of the line a word of the fact.
    const restates = (fact: string, line: string) =>
      !isQuestion(line) &&
      negated(line) === negated(fact) &&
      contentWords(line).length > 0 &&
      contentWords(line).every((w) => contentWords(fact).some((v) => sameWord(w, v)));
    for (let round = 0; round < 300; round++) {
      const facts = Array.from({ length: Math.floor(random() * 6) }, sentence);
      const lines = Array.from({ length: 4 }, () => `${sentence()}${random() < 0.2 ? "?" : "."}`);
      const expected = lines.filter((l) => !facts.some((f) => restates(f, l)));
      expect(
        notRestatedBy(lines, facts, (l) => l),
        JSON.stringify({ facts, lines }),
      ).toEqual(expected);
    }
  });
});
