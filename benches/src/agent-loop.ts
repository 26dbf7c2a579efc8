/**
 * Agent-loop overhead per step: the same scripted turn (ten `ls` calls, then an answer) through
 * our agent and through `deepagents`, both with a scripted model and the corpus (10,000 files at
 * size medium) as the thread's in-memory file state.
 *
 * Ours: every turn runs on one thread whose `StateBackend` holds the corpus (copied once from a
 * template, then resident between runs) and is checkpointed at the end of each run by the
 * default in-memory checkpointer — messages, data and the files (incrementally: an unchanged
 * table adds nothing). Each turn starts a new conversation on that thread (a middleware clears
 * the previous turn's messages), so every sample does the same work; the peer gets the corpus
 * as its `files` state on every invoke, as its API takes a thread's files.
 */
import { createDeepAgent as createPeerAgent } from "deepagents";
import { FakeToolCallingModel } from "langchain";
import {
  type ChatModel,
  type Core,
  type FinishReason,
  type Message,
  type ModelRequest,
  type ModelResult,
  type ModelStreamEvent,
  StateBackend,
  createDeepAgent,
} from "engram";
import type { Corpus } from "./corpus.js";

export const STEPS = 10;

/** One run of the turn; resolves to the number of tool results, for verification. */
export type Turn = () => Promise<number>;

/**
 * The scripted model of our side: like the peer's `FakeToolCallingModel`, it serves the script
 * in a loop and keeps nothing (engram's `FakeChatModel` deep-copies every request it receives
 * for tests to inspect — a cost of the test model, not of the loop).
 */
class ScriptedModel implements ChatModel {
  readonly id = "scripted";
  readonly #script: Message[] = [
    ...Array.from({ length: STEPS }, (_, i) => ({
      role: "assistant" as const,
      content: "",
      toolCalls: [{ id: `c${i}`, name: "ls", args: { path: "/" } }],
    })),
    { role: "assistant", content: "done" },
  ];
  #next = 0;

  #turn(): { message: Message; finishReason: FinishReason } {
    const turn = this.#script[this.#next++ % this.#script.length] as Message;
    const message: Message = turn.toolCalls
      ? { ...turn, toolCalls: turn.toolCalls.map((c) => ({ ...c, args: { ...c.args } })) }
      : { ...turn };
    return { message, finishReason: message.toolCalls ? "tool_calls" : "stop" };
  }

  async invoke(_request: ModelRequest): Promise<ModelResult> {
    return this.#turn();
  }

  async *stream(_request: ModelRequest): AsyncGenerator<ModelStreamEvent> {
    const { message, finishReason } = this.#turn();
    if (message.content) yield { type: "text_delta", text: message.content };
    for (const call of message.toolCalls ?? []) yield { type: "tool_call", call };
    yield { type: "finish", message, finishReason };
  }
}

export async function oursTurn(core: Core, corpus: Corpus): Promise<Turn> {
  const model = new ScriptedModel();
  const template = new StateBackend({ core });
  const seeded = await template.writeMany(corpus.files.map((f) => [f.path, f.content] as const));
  if (seeded.error) throw new Error(`seeding the thread files failed: ${seeded.error.message}`);
  const agent = createDeepAgent(model, {
    core,
    enableSubagents: false,
    backend: template,
    // A new conversation per turn on the same thread (and files): the input message only.
    middleware: [{ name: "new-conversation", beforeAgent: (ctx) => void ctx.state.messages.splice(0, ctx.state.messages.length - 1) }],
  });
  return async () => {
    const out = await agent.invoke({ messages: [{ role: "user", content: "go" }] }, { threadId: "bench-thread" });
    return out.messages.filter((m) => m.role === "tool").length;
  };
}

export function peerTurn(corpus: Corpus): Turn {
  const toolCalls = [...Array.from({ length: STEPS }, (_, i) => [{ id: `c${i}`, name: "ls", args: { path: "/" } }]), []];
  const model = new FakeToolCallingModel({ toolCalls });
  const agent = createPeerAgent({ model: model as never });
  const now = new Date().toISOString();
  const files: Record<string, { content: string; mimeType: string; created_at: string; modified_at: string }> = {};
  for (const f of corpus.files) files[f.path] = { content: f.content, mimeType: "text/plain", created_at: now, modified_at: now };
  return async () => {
    const out = (await agent.invoke({ messages: [{ role: "user", content: "go" }], files } as never)) as {
      messages: { type?: string; _getType?: () => string }[];
    };
    return out.messages.filter((m) => (m._getType?.() ?? m.type) === "tool").length;
  };
}
