/** The `tracing` option: an agent run with a subagent, recorded with the SDK's in-memory exporter. */
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { beforeAll, describe, expect, it } from "vitest";
import { ConfigError, type Core, FakeChatModel, type ModelRequest, createDeepAgent, loadCore } from "../src/index.js";
import { AgentTracing } from "../src/tracing/index.js";
import { useInMemoryTracing } from "./fixtures/otel.js";

const { exporter, provider } = useInMemoryTracing();
let core: Core;

beforeAll(async () => {
  core = await loadCore();
});

/** The span tree as indented names, children in start order. */
function tree(spans: ReadableSpan[]): string[] {
  const children = new Map<string | undefined, ReadableSpan[]>();
  const ids = new Set(spans.map((s) => s.spanContext().spanId));
  for (const s of spans) {
    const parent = s.parentSpanContext?.spanId;
    const key = parent !== undefined && ids.has(parent) ? parent : undefined;
    children.set(key, [...(children.get(key) ?? []), s]);
  }
  const out: string[] = [];
  const walk = (parent: string | undefined, depth: number) => {
    const list = [...(children.get(parent) ?? [])].sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
    for (const s of list) {
      out.push(`${"  ".repeat(depth)}${s.name}`);
      walk(s.spanContext().spanId, depth + 1);
    }
  };
  walk(undefined, 0);
  return out;
}

/** Parent: delegates to a subagent, then answers. Child: writes a file, then answers. */
function delegatingModel() {
  return new FakeChatModel((req: ModelRequest) => {
    const first = req.messages[0]?.content ?? "";
    const last = req.messages.at(-1);
    if (first.startsWith("child")) {
      if (req.messages.length === 1) return { toolCalls: [{ name: "write_file", args: { file_path: "/r.md", content: "x" } }] };
      return "child done";
    }
    if (last?.role === "user") return { toolCalls: [{ name: "task", args: { description: "child: write /r.md" } }] };
    return "parent done";
  });
}

describe("tracing option", () => {
  it("nests the subagent's run under the task call: one trace, invoke_agent → chat / execute_tool → invoke_agent → …", async () => {
    const tracing = await AgentTracing.create({ tracer: provider.getTracer("test") });
    const agent = createDeepAgent(delegatingModel(), { core, tracing, enableMemory: false, enableSkills: false });
    const out = await agent.invoke({ messages: [{ role: "user", content: "go" }] }, { threadId: "traced" });
    expect(out.messages.at(-1)?.content).toBe("parent done");
    const spans = exporter.getFinishedSpans();
    expect(tree(spans)).toEqual([
      "invoke_agent agent",
      "  chat fake",
      "  execute_tool task",
      "    invoke_agent general-purpose",
      "      chat fake",
      "      execute_tool write_file",
      "        engram.backend.write",
      "      chat fake",
      "  chat fake",
    ]);
    expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);
    const top = spans.find((s) => s.name === "invoke_agent agent") as ReadableSpan;
    expect(top.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.conversation.id": "traced",
      "engram.agent.depth": 0,
      "engram.stop_reason": "done",
    });
    const child = spans.find((s) => s.name === "invoke_agent general-purpose") as ReadableSpan;
    expect(child.attributes["engram.agent.depth"]).toBe(1);
  });

  it("records memory and skills reads as backend spans inside the run", async () => {
    const tracing = await AgentTracing.create({ tracer: provider.getTracer("test") });
    const agent = createDeepAgent(new FakeChatModel(["hi"]), { core, tracing, memorySources: ["/AGENTS.md"], enableSubagents: false });
    await agent.invoke({ messages: [{ role: "user", content: "go" }] });
    const names = tree(exporter.getFinishedSpans());
    expect(names[0]).toBe("invoke_agent agent");
    expect(names).toContain("  engram.backend.stat");
    expect(names).toContain("  engram.backend.ls");
  });

  it("rejects something that is not an AgentTracing", () => {
    expect(() => createDeepAgent(new FakeChatModel(["x"]), { tracing: true as never })).toThrow(ConfigError);
  });
});
