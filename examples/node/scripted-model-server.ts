/**
 * A scripted model behind a real OpenAI-compatible HTTP server on 127.0.0.1 (random port): the
 * demo and the `engram` command's tests point `--base-url` at it, so the command runs end to end
 * — HTTP, server-sent events, tool calls — with no key and no download.
 *
 * A script is a function of the request (the chat-completions body as received): it decides the
 * reply — text, tool calls, or both — and may read what the agent sent (its system messages, the
 * tool results), so a reply can prove what the model was given.
 * @module
 */
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** A message of a chat-completions request. */
export interface WireMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: string | null;
  tool_calls?: { id: string; type: "function"; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

/** A chat-completions request body. */
export interface WireRequest {
  model: string;
  messages: WireMessage[];
  stream?: boolean;
  tools?: { type: "function"; function: { name: string } }[];
  response_format?: { type: string; json_schema?: { name: string } };
  [key: string]: unknown;
}

/** One scripted reply. */
export interface ScriptedReply {
  /** Answer text (streamed word by word). Default: none. */
  text?: string;
  /** Tool calls to make (`id`: the call's id, default `call_<n>_<i>`). Default: none. */
  toolCalls?: { name: string; args: Record<string, unknown>; id?: string }[];
  /** Pause between streamed chunks, ms (to make a turn slow enough to cancel). Default: the server's. */
  chunkDelayMs?: number;
  /** The finish reason sent. Default: `tool_calls` when there are calls, else `stop`. */
  finishReason?: "stop" | "length" | "tool_calls";
  /** Answer with this HTTP error status instead (and `text` as the error message). Default: 200. */
  status?: number;
}

/** Decides the reply to a request (`index`: 0 for the server's first request). */
export type Script = (request: WireRequest, index: number) => ScriptedReply | Promise<ScriptedReply>;

/** A running server. */
export interface ScriptedModelServer {
  /** `http://127.0.0.1:<port>/v1`: pass it as `--base-url`. */
  baseURL: string;
  /** Every request body received, in order. */
  requests: WireRequest[];
  /** Replaces the script. */
  setScript(script: Script): void;
  close(): Promise<void>;
}

/** The system messages of a request, joined (static prompt, then memory and skills). */
export function systemText(request: WireRequest): string {
  return request.messages
    .filter((m) => m.role === "system")
    .map((m) => m.content ?? "")
    .join("\n");
}

/** The last user message of a request. */
export function lastUserText(request: WireRequest): string {
  return [...request.messages].reverse().find((m) => m.role === "user")?.content ?? "";
}

/** Whether the request is a long-term memory extraction (it asks for a JSON answer). */
export function isMemoryExtraction(request: WireRequest): boolean {
  return request.response_format?.json_schema?.name === "memory_update";
}

/** Whether the last message is a tool result (the model is asked to go on after its tools). */
export function afterToolResult(request: WireRequest): boolean {
  return request.messages.at(-1)?.role === "tool";
}

/** A memory update (the extraction's JSON answer) adding `facts`. */
export function memoryUpdate(facts: { content: string; category?: string; confidence?: number }[] = []): string {
  const keep = { summary: "", shouldUpdate: false };
  return JSON.stringify({
    newFacts: facts.map((f) => ({ content: f.content, category: f.category ?? "context", confidence: f.confidence ?? 0.9 })),
    factsToRemove: [],
    user: { workContext: keep, personalContext: keep, topOfMind: keep },
    history: { recentMonths: keep, earlierContext: keep, longTermBackground: keep },
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** Starts the server. `chunkDelayMs` (default 0) paces streamed chunks. */
export async function startScriptedModelServer(script: Script, options: { chunkDelayMs?: number } = {}): Promise<ScriptedModelServer> {
  let current = script;
  const requests: WireRequest[] = [];
  let counter = 0;

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "not found" } }));
      return;
    }
    let body: WireRequest;
    try {
      body = JSON.parse(await readBody(req)) as WireRequest;
    } catch {
      res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "invalid JSON" } }));
      return;
    }
    const index = requests.length;
    requests.push(body);
    const reply = await current(body, index);
    if (reply.status !== undefined && reply.status !== 200) {
      res.writeHead(reply.status, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: reply.text ?? "scripted error", type: "scripted" } }));
      return;
    }
    const id = `chatcmpl-${++counter}`;
    const calls = (reply.toolCalls ?? []).map((c, i) => ({
      id: c.id ?? `call_${counter}_${i}`,
      type: "function" as const,
      function: { name: c.name, arguments: JSON.stringify(c.args) },
    }));
    const finish = reply.finishReason ?? (calls.length > 0 ? "tool_calls" : "stop");
    const usage = { prompt_tokens: JSON.stringify(body.messages).length >> 2, completion_tokens: ((reply.text ?? "").length >> 2) + 1 };
    if (!body.stream) {
      const message = { role: "assistant", content: reply.text ?? null, ...(calls.length > 0 && { tool_calls: calls }) };
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          id,
          object: "chat.completion",
          model: body.model,
          choices: [{ index: 0, message, finish_reason: finish }],
          usage,
        }),
      );
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    let closed = false;
    res.on("close", () => {
      closed = true;
    });
    const delay = reply.chunkDelayMs ?? options.chunkDelayMs ?? 0;
    const send = async (delta: Record<string, unknown>, finishReason: string | null = null, extra: Record<string, unknown> = {}) => {
      if (closed) return;
      const chunk = {
        id,
        object: "chat.completion.chunk",
        model: body.model,
        choices: [{ index: 0, delta, finish_reason: finishReason }],
        ...extra,
      };
      res.write(`data: ${JSON.stringify(chunk)}\n\n`);
      if (delay > 0) await sleep(delay);
    };
    await send({ role: "assistant", content: "" });
    for (const piece of (reply.text ?? "").match(/\S+\s*|\s+/g) ?? []) await send({ content: piece });
    for (const [i, call] of calls.entries()) await send({ tool_calls: [{ index: i, ...call }] });
    await send({}, finish);
    if (!closed) {
      res.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", model: body.model, choices: [], usage })}\n\n`);
      res.end("data: [DONE]\n\n");
    }
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: e instanceof Error ? e.message : String(e) } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    setScript(script) {
      current = script;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
