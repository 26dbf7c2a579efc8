/** The token estimator (engram_core::tokens, through the loaded core): measured against a real
 * BPE tokenizer (js-tiktoken's cl100k_base and o200k_base) on the sample set the Rust test uses. */
import { readFileSync, readdirSync } from "node:fs";
import { Tiktoken } from "js-tiktoken/lite";
import cl100kBase from "js-tiktoken/ranks/cl100k_base";
import o200kBase from "js-tiktoken/ranks/o200k_base";
import { describe, expect, it } from "vitest";
import { loadCore } from "../src/core/loader.js";
import {
  MESSAGE_OVERHEAD_TOKENS,
  TOOL_CALL_OVERHEAD_TOKENS,
  estimateMessagesTokens,
  estimateRequestTokens,
  estimateTokens,
} from "../src/kit.js";
import type { Message } from "../src/index.js";

const FIXTURES = new URL("../../../crates/engram-core/tests/fixtures/tokens/", import.meta.url);
const reference = JSON.parse(readFileSync(new URL("reference.json", FIXTURES), "utf8")) as Record<
  string,
  { cl100k: number; o200k: number }
>;
const samples = readdirSync(FIXTURES)
  .filter((name) => name.endsWith(".txt"))
  .sort()
  .map((name) => ({ name: name.slice(0, -4), text: readFileSync(new URL(name, FIXTURES), "utf8") }));

describe("estimateTokens against cl100k_base", () => {
  const cl100k = new Tiktoken(cl100kBase);
  const o200k = new Tiktoken(o200kBase);

  it("has the sample classes, and reference.json still holds the tokenizers' counts", () => {
    expect(samples.map((s) => s.name)).toEqual(Object.keys(reference).sort());
    for (const s of ["prose-en", "code-ts", "code-rust", "json-pretty", "json-compact", "base64", "hex", "uuid"]) {
      expect(Object.keys(reference)).toContain(s);
    }
    for (const { name, text } of samples) {
      expect({ name, cl100k: cl100k.encode(text).length, o200k: o200k.encode(text).length }).toEqual({
        name,
        ...reference[name],
      });
    }
  });

  it.each(samples)("estimates $name within 10% of cl100k_base", ({ text }) => {
    const real = cl100k.encode(text).length;
    const estimate = estimateTokens(text);
    expect(Math.abs(estimate - real) / real).toBeLessThanOrEqual(0.1);
  });

  it("keeps the estimate within 10% on message-sized pieces of the samples, summed per class", () => {
    // Budgets are checked on single messages and facts: 60- and 300-character windows.
    for (const size of [60, 300]) {
      for (const { name, text } of samples) {
        const chars = Array.from(text);
        let real = 0;
        let estimate = 0;
        for (let at = 0; at + size <= chars.length; at += size) {
          const piece = chars.slice(at, at + size).join("");
          real += cl100k.encode(piece).length;
          estimate += estimateTokens(piece);
        }
        expect({ size, name, withinTenPercent: Math.abs(estimate - real) <= 0.1 * real }).toEqual({
          size,
          name,
          withinTenPercent: true,
        });
      }
    }
  });
});

describe("estimateTokens", () => {
  it("counts pieces as BPE tokenizers split them", () => {
    expect(estimateTokens("")).toBe(0);
    expect(estimateTokens("a")).toBe(1);
    expect(estimateTokens("hello")).toBe(1);
    expect(estimateTokens("Hello, world!")).toBe(4); // Hello | , | world | !
    expect(estimateTokens("12345678")).toBe(3); // 123 | 456 | 78
    expect(estimateTokens("parseHttpRequest")).toBe(3); // parse | Http | Request
  });

  it("charges random-looking text (ids, hashes, base64) far more than words of the same length", () => {
    const words = estimateTokens("the quick brown fox jumps over the lazy dog again");
    const uuid = estimateTokens("0f8fad5b-d9cb-469f-a165-70867728950e-7c9e6679-7425-40de");
    expect(uuid).toBeGreaterThan(2 * words);
  });

  it("is the same function on both cores", async () => {
    const [native, wasm] = await Promise.all([loadCore({ core: "native" }), loadCore({ core: "wasm" })]);
    const hostile = ["\ud800", "a\udfffb", "👨‍👩‍👧", "e\u0301", "\0\t\r\n", "𠀀".repeat(3), "x".repeat(100_000)];
    for (const text of [...samples.map((s) => s.text), ...hostile]) {
      const n = estimateTokens(text);
      expect(native.estimateTokens(text)).toBe(n);
      expect(wasm.estimateTokens(text)).toBe(n);
    }
  });

  it("never counts more tokens than UTF-8 bytes, nor fewer than one for non-empty text", () => {
    for (const text of ["ab".repeat(500_000), "中".repeat(100_000), "🎉".repeat(10_000), "!".repeat(10_000), " \n".repeat(1000)]) {
      const n = estimateTokens(text);
      expect(n).toBeGreaterThanOrEqual(1);
      expect(n).toBeLessThanOrEqual(Buffer.byteLength(text));
    }
  });

  it("rejects a non-string with invalid_argument", () => {
    expect(() => estimateTokens(42 as unknown as string)).toThrow(expect.objectContaining({ code: "invalid_argument" }));
  });
});

describe("estimateMessagesTokens / estimateRequestTokens", () => {
  const messages: Message[] = [
    { role: "user", content: "List the files" },
    { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "ls", args: { path: "/" } }] },
    { role: "tool", content: "a.md\nb.md", toolCallId: "c1" },
    { role: "assistant", content: "两个文件" },
  ];

  it("sums content, per-message overhead, tool calls and tool-call ids", () => {
    const call = TOOL_CALL_OVERHEAD_TOKENS + estimateTokens("ls") + estimateTokens('{"path":"/"}');
    const content = estimateTokens("List the files") + estimateTokens("a.md\nb.md") + estimateTokens("两个文件");
    const expected = 4 * MESSAGE_OVERHEAD_TOKENS + content + call + estimateTokens("c1");
    expect(estimateMessagesTokens(messages)).toBe(expected);
    expect(estimateMessagesTokens([])).toBe(0);
  });

  it("counts a message again when its content changed since the last estimate", () => {
    const m: Message = { role: "user", content: "short" };
    const before = estimateMessagesTokens([m]);
    m.content = "0f8fad5b-d9cb-469f-a165-70867728950e ".repeat(20);
    expect(estimateMessagesTokens([m])).toBe(MESSAGE_OVERHEAD_TOKENS + estimateTokens(m.content));
    expect(estimateMessagesTokens([m])).toBeGreaterThan(before + 100);
    m.content = "short";
    expect(estimateMessagesTokens([m])).toBe(before);
  });

  it("adds the system prompt and tool schemas for a whole request", () => {
    const tools = [{ name: "ls", description: "List a directory.", parameters: { type: "object" } }];
    expect(estimateRequestTokens({ system: "你是助手", messages, tools })).toBe(
      estimateTokens("你是助手") +
        estimateMessagesTokens(messages) +
        estimateTokens("ls") +
        estimateTokens("List a directory.") +
        estimateTokens('{"type":"object"}'),
    );
    // A changed system prompt is counted again (the last one's estimate is remembered).
    const other = "You are a careful reviewer. ".repeat(30);
    expect(estimateRequestTokens({ system: other, messages: [], tools: [] })).toBe(estimateTokens(other));
    expect(estimateRequestTokens({ system: "", messages: [], tools: [] })).toBe(0);
  });
});
