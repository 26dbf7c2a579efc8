/**
 * Anthropic prompt caching through the AI SDK: the real `@ai-sdk/anthropic` client against a
 * local server that records each Messages API request — breakpoints where intended, never more
 * than Anthropic allows, none when turned off or for a provider that caches by itself.
 */
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createAnthropic } from "@ai-sdk/anthropic";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { InMemoryCheckpointer, StateBackend, createDeepAgent, fromLanguageModel, loadCore } from "../src/index.js";
import { type LanguageModelLike, MAX_CACHE_BREAKPOINTS, toCallOptions, withCacheBreakpoints } from "../src/models/ai-sdk.js";
import type { ModelRequest } from "../src/models/types.js";

interface Block {
  type: string;
  text?: string;
  cache_control?: unknown;
}
interface AnthropicBody {
  system?: Block[];
  messages: { role: string; content: Block[] }[];
  tools?: { name: string; cache_control?: unknown }[];
  stream?: boolean;
}

const bodies: AnthropicBody[] = [];
/** Replies in order; the last one repeats. */
let replies: { text?: string; tool?: { name: string; input: unknown } }[] = [];
let server: Server;
let baseURL: string;

function sse(events: [string, unknown][]): string {
  return events.map(([e, d]) => `event: ${e}\ndata: ${JSON.stringify(d)}\n\n`).join("");
}

function answer(n: number, stream: boolean): { type: string; body: string } {
  const r = replies[Math.min(n, replies.length - 1)] ?? { text: "ok" };
  const block = r.tool
    ? { type: "tool_use", id: `toolu_${n}`, name: r.tool.name, input: r.tool.input }
    : { type: "text", text: r.text ?? "" };
  const stop = r.tool ? "tool_use" : "end_turn";
  const usage = { input_tokens: 10, output_tokens: 2, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  if (!stream) {
    return {
      type: "application/json",
      body: JSON.stringify({
        id: `msg_${n}`,
        type: "message",
        role: "assistant",
        model: "claude-test",
        content: [block],
        stop_reason: stop,
        stop_sequence: null,
        usage,
      }),
    };
  }
  const start = r.tool ? { ...block, input: {} } : { type: "text", text: "" };
  const delta = r.tool
    ? { type: "input_json_delta", partial_json: JSON.stringify(r.tool.input) }
    : { type: "text_delta", text: r.text ?? "" };
  return {
    type: "text/event-stream",
    body: sse([
      [
        "message_start",
        {
          type: "message_start",
          message: {
            id: `msg_${n}`,
            type: "message",
            role: "assistant",
            model: "claude-test",
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage,
          },
        },
      ],
      ["content_block_start", { type: "content_block_start", index: 0, content_block: start }],
      ["content_block_delta", { type: "content_block_delta", index: 0, delta }],
      ["content_block_stop", { type: "content_block_stop", index: 0 }],
      ["message_delta", { type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 2 } }],
      ["message_stop", { type: "message_stop" }],
    ]),
  };
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (d: Buffer) => parts.push(d));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(parts).toString("utf8")) as AnthropicBody;
      bodies.push(body);
      const a = answer(bodies.length - 1, body.stream === true);
      res.writeHead(200, { "content-type": a.type });
      res.end(a.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  bodies.length = 0;
  replies = [{ text: "ok" }];
});

const claude = () => createAnthropic({ baseURL, apiKey: "test-key" })("claude-sonnet-4-5") as unknown as LanguageModelLike;

/** Where the request's breakpoints are: `tools`, `system[i]`, `messages[i]` (the block's message). */
function breakpoints(body: AnthropicBody): string[] {
  const at: string[] = [];
  for (const [i, t] of (body.tools ?? []).entries()) if (t.cache_control) at.push(`tools[${i}]`);
  for (const [i, b] of (body.system ?? []).entries()) if (b.cache_control) at.push(`system[${i}]`);
  for (const [i, m] of body.messages.entries()) for (const b of m.content) if (b.cache_control) at.push(`messages[${i}]`);
  return at;
}

const request: ModelRequest = {
  system: "You are a careful assistant.",
  systemContext: "<agent_memory>\n- The user prefers pnpm.\n</agent_memory>",
  messages: [
    { role: "user", content: "list the root" },
    { role: "assistant", content: "", toolCalls: [{ id: "toolu_a", name: "ls", args: { path: "/" } }] },
    { role: "tool", content: "/a.md", toolCallId: "toolu_a" },
  ],
  tools: [{ name: "ls", description: "List a directory.", parameters: { type: "object", properties: { path: { type: "string" } } } }],
};

describe("Anthropic cache breakpoints (the real @ai-sdk/anthropic client)", () => {
  it("marks the static prefix, the memory block and the conversation, on invoke and stream", async () => {
    const model = fromLanguageModel(claude());
    await model.invoke(request);
    for await (const _ of model.stream(request)) {
      // drained
    }
    expect(bodies).toHaveLength(2);
    for (const body of bodies) {
      expect(body.system?.map((b) => b.text)).toEqual([request.system, request.systemContext]);
      expect(breakpoints(body)).toEqual(["system[0]", "system[1]", `messages[${body.messages.length - 1}]`]);
      // The last block of the last message carries it: the whole conversation so far.
      const last = body.messages.at(-1)?.content.at(-1);
      expect(last).toMatchObject({ type: "tool_result", cache_control: { type: "ephemeral" } });
    }
  });

  it("sends none with promptCache: false (proxies that reject cache_control)", async () => {
    await fromLanguageModel(claude(), { promptCache: false }).invoke(request);
    expect(JSON.stringify(bodies[0])).not.toContain("cache_control");
  });

  it("without a system context, two: the static prefix and the conversation", async () => {
    await fromLanguageModel(claude()).invoke({ ...request, systemContext: undefined });
    const body = bodies[0] as AnthropicBody;
    expect(breakpoints(body)).toEqual(["system[0]", `messages[${body.messages.length - 1}]`]);
  });

  it("never more than Anthropic allows over an agent's run, and the prefix stays byte for byte", async () => {
    replies = [
      { tool: { name: "write_file", input: { file_path: "/n.md", content: "hi" } } },
      { tool: { name: "read_file", input: { file_path: "/n.md" } } },
      { text: "done" },
    ];
    const core = await loadCore();
    const backend = new StateBackend({ core });
    await backend.write("/AGENTS.md", "- The user prefers pnpm.\n");
    const agent = createDeepAgent(fromLanguageModel(claude()), {
      core,
      backend,
      checkpointer: new InMemoryCheckpointer(),
      enableSubagents: false,
    });
    await agent.invoke({ messages: [{ role: "user", content: "save hi to /n.md and check it" }] }, { threadId: "cache" });
    expect(bodies).toHaveLength(3);
    for (const body of bodies) {
      const at = breakpoints(body);
      expect(at.length).toBeLessThanOrEqual(MAX_CACHE_BREAKPOINTS);
      expect(at).toEqual(["system[0]", "system[1]", `messages[${body.messages.length - 1}]`]);
    }
    // What the first breakpoints cover is the same on every call: the cache written by one call is read by the next.
    const prefix = (b: AnthropicBody) => JSON.stringify([b.tools, b.system]);
    expect(new Set(bodies.map(prefix)).size).toBe(1);
  });

  it("leaves other providers' prompts unmarked, and marks at most two system messages and the last message", async () => {
    const seen: unknown[] = [];
    const openai: LanguageModelLike = {
      specificationVersion: "v3",
      provider: "openai.chat",
      modelId: "gpt-4.1",
      doGenerate: async (options) => {
        seen.push(options.prompt);
        return { content: [{ type: "text", text: "ok" }], finishReason: { unified: "stop" } };
      },
      doStream: async () => ({ stream: new ReadableStream() }),
    };
    await fromLanguageModel(openai).invoke(request);
    expect(seen).toHaveLength(1);
    expect(JSON.stringify(seen[0])).not.toContain("cacheControl");
    expect(JSON.stringify(toCallOptions(request))).not.toContain("cacheControl");
    const prompt = withCacheBreakpoints([
      { role: "system", content: "a" },
      { role: "system", content: "b" },
      { role: "system", content: "c" },
      { role: "user", content: [{ type: "text", text: "q" }] },
    ]);
    expect(prompt.map((m) => Boolean(m.providerOptions))).toEqual([true, true, false, true]);
    expect(withCacheBreakpoints([])).toEqual([]);
  });
});
