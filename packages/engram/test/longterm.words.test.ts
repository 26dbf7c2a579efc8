/** Word identity of facts in every script: numbers and Latin words inside Chinese, Japanese and
 * Korean text are words of their own, so an update that changes one of them is a new fact, while
 * the same fact written again (spacing, punctuation, full-width forms) is still a duplicate. */
import { describe, expect, it } from "vitest";
import { FakeChatModel } from "../src/models/fake.js";
import { InMemoryStore } from "../src/stores/memory.js";
import { LongTermMemory, NO_REVISION, StoreMemoryStorage, createEmptyMemory } from "../src/memory/longterm/index.js";

/** Stores `before`, then extracts `after` from a conversation in which the user says `said`;
 * returns the facts afterwards. */
async function update(before: string, after: string, said: string): Promise<string[]> {
  const storage = new StoreMemoryStorage({ store: new InMemoryStore() });
  const doc = createEmptyMemory();
  doc.facts = [
    { id: "fact_00000001", content: before, category: "context", confidence: 0.95, createdAt: "2026-01-01T00:00:00.000Z", source: "t0" },
  ];
  expect((await storage.save("u", undefined, doc, NO_REVISION)).ok).toBe(true);
  const reply = JSON.stringify({ newFacts: [{ content: after, category: "context", confidence: 0.95 }], factsToRemove: [] });
  const memory = new LongTermMemory({ model: new FakeChatModel([reply]), storage, debounceMs: 0, onWarning: () => {} });
  memory.capture(
    [
      { role: "user", content: said },
      { role: "assistant", content: "OK." },
    ],
    { threadId: "t1", userId: "u" },
  );
  await memory.close();
  return (await memory.listFacts("u")).map((f) => f.content);
}

const UPDATES: [script: string, before: string, after: string, said: string][] = [
  ["Chinese, a number", "用户有2只猫", "用户有3只猫", "我现在有3只猫了"],
  ["Chinese, a Latin word", "用户喜欢Python", "用户喜欢Rust", "我现在喜欢Rust"],
  ["Japanese, a number", "ユーザーは猫を2匹飼っている", "ユーザーは猫を3匹飼っている", "猫を3匹飼っている"],
  ["Japanese, a Latin word", "ユーザーはPythonが好き", "ユーザーはRustが好き", "今はRustが好き"],
  ["Korean, a number", "사용자는 고양이 2마리를 키운다", "사용자는 고양이 3마리를 키운다", "저는 고양이 3마리를 키워요"],
  ["Korean, a Latin word", "사용자는 Go를 좋아한다", "사용자는 Rust를 좋아한다", "저는 Rust를 좋아한다"],
  ["English, a number", "Uses Python 3.11", "Uses Python 3.12", "I use Python 3.12 as well"],
];

const DUPLICATES: [script: string, before: string, again: string][] = [
  ["Chinese", "用户喜欢Rust", "用户喜欢 Ｒｕｓｔ。"],
  ["Japanese", "ユーザーは猫を3匹飼っている", "ユーザーは 猫を３匹 飼っている。"],
  ["Korean", "사용자는 Rust를 좋아한다", "사용자는  RUST를 좋아한다."],
];

describe("an update that changes a number or an embedded word is a new fact", () => {
  it.each(UPDATES)("%s", async (_, before, after, said) => {
    expect(await update(before, after, said)).toEqual([before, after]);
  });
});

describe("the same fact written again is still a duplicate", () => {
  it.each(DUPLICATES)("%s", async (_, before, again) => {
    expect(await update(before, again, again)).toEqual([before]);
  });
});
