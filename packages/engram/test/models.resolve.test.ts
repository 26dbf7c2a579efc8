/** resolveModel / loadModel: ChatModels, AI SDK models and "provider:model" strings. */
import { createRequire } from "node:module";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  EngramError,
  FakeChatModel,
  type LanguageModelLike,
  ModelError,
  OpenAICompatibleModel,
  parseModelString,
  resolveModel,
} from "../src/index.js";
import { DEFAULT_OLLAMA_BASE_URL, type LanguageModelPart, MODEL_PROVIDERS, isChatModel, loadModel } from "../src/kit.js";
import { type ChatServer, json, startChatServer } from "./fixtures/models/chat-server.js";

let server: ChatServer;
beforeAll(async () => {
  server = await startChatServer();
});
afterAll(() => server.close());

const hello = { system: "", messages: [{ role: "user" as const, content: "hi" }], tools: [] };

/** A minimal AI SDK v3 model answering with fixed text. */
function languageModel(modelId: string, text: string): LanguageModelLike {
  return {
    specificationVersion: "v3",
    provider: "test",
    modelId,
    doGenerate: async () => ({ content: [{ type: "text", text }] }),
    doStream: async () => ({
      stream: new ReadableStream<LanguageModelPart>({
        start(c) {
          c.enqueue({ type: "text-delta", delta: text });
          c.close();
        },
      }),
    }),
  };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (e: unknown) => e,
  );
}

/** True when a package resolves from the engram package (so a "missing" test would be wrong). */
function installed(name: string): boolean {
  try {
    createRequire(new URL("../src/models/resolve.ts", import.meta.url)).resolve(name);
    return true;
  } catch {
    return false;
  }
}

describe("parseModelString", () => {
  it("splits provider and model at the first colon", () => {
    expect(parseModelString("openai:gpt-4.1")).toEqual({ provider: "openai", model: "gpt-4.1" });
    expect(parseModelString("anthropic:claude-sonnet-4-5")).toEqual({ provider: "anthropic", model: "claude-sonnet-4-5" });
    expect(parseModelString("google-vertex:claude-3-5-sonnet@20240620")).toEqual({
      provider: "google-vertex",
      model: "claude-3-5-sonnet@20240620",
    });
  });

  it("takes the base URL after the last @http(s):// for openai-compatible and ollama", () => {
    expect(parseModelString("openai-compatible:llama3.1:8b@http://127.0.0.1:11434/v1")).toEqual({
      provider: "openai-compatible",
      model: "llama3.1:8b",
      baseURL: "http://127.0.0.1:11434/v1",
    });
    expect(parseModelString("openai-compatible:org/model@v2@https://host.example/v1")).toEqual({
      provider: "openai-compatible",
      model: "org/model@v2",
      baseURL: "https://host.example/v1",
    });
    expect(parseModelString("ollama:qwen2.5:7b")).toEqual({ provider: "ollama", model: "qwen2.5:7b" });
  });

  it("rejects strings without a provider or a model as unknown_provider", () => {
    for (const bad of ["gpt-4.1", ":gpt-4.1", "openai:", "openai-compatible:@http://x/v1", ""]) {
      expect(() => parseModelString(bad), bad).toThrow(ModelError);
      try {
        parseModelString(bad);
      } catch (e) {
        expect((e as ModelError).code).toBe("unknown_provider");
      }
    }
  });
});

describe("resolveModel", () => {
  it("returns a ChatModel as is and adapts an AI SDK model", async () => {
    const fake = new FakeChatModel(["x"]);
    expect(resolveModel(fake)).toBe(fake);
    expect(isChatModel(fake)).toBe(true);
    const adapted = resolveModel(languageModel("lm-1", "adapted"));
    expect(isChatModel(adapted)).toBe(true);
    expect(adapted.id).toBe("test:lm-1");
    expect((await adapted.invoke(hello)).message).toEqual({ role: "assistant", content: "adapted" });
  });

  it("builds an OpenAICompatibleModel from openai-compatible:<model>@<baseURL> that talks to the server", async () => {
    server.reply(json({ choices: [{ index: 0, message: { role: "assistant", content: "from the local server" } }] }));
    const model = resolveModel(`openai-compatible:qwen2.5:7b@${server.baseURL}`);
    expect(model).toBeInstanceOf(OpenAICompatibleModel);
    expect(model.id).toBe("openai-compatible:qwen2.5:7b");
    expect((await model.invoke(hello)).message.content).toBe("from the local server");
    expect(server.requests.at(-1)?.body.model).toBe("qwen2.5:7b");
    expect(server.requests.at(-1)?.url).toBe("/v1/chat/completions");
  });

  it("maps ollama:<model> to Ollama's OpenAI-compatible endpoint", () => {
    expect(DEFAULT_OLLAMA_BASE_URL).toBe("http://127.0.0.1:11434/v1");
    const model = resolveModel("ollama:llama3.1:8b");
    expect(model).toBeInstanceOf(OpenAICompatibleModel);
    expect(model.id).toBe("openai-compatible:llama3.1:8b");
  });

  it("throws unknown_provider for unknown providers and openai-compatible without a base URL", () => {
    expect(() => resolveModel("nope:model")).toThrow(/Unknown model provider "nope"/);
    expect(() => resolveModel("openai-compatible:llama3")).toThrow(/needs a base URL/);
    try {
      resolveModel("nope:model");
    } catch (e) {
      expect(e).toBeInstanceOf(ModelError);
      expect((e as ModelError).code).toBe("unknown_provider");
    }
  });

  it.skipIf(installed("@ai-sdk/cerebras"))("names the provider package to install when it is missing", async () => {
    const model = resolveModel("cerebras:llama-3.3-70b"); // lazy: resolving does not import
    expect(model.id).toBe("cerebras:llama-3.3-70b");
    const error = (await rejection(model.invoke(hello))) as ModelError;
    expect(error).toBeInstanceOf(ModelError);
    expect(error.code).toBe("unknown_provider");
    expect(error.message).toContain("@ai-sdk/cerebras");
    expect(error.message).toContain("npm install @ai-sdk/cerebras");
    const eager = (await rejection(loadModel("cerebras:llama-3.3-70b"))) as ModelError;
    expect(eager.code).toBe("unknown_provider");
    expect(eager.message).toContain("is not installed");
  });

  it("imports the provider package through importModule and adapts its model", async () => {
    const imported: string[] = [];
    const importModule = async (name: string) => {
      imported.push(name);
      return { anthropic: (id: string) => languageModel(id, `hello from ${id}`) };
    };
    const model = resolveModel("anthropic:claude-test", { importModule });
    expect(imported).toEqual([]);
    expect(model.id).toBe("anthropic:claude-test");
    expect((await model.invoke(hello)).message.content).toBe("hello from claude-test");
    const events = [];
    for await (const e of model.stream(hello)) events.push(e);
    expect(events.at(-1)).toEqual({
      type: "finish",
      message: { role: "assistant", content: "hello from claude-test" },
      finishReason: "stop",
    });
    expect(imported).toEqual(["@ai-sdk/anthropic"]); // imported once, then cached
    expect(MODEL_PROVIDERS.anthropic?.packageName).toBe("@ai-sdk/anthropic");

    const loaded = await loadModel("openai:gpt-4.1", { importModule: async () => ({ openai: (id: string) => languageModel(id, "ok") }) });
    expect(loaded.id).toBe("openai:gpt-4.1");
    const wrongExport = (await rejection(loadModel("openai:gpt-4.1", { importModule: async () => ({}) }))) as ModelError;
    expect(wrongExport).toMatchObject({ code: "unknown_provider" });
    expect(wrongExport.message).toContain("does not export a provider named openai");
  });

  it("rejects values that are not models with EngramError", () => {
    expect(() => resolveModel(42 as never)).toThrow(EngramError);
    expect(() => resolveModel({ invoke() {} } as never)).toThrow(/ChatModel, an AI SDK language model/);
  });
});
