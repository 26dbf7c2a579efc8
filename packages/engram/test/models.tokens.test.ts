/** The CJK-aware token estimator. */
import { describe, expect, it } from "vitest";
import {
  MESSAGE_OVERHEAD_TOKENS,
  type Message,
  TOOL_CALL_OVERHEAD_TOKENS,
  estimateMessagesTokens,
  estimateRequestTokens,
  estimateTokens,
} from "../src/index.js";

describe("estimateTokens", () => {
  it("counts ~4 characters per token for English and code, rounding up", () => {
    expect(estimateTokens("")).toBe(0);
    expect(estimateTokens("a")).toBe(1);
    expect(estimateTokens("Hello, world!")).toBe(4); // 13 chars
    expect(estimateTokens("The quick brown fox jumps over the lazy dog.")).toBe(11); // 44 chars
    expect(estimateTokens("const x = 1;\nreturn x;\n")).toBe(6); // 23 chars
    expect(estimateTokens("café naïve")).toBe(3); // Latin-1 counts like ASCII
  });

  it("counts one token per CJK character, punctuation and kana included", () => {
    expect(estimateTokens("你好世界")).toBe(4);
    expect(estimateTokens("你好，世界。")).toBe(6); // fullwidth comma, ideographic full stop
    expect(estimateTokens("深度智能体把长期记忆保存在文件里")).toBe(16);
    expect(estimateTokens("カタカナとひらがな")).toBe(9);
    expect(estimateTokens("안녕하세요")).toBe(5);
  });

  it("mixes Latin and CJK by character class", () => {
    expect(estimateTokens("Hello 世界")).toBe(4); // 6 × ¼ + 2 × 1 = 3.5
    expect(estimateTokens("用户偏好 dark mode")).toBe(7); // 4 × 1 + 10 × ¼ = 6.5
    expect(estimateTokens("请用 TypeScript 写")).toBe(6); // 3 × 1 + 12 × ¼
  });

  it("counts other scripts at ½ and astral code points (emoji) at 2", () => {
    expect(estimateTokens("Привет")).toBe(3);
    expect(estimateTokens("👍")).toBe(2);
    expect(estimateTokens("👍🎉")).toBe(4);
    expect(estimateTokens("👨‍👩‍👧")).toBe(7); // three people (2 each) + two ZWJ (½ each)
    expect(estimateTokens("𠀀")).toBe(2); // CJK Extension B is astral
    expect(estimateTokens("\ud800")).toBe(1); // a lone surrogate does not throw
  });

  it("is linear and allocation-free on large input", () => {
    expect(estimateTokens("ab".repeat(500_000))).toBe(250_000);
    expect(estimateTokens("中".repeat(100_000))).toBe(100_000);
  });
});

describe("estimateMessagesTokens / estimateRequestTokens", () => {
  const messages: Message[] = [
    { role: "user", content: "List the files" }, // 14 chars → 4
    { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "ls", args: { path: "/" } }] },
    { role: "tool", content: "a.md\nb.md", toolCallId: "c1" }, // 9 chars → 3
    { role: "assistant", content: "两个文件" }, // 4
  ];

  it("sums content, per-message overhead, tool calls and tool-call ids", () => {
    const call = TOOL_CALL_OVERHEAD_TOKENS + estimateTokens("ls") + estimateTokens('{"path":"/"}');
    const expected = 4 * MESSAGE_OVERHEAD_TOKENS + 4 + 0 + call + 3 + estimateTokens("c1") + 4;
    expect(estimateMessagesTokens(messages)).toBe(expected);
    expect(estimateMessagesTokens([])).toBe(0);
  });

  it("adds the system prompt and tool schemas for a whole request", () => {
    const tools = [{ name: "ls", description: "List a directory.", parameters: { type: "object" } }];
    expect(estimateRequestTokens({ system: "你是助手", messages, tools })).toBe(
      4 +
        estimateMessagesTokens(messages) +
        estimateTokens("ls") +
        estimateTokens("List a directory.") +
        estimateTokens('{"type":"object"}'),
    );
  });
});
