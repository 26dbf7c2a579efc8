/** What the loop does per step stays exact when it is made cheaper: the summarisation check's
 * remembered token counts equal a full count, also after messages change in place. */
import { describe, expect, it } from "vitest";
import { TokenCounter, estimateRequestTokens, estimateTokens } from "../src/models/tokens.js";
import type { Message } from "../src/index.js";
import type { ToolSpec } from "../src/kit.js";
import "./fixtures/session.js";

describe("per-step costs", () => {
  it("the summarisation check counts what estimateRequestTokens counts, whatever changed since its last call", () => {
    const counter = new TokenCounter();
    const count = (request: Parameters<TokenCounter["request"]>[0]) => counter.request(request);
    const tools: ToolSpec[] = [
      { name: "ls", description: "lists a directory", parameters: { type: "object", properties: { path: { type: "string" } } } },
    ];
    const messages: Message[] = [{ role: "user", content: "go — 计划 😀" }];
    const check = (system: string, systemContext?: string) => {
      const request = { system, messages: [...messages], tools, ...(systemContext !== undefined && { systemContext }) };
      expect(count(request)).toBe(estimateRequestTokens(request) + estimateTokens(systemContext ?? ""));
    };
    check("system");
    for (let i = 0; i < 30; i++) {
      messages.push({ role: "assistant", content: "", toolCalls: [{ id: `c${i}`, name: "ls", args: { path: `/d${i}` } }] });
      messages.push({ role: "tool", toolCallId: `c${i}`, content: `entries ${"x".repeat(i * 7)}` });
      check(i % 3 ? "system" : `system ${i}`, i % 2 ? "<memory>a</memory>" : undefined);
    }
    // In-place changes of remembered messages are counted again.
    (messages[0] as Message).content = "a much longer first message than before, with many more tokens in it";
    check("system");
    (messages[1] as Message).toolCalls = [{ id: "c0", name: "read_file", args: { file_path: "/a/very/long/path/name.md", limit: 2000 } }];
    check("system");
    (messages[2] as Message).toolCallId = "a-different-and-longer-call-id";
    check("system");
    // New tools array: counted anew.
    tools.push({ name: "grep", description: "searches", parameters: {} });
    const request = { system: "system", messages, tools: [...tools] };
    expect(count(request)).toBe(estimateRequestTokens(request));
  });
});
