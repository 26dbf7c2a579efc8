/**
 * LlamaCppModel: a real local model (SmolLM2-135M-Instruct GGUF, from scripts/fetch-model.sh) run
 * by node-llama-cpp (installed by `scripts/setup.sh --test` into .cache/llama) in the model's child
 * process. Asserts the mechanics — schema-valid grammar-constrained tool calls, a clean finish, usage, limits —
 * not the model's wisdom. Native project only (the model is Node-only anyway); in CI (env CI) a
 * missing model or runtime fails instead of skipping.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type AgentEvent, type ModelRequest, type ModelStreamEvent, StateBackend, createDeepAgent, resolveModel } from "../src/index.js";
import { LlamaCppModel, loadNodeLlamaCpp, replySchema, toGrammarSchema } from "../src/models/llama.js";
import { collect, rejection } from "./fixtures/models/helpers.js";

const ROOT = join(import.meta.dirname, "../../..");
const GGUF = process.env.ENGRAM_TEST_GGUF ?? join(ROOT, ".cache/models/SmolLM2-135M-Instruct.Q4_1.gguf");
const RUNTIME = join(ROOT, ".cache/llama/node_modules/node-llama-cpp");
if (!process.env.ENGRAM_LLAMA_MODULE && existsSync(RUNTIME)) process.env.ENGRAM_LLAMA_MODULE = RUNTIME;

const native = process.env.ENGRAM_CORE !== "wasm";
const available = existsSync(GGUF) && !!process.env.ENGRAM_LLAMA_MODULE;
/** Outside CI a machine without the model skips; in CI the test runs and fails. */
const run = native && (available || !!process.env.CI);

describe("LlamaCppModel errors (no model needed)", () => {
  it("names the missing runtime and the missing file", async () => {
    const saved = process.env.ENGRAM_LLAMA_MODULE;
    try {
      const error = await rejection(loadNodeLlamaCpp("/nonexistent/node-llama-cpp"));
      expect(error.code).toBe("unknown_provider");
      expect(error.message).toContain("ENGRAM_LLAMA_MODULE");
    } finally {
      process.env.ENGRAM_LLAMA_MODULE = saved;
    }
    const missing = new LlamaCppModel({ modelPath: "/nonexistent/model.gguf" });
    expect(await rejection(missing.invoke({ system: "", messages: [{ role: "user", content: "hi" }], tools: [] }))).toMatchObject({
      code: "bad_request",
    });
    expect(() => new LlamaCppModel({ modelPath: "" })).toThrow(/modelPath/);
  });

  it("refuses a switch that is not true or false, rather than reading it as the default", () => {
    for (const key of ["reusePrompt", "structuredSequence"] as const) {
      const bad = { modelPath: "/m.gguf", [key]: "false" } as unknown as ConstructorParameters<typeof LlamaCppModel>[0];
      expect(() => new LlamaCppModel(bad)).toThrow(expect.objectContaining({ code: "bad_request", message: expect.stringContaining(key) }));
    }
    expect(() => new LlamaCppModel({ modelPath: "/m.gguf", reusePrompt: false, structuredSequence: true })).not.toThrow();
  });

  it("turns tool schemas into the grammar subset: optional arguments optional, unenforceable bounds left out", () => {
    const schema = z.toJSONSchema(
      z.object({
        file_path: z.string(),
        offset: z.number().int().min(0).optional(),
        glob: z.string().nullish(),
        mode: z.enum(["a", "b"]).default("a"),
      }),
      { io: "input" },
    );
    const filePath = { file_path: { type: "string" } };
    const glob = { glob: { type: ["string", "null"] } };
    const mode = { mode: { enum: ["a", "b"] } };
    // One shape per subset of the optional arguments: the model may leave any of them out.
    expect(toGrammarSchema(schema)).toEqual({
      oneOf: [
        { type: "object", properties: filePath },
        { type: "object", properties: { ...filePath, ...glob } },
        { type: "object", properties: { ...filePath, ...mode } },
        { type: "object", properties: { ...filePath, ...glob, ...mode } },
      ],
    });
    // Only required arguments: one shape.
    expect(toGrammarSchema({ type: "object", properties: { a: { type: "string" } }, required: ["a"] })).toEqual({
      type: "object",
      properties: { a: { type: "string" } },
    });
  });

  it("keeps enumerated arguments enums in the reply grammar", () => {
    const task = {
      name: "task",
      description: "Delegate.",
      parameters: z.toJSONSchema(z.object({ description: z.string(), subagent_type: z.enum(["general-purpose", "reviewer"]) }), {
        io: "input",
      }),
    };
    const grammar = replySchema([task]) as { oneOf: { properties: { arguments: unknown } }[] };
    expect(grammar.oneOf[0]?.properties.arguments).toEqual({
      type: "object",
      properties: { description: { type: "string" }, subagent_type: { enum: ["general-purpose", "reviewer"] } },
    });
  });
});

describe.runIf(run)("LlamaCppModel (SmolLM2-135M, real inference)", () => {
  it("has the model and the runtime (fetch-model.sh, setup.sh --test)", () => {
    expect(existsSync(GGUF), `no GGUF at ${GGUF}: run scripts/fetch-model.sh`).toBe(true);
    expect(process.env.ENGRAM_LLAMA_MODULE, "no node-llama-cpp: run scripts/setup.sh --test").toBeTruthy();
  });

  // One thread: vitest runs other suites on the same cores, and llama.cpp's spinning worker threads
  // collapse (measured ~30× slower) when they share cores with busy processes.
  const model = new LlamaCppModel({ modelPath: GGUF, contextSize: 2048, maxOutputTokens: 48, threads: 1 });
  afterAll(() => model.dispose());

  const listTool = {
    name: "list_files",
    description: "List the files in a directory.",
    parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  };

  it("calls only offered tools, with arguments of the right shape, and streams a finish with usage", { timeout: 120_000 }, async () => {
    const request: ModelRequest = {
      system: "You are a file assistant.",
      systemContext: "The project lives in /src.",
      messages: [{ role: "user", content: "List the files in /src." }],
      tools: [listTool],
    };
    const out = await model.invoke(request);
    expect(["tool_calls", "stop", "length"]).toContain(out.finishReason);
    if (out.finishReason === "tool_calls") {
      expect(out.message.toolCalls).toHaveLength(1);
      expect(out.message.toolCalls?.[0]?.name).toBe("list_files");
      expect(typeof out.message.toolCalls?.[0]?.args.path).toBe("string");
    }
    expect(out.usage?.inputTokens).toBeGreaterThan(20);
    expect(out.usage?.outputTokens).toBeGreaterThan(0);

    // The same request again: the prompt prefix is reused from the context.
    const events: ModelStreamEvent[] = await collect(model.stream(request));
    const finish = events.at(-1) as Extract<ModelStreamEvent, { type: "finish" }>;
    expect(finish.type).toBe("finish");
    expect(finish.message).toEqual(expect.objectContaining({ role: "assistant" }));
    expect(finish.usage?.cachedInputTokens).toBeGreaterThan(0);
  });

  it("answers in the responseFormat schema, and reports length when the token cap cuts a reply", { timeout: 120_000 }, async () => {
    const schema = {
      type: "object",
      properties: { colour: { enum: ["red", "green", "blue"] }, sure: { type: "boolean" } },
      required: ["colour", "sure"],
    };
    const out = await model.invoke({
      system: "Answer in JSON.",
      messages: [{ role: "user", content: "What colour is the sky?" }],
      tools: [listTool],
      responseFormat: { name: "colour", schema },
    });
    expect(out.finishReason).toBe("stop");
    const parsed = JSON.parse(out.message.content) as { colour: string; sure: boolean };
    expect(["red", "green", "blue"]).toContain(parsed.colour);
    expect(typeof parsed.sure).toBe("boolean");
    expect(out.message.toolCalls).toBeUndefined();

    const cut = await model.invoke({
      system: "",
      messages: [{ role: "user", content: "Tell a long story." }],
      tools: [],
      settings: { maxOutputTokens: 3 },
    });
    expect(cut.finishReason).toBe("length");
    expect(cut.usage?.outputTokens).toBeLessThanOrEqual(3);
  });

  it("runs one agent turn with the filesystem tools: schema-valid tool calls and a clean finish", { timeout: 120_000 }, async () => {
    const backend = new StateBackend();
    const agent = createDeepAgent(model, {
      backend,
      systemPrompt: "You help with files. Use the tools, then answer.",
      enableMemory: false,
      enableSkills: false,
      enableSubagents: false,
      maxTurns: 3,
    });
    const events: AgentEvent[] = [];
    for await (const e of agent.stream({ messages: [{ role: "user", content: "What files are in /?" }] }, { threadId: "llama" }))
      events.push(e);
    const final = events.at(-1);
    expect(final?.type).toBe("final");
    expect(["done", "max_turns"]).toContain(final?.type === "final" ? final.stopReason : undefined);
    const ends = events.filter((e): e is Extract<AgentEvent, { type: "tool_end" }> => e.type === "tool_end");
    for (const end of ends) {
      // Constrained decoding: never an unknown tool, never arguments the tool's schema rejects.
      expect(end.result).not.toMatch(/unknown tool|invalid arguments/i);
    }
    await agent.close();
  });

  it("with reusePrompt: false reads every prompt from its start, and answers as a fresh model does", { timeout: 120_000 }, async () => {
    const fresh = new LlamaCppModel({ modelPath: GGUF, contextSize: 2048, maxOutputTokens: 24, threads: 1, reusePrompt: false });
    try {
      const ask = (content: string): ModelRequest => ({ system: "You are terse.", messages: [{ role: "user", content }], tools: [] });
      const alone = await fresh.invoke(ask("Name a colour."));
      await fresh.invoke(ask("Name a fruit, then a colour."));
      const after = await fresh.invoke(ask("Name a colour."));
      expect(after.usage?.cachedInputTokens).toBe(0);
      expect(after.message.content).toBe(alone.message.content);
    } finally {
      await fresh.dispose();
    }
  });

  it("is reachable as resolveModel('llama:<path>')", { timeout: 120_000 }, async () => {
    const m = resolveModel(`llama:${GGUF}`); // default threads (every core): a 4-token reply
    expect(m.id).toBe(`llama:${GGUF}`);
    const out = await m.invoke({ system: "", messages: [{ role: "user", content: "Hi" }], tools: [], settings: { maxOutputTokens: 4 } });
    expect(out.message.role).toBe("assistant");
    expect(["stop", "length"]).toContain(out.finishReason);
    await (m as unknown as { load(): Promise<{ dispose(): Promise<void> }> }).load().then((inner) => inner.dispose());
  });
});
