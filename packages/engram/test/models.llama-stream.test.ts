/**
 * What `LlamaCppModel.stream` tells while it works — the model loading, the prompt being read
 * (its size), the first token — and the answer of a grammar-constrained reply streamed as it is
 * generated (decoded from its JSON); an aborted call returns at once; structured requests keep
 * off the conversation's context sequence. node-llama-cpp is the stub
 * in fixtures/models/llama-stub.ts (text arrives in small pieces, as from the real one).
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ModelRequest, ModelStreamEvent } from "../src/index.js";
import { AnswerStream } from "../src/models/answer-stream.js";
import { LlamaCppModel } from "../src/models/llama.js";
import { collect, rejection } from "./fixtures/models/helpers.js";
import { resetLlamaStub } from "./fixtures/models/llama-stub.js";

const STUB = join(import.meta.dirname, "fixtures/models/llama-stub.ts");
const tool = { name: "ls", description: "List a directory.", parameters: { type: "object", properties: { path: { type: "string" } } } };
const request = (extra: Partial<ModelRequest> = {}): ModelRequest => ({
  system: "You help.",
  messages: [{ role: "user", content: "say hello" }],
  tools: [tool],
  ...extra,
});
const texts = (events: ModelStreamEvent[]) => events.flatMap((e) => (e.type === "text_delta" ? [e.text] : []));
const stages = (events: ModelStreamEvent[]) => events.flatMap((e) => (e.type === "status" ? [e.stage] : []));

describe("AnswerStream", () => {
  const answer = 'Use "tabs" — é, \\ and 😀\nnext line';
  const reply = JSON.stringify({ answer });

  it("decodes the answer of a JSON reply however the reply is cut into pieces", () => {
    for (const size of [1, 2, 3, 7]) {
      const stream = new AnswerStream();
      let shown = "";
      for (let i = 0; i < reply.length; i += size) shown += stream.push(reply.slice(i, i + size));
      expect(shown).toBe(answer);
    }
  });

  it("never shows half an escape or half a surrogate pair, and nothing of a tool call", () => {
    const stream = new AnswerStream();
    const pieces = ['{"answer": "a\\', "u00e9", "\\ud83d", "\\ude00", '"}'];
    expect(pieces.map((p) => stream.push(p))).toEqual(["a", "é", "", "😀", ""]);
    const call = new AnswerStream();
    expect([...'{"tool": "ls", "arguments": {"path": "/"}}'].map((ch) => call.push(ch)).join("")).toBe("");
  });
});

describe("LlamaCppModel.stream", () => {
  it("says it loads the model (once), reads the prompt (n tokens) and writes; the answer streams in pieces", async () => {
    resetLlamaStub({ replies: [{ response: JSON.stringify({ answer: "Hello there, my friend" }) }, { response: '{"answer": "again"}' }] });
    const model = new LlamaCppModel({ modelPath: import.meta.filename, module: STUB });
    const first = await collect(model.stream(request()));
    expect(stages(first)).toEqual(["loading_model", "reading_prompt", "writing"]);
    const reading = first.find((e) => e.type === "status" && e.stage === "reading_prompt");
    expect(reading).toMatchObject({ tokens: expect.any(Number) });
    expect((reading as { tokens: number }).tokens).toBeGreaterThan(0);
    // Text before the finish, in more than one piece, and no JSON of the reply.
    expect(texts(first).length).toBeGreaterThan(1);
    expect(texts(first).join("")).toBe("Hello there, my friend");
    expect(first.findIndex((e) => e.type === "text_delta")).toBeLessThan(first.findIndex((e) => e.type === "finish"));
    expect(first.at(-1)).toMatchObject({ type: "finish", message: { content: "Hello there, my friend" } });

    const second = await collect(model.stream(request()));
    expect(stages(second)).toEqual(["reading_prompt", "writing"]);
    expect(texts(second).join("")).toBe("again");
    await model.dispose();
  });

  it("streams nothing of a tool call's JSON", async () => {
    resetLlamaStub({ replies: [{ response: JSON.stringify({ tool: "ls", arguments: { path: "/src" } }) }] });
    const model = new LlamaCppModel({ modelPath: import.meta.filename, module: STUB });
    const events = await collect(model.stream(request()));
    expect(texts(events)).toEqual([]);
    expect(events.at(-1)).toMatchObject({ type: "finish", message: { toolCalls: [{ name: "ls", args: { path: "/src" } }] } });
    await model.dispose();
  });

  it("an aborted call returns at once while llama.cpp is still busy; the next call waits for it", async () => {
    let release = () => {};
    const busy = new Promise<void>((resolve) => {
      release = resolve;
    });
    resetLlamaStub({ replies: [{ response: '{"answer": "late"}', waitFor: busy }, { response: '{"answer": "next"}' }] });
    const model = new LlamaCppModel({ modelPath: import.meta.filename, module: STUB });
    await model.load();
    const controller = new AbortController();
    const first = collect(model.stream(request({ signal: controller.signal })));
    const second = model.invoke(request());
    await new Promise((r) => setTimeout(r, 20));
    controller.abort();
    expect(await rejection(first)).toMatchObject({ code: "aborted" });
    let secondDone = false;
    void second.then(() => {
      secondDone = true;
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(secondDone).toBe(false); // the model is not free yet
    release();
    expect((await second).message.content).toBe("next");
    await model.dispose();
  });

  it("structured requests (memory extraction) run on a sequence of their own: the conversation's cache stays", async () => {
    const stub = resetLlamaStub({
      replies: [{ response: '{"answer": "hi"}' }, { response: '{"newFacts": []}' }, { response: '{"answer": "again"}' }],
    });
    const model = new LlamaCppModel({ modelPath: import.meta.filename, module: STUB });
    await model.invoke(request());
    await model.invoke(request({ tools: [], responseFormat: { name: "memory_update", schema: { type: "object" } } }));
    await model.invoke(request());
    expect(stub.contexts).toMatchObject([{ sequences: 2 }]);
    expect(stub.sequenceIds).toEqual([0, 1, 0]);
    await model.dispose();

    const single = resetLlamaStub();
    const small = new LlamaCppModel({ modelPath: import.meta.filename, module: STUB, structuredSequence: false });
    await small.invoke(request({ tools: [], responseFormat: { name: "memory_update", schema: { type: "object" } } }));
    expect(single.contexts[0]).not.toHaveProperty("sequences");
    expect(single.sequenceIds).toEqual([0]);
    await small.dispose();
  });
});
