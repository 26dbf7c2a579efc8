/**
 * Server-sent events as servers really write them, through OpenAICompatibleModel and a real
 * server: LF, CRLF and CR-only line endings, comments, multi-line data, other fields, and
 * writes cut anywhere (inside a line, inside a UTF-8 sequence).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ModelStreamEvent, OpenAICompatibleModel } from "../src/index.js";
import { type ChatServer, chunk, sseText, startChatServer } from "./fixtures/models/chat-server.js";
import { collect } from "./fixtures/models/helpers.js";

let server: ChatServer;
beforeAll(async () => {
  server = await startChatServer();
});
afterAll(() => server.close());

const model = () => new OpenAICompatibleModel({ baseURL: server.baseURL, model: "m", maxRetries: 0 });
const ask = { system: "", messages: [{ role: "user" as const, content: "hi" }], tools: [] };
const data = (content: string, finish: string | null = null) => JSON.stringify(chunk({ content }, finish));

async function streamed(pieces: string[]): Promise<{ text: string; finish: Extract<ModelStreamEvent, { type: "finish" }> }> {
  server.reply(sseText(pieces));
  const events = await collect(model().stream(ask));
  const text = events.map((e) => (e.type === "text_delta" ? e.text : "")).join("");
  return { text, finish: events.at(-1) as Extract<ModelStreamEvent, { type: "finish" }> };
}

describe("SSE parsing", () => {
  it.each([
    ["LF", "\n"],
    ["CRLF", "\r\n"],
    ["CR only", "\r"],
  ])("reads events with %s line endings", async (_name, eol) => {
    const body = [`data: ${data("Hel")}`, "", `data: ${data("lo", "stop")}`, "", "data: [DONE]", "", ""].join(eol);
    const { text, finish } = await streamed([body]);
    expect(text).toBe("Hello");
    expect(finish).toMatchObject({ message: { content: "Hello" }, finishReason: "stop" });
  });

  it("reads CR-only endings even when a write ends between the CR and the next line", async () => {
    const { text } = await streamed([`data: ${data("a")}\r`, `\rdata: ${data("b", "stop")}\r\r`, "data: [DONE]\r\r"]);
    expect(text).toBe("ab");
  });

  it("skips comments and other fields, and joins multi-line data with newlines", async () => {
    const json = JSON.stringify(chunk({ content: "multi" }), null, 1).split("\n");
    const body = [
      ": keep-alive comment",
      "",
      "event: message",
      "id: 1",
      "retry: 1000",
      ...json.map((line) => `data: ${line}`),
      "",
      ":another comment",
      `data:${data("line", "stop")}`, // no space after the colon
      "",
      "data: [DONE]",
      "",
      "",
    ].join("\n");
    const { text } = await streamed([body]);
    expect(text).toBe("multiline");
  });

  it("reassembles events cut at every byte, including inside a multi-byte character", async () => {
    const bytes = Buffer.from(`data: ${data("héllo 🌍")}\r\n\r\ndata: ${data(" ✓", "stop")}\r\n\r\ndata: [DONE]\r\n\r\n`);
    // One write per byte.
    server.reply(async (res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (const b of bytes) {
        res.write(Buffer.from([b]));
        await new Promise((resolve) => setImmediate(resolve));
      }
      res.end();
    });
    const events = await collect(model().stream(ask));
    const text = events.map((e) => (e.type === "text_delta" ? e.text : "")).join("");
    expect(text).toBe("héllo 🌍 ✓");
  });

  it("accepts a last event without the closing blank line", async () => {
    const { text, finish } = await streamed([`data: ${data("end", "stop")}\n\ndata: [DONE]`]);
    expect(text).toBe("end");
    expect(finish.finishReason).toBe("stop");
  });
});
