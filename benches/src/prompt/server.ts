/**
 * One scripted chat-completions server for every framework: it reads nothing but the request,
 * so Engram's OpenAI-compatible model, the AI SDK's OpenAI provider and LangChain's `ChatOpenAI`
 * (deepagents) all get the same turns, and it keeps every request body as it arrived.
 *
 * The turn is chosen from the conversation: the number of tool results since the last user
 * message is the step; the script's step-th call is answered, then a final text. A request with
 * a `response_format` (long-term memory's extraction) or without tools (a summary) is answered
 * with a minimal JSON object or a short text and marked as not an agent turn.
 */
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** A tool call of the script: the tool and its arguments. */
export interface ScriptStep {
  name: string;
  args: Record<string, unknown>;
}

/** One request as the server received it. */
export interface Recorded {
  /** The parsed JSON body. */
  body: WireBody;
  /** An agent turn (tools offered, no JSON answer asked for). */
  turn: boolean;
}

export interface WireMessage {
  role: string;
  content?: unknown;
  tool_calls?: { id: string; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

export interface WireBody {
  messages: WireMessage[];
  tools?: { type: string; function: { name: string; description?: string; parameters?: unknown } }[];
  stream?: boolean;
  response_format?: { type: string; json_schema?: { schema?: Record<string, unknown> } };
}

export interface ScriptedServer {
  baseURL: string;
  /** Every request since the last {@link ScriptedServer.clear}, in order. */
  readonly requests: Recorded[];
  clear(): void;
  close(): Promise<void>;
}

/** The smallest value a JSON Schema accepts (what an extraction call needs to parse). */
function minimal(schema: unknown): unknown {
  const s = (schema ?? {}) as Record<string, unknown>;
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  if (type === "object" || s.properties) {
    const out: Record<string, unknown> = {};
    const props = (s.properties ?? {}) as Record<string, unknown>;
    for (const key of (s.required as string[] | undefined) ?? []) out[key] = minimal(props[key]);
    return out;
  }
  if (type === "array") return [];
  if (type === "number" || type === "integer") return 0;
  if (type === "boolean") return false;
  if (Array.isArray(s.enum)) return s.enum[0];
  return "";
}

function since(messages: WireMessage[]): number {
  let tools = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as WireMessage;
    if (m.role === "user") break;
    if (m.role === "tool") tools++;
  }
  return tools;
}

type Reply = { content: string; call?: { id: string; name: string; arguments: string } };

function reply(body: WireBody, script: readonly ScriptStep[], answer: string): { reply: Reply; turn: boolean } {
  if (body.response_format) {
    const schema = body.response_format.json_schema?.schema;
    return { reply: { content: JSON.stringify(minimal(schema)) }, turn: false };
  }
  if (!body.tools || body.tools.length === 0)
    return { reply: { content: "Summary: the user asked for notes; they were written and checked." }, turn: false };
  const step = since(body.messages);
  const next = script[step];
  if (!next) return { reply: { content: answer }, turn: true };
  // The ids depend on the conversation only, so every framework sees the same ones.
  const users = body.messages.filter((m) => m.role === "user").length;
  return {
    reply: { content: "", call: { id: `call_${users}_${step}`, name: next.name, arguments: JSON.stringify(next.args) } },
    turn: true,
  };
}

function send(res: ServerResponse, body: WireBody, r: Reply, n: number): void {
  // A response id of its own: LangGraph merges messages that share one.
  const id = `cmpl-${n}`;
  const finish = r.call ? "tool_calls" : "stop";
  const usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  if (!body.stream) {
    const message: Record<string, unknown> = { role: "assistant", content: r.content };
    if (r.call) message.tool_calls = [{ id: r.call.id, type: "function", function: { name: r.call.name, arguments: r.call.arguments } }];
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        id,
        object: "chat.completion",
        created: 0,
        model: "scripted",
        choices: [{ index: 0, message, finish_reason: finish }],
        usage,
      }),
    );
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream" });
  const chunk = (delta: Record<string, unknown>, finishReason: string | null) =>
    `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: 0, model: "scripted", choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`;
  let out = chunk({ role: "assistant", content: r.content }, null);
  if (r.call) {
    out += chunk(
      { tool_calls: [{ index: 0, id: r.call.id, type: "function", function: { name: r.call.name, arguments: r.call.arguments } }] },
      null,
    );
  }
  out += chunk({}, finish);
  out += `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: 0, model: "scripted", choices: [], usage })}\n\n`;
  res.end(`${out}data: [DONE]\n\n`);
}

/** Starts the server on 127.0.0.1 (a free port); `script` then `answer` is every run's turn. */
export async function startScriptedServer(script: readonly ScriptStep[], answer: string): Promise<ScriptedServer> {
  const requests: Recorded[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const parts: Buffer[] = [];
    req.on("data", (d: Buffer) => parts.push(d));
    req.on("end", () => {
      let body: WireBody;
      try {
        body = JSON.parse(Buffer.concat(parts).toString("utf8")) as WireBody;
      } catch {
        res.writeHead(400).end();
        return;
      }
      const r = reply(body, script, answer);
      requests.push({ body, turn: r.turn });
      send(res, body, r.reply, requests.length);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    clear: () => {
      requests.length = 0;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
