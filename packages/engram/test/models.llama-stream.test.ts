/**
 * What `LlamaCppModel.stream` tells while it works — the model loading, the prompt being read
 * (its size), the first token — and the answer of a grammar-constrained reply streamed as it is
 * generated (decoded from its JSON); an aborted call returns at once, and the model's process is
 * killed when it cannot stop by itself (reading a prompt), or when its parent goes; a process that
 * dies or talks nonsense is a typed error; structured requests keep off the conversation's
 * context sequence. node-llama-cpp is the stub in fixtures/models/llama-stub.ts, run in the
 * model's child process (text arrives in small pieces, as from the real one).
 */
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ModelRequest, ModelStreamEvent, ToolCall } from "../src/index.js";
import { AnswerStream } from "../src/models/answer-stream.js";
import { readChildMessage } from "../src/models/llama-protocol.js";
import { LlamaCppModel } from "../src/models/llama.js";
import { collect, rejection } from "./fixtures/models/helpers.js";
import { resetLlamaStub } from "./fixtures/models/llama-stub.js";

const STUB = join(import.meta.dirname, "fixtures/models/llama-stub.ts");
const ROOT = join(import.meta.dirname, "../../..");
/** A parent process that starts a generation that never ends, then exits or waits to be killed. */
const PARENT = join(import.meta.dirname, "fixtures/models/llama-parent.ts");

/** Waits (bounded) until `check` holds. */
async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`still not so after ${ms} ms: ${check}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Whether process `pid` runs (a zombie, dead but not yet reaped by its new parent, does not). */
function alive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}
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

describe("LlamaCppModel.stream", { timeout: 30_000 }, () => {
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

  it("an abort while the prompt is read returns at once; the process is killed and the next call loads the model anew", async () => {
    const stub = resetLlamaStub({ replies: [{ response: '{"answer": "late"}', hold: true }, { response: '{"answer": "next"}' }] });
    const model = new LlamaCppModel({ modelPath: import.meta.filename, module: STUB });
    await model.load();
    const controller = new AbortController();
    const first = collect(model.stream(request({ signal: controller.signal })));
    await until(() => stub.histories.length === 1);
    const started = performance.now();
    controller.abort();
    expect(await rejection(first)).toMatchObject({ code: "aborted" });
    expect(performance.now() - started).toBeLessThan(100);
    const [held] = stub.pids;
    await until(() => !alive(held));

    const second = await collect(model.stream(request()));
    expect(stages(second)).toEqual(["loading_model", "reading_prompt", "writing"]);
    expect(texts(second).join("")).toBe("next");
    expect(stub.loads).toHaveLength(2);
    expect(stub.pids[1]).not.toBe(held);
    await model.dispose();
  });

  it("an abort while the model writes stops it at the next token and keeps its process", async () => {
    const long = JSON.stringify({ answer: "word ".repeat(200) });
    const stub = resetLlamaStub({ replies: [{ response: long, chunkDelayMs: 20 }, { response: '{"answer": "again"}' }] });
    const model = new LlamaCppModel({ modelPath: import.meta.filename, module: STUB });
    const controller = new AbortController();
    const events: ModelStreamEvent[] = [];
    const first = (async () => {
      for await (const e of model.stream(request({ signal: controller.signal }))) events.push(e);
    })();
    await until(() => events.some((e) => e.type === "text_delta"));
    controller.abort();
    expect(await rejection(first)).toMatchObject({ code: "aborted" });
    const second = await collect(model.stream(request()));
    expect(stages(second)).toEqual(["reading_prompt", "writing"]);
    expect(texts(second).join("")).toBe("again");
    expect(stub.loads).toHaveLength(1);
    expect(new Set(stub.pids).size).toBe(1);
    await model.dispose();
    await until(() => !alive(stub.pids[0]));
  });

  it("a process that dies is a server error, one that sends a malformed message is ended; the next call starts anew", async () => {
    const stub = resetLlamaStub({
      replies: [{ response: "", crash: true }, { response: "", garbage: true }, { response: '{"answer": "fine"}' }],
    });
    const model = new LlamaCppModel({ modelPath: import.meta.filename, module: STUB });
    const died = await rejection(model.invoke(request()));
    expect(died.code).toBe("server");
    expect(died.message).toMatch(/model process ended unexpectedly \(SIGKILL\)/);
    const garbled = await rejection(model.invoke(request()));
    expect(garbled.code).toBe("bad_response");
    expect(garbled.message).toMatch(/malformed message/);
    await until(() => !alive(stub.pids[1]));
    expect((await model.invoke(request())).message.content).toBe("fine");
    expect(new Set(stub.pids).size).toBe(3);
    await model.dispose();
  });

  it("the process ends at once with its parent, mid-prompt, whether the parent exits or is killed", { timeout: 60_000 }, async () => {
    for (const how of ["exit", "SIGKILL"]) {
      const stub = resetLlamaStub({ replies: [{ response: "", hold: true }] });
      const parent = spawn(process.execPath, ["--import", "tsx", PARENT, how], { cwd: ROOT, stdio: "inherit", env: process.env });
      await until(() => stub.histories.length === 1, 30_000);
      const [pid] = stub.pids;
      const started = performance.now();
      if (how === "SIGKILL") parent.kill("SIGKILL");
      else writeFileSync(`${process.env.ENGRAM_LLAMA_STUB_STATE}.exit`, "");
      await until(() => parent.exitCode !== null || parent.signalCode !== null);
      await until(() => !alive(pid));
      expect(performance.now() - started, how).toBeLessThan(2000);
    }
  });
  it("a parent done with the model ends by itself, with or without dispose(), and so does the process", async () => {
    for (const how of ["idle", "dispose"]) {
      const stub = resetLlamaStub({ replies: [{ response: "plain text" }] });
      const parent = spawn(process.execPath, ["--import", "tsx", PARENT, how], { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] });
      let out = "";
      parent.stdout.on("data", (d: Buffer) => {
        out += d.toString("utf8");
      });
      const code = await new Promise<number | null>((resolve) => parent.once("exit", resolve));
      expect([how, code, out.trim()]).toEqual([how, 0, JSON.stringify({ answer: "plain text" })]);
      await until(() => !alive(stub.pids[0]));
    }
  });

  it("the history repeats the model's replies as it wrote them, so its cached prefix covers them", async () => {
    const call = '{ "tool": "ls",  "arguments": { "path": "/src" } }';
    const answer = '{"answer":   "five"}';
    const stub = resetLlamaStub({ replies: [{ response: call }, { response: answer }, { response: '{"answer": "ok"}' }] });
    const model = new LlamaCppModel({ modelPath: import.meta.filename, module: STUB });
    const first = await model.invoke(request());
    const second = await model.invoke(
      request({
        messages: [
          ...request().messages,
          first.message,
          { role: "tool", toolCallId: first.message.toolCalls?.[0]?.id ?? "", content: "a.ts" },
        ],
      }),
    );
    expect(second.message.content).toBe("five");
    const edited = { ...first.message, toolCalls: [{ ...(first.message.toolCalls?.[0] as ToolCall), args: { path: "/other" } }] };
    await model.invoke(request({ messages: [...request().messages, edited, second.message, { role: "user", content: "and?" }] }));
    const replies = (stub.histories[2] as { type: string; response?: string[] }[])
      .filter((h) => h.type === "model")
      .map((h) => h.response?.[0]);
    // An answer as written; a call whose arguments were edited since, as they are now.
    expect(replies).toEqual([JSON.stringify({ tool: "ls", arguments: { path: "/other" } }), answer]);
    const before = (stub.histories[1] as { type: string; response?: string[] }[])
      .filter((h) => h.type === "model")
      .map((h) => h.response?.[0]);
    expect(before).toEqual([call]);
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

describe("the model process's messages", () => {
  const generated = { message: { role: "assistant", content: "hi" }, finishReason: "stop", usage: { inputTokens: 3, outputTokens: 1 } };

  it("are read exactly: anything else is no message", () => {
    expect(readChildMessage({ type: "result", id: 1, generated })).toEqual({ type: "result", id: 1, generated });
    expect(readChildMessage({ type: "progress", id: 2, event: { type: "status", stage: "reading_prompt", tokens: 40 } })).toBeDefined();
    expect(readChildMessage({ type: "failed", id: 1, error: { code: "rm -rf", message: "x" } })).toEqual({
      type: "failed",
      id: 1,
      error: { code: "bad_response", message: "x" },
    });
    const bad: unknown[] = [
      null,
      "result",
      [],
      { type: "result", id: "1", generated },
      { type: "result", id: 0, generated },
      { type: "result", id: 1, generated: { ...generated, message: { role: "user", content: "hi" } } },
      { type: "result", id: 1, generated: { ...generated, finishReason: "because" } },
      { type: "result", id: 1, generated: { ...generated, usage: { inputTokens: -1 } } },
      {
        type: "result",
        id: 1,
        generated: { ...generated, message: { role: "assistant", content: "", toolCalls: [{ id: "c", name: "ls" }] } },
      },
      { type: "progress", id: 1, event: { type: "status", stage: "dreaming" } },
      { type: "progress", id: 1, event: { type: "text_delta", text: 42 } },
      { type: "loaded", contextSize: Number.NaN },
      { type: "load_failed", error: "no" },
      { type: "exec", command: "sh" },
    ];
    for (const message of bad) expect(readChildMessage(message), JSON.stringify(message)).toBeUndefined();
  });
});
