/** How runs end and what bounds them: stopReason, one model-call budget across subagents,
 * parallel tool cap, model settings, truncated answers, subagent memory. */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type AgentEvent,
  type ChatModel,
  FakeChatModel,
  type ModelRequest,
  type ModelStreamEvent,
  StateBackend,
  type Tool,
  createDeepAgent,
} from "../src/index.js";
import { core, user } from "./fixtures/session.js";

/** A model whose turns carry a finish reason (the contract's `finishReason`). */
function reasonModel(turns: [string, string][]): ChatModel & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return {
    id: "reasons",
    requests,
    async invoke() {
      throw new Error("stream only");
    },
    async *stream(request: ModelRequest): AsyncIterable<ModelStreamEvent> {
      requests.push(request);
      const turn = turns[requests.length - 1];
      if (!turn) throw new Error("no more turns");
      yield { type: "text_delta", text: turn[0] };
      yield { type: "finish", message: { role: "assistant", content: turn[0] }, finishReason: turn[1] } as ModelStreamEvent;
    },
  };
}

async function collect(stream: AsyncGenerator<AgentEvent, void>): Promise<{ events: AgentEvent[]; error?: unknown }> {
  const events: AgentEvent[] = [];
  try {
    for await (const ev of stream) events.push(ev);
  } catch (error) {
    return { events, error };
  }
  return { events };
}

describe("stopReason", () => {
  it("is done for a normal answer", async () => {
    const out = await createDeepAgent(new FakeChatModel(["hi"]), { core }).invoke(user("hello"));
    expect(out.stopReason).toBe("done");
  });

  it("is cancelled when the signal fires: a final event, then the error", async () => {
    const controller = new AbortController();
    const model = new FakeChatModel(() => {
      controller.abort();
      return { toolCalls: [{ name: "ls", args: { path: "/" } }] };
    });
    const { events, error } = await collect(createDeepAgent(model, { core }).stream(user("go"), { signal: controller.signal }));
    expect(error).toBeDefined();
    const final = events.at(-1);
    expect(final?.type === "final" && final.stopReason).toBe("cancelled");
  });
});

describe("one model-call budget per run", () => {
  it("covers every nested subagent and stops the run with max_model_calls", async () => {
    // Every level delegates again and again: unbounded without a shared budget.
    const model = new FakeChatModel((req) => ({ toolCalls: [{ name: "task", args: { description: `deeper ${req.messages.length}` } }] }));
    const out = await createDeepAgent(model, { core, maxModelCalls: 7, maxSubagentDepth: 3 }).invoke(user("go"));
    expect(model.requests.length).toBe(7);
    expect(out.stopReason).toBe("max_model_calls");
  });
});

describe("maxParallelToolCalls", () => {
  const probe = () => {
    const seen = { active: 0, max: 0 };
    const tool = {
      name: "slow",
      description: "waits a moment",
      schema: z.object({}),
      async run() {
        seen.active++;
        seen.max = Math.max(seen.max, seen.active);
        await new Promise((r) => setTimeout(r, 2));
        seen.active--;
        return { content: "ok" };
      },
    } as unknown as Tool<never>;
    return { seen, tool };
  };
  const calls = (n: number) => ({ toolCalls: Array.from({ length: n }, () => ({ name: "slow", args: {} })) });

  it("caps concurrently executed calls of a step", async () => {
    const { seen, tool } = probe();
    const out = await createDeepAgent(new FakeChatModel([calls(6), "done"]), { core, tools: [tool], maxParallelToolCalls: 2 }).invoke(
      user("go"),
    );
    expect(seen.max).toBe(2);
    expect(out.messages.filter((m) => m.role === "tool").length).toBe(6);
  });

  it("defaults to 8", async () => {
    const { seen, tool } = probe();
    await createDeepAgent(new FakeChatModel([calls(12), "done"]), { core, tools: [tool] }).invoke(user("go"));
    expect(seen.max).toBe(8);
  });
});

describe("modelSettings", () => {
  it("goes into every request, subagents' included", async () => {
    const model = new FakeChatModel((req) => {
      if (req.messages[0]?.content === "go" && req.messages.length === 1)
        return { toolCalls: [{ name: "task", args: { description: "child" } }] };
      return "done";
    });
    const settings = { temperature: 0.1, maxOutputTokens: 300, seed: 3 };
    await createDeepAgent(model, { core, modelSettings: settings }).invoke(user("go"));
    expect(model.requests.length).toBe(3);
    for (const r of model.requests) expect((r as ModelRequest & { settings?: unknown }).settings).toEqual(settings);
  });
});

describe("onTruncated", () => {
  it("continues once and joins the answer", async () => {
    const model = reasonModel([
      ["Hello wor", "length"],
      ["ld.", "stop"],
    ]);
    const out = await createDeepAgent(model, { core }).invoke(user("greet"));
    expect(out.messages.at(-1)?.content).toBe("Hello world.");
    expect(out.stopReason).toBe("done");
    expect(model.requests[1]?.messages.at(-2)).toEqual({ role: "assistant", content: "Hello wor" });
    expect(model.requests[1]?.messages.at(-1)?.content).toMatch(/cut off at the output limit/);
  });

  it("fails with ModelError truncated when the continuation is cut off too", async () => {
    const model = reasonModel([
      ["a", "length"],
      ["b", "length"],
    ]);
    const { events, error } = await collect(createDeepAgent(model, { core }).stream(user("x")));
    expect(error).toMatchObject({ name: "ModelError", code: "truncated" });
    const final = events.at(-1);
    expect(final?.type === "final" && final.stopReason).toBe("truncated");
  });

  it('"error" fails at once', async () => {
    const model = reasonModel([["a", "length"]]);
    await expect(createDeepAgent(model, { core, onTruncated: "error" }).invoke(user("x"))).rejects.toMatchObject({ code: "truncated" });
    expect(model.requests.length).toBe(1);
  });
});

describe("subagent memory", () => {
  const setup = async (subagentMemory?: boolean) => {
    const backend = new StateBackend({ core });
    await backend.write("/AGENTS.md", "- project uses pnpm\n");
    const model = new FakeChatModel((req) => {
      if (req.messages[0]?.content === "ask" && req.messages.length === 1)
        return { toolCalls: [{ name: "task", args: { description: "child: what do you know about me?" } }] };
      return "answer";
    });
    const agent = createDeepAgent(model, {
      core,
      backend: () => backend,
      memorySources: ["/AGENTS.md"],
      // Extraction is debounced past the test (its timer does not hold the process).
      longTermMemory: { debounceMs: 300_000 },
      ...(subagentMemory !== undefined && { subagentMemory }),
    });
    await agent.longTermMemory?.addFact("alice", undefined, { content: "Drinks green tea" });
    await agent.invoke(user("ask"), { threadId: "m", userId: "alice" });
    const child = model.requests.find((r) => r.messages[0]?.content.startsWith("child"));
    const r = child as ModelRequest & { systemContext?: string };
    return `${r?.system ?? ""}\n${r?.systemContext ?? ""}`;
  };

  it("subagents see the user's long-term facts and AGENTS.md by default", async () => {
    const seen = await setup();
    expect(seen).toContain("Drinks green tea");
    expect(seen).toContain("project uses pnpm");
  });

  it("subagentMemory: false keeps both out", async () => {
    const seen = await setup(false);
    expect(seen).not.toContain("Drinks green tea");
    expect(seen).not.toContain("project uses pnpm");
  });
});
