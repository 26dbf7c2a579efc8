/**
 * Agent-loop overhead per step: the same scripted turn (ten `ls` calls, then an answer) through
 * our agent and through `deepagents`, both with a scripted model and an in-memory backend.
 */
import { createDeepAgent as createPeerAgent } from "deepagents";
import { FakeToolCallingModel } from "langchain";
import { type Core, FakeChatModel, createDeepAgent } from "engram";

export const STEPS = 10;

/** One run of the turn; resolves to the number of tool results, for verification. */
export type Turn = () => Promise<number>;

export function oursTurn(core: Core): Turn {
  const script = [...Array.from({ length: STEPS }, (_, i) => ({ toolCalls: [{ id: `c${i}`, name: "ls", args: { path: "/" } }] })), "done"];
  const model = new FakeChatModel((_req, i) => script[i % script.length] as never);
  const agent = createDeepAgent(model, { core, enableSubagents: false });
  return async () => {
    const out = await agent.invoke({ messages: [{ role: "user", content: "go" }] });
    return out.messages.filter((m) => m.role === "tool").length;
  };
}

export function peerTurn(): Turn {
  const toolCalls = [...Array.from({ length: STEPS }, (_, i) => [{ id: `c${i}`, name: "ls", args: { path: "/" } }]), []];
  const model = new FakeToolCallingModel({ toolCalls });
  const agent = createPeerAgent({ model: model as never });
  return async () => {
    const out = (await agent.invoke({ messages: [{ role: "user", content: "go" }] } as never)) as {
      messages: { type?: string; _getType?: () => string }[];
    };
    return out.messages.filter((m) => (m._getType?.() ?? m.type) === "tool").length;
  };
}
