/** FakeChatModel: scripted turns, recorded requests, streaming, abort and exhaustion. */
import { describe, expect, it } from "vitest";
import { FakeChatModel, type ModelRequest, type ModelStreamEvent } from "../src/index.js";
import { collect, rejection } from "./fixtures/models/helpers.js";

const req = (content: string, signal?: AbortSignal): ModelRequest => ({
  system: "sys",
  messages: [{ role: "user", content }],
  tools: [{ name: "ls", description: "List.", parameters: { type: "object", properties: {} } }],
  ...(signal ? { signal } : {}),
});

describe("FakeChatModel", () => {
  it("replays text and tool-call turns as assistant messages with generated or given ids", async () => {
    const model = new FakeChatModel([
      {
        toolCalls: [
          { name: "ls", args: { path: "/" } },
          { name: "grep", args: '{"pattern":"x"}' },
        ],
      },
      {
        role: "user",
        content: "thinking",
        toolCalls: [
          { id: "mine", name: "ls" },
          { name: "bad", args: "path=/tmp" },
        ],
      },
      "Done.",
      { content: "no calls", toolCalls: [] },
    ]);
    expect(model.id).toBe("fake");
    expect(await model.invoke(req("1"))).toEqual({
      message: {
        role: "assistant",
        content: "",
        toolCalls: [
          { id: "call_1", name: "ls", args: { path: "/" } },
          { id: "call_2", name: "grep", args: { pattern: "x" } },
        ],
      },
      finishReason: "tool_calls",
    });
    expect((await model.invoke(req("2"))).message).toEqual({
      role: "assistant",
      content: "thinking",
      toolCalls: [
        { id: "mine", name: "ls", args: {} },
        { id: "call_3", name: "bad", args: { __raw: "path=/tmp" }, argsError: expect.stringContaining("not valid JSON") },
      ],
    });
    expect((await model.invoke(req("3"))).message).toEqual({ role: "assistant", content: "Done." });
    const last = (await model.invoke(req("4"))).message;
    expect(last).toEqual({ role: "assistant", content: "no calls" });
    expect("toolCalls" in last).toBe(false);
  });

  it("records deep copies of every request", async () => {
    const model = new FakeChatModel(["a", "b"]);
    const first = req("hello");
    await model.invoke(first);
    first.messages.push({ role: "assistant", content: "mutated later" });
    (first.tools[0] as { name: string }).name = "changed";
    const controller = new AbortController();
    await model.invoke(req("again", controller.signal));
    expect(model.requests).toHaveLength(2);
    expect(model.requests[0]).toEqual({
      system: "sys",
      messages: [{ role: "user", content: "hello" }],
      tools: [{ name: "ls", description: "List.", parameters: { type: "object", properties: {} } }],
    });
    expect(model.requests[1]?.messages).toEqual([{ role: "user", content: "again" }]);
    expect(model.requests[1]?.signal).toBe(controller.signal);
  });

  it("streams text as a few deltas, then tool calls, then finish", async () => {
    const text = "The quick brown fox jumps over the lazy dog 🦊";
    const model = new FakeChatModel([{ content: text, toolCalls: [{ name: "ls", args: { path: "/a" } }] }, "ok"]);
    const events = await collect(model.stream(req("go")));
    const deltas = events.filter((e) => e.type === "text_delta").map((e) => (e as { text: string }).text);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.length).toBeLessThanOrEqual(3);
    expect(deltas.join("")).toBe(text);
    const call = { id: "call_1", name: "ls", args: { path: "/a" } };
    expect(events.slice(deltas.length)).toEqual([
      { type: "tool_call", call },
      { type: "finish", message: { role: "assistant", content: text, toolCalls: [call] }, finishReason: "tool_calls" },
    ]);
    expect(await collect(model.stream(req("again")))).toEqual([
      { type: "text_delta", text: "o" },
      { type: "text_delta", text: "k" },
      { type: "finish", message: { role: "assistant", content: "ok" }, finishReason: "stop" },
    ]);
  });

  it("calls a script function with each request and its index", async () => {
    const model = new FakeChatModel((request, index) => (index < 2 ? `echo ${index}: ${request.messages.at(-1)?.content}` : undefined));
    expect((await model.invoke(req("a"))).message.content).toBe("echo 0: a");
    expect((await model.invoke(req("b"))).message.content).toBe("echo 1: b");
    expect(await rejection(model.invoke(req("c")))).toMatchObject({ code: "script_exhausted" });
  });

  it("throws script_exhausted when the script runs out, in invoke and stream", async () => {
    const model = new FakeChatModel(["only"]);
    await model.invoke(req("1"));
    const e = await rejection(model.invoke(req("2")));
    expect(e.code).toBe("script_exhausted");
    expect(e.message).toContain("only 1 turns");
    expect(await rejection(collect(model.stream(req("3"))))).toMatchObject({ code: "script_exhausted" });
  });

  it("honours an abort signal before and during a call", async () => {
    const model = new FakeChatModel(["never", "a long streamed reply"], { delayMs: 5, id: "scripted" });
    expect(model.id).toBe("scripted");
    expect(await rejection(model.invoke(req("x", AbortSignal.abort())))).toMatchObject({ code: "aborted" });
    expect(model.requests).toHaveLength(0);

    const controller = new AbortController();
    const pending = model.invoke(req("x", controller.signal));
    controller.abort();
    expect(await rejection(pending)).toMatchObject({ code: "aborted" });

    const streaming = new AbortController();
    const seen: ModelStreamEvent[] = [];
    const error = await rejection(
      (async () => {
        for await (const e of model.stream(req("y", streaming.signal))) {
          seen.push(e);
          streaming.abort();
        }
      })(),
    );
    expect(error.code).toBe("aborted");
    expect(seen).toHaveLength(1);
  });

  it("rejects a script that is neither an array nor a function", () => {
    expect(() => new FakeChatModel("nope" as never)).toThrow(/array of turns or a function/);
  });
});
