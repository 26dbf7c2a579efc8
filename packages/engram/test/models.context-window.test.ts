/**
 * Knowing the model's context: each model says how many input tokens a call can take (llama:
 * the loaded context; providers: an explicit window, one the server states in an error, or a
 * table of known models), and the agent summarises from that when `maxInputTokens` is not set.
 */
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { type Core, OpenAICompatibleModel, createDeepAgent, fromLanguageModel, loadCore, resolveModel } from "../src/index.js";
import { knownContextWindow } from "../src/models/context-window.js";
import { LlamaCppModel } from "../src/models/llama.js";
import { serverLanguageModel } from "./fixtures/models/ai-sdk-server-model.js";
import { raw } from "./fixtures/models/chat-server.js";
import { rejection, useChatServer } from "./fixtures/models/helpers.js";
import { resetLlamaStub } from "./fixtures/models/llama-stub.js";

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});
const server = useChatServer();

/** What llama.cpp's server answers to a prompt larger than its context. */
const LLAMA_SERVER_OVERFLOW = JSON.stringify({
  error: {
    code: 400,
    message: "the request exceeds the available context size, try increasing it",
    type: "exceed_context_size_error",
    n_prompt_tokens: 5000,
    n_ctx: 4096,
  },
});
const hello = { system: "", messages: [{ role: "user" as const, content: "hi" }], tools: [] };

describe("the table of known models", () => {
  it("matches a family by its name, with versions and provider paths", () => {
    expect(knownContextWindow("gpt-4o-2024-08-06")).toBe(128_000);
    expect(knownContextWindow("openai/gpt-4o-mini")).toBe(128_000);
    expect(knownContextWindow("gpt-4")).toBe(8_192);
    expect(knownContextWindow("gpt-4-turbo-preview")).toBe(128_000);
    expect(knownContextWindow("gpt-4.1-mini")).toBe(1_047_576);
    expect(knownContextWindow("claude-sonnet-4-5")).toBe(200_000);
    // Local models are served with a context chosen at load time: not guessed.
    expect(knownContextWindow("qwen2.5-coder:1.5b")).toBeUndefined();
    expect(knownContextWindow("gpt-4x")).toBeUndefined();
  });
});

describe("OpenAI-compatible", () => {
  it("knows hosted models, takes an explicit window, reserves the output cap", () => {
    const model = (o: { model: string; contextWindow?: number; maxTokens?: number }) =>
      new OpenAICompatibleModel({ baseURL: "http://127.0.0.1:9/v1", ...o });
    expect(model({ model: "gpt-4o" }).maxInputTokens()).toBe(128_000);
    expect(model({ model: "gpt-4o", maxTokens: 4000 }).maxInputTokens()).toBe(124_000);
    expect(model({ model: "local" }).maxInputTokens()).toBeUndefined();
    expect(model({ model: "gpt-4o", contextWindow: 8192, maxTokens: 1000 }).maxInputTokens()).toBe(7192);
  });

  it("learns the size a server states when a request outgrows it (llama.cpp's n_ctx)", async () => {
    const model = new OpenAICompatibleModel({ baseURL: server().baseURL, model: "local", maxTokens: 512 });
    server().reply(raw(400, LLAMA_SERVER_OVERFLOW));
    expect(await rejection(model.invoke(hello))).toMatchObject({ code: "context_length" });
    expect(model.maxInputTokens()).toBe(4096 - 512);
    // OpenAI's and vLLM's wording, mid-stream too.
    server().reply(raw(400, JSON.stringify({ error: { message: "This model's maximum context length is 8192 tokens. However…" } })));
    await rejection(model.invoke(hello));
    expect(model.maxInputTokens()).toBe(8192 - 512);
  });
});

describe("AI SDK", () => {
  it("knows hosted models by modelId, takes an explicit window, learns a stated one", async () => {
    expect(fromLanguageModel(serverLanguageModel(server().baseURL, "gpt-4o")).maxInputTokens?.()).toBe(128_000);
    expect(fromLanguageModel(serverLanguageModel(server().baseURL, "gpt-4o"), { contextWindow: 2048 }).maxInputTokens?.()).toBe(2048);
    const model = fromLanguageModel(serverLanguageModel(server().baseURL, "local"), { maxRetries: 0 });
    expect(model.maxInputTokens?.()).toBeUndefined();
    server().reply(raw(400, LLAMA_SERVER_OVERFLOW));
    expect(await rejection(model.invoke(hello))).toMatchObject({ code: "context_length" });
    expect(model.maxInputTokens?.()).toBe(4096);
  });
});

describe("models named by a string", () => {
  it("answer once imported, without loading a local model's weights", async () => {
    const importModule = async (name: string) =>
      name === "engram/llama" ? { LlamaCppModel } : { openai: (id: string) => serverLanguageModel(server().baseURL, id) };
    expect(await resolveModel("llama:/nowhere/model.gguf", { importModule }).maxInputTokens?.()).toBe(4096 - 512);
    expect(await resolveModel("openai:gpt-4o", { importModule }).maxInputTokens?.()).toBe(128_000);
  });
});

describe("llama", { timeout: 30_000 }, () => {
  const STUB = join(import.meta.dirname, "fixtures/models/llama-stub.ts");

  it("is the loaded context's size less the output cap (before loading: the size asked for)", async () => {
    resetLlamaStub({ contextSize: 1024 });
    const model = new LlamaCppModel({ modelPath: import.meta.filename, module: STUB, contextSize: 2048, maxOutputTokens: 256 });
    expect(model.maxInputTokens()).toBe(2048 - 256);
    await model.load();
    expect(model.maxInputTokens()).toBe(1024 - 256);
    expect(new LlamaCppModel({ modelPath: "x.gguf" }).maxInputTokens()).toBe(4096 - 512);
  });

  it("makes the agent summarise from the model's small context; an explicit maxInputTokens wins", async () => {
    const turns = async (maxInputTokens?: number) => {
      const stub = resetLlamaStub({ contextSize: 1024 });
      const model = new LlamaCppModel({ modelPath: import.meta.filename, module: STUB });
      const agent = createDeepAgent(model, {
        core,
        enableSubagents: false,
        enableMemory: false,
        enableSkills: false,
        enableFilesystem: false,
        systemPrompt: "short",
        summarizationKeepMessages: 2,
        ...(maxInputTokens !== undefined && { maxInputTokens }),
      });
      for (let i = 0; i < 4; i++)
        await agent.invoke({ messages: [{ role: "user", content: `message ${i} ${"lorem ipsum ".repeat(60)}` }] }, { threadId: "t" });
      await agent.close();
      return stub.histories.filter((h) => JSON.stringify(h[0]).includes("You compress")).length;
    };
    expect(await turns()).toBeGreaterThan(0);
    expect(await turns(100_000)).toBe(0);
  });
});
