/** OpenTelemetry spans (GenAI conventions) recorded with the SDK's in-memory exporter. */
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { beforeAll, describe, expect, it } from "vitest";
import { type Core, StateBackend, loadCore } from "../src/index.js";
import { AgentTracing } from "../src/tracing/index.js";
import { useInMemoryTracing } from "./fixtures/otel.js";

const { exporter, provider } = useInMemoryTracing();
let core: Core;

beforeAll(async () => {
  core = await loadCore();
});

const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;
const byName = (name: string) => exporter.getFinishedSpans().find((s) => s.name === name);

describe("AgentTracing", () => {
  it("nests model, tool and backend spans under the run, with GenAI attributes", async () => {
    const tracing = await AgentTracing.create({ tracer: provider.getTracer("test") });
    const mw = tracing.middleware("fake-model");
    const backend = tracing.backend(new StateBackend({ core }));
    const ctx = {} as never;
    await tracing.run({ name: "main", threadId: "t1", depth: 0 }, async () => {
      await mw.wrapModelCall!(
        { system: "s", messages: [{ role: "user", content: "hi" }], tools: [] },
        async () => ({
          message: { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "write_file", args: {} }] },
          usage: { inputTokens: 12, outputTokens: 3 },
          finishReason: "tool_calls",
        }),
        ctx,
      );
      await mw.wrapToolCall!(
        { id: "c1", name: "write_file", args: {} },
        async () => {
          await backend.write("/a.md", "x");
          return { content: "ok" };
        },
        ctx,
      );
      await backend.read("/missing.md");
    });
    const run = byName("invoke_agent main")!;
    const chat = byName("chat fake-model")!;
    const tool = byName("execute_tool write_file")!;
    const write = byName("engram.backend.write")!;
    const read = byName("engram.backend.read")!;
    expect(run.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.conversation.id": "t1",
      "gen_ai.agent.name": "main",
    });
    expect(chat.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.request.model": "fake-model",
      "gen_ai.usage.input_tokens": 12,
      "gen_ai.usage.output_tokens": 3,
      "gen_ai.response.finish_reasons": ["tool_calls"],
    });
    expect(tool.attributes).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "write_file",
      "gen_ai.tool.call.id": "c1",
    });
    expect(parentOf(chat)).toBe(run.spanContext().spanId);
    expect(parentOf(tool)).toBe(run.spanContext().spanId);
    expect(parentOf(write)).toBe(tool.spanContext().spanId);
    expect(read.attributes["engram.error.code"]).toBe("file_not_found");
    expect(read.status.code).toBe(2);
    expect(new Set(exporter.getFinishedSpans().map((s) => s.spanContext().traceId)).size).toBe(1);
  });

  it("marks a failed model call and still ends every span", async () => {
    const tracing = await AgentTracing.create({ tracer: provider.getTracer("test") });
    const mw = tracing.middleware("m");
    await expect(
      tracing.run({ name: "main", threadId: "t2", depth: 0 }, () =>
        mw.wrapModelCall!({ system: "", messages: [], tools: [] }, async () => Promise.reject(new Error("rate limited")), {} as never),
      ),
    ).rejects.toThrow("rate limited");
    const spans = exporter.getFinishedSpans();
    expect(spans.map((s) => s.name).sort()).toEqual(["chat m", "invoke_agent main"]);
    expect(spans.every((s) => s.status.code === 2)).toBe(true);
  });

  it("leaves backends untouched when backend spans are off", async () => {
    const tracing = await AgentTracing.create({ tracer: provider.getTracer("test"), backendSpans: false });
    const b = new StateBackend({ core });
    expect(tracing.backend(b)).toBe(b);
  });
});
