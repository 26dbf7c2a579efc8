/**
 * Replies cut at the output limit, per model path: a cut structured reply (a tool call, a
 * grammar-constrained JSON reply) is never shown as JSON and never continued as text — the run
 * ends `truncated` — while what is complete in it (an answer string) is kept. The agent's
 * internal continuation prompt never reaches the user.
 */
import { join } from "node:path";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  type AgentEvent,
  type ChatModel,
  type Core,
  OpenAICompatibleModel,
  createDeepAgent,
  fromLanguageModel,
  loadCore,
} from "../src/index.js";
import { CONTINUE_PROMPT } from "../src/agent/loop.js";
import { LlamaCppModel } from "../src/models/llama.js";
import { readTextToolCalls } from "../src/models/text-tool-calls.js";
import { serverLanguageModel } from "./fixtures/models/ai-sdk-server-model.js";
import { chunk, completion, sse } from "./fixtures/models/chat-server.js";
import { useChatServer } from "./fixtures/models/helpers.js";
import { resetLlamaStub } from "./fixtures/models/llama-stub.js";

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});
const server = useChatServer();

/** A write cut off mid-content, as a model writes it in text. */
const CUT_TEXT_CALL = '{"name": "write_file", "arguments": {"file_path": "/a.txt", "content": "hel';
const CUT_ARGS = '{"file_path": "/a.txt", "content": "hel';
/** A native tool call whose arguments are cut off, streamed. */
const cutNativeCall = () =>
  sse([
    chunk({ role: "assistant", tool_calls: [{ index: 0, id: "c1", type: "function", function: { name: "write_file", arguments: "" } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: CUT_ARGS } }] }, "length"),
  ]);

const writeSpec = {
  name: "write_file",
  description: "Write a file.",
  parameters: {
    type: "object",
    properties: { file_path: { type: "string" }, content: { type: "string" } },
    required: ["file_path", "content"],
  },
};

/** Every event of one run, and the error it ended with. */
async function run(model: ChatModel): Promise<{ events: AgentEvent[]; error: unknown }> {
  const agent = createDeepAgent(model, { core, enableSubagents: false, enableMemory: false, enableSkills: false });
  const events: AgentEvent[] = [];
  let error: unknown;
  try {
    for await (const e of agent.stream({ messages: [{ role: "user", content: "write hello to /a.txt" }] }, { threadId: "cut" }))
      events.push(e);
  } catch (e) {
    error = e;
  }
  await agent.close();
  return { events, error };
}

/** The run ended `truncated`, showed no JSON and no internal text, and wrote nothing. */
function expectTruncatedCleanly({ events, error }: { events: AgentEvent[]; error: unknown }): void {
  expect(error).toMatchObject({ name: "ModelError", code: "truncated" });
  const final = events.at(-1);
  expect(final?.type === "final" && final.stopReason).toBe("truncated");
  const shown = events.map((e) => (e.type === "model_delta" ? e.text : "")).join("");
  expect(shown).not.toContain("{");
  expect(JSON.stringify(events)).not.toContain(CONTINUE_PROMPT);
  expect(JSON.stringify(events)).not.toContain('"hel');
  expect(events.some((e) => e.type === "tool_start")).toBe(false);
}

/** No request to a server carried the continuation prompt. */
function expectNoContinuation(bodies: unknown[]): void {
  expect(bodies).toHaveLength(1);
  expect(JSON.stringify(bodies)).not.toContain(CONTINUE_PROMPT);
}

describe("OpenAI-compatible (a real local server)", () => {
  it("a tool call written as text and cut mid-JSON ends truncated, unshown and not continued", async () => {
    server().reply(
      sse([chunk({ role: "assistant", content: "I will save it.\n<tool_call>" }), chunk({ content: CUT_TEXT_CALL }, "length")]),
    );
    const out = await run(new OpenAICompatibleModel({ baseURL: server().baseURL, model: "local" }));
    expectTruncatedCleanly(out);
    expectNoContinuation(server().requests.map((r) => r.body));
  });

  it("a native tool call whose arguments are cut ends truncated, not continued", async () => {
    server().reply(cutNativeCall());
    const out = await run(new OpenAICompatibleModel({ baseURL: server().baseURL, model: "local" }));
    expectTruncatedCleanly(out);
    expectNoContinuation(server().requests.map((r) => r.body));
  });

  it("invoke: a cut text call is left out of the reply, marked structuredCut", async () => {
    server().reply(completion({ content: CUT_TEXT_CALL }, "length"));
    const model = new OpenAICompatibleModel({ baseURL: server().baseURL, model: "local" });
    const out = await model.invoke({ system: "", messages: [{ role: "user", content: "go" }], tools: [writeSpec] });
    expect(out).toMatchObject({ finishReason: "length", structuredCut: true, message: { role: "assistant", content: "" } });
    expect(out.message.toolCalls).toBeUndefined();
  });

  it("free text cut at the limit is still continued, and the prompt is not shown", async () => {
    server().reply(
      sse([chunk({ role: "assistant", content: "Hello wor" }, "length")]),
      sse([chunk({ role: "assistant", content: "ld." }, "stop")]),
    );
    const { events, error } = await run(new OpenAICompatibleModel({ baseURL: server().baseURL, model: "local" }));
    expect(error).toBeUndefined();
    const final = events.at(-1);
    expect(final?.type === "final" && final.output.messages.at(-1)?.content).toBe("Hello world.");
    expect(JSON.stringify(events)).not.toContain(CONTINUE_PROMPT);
  });
});

describe("AI SDK (its provider against a real local server)", () => {
  it("a tool call written as text and cut mid-JSON ends truncated, unshown and not continued", async () => {
    server().reply(sse([chunk({ role: "assistant", content: CUT_TEXT_CALL }, "length")]));
    const provider = serverLanguageModel(server().baseURL);
    const out = await run(fromLanguageModel(provider, { textToolCalls: true }));
    expectTruncatedCleanly(out);
    expectNoContinuation(provider.bodies);
  });

  it("a native tool call whose arguments are cut ends truncated, not continued", async () => {
    server().reply(cutNativeCall());
    const provider = serverLanguageModel(server().baseURL);
    const out = await run(fromLanguageModel(provider));
    expectTruncatedCleanly(out);
    expectNoContinuation(provider.bodies);
  });
});

describe("llama (node-llama-cpp stubbed, in the model's process)", { timeout: 30_000 }, () => {
  const STUB = join(import.meta.dirname, "fixtures/models/llama-stub.ts");
  const llama = () => new LlamaCppModel({ modelPath: import.meta.filename, module: STUB });
  beforeEach(() => {
    resetLlamaStub();
  });

  it("a grammar-constrained tool call cut mid-arguments ends truncated, unshown and not continued", async () => {
    const stub = resetLlamaStub({
      replies: [{ response: '{"tool": "write_file", "arguments": {"file_path": "/a.txt", "content": "hel', stopReason: "maxTokens" }],
    });
    const out = await run(llama());
    expectTruncatedCleanly(out);
    expect(stub.histories).toHaveLength(1);
    expect(JSON.stringify(stub.histories)).not.toContain(CONTINUE_PROMPT);
  });

  it("a cut reply whose answer string is complete is that answer, done", async () => {
    resetLlamaStub({ replies: [{ response: '{"answer": "Saved."\n', stopReason: "maxTokens" }] });
    const { events, error } = await run(llama());
    expect(error).toBeUndefined();
    const final = events.at(-1);
    expect(final?.type === "final" && final.stopReason).toBe("done");
    expect(final?.type === "final" && final.output.messages.at(-1)).toEqual({ role: "assistant", content: "Saved." });
    expect(events.map((e) => (e.type === "model_delta" ? e.text : "")).join("")).toBe("Saved.");
  });

  it("a cut reply whose answer string is not complete ends truncated, the half answer not shown as JSON", async () => {
    resetLlamaStub({ replies: [{ response: '{"answer": "Saved the fi', stopReason: "maxTokens" }] });
    expectTruncatedCleanly(await run(llama()));
  });

  it("a cut tool call whose arguments closed runs", async () => {
    resetLlamaStub({
      replies: [
        { response: '{"tool": "write_file", "arguments": {"file_path": "/a.txt", "content": "hello"}', stopReason: "maxTokens" },
        { response: '{"answer": "Saved."}' },
      ],
    });
    const { events, error } = await run(llama());
    expect(error).toBeUndefined();
    const end = events.find((e) => e.type === "tool_end");
    expect(end?.type === "tool_end" && end.result).toBe("Wrote /a.txt");
  });

  it("a cut responseFormat reply has no text", async () => {
    resetLlamaStub({ replies: [{ response: '{"colour": "re', stopReason: "maxTokens" }] });
    const out = await llama().invoke({
      system: "",
      messages: [{ role: "user", content: "colour?" }],
      tools: [],
      responseFormat: { name: "c", schema: { type: "object", properties: { colour: { type: "string" } }, required: ["colour"] } },
    });
    expect(out).toMatchObject({ finishReason: "length", structuredCut: true, message: { content: "" } });
  });
});

describe("reading text tool calls of a cut reply", () => {
  const offered = new Set(["write_file", "ls"]);
  it("never repairs a cut call; keeps complete ones", () => {
    expect(readTextToolCalls(CUT_TEXT_CALL, offered, true)).toEqual({ calls: [], content: "", cut: true });
    // Not cut: the same text is repaired, as before.
    expect(readTextToolCalls(CUT_TEXT_CALL, offered, false)?.calls).toHaveLength(1);
    const fenced = `Saving.\n\`\`\`json\n${CUT_TEXT_CALL}`;
    expect(readTextToolCalls(fenced, offered, true)).toEqual({ calls: [], content: "Saving.", cut: true });
    const tagged = `<tool_call>${CUT_TEXT_CALL}`;
    expect(readTextToolCalls(tagged, offered, true)?.cut).toBe(true);
    const complete = '<tool_call>{"name": "ls", "arguments": {"path": "/"}}</tool_call>\nThen I wi';
    expect(readTextToolCalls(complete, offered, true)).toEqual({
      calls: [{ name: "ls", args: { path: "/" } }],
      content: "Then I wi",
      cut: false,
    });
    // Free text that is no call stays free text.
    expect(readTextToolCalls("Here is some code:\n```python\nprint(", offered, true)).toBeUndefined();
  });
});
