/** Visible subagents: `stream` carries every subagent's events, framed and tagged with its path,
 * and usage is summed per subagent and per run. */
import { beforeAll, describe, expect, it } from "vitest";
import { type AgentEvent, type Core, FakeChatModel, type ModelRequest, createDeepAgent, loadCore } from "../src/index.js";

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});

const RESEARCHER = "task:researcher/1";
const LEAF = `${RESEARCHER}/task:general-purpose/1`;

/** top → researcher → general-purpose (leaf), each turn with its own token counts. */
function nestedModel() {
  return new FakeChatModel((req: ModelRequest) => {
    const first = req.messages[0]?.content ?? "";
    const fresh = req.messages.length === 1;
    if (first.startsWith("leaf"))
      return fresh
        ? { toolCalls: [{ name: "write_file", args: { file_path: "/leaf.md", content: "x" } }], usage: { inputTokens: 3, outputTokens: 1 } }
        : { content: "leaf done", usage: { inputTokens: 3, outputTokens: 1 } };
    if (first.startsWith("research"))
      return fresh
        ? { toolCalls: [{ name: "task", args: { description: "leaf: write it" } }], usage: { inputTokens: 20, outputTokens: 2 } }
        : { content: "research done", usage: { inputTokens: 20, outputTokens: 2, cachedInputTokens: 5 } };
    return fresh
      ? {
          toolCalls: [{ name: "task", args: { description: "research: dig", subagent_type: "researcher" } }],
          usage: { inputTokens: 100, outputTokens: 10 },
        }
      : { content: "top done", usage: { inputTokens: 100, outputTokens: 10 } };
  });
}

async function events(model: FakeChatModel): Promise<AgentEvent[]> {
  const agent = createDeepAgent(model, {
    core,
    enableMemory: false,
    enableSkills: false,
    subagents: [{ name: "researcher", description: "digs", systemPrompt: "You research." }],
  });
  const out: AgentEvent[] = [];
  for await (const ev of agent.stream({ messages: [{ role: "user", content: "go" }] })) {
    // Text streams in pieces: join consecutive deltas of the same level.
    const last = out.at(-1);
    if (ev.type === "model_delta" && last?.type === "model_delta" && last.path === ev.path) last.text += ev.text;
    else out.push(ev.type === "model_delta" ? { ...ev } : ev);
  }
  return out;
}

/** A compact line per event: type, path and what it is about. */
function line(ev: AgentEvent): string {
  const at = "path" in ev && ev.path !== undefined ? ` @${ev.path}` : "";
  switch (ev.type) {
    case "subagent_start":
      return `start ${ev.name} d${ev.depth}${at}`;
    case "subagent_end":
      return `end ${ev.name} ${ev.stopReason}${at}`;
    case "tool_start":
    case "tool_end":
      return `${ev.type} ${ev.call.name}${at}`;
    case "model_delta":
      return `delta ${ev.text}${at}`;
    default:
      return ev.type;
  }
}

describe("subagent events", () => {
  it("frames nested subagents and tags their events with the path", async () => {
    const evs = await events(nestedModel());
    expect(evs.map(line)).toEqual([
      "tool_start task",
      `start researcher d1 @${RESEARCHER}`,
      `tool_start task @${RESEARCHER}`,
      `start general-purpose d2 @${LEAF}`,
      `tool_start write_file @${LEAF}`,
      `tool_end write_file @${LEAF}`,
      `delta leaf done @${LEAF}`,
      `end general-purpose done @${LEAF}`,
      `tool_end task @${RESEARCHER}`,
      `delta research done @${RESEARCHER}`,
      `end researcher done @${RESEARCHER}`,
      "tool_end task",
      "delta top done",
      "final",
    ]);
    const start = evs.find((e) => e.type === "subagent_start" && e.name === "researcher");
    expect(start).toMatchObject({ task: "research: dig", toolCallId: expect.any(String) });
  });

  it("sums usage per subagent (its own subagents included) and per run", async () => {
    const evs = await events(nestedModel());
    const ends = evs.filter((e): e is Extract<AgentEvent, { type: "subagent_end" }> => e.type === "subagent_end");
    expect(ends.find((e) => e.name === "general-purpose")?.usage).toEqual({ inputTokens: 6, outputTokens: 2 });
    expect(ends.find((e) => e.name === "researcher")?.usage).toEqual({ inputTokens: 46, outputTokens: 6, cachedInputTokens: 5 });
    const final = evs.at(-1);
    expect(final?.type === "final" && final.output.usage).toEqual({ inputTokens: 246, outputTokens: 26, cachedInputTokens: 5 });
  });

  it("keeps parallel siblings apart by path", async () => {
    const model = new FakeChatModel((req: ModelRequest) => {
      const first = req.messages[0]?.content ?? "";
      if (first.startsWith("job")) return `${first} finished`;
      if (req.messages.length === 1)
        return {
          toolCalls: [
            { name: "task", args: { description: "job A" } },
            { name: "task", args: { description: "job B" } },
          ],
        };
      return "both done";
    });
    const evs = await events(model);
    // Siblings' text interleaves; joined by path it is each one's answer.
    const text = new Map<string, string>();
    for (const e of evs) if (e.type === "model_delta" && e.path !== undefined) text.set(e.path, (text.get(e.path) ?? "") + e.text);
    expect(Object.fromEntries(text)).toEqual({ "task:general-purpose/1": "job A finished", "task:general-purpose/2": "job B finished" });
    const starts = evs.filter((e) => e.type === "subagent_start").map((e) => (e.type === "subagent_start" ? [e.path, e.task] : []));
    expect(starts).toEqual([
      ["task:general-purpose/1", "job A"],
      ["task:general-purpose/2", "job B"],
    ]);
  });

  it("ends a subagent that failed with subagent_end error", async () => {
    const model = new FakeChatModel((req: ModelRequest) => {
      const first = req.messages[0]?.content ?? "";
      if (first.startsWith("doomed")) throw new Error("the provider fell over");
      if (req.messages.length === 1) return { toolCalls: [{ name: "task", args: { description: "doomed job" } }] };
      return `parent saw: ${req.messages.at(-1)?.content}`;
    });
    const evs = await events(model);
    expect(evs.map(line)).toContain("end general-purpose error @task:general-purpose/1");
    const final = evs.at(-1);
    expect(final?.type === "final" && final.output.messages.at(-1)?.content).toMatch(/parent saw: Error: task failed/);
  });
});

describe("the task tool's subagent_type", () => {
  it("is an enum of the configured subagents in the JSON Schema, and an invented name is refused", async () => {
    const model = new FakeChatModel((req: ModelRequest) =>
      req.messages.length === 1
        ? { toolCalls: [{ name: "task", args: { description: "dig", subagent_type: "archaeologist" } }] }
        : `parent saw: ${req.messages.at(-1)?.content}`,
    );
    const agent = createDeepAgent(model, {
      core,
      subagents: [
        { name: "researcher", description: "digs", systemPrompt: "You research." },
        { name: "writer", description: "writes", systemPrompt: "You write." },
      ],
    });
    const out = await agent.invoke({ messages: [{ role: "user", content: "go" }] });
    const task = model.requests[0]?.tools.find((t) => t.name === "task");
    const properties = task?.parameters.properties as Record<string, Record<string, unknown>>;
    expect(properties.subagent_type).toMatchObject({ enum: ["general-purpose", "researcher", "writer"], default: "general-purpose" });
    // Refused by the schema before any subagent starts: the model only gets the error.
    expect(model.requests).toHaveLength(2);
    expect(out.messages.at(-1)?.content).toMatch(
      /parent saw: Error: invalid arguments for task: subagent_type: .*"general-purpose"\|"researcher"\|"writer"/,
    );
  });
});
