/** OpenAICompatibleModel against a real chat-completions server on 127.0.0.1 (no mocked fetch). */
import { describe, expect, it } from "vitest";
import { ConfigError, type ModelRequest, type ModelStreamEvent, OpenAICompatibleModel } from "../src/index.js";
import { chunk, json, raw, sse, startChatServer } from "./fixtures/models/chat-server.js";
import { collect, rejection, useChatServer, weather } from "./fixtures/models/helpers.js";

const chatServer = useChatServer();

const request: ModelRequest = {
  system: "You are terse.",
  messages: [
    { role: "user", content: "Weather in Paris?" },
    { role: "assistant", content: "", toolCalls: [{ id: "call_a", name: "get_weather", args: { city: "Paris" } }] },
    { role: "tool", content: "18°C, sunny", toolCallId: "call_a" },
    { role: "user", content: "And Berlin and Rome?" },
  ],
  tools: [weather],
};

function model(extra: Partial<ConstructorParameters<typeof OpenAICompatibleModel>[0]> = {}) {
  return new OpenAICompatibleModel({ baseURL: `${chatServer().baseURL}/`, model: "llama3.1:8b", ...extra });
}

describe("OpenAICompatibleModel", () => {
  it("maps messages and tools to the wire format and parses a non-streaming reply", async () => {
    chatServer().reply(
      json({
        id: "chatcmpl-1",
        object: "chat.completion",
        choices: [
          {
            index: 0,
            finish_reason: "length",
            message: {
              role: "assistant",
              content: null,
              tool_calls: [
                { id: "call_b", type: "function", function: { name: "get_weather", arguments: '{"city":"Berlin"}' } },
                { id: "call_r", type: "function", function: { name: "get_weather", arguments: '{"city": "Ro' } },
              ],
            },
          },
        ],
        usage: { prompt_tokens: 42, completion_tokens: 7, total_tokens: 49 },
      }),
    );
    const m = model({
      apiKey: "sk-ignored",
      headers: { "x-trace": "t1", Authorization: "Bearer sk-test" },
      temperature: 0.2,
      maxTokens: 256,
    });
    expect(m.id).toBe("openai-compatible:llama3.1:8b");
    const out = await m.invoke(request);
    expect(out).toEqual({
      message: {
        role: "assistant",
        content: "",
        toolCalls: [
          { id: "call_b", name: "get_weather", args: { city: "Berlin" } },
          // Cut off by the token cap: not "repaired" into a city the model never finished.
          { id: "call_r", name: "get_weather", args: { __raw: '{"city": "Ro' }, argsError: expect.stringContaining("cut off") },
        ],
      },
      finishReason: "length",
      usage: { inputTokens: 42, outputTokens: 7 },
    });

    expect(chatServer().requests).toHaveLength(1);
    const [req] = chatServer().requests;
    expect(req?.method).toBe("POST");
    expect(req?.url).toBe("/v1/chat/completions");
    expect(req?.headers.authorization).toBe("Bearer sk-test");
    expect(req?.headers["x-trace"]).toBe("t1");
    expect(req?.headers["content-type"]).toBe("application/json");
    expect(req?.body).toEqual({
      model: "llama3.1:8b",
      messages: [
        { role: "system", content: "You are terse." },
        { role: "user", content: "Weather in Paris?" },
        {
          role: "assistant",
          content: "",
          tool_calls: [{ id: "call_a", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }],
        },
        { role: "tool", content: "18°C, sunny", tool_call_id: "call_a" },
        { role: "user", content: "And Berlin and Rome?" },
      ],
      tools: [{ type: "function", function: { name: "get_weather", description: "Weather for a city.", parameters: weather.parameters } }],
      temperature: 0.2,
      max_tokens: 256,
      stream: false,
    });
  });

  it("returns a plain text reply without toolCalls, omits empty system and tools, sends no auth by default", async () => {
    chatServer().reply(json({ choices: [{ index: 0, message: { role: "assistant", content: "Hello!" }, finish_reason: "stop" }] }));
    const out = await model().invoke({ system: "", messages: [{ role: "user", content: "hi" }], tools: [] });
    expect(out).toEqual({ message: { role: "assistant", content: "Hello!" }, finishReason: "stop" });
    expect("toolCalls" in out.message).toBe(false);
    const [req] = chatServer().requests;
    expect(req?.headers.authorization).toBeUndefined();
    expect(req?.body).toEqual({ model: "llama3.1:8b", messages: [{ role: "user", content: "hi" }], stream: false });
  });

  it("streams a tool call split across chunks, accumulated by index, with usage from the final chunk", async () => {
    chatServer().reply(
      sse(
        [
          chunk({ role: "assistant", content: "" }),
          chunk({ content: "Checking " }),
          chunk({ content: "both." }),
          chunk({ tool_calls: [{ index: 0, id: "call_b", type: "function", function: { name: "get_weather", arguments: "" } }] }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: '{"ci' } }] }),
          chunk({ tool_calls: [{ index: 1, id: "call_r", type: "function", function: { name: "get_weather", arguments: '{"city"' } }] }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: 'ty":"Ber' } }] }),
          chunk({ tool_calls: [{ index: 1, function: { arguments: ':"Rome"}' } }] }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: 'lin"}' } }] }),
          chunk({}, "tool_calls"),
          { id: "chatcmpl-1", object: "chat.completion.chunk", choices: [], usage: { prompt_tokens: 50, completion_tokens: 20 } },
        ],
        { splitWrites: true },
      ),
    );
    const events = await collect(model().stream(request));
    const calls = [
      { id: "call_b", name: "get_weather", args: { city: "Berlin" } },
      { id: "call_r", name: "get_weather", args: { city: "Rome" } },
    ];
    expect(events).toEqual([
      { type: "text_delta", text: "Checking " },
      { type: "text_delta", text: "both." },
      { type: "tool_call", call: calls[0] },
      { type: "tool_call", call: calls[1] },
      {
        type: "finish",
        message: { role: "assistant", content: "Checking both.", toolCalls: calls },
        finishReason: "tool_calls",
        usage: { inputTokens: 50, outputTokens: 20 },
      },
    ]);
    const [req] = chatServer().requests;
    expect(req?.headers.accept).toBe("text/event-stream");
    expect(req?.body.stream).toBe(true);
    expect(req?.body.stream_options).toEqual({ include_usage: true });
    expect(req?.body.model).toBe("llama3.1:8b");
    expect(req?.body.messages).toHaveLength(5);
    expect(req?.body.tools).toHaveLength(1);
  });

  it("yields text deltas as they arrive, before the stream is complete", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    chatServer().reply(
      sse([chunk({ role: "assistant", content: "Hel" }), chunk({ content: "lo" }), chunk({ content: "!" }, "stop")], {
        gate: { before: 1, wait: gate },
      }),
    );
    const iterator = model({ streamUsage: false })
      .stream({ system: "", messages: [{ role: "user", content: "hi" }], tools: [] })
      [Symbol.asyncIterator]();
    // The server holds every chunk after the first until released: this delta came over the wire alone.
    expect(await iterator.next()).toEqual({ done: false, value: { type: "text_delta", text: "Hel" } });
    release();
    const rest: ModelStreamEvent[] = [];
    for (let r = await iterator.next(); !r.done; r = await iterator.next()) rest.push(r.value);
    expect(rest).toEqual([
      { type: "text_delta", text: "lo" },
      { type: "text_delta", text: "!" },
      { type: "finish", message: { role: "assistant", content: "Hello!" }, finishReason: "stop" },
    ]);
    expect(chatServer().requests[0]?.body.stream_options).toBeUndefined();
  });

  it("turns HTTP errors into classified ModelErrors with the status and a body excerpt", async () => {
    const body = JSON.stringify({ error: { message: "model crashed", detail: "x".repeat(2000) } });
    chatServer().reply(raw(500, body), raw(503, "overloaded", "text/plain"));
    const e1 = await rejection(model({ maxRetries: 0 }).invoke(request));
    expect(e1.code).toBe("server");
    expect(e1.status).toBe(500);
    expect(e1.message).toContain("HTTP 500");
    expect(e1.message).toContain("model crashed");
    expect(e1.message.length).toBeLessThan(500);
    const e2 = await rejection(collect(model({ maxRetries: 0 }).stream(request)));
    expect(e2).toMatchObject({ code: "server", status: 503 });
    expect(e2.message).toContain("overloaded");
  });

  it("reports malformed JSON as bad_response, in a reply and in a stream chunk", async () => {
    chatServer().reply(
      raw(200, "{not json"),
      json({ object: "chat.completion", choices: [] }),
      sse([chunk({ content: "ok" }), "{broken"]),
      sse([chunk({ content: "partial" })], { done: false }),
    );
    const e1 = await rejection(model().invoke(request));
    expect(e1.code).toBe("bad_response");
    expect(e1.message).toContain("{not json");
    expect(await rejection(model().invoke(request))).toMatchObject({ code: "bad_response" });
    expect(await rejection(collect(model().stream(request)))).toMatchObject({ code: "bad_response" });
    const truncated = await rejection(collect(model().stream(request)));
    expect(truncated.code).toBe("network"); // output was shown: not retried
    expect(truncated.message).toContain("[DONE]");
  });

  it("aborts mid-stream with code aborted", async () => {
    chatServer().reply(sse([chunk({ role: "assistant", content: "thinking" })], { hang: true }));
    const controller = new AbortController();
    const seen: ModelStreamEvent[] = [];
    const error = await rejection(
      (async () => {
        for await (const e of model().stream({ ...request, signal: controller.signal })) {
          seen.push(e);
          controller.abort();
        }
      })(),
    );
    expect(error.code).toBe("aborted");
    expect(seen).toEqual([{ type: "text_delta", text: "thinking" }]);
  });

  it("aborts mid-stream even when a custom fetch drops the signal", async () => {
    chatServer().reply(sse([chunk({ role: "assistant", content: "still here" })], { hang: true }));
    const deaf: typeof globalThis.fetch = (input, init) => globalThis.fetch(input, { ...init, signal: null });
    const controller = new AbortController();
    const error = await rejection(
      (async () => {
        for await (const _ of model({ fetch: deaf }).stream({ ...request, signal: controller.signal })) controller.abort();
      })(),
    );
    expect(error.code).toBe("aborted");
  });

  it("aborts a pending non-streaming call, and refuses an already aborted signal without a request", async () => {
    chatServer().reply((res) => new Promise((resolve) => res.on("close", resolve))); // never answers
    const controller = new AbortController();
    const pending = model().invoke({ ...request, signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    expect(await rejection(pending)).toMatchObject({ code: "aborted" });
    const before = chatServer().requests.length;
    expect(await rejection(model().invoke({ ...request, signal: AbortSignal.abort() }))).toMatchObject({ code: "aborted" });
    expect(chatServer().requests.length).toBe(before);
  });

  it("uses the given fetch and reports connection failures as network", async () => {
    chatServer().reply(json({ choices: [{ index: 0, message: { role: "assistant", content: "via custom fetch" } }] }));
    const urls: string[] = [];
    const fetch: typeof globalThis.fetch = (input, init) => {
      urls.push(String(input));
      return globalThis.fetch(input, init);
    };
    expect((await model({ fetch }).invoke(request)).message.content).toBe("via custom fetch");
    expect(urls).toEqual([`${chatServer().baseURL}/chat/completions`]);

    const closed = await startChatServer();
    await closed.close();
    const down = new OpenAICompatibleModel({ baseURL: closed.baseURL, model: "m", maxRetries: 0 });
    const error = await rejection(down.invoke(request));
    expect(error.code).toBe("network");
    expect(error.message).toContain("ECONNREFUSED");
    expect(error.status).toBeUndefined();
  });
});

describe("OpenAICompatibleModel baseURL", () => {
  it("is refused, without being echoed, when it is not an http(s) URL or holds credentials", () => {
    for (const baseURL of [
      "http://user:s3cret-pass@127.0.0.1:8080/v1",
      "https://tok3n-abc@example.com/v1",
      "ftp://x/v1",
      "not a url",
      42,
    ]) {
      let thrown: unknown;
      try {
        new OpenAICompatibleModel({ baseURL: baseURL as string, model: "m" });
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(ConfigError);
      expect((thrown as ConfigError).option).toBe("baseURL");
      expect((thrown as Error).message).not.toMatch(/s3cret|tok3n/);
    }
    expect(new OpenAICompatibleModel({ baseURL: "http://127.0.0.1:8080/v1/", model: "m" }).id).toBe("openai-compatible:m");
  });
});
