/** Text-form tool calls and tool-argument parsing: the recorded model outputs and hostile near-misses. */
import { describe, expect, it } from "vitest";
import { parseTextToolCalls, parseToolArguments } from "../src/kit.js";
import { FIXTURE_TOOLS, TEXT_TOOL_CALL_FIXTURES } from "./fixtures/models/text-tool-calls.js";

const offered = new Set(FIXTURE_TOOLS.map((t) => t.name));

describe("parseTextToolCalls", () => {
  it.each(TEXT_TOOL_CALL_FIXTURES)("parses $model", ({ content, calls, rest }) => {
    const parsed = parseTextToolCalls(content, offered);
    expect(parsed?.calls.map((c) => ({ name: c.name, args: parseToolArguments(c.args).args }))).toEqual(calls);
    expect(parsed?.content).toBe(rest);
  });

  it("leaves text alone: no calls, unknown tools, JSON that is not a call, code that mentions a name", () => {
    for (const text of [
      "The weather in Paris is sunny.",
      '{"name": "Dana", "age": 41}',
      '```json\n{"name": "rm", "arguments": {"path": "/"}}\n```',
      '```python\nprint({"name": "ls"})\n```',
      "<tool_call>not json</tool_call>",
      "[1, 2, 3]",
    ]) {
      expect(parseTextToolCalls(text, offered), text).toBeUndefined();
    }
    expect(parseTextToolCalls('{"name": "ls", "arguments": {}}', new Set())).toBeUndefined();
  });

  it("keeps a block naming an unknown tool as text next to an accepted one", () => {
    const text =
      '<tool_call>{"name": "ls", "arguments": {"path": "/"}}</tool_call>\n<tool_call>{"name": "shell", "arguments": {}}</tool_call>';
    const parsed = parseTextToolCalls(text, offered);
    expect(parsed?.calls).toEqual([{ name: "ls", args: { path: "/" } }]);
    expect(parsed?.content).toBe('<tool_call>{"name": "shell", "arguments": {}}</tool_call>');
  });
});

describe("parseToolArguments", () => {
  it("parses, repairs the obvious, and explains the rest", () => {
    expect(parseToolArguments('{"a": 1}')).toEqual({ args: { a: 1 } });
    expect(parseToolArguments("")).toEqual({ args: {} });
    expect(parseToolArguments("{a: 'x', b: [1, 2,],}")).toEqual({ args: { a: "x", b: [1, 2] } });
    expect(parseToolArguments('{"path": "/a", "content": "hi"')).toEqual({ args: { path: "/a", content: "hi" } });
    // jsonrepair would invent `null` for the missing value: refused.
    const missing = parseToolArguments('{"city":');
    expect(missing.args).toEqual({ __raw: '{"city":' });
    expect(missing.argsError).toMatch(/not valid JSON/);
    const cut = parseToolArguments('{"city": "Ro', { truncated: true });
    expect(cut).toEqual({ args: { __raw: '{"city": "Ro' }, argsError: expect.stringContaining("cut off by the output-token limit") });
    expect(parseToolArguments("[1, 2]").argsError).toMatch(/must be a JSON object, got an array/);
    expect(parseToolArguments(42).argsError).toMatch(/got a number/);
    const long = parseToolArguments(`oops ${"x".repeat(1000)}`);
    expect(long.argsError?.length).toBeLessThan(400);
  });
});
