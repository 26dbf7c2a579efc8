/**
 * Failure handling of the HTTP models against a real chat-completions server on 127.0.0.1:
 * retries (429 + Retry-After, 5xx, timeouts, cut streams), error classification before and
 * during a stream, finish reasons, usage, text-form tool calls and malformed tool arguments —
 * each for OpenAICompatibleModel and for an AI SDK provider model (over the same server).
 */
import { describe, expect, it } from "vitest";
import { type ChatModel, type ModelRequest, type ModelStreamEvent, OpenAICompatibleModel, fromLanguageModel } from "../src/index.js";
import type { RetryInfo } from "../src/kit.js";
import { serverLanguageModel } from "./fixtures/models/ai-sdk-server-model.js";
import { chunk, completion, raw, silent, sse } from "./fixtures/models/chat-server.js";
import { collect, rejection, useChatServer, weather } from "./fixtures/models/helpers.js";
import { FIXTURE_TOOLS, TEXT_TOOL_CALL_FIXTURES } from "./fixtures/models/text-tool-calls.js";

const chatServer = useChatServer();
const request: ModelRequest = { system: "Be brief.", messages: [{ role: "user", content: "Weather in Paris?" }], tools: [weather] };

interface Options {
  maxRetries?: number;
  retryAfterOutput?: boolean;
  timeoutMs?: number;
  textToolCalls?: boolean;
}

/** The two models under test, over the same server; each records its retries. */
const MODELS: [string, (o?: Options) => { model: ChatModel; retries: RetryInfo[] }][] = [
  [
    "OpenAICompatibleModel",
    (o = {}) => {
      const retries: RetryInfo[] = [];
      const model = new OpenAICompatibleModel({
        baseURL: chatServer().baseURL,
        model: "m",
        retryDelayMs: 1,
        onRetry: (r) => retries.push(r),
        ...o,
      });
      return { model, retries };
    },
  ],
  [
    "AI SDK model",
    (o = {}) => {
      const retries: RetryInfo[] = [];
      const model = fromLanguageModel(serverLanguageModel(chatServer().baseURL), {
        retryDelayMs: 1,
        onRetry: (r) => retries.push(r),
        ...o,
      });
      return { model, retries };
    },
  ],
];

const ok = () => completion({ content: "Sunny." }, "stop", { prompt_tokens: 9, completion_tokens: 2 });
const textOf = (events: ModelStreamEvent[]) => events.map((e) => (e.type === "text_delta" ? e.text : "")).join("");
const last = (events: ModelStreamEvent[]) => events.at(-1) as Extract<ModelStreamEvent, { type: "finish" }>;

describe.each(MODELS)("%s", (_name, make) => {
  it("retries a 429, waiting as long as Retry-After says (seconds), then succeeds", async () => {
    const { model, retries } = make();
    chatServer().reply(raw(429, '{"error":{"message":"Rate limit reached"}}', "application/json", { "retry-after": "1" }), ok());
    const out = await model.invoke(request);
    expect(out.message.content).toBe("Sunny.");
    expect(chatServer().requests).toHaveLength(2);
    expect(retries).toHaveLength(1);
    expect(retries[0]?.delayMs).toBe(1000);
    expect(retries[0]?.error).toMatchObject({ code: "rate_limited", status: 429, retryAfterMs: 1000 });
  });

  it("honours Retry-After as an HTTP date, in a stream", async () => {
    const { model, retries } = make();
    const when = new Date(Math.ceil((Date.now() + 1500) / 1000) * 1000).toUTCString();
    chatServer().reply(raw(429, "slow down", "text/plain", { "retry-after": when }), sse([chunk({ content: "Hi" }), chunk({}, "stop")]));
    const events = await collect(model.stream(request));
    expect(textOf(events)).toBe("Hi");
    expect(retries).toHaveLength(1);
    expect(retries[0]?.delayMs).toBeGreaterThan(0);
    expect(retries[0]?.delayMs).toBeLessThanOrEqual(2600);
  });

  it("retries 5xx with backoff, then gives up after maxRetries with code server", async () => {
    const { model, retries } = make();
    chatServer().reply(raw(500, "boom"), raw(502, "bad gateway", "text/plain"), ok());
    expect((await model.invoke(request)).message.content).toBe("Sunny.");
    expect(retries.map((r) => r.error.status)).toEqual([500, 502]);

    chatServer().requests.length = 0;
    chatServer().reply(raw(503, "down"), raw(503, "down"), raw(503, "down"));
    const error = await rejection(model.invoke(request));
    expect(error).toMatchObject({ code: "server", status: 503 });
    expect(chatServer().requests).toHaveLength(3); // 1 + maxRetries (2)
  });

  it("does not retry auth, context-length or other 4xx errors", async () => {
    const { model, retries } = make();
    chatServer().reply(
      raw(401, '{"error":{"message":"Incorrect API key provided"}}'),
      raw(400, '{"error":{"message":"This model\'s maximum context length is 8192 tokens. However, you requested 9000 tokens."}}'),
      raw(
        400,
        '{"error":{"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}}',
      ),
      raw(404, '{"error":{"message":"model not found"}}'),
    );
    expect(await rejection(model.invoke(request))).toMatchObject({ code: "auth", status: 401 });
    expect(await rejection(model.invoke(request))).toMatchObject({ code: "context_length", status: 400 });
    expect(await rejection(collect(model.stream(request)))).toMatchObject({ code: "context_length", status: 400 });
    expect(await rejection(model.invoke(request))).toMatchObject({ code: "bad_request", status: 404 });
    expect(chatServer().requests).toHaveLength(4);
    expect(retries).toHaveLength(0);
  });

  it("classifies an error chunk in the middle of a stream like the same error before it, and retries it before output", async () => {
    const { model, retries } = make();
    chatServer().reply(
      sse([{ error: { message: "Rate limit reached for requests", type: "rate_limit_error" } }]),
      sse([chunk({ content: "Fine." }), chunk({}, "stop")]),
    );
    expect(textOf(await collect(model.stream(request)))).toBe("Fine.");
    expect(retries[0]?.error.code).toBe("rate_limited");

    chatServer().reply(sse([chunk({ content: "Part" }), { error: { message: "The server is overloaded", type: "server_error" } }]));
    const error = await rejection(collect(model.stream(request)));
    expect(error.code).toBe("server");
    expect(error.message).toContain("overloaded");
  });

  it("retries a stream cut before any output, but not one cut after output was shown", async () => {
    const { model, retries } = make();
    chatServer().reply(sse([chunk({ content: "never" })], { cutAfter: 0 }), sse([chunk({ content: "Whole." }), chunk({}, "stop")]));
    expect(textOf(await collect(model.stream(request)))).toBe("Whole.");
    expect(retries.map((r) => r.error.code)).toEqual(["network"]);

    chatServer().requests.length = 0;
    chatServer().reply(sse([chunk({ content: "Half" }), chunk({ content: " an" }), chunk({ content: " answer" })], { cutAfter: 2 }));
    const seen: ModelStreamEvent[] = [];
    const error = await rejection(
      (async () => {
        for await (const e of model.stream(request)) seen.push(e);
      })(),
    );
    expect(error.code).toBe("network");
    expect(textOf(seen)).toBe("Half an");
    expect(chatServer().requests).toHaveLength(1);
  });

  it("restarts a stream cut after output when retryAfterOutput allows it", async () => {
    const { model } = make({ retryAfterOutput: true });
    chatServer().reply(
      sse([chunk({ content: "Half" }), chunk({ content: "…" })], { cutAfter: 1 }),
      sse([chunk({ content: "Whole." }), chunk({}, "stop")]),
    );
    const events = await collect(model.stream(request));
    expect(textOf(events)).toBe("HalfWhole.");
    expect(last(events).message.content).toBe("Whole.");
  });

  it("times out a silent server after timeoutMs, retries, and reports timeout when it stays silent", async () => {
    const { model, retries } = make({ timeoutMs: 150, maxRetries: 1 });
    chatServer().reply(silent(), ok());
    expect((await model.invoke(request)).message.content).toBe("Sunny.");
    expect(retries.map((r) => r.error.code)).toEqual(["timeout"]);
    chatServer().reply(silent(), silent());
    expect(await rejection(collect(model.stream(request)))).toMatchObject({ code: "timeout" });
  });

  it("reports finishReason length for a reply cut by the token cap, in invoke and stream", async () => {
    const { model } = make();
    chatServer().reply(completion({ content: "The answer is" }, "length"), sse([chunk({ content: "The answer" }), chunk({}, "length")]));
    expect(await model.invoke(request)).toMatchObject({ message: { content: "The answer is" }, finishReason: "length" });
    expect(last(await collect(model.stream(request)))).toMatchObject({ finishReason: "length", message: { content: "The answer" } });
  });

  it("asks for usage in streams and reports it with cached prompt tokens", async () => {
    const { model } = make();
    const usage = { prompt_tokens: 1200, completion_tokens: 12, prompt_tokens_details: { cached_tokens: 1024 } };
    chatServer().reply(
      sse([chunk({ content: "Hi" }), chunk({}, "stop"), { id: "c", object: "chat.completion.chunk", choices: [], usage }]),
      completion({ content: "Hi" }, "stop", usage),
    );
    const finish = last(await collect(model.stream(request)));
    expect(finish.usage).toEqual({ inputTokens: 1200, outputTokens: 12, cachedInputTokens: 1024 });
    expect(chatServer().requests[0]?.body.stream_options).toEqual({ include_usage: true });
    expect((await model.invoke(request)).usage).toEqual({ inputTokens: 1200, outputTokens: 12, cachedInputTokens: 1024 });
  });

  it("repairs obviously malformed tool arguments and reports the rest with argsError", async () => {
    const { model } = make();
    const call = (id: string, args: string) => ({ id, type: "function", function: { name: "get_weather", arguments: args } });
    chatServer().reply(
      completion({ content: null, tool_calls: [call("a", "{'city': 'Paris',}"), call("b", "city=Paris")] }, "tool_calls"),
      sse([chunk({ tool_calls: [{ index: 0, ...call("c", '{"city": "Rome"') }] }), chunk({}, "tool_calls")]),
    );
    const out = await model.invoke(request);
    expect(out.finishReason).toBe("tool_calls");
    expect(out.message.toolCalls?.[0]).toEqual({ id: "a", name: "get_weather", args: { city: "Paris" } });
    const bad = out.message.toolCalls?.[1];
    expect(bad?.args).toEqual({ __raw: "city=Paris" });
    expect(bad?.argsError).toMatch(/not valid JSON \(.+\): city=Paris/);
    const events = await collect(model.stream(request));
    expect(events.find((e) => e.type === "tool_call")).toEqual({
      type: "tool_call",
      call: { id: "c", name: "get_weather", args: { city: "Rome" } },
    });
  });

  it.each(TEXT_TOOL_CALL_FIXTURES)("reads text-form tool calls: $model", async (fixture) => {
    const { model } = make({ textToolCalls: true });
    const tools = FIXTURE_TOOLS;
    chatServer().reply(
      completion({ content: fixture.content }, "stop"),
      sse([chunk({ content: fixture.content.slice(0, 7) }), chunk({ content: fixture.content.slice(7) }), chunk({}, "stop")]),
    );
    const out = await model.invoke({ ...request, tools });
    expect(out.finishReason).toBe("tool_calls");
    expect(out.message.content).toBe(fixture.rest);
    expect(out.message.toolCalls?.map((c) => ({ name: c.name, args: c.args }))).toEqual(fixture.calls);
    expect(new Set(out.message.toolCalls?.map((c) => c.id)).size).toBe(fixture.calls.length);

    const events = await collect(model.stream({ ...request, tools }));
    const finish = last(events);
    expect(finish.finishReason).toBe("tool_calls");
    expect(finish.message.toolCalls?.map((c) => ({ name: c.name, args: c.args }))).toEqual(fixture.calls);
    // No part of a call is ever shown as text; what was shown is the final content.
    expect(textOf(events)).toBe(finish.message.content);
    expect(textOf(events)).not.toContain('"name"');
    expect(events.filter((e) => e.type === "tool_call")).toHaveLength(fixture.calls.length);
  });

  it("accepts text-form calls only for offered tools, and streams ordinary text unchanged", async () => {
    const { model } = make({ textToolCalls: true });
    const unknown = '<tool_call>\n{"name": "rm_rf", "arguments": {"path": "/"}}\n</tool_call>';
    const prose = "Use ```json blocks``` or {braces} freely.";
    chatServer().reply(
      completion({ content: unknown }),
      sse([chunk({ content: "Use ```json bl" }), chunk({ content: "ocks``` or {braces} freely." }), chunk({}, "stop")]),
    );
    const out = await model.invoke(request);
    expect(out).toMatchObject({ message: { role: "assistant", content: unknown }, finishReason: "stop" });
    expect(out.message.toolCalls).toBeUndefined();
    const events = await collect(model.stream(request));
    expect(textOf(events)).toBe(prose);
    expect(last(events)).toMatchObject({ message: { content: prose }, finishReason: "stop" });
  });
});

describe("OpenAICompatibleModel request mapping", () => {
  it("sends systemContext as a second system message, responseFormat as json_schema and settings by their wire names", async () => {
    chatServer().reply(completion({ content: '{"ok":true}' }));
    const model = new OpenAICompatibleModel({
      baseURL: chatServer().baseURL,
      model: "m",
      temperature: 0.9,
      maxTokens: 50,
      body: { user: "u1" },
    });
    await model.invoke({
      ...request,
      systemContext: "<agent_memory>likes tea</agent_memory>",
      responseFormat: { name: "verdict", schema: { type: "object", properties: { ok: { type: "boolean" } } } },
      settings: {
        temperature: 0,
        maxOutputTokens: 64,
        topP: 0.5,
        seed: 7,
        providerOptions: { reasoning_effort: "low", model: "not-this" },
      },
    });
    const body = chatServer().requests[0]?.body;
    expect(body.messages.slice(0, 2)).toEqual([
      { role: "system", content: "Be brief." },
      { role: "system", content: "<agent_memory>likes tea</agent_memory>" },
    ]);
    expect(body).toMatchObject({
      model: "m",
      user: "u1",
      reasoning_effort: "low",
      temperature: 0,
      max_tokens: 64,
      top_p: 0.5,
      seed: 7,
      response_format: {
        type: "json_schema",
        json_schema: { name: "verdict", schema: { type: "object", properties: { ok: { type: "boolean" } } } },
      },
    });
  });

  it("reads text-form tool calls by default for local servers only", async () => {
    const fixture = TEXT_TOOL_CALL_FIXTURES[4];
    chatServer().reply(completion({ content: fixture?.content }), completion({ content: fixture?.content }));
    const local = new OpenAICompatibleModel({ baseURL: chatServer().baseURL, model: "m" });
    expect((await local.invoke({ ...request, tools: FIXTURE_TOOLS })).message.toolCalls).toHaveLength(1);
    // api.openai.com (redirected to the local server by a custom fetch): native tool calling, text stays text.
    const redirect: typeof fetch = (_url, init) => fetch(`${chatServer().baseURL}/chat/completions`, init);
    const openai = new OpenAICompatibleModel({ baseURL: "https://api.openai.com/v1", model: "gpt-4.1", fetch: redirect });
    const out = await openai.invoke({ ...request, tools: FIXTURE_TOOLS });
    expect(out.message).toEqual({ role: "assistant", content: fixture?.content });
  });
});

describe("AI SDK adapter request mapping", () => {
  it("passes systemContext, responseFormat and settings to the provider call", async () => {
    chatServer().reply(completion({ content: "{}" }));
    const provider = serverLanguageModel(chatServer().baseURL);
    await fromLanguageModel(provider, { maxOutputTokens: 10 }).invoke({
      ...request,
      systemContext: "facts",
      responseFormat: { name: "x", schema: { type: "object" } },
      settings: { temperature: 0.3, topP: 0.9, seed: 1, providerOptions: { openai: { user: "u" } } },
    });
    expect(provider.bodies[0]).toMatchObject({
      messages: [
        { role: "system", content: "Be brief." },
        { role: "system", content: "facts" },
        { role: "user", content: "Weather in Paris?" },
      ],
      temperature: 0.3,
      max_tokens: 10,
      top_p: 0.9,
      seed: 1,
      response_format: { type: "json", schema: { type: "object" }, name: "x" },
      provider_options: { openai: { user: "u" } },
    });
  });
});
