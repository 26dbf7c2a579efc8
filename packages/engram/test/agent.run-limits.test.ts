/** The run's bounds hold for its whole tree of subagents: one model-call budget and one
 * concurrency limit, shared by every level however wide the `task` fan-out. */
import { describe, expect, it } from "vitest";
import { FakeChatModel, type ModelRequest, createDeepAgent } from "../src/index.js";
import { core, user } from "./fixtures/session.js";

/** Model calls in flight now, and the most there ever were. */
interface Concurrency {
  active: number;
  peak: number;
}

/**
 * A fake model whose every call stays in flight for a moment (so that calls made side by side
 * overlap) and records how many are in flight. The top level ("go") and each level below
 * delegate `width` tasks until `depth`; the deepest subagents answer; a level whose tasks
 * answered answers too.
 */
function fanOutModel(width: number, depth: number): { model: FakeChatModel; seen: Concurrency } {
  const seen: Concurrency = { active: 0, peak: 0 };
  const levelOf = (req: ModelRequest) => {
    const first = req.messages[0]?.content ?? "";
    return first === "go" ? 0 : Number(first.split(" ")[1]);
  };
  const model = new FakeChatModel(async (req) => {
    seen.active++;
    seen.peak = Math.max(seen.peak, seen.active);
    try {
      await new Promise((resolve) => setTimeout(resolve, 3));
      const level = levelOf(req);
      if (level >= depth || req.messages.some((m) => m.role === "tool")) return `answer of level ${level}`;
      return {
        toolCalls: Array.from({ length: width }, (_, i) => ({ name: "task", args: { description: `level ${level + 1} part ${i}` } })),
      };
    } finally {
      seen.active--;
    }
  });
  return { model, seen };
}

describe("the model-call budget of a run with concurrent subagents", () => {
  it("is never overspent: every call is reserved before it is made", async () => {
    // One top call, then eight subagents asking at once for the four calls left.
    const { model } = fanOutModel(8, 1);
    const out = await createDeepAgent(model, { core, maxModelCalls: 5 }).invoke(user("go"));
    expect(model.requests.length).toBe(5);
    expect(out.stopReason).toBe("max_model_calls");
  });

  it("lets a run within budget finish", async () => {
    const { model } = fanOutModel(3, 1);
    const out = await createDeepAgent(model, { core, maxModelCalls: 5 }).invoke(user("go"));
    // 1 + 3 subagents + the top's answer.
    expect(model.requests.length).toBe(5);
    expect(out.stopReason).toBe("done");
  });
});

describe("maxParallelToolCalls across nested subagents", () => {
  it("bounds the model calls in flight in the whole run tree, not per level", async () => {
    // 8 subagents each delegating 8: 64 model calls become ready at once.
    const { model, seen } = fanOutModel(8, 2);
    const out = await createDeepAgent(model, { core, maxParallelToolCalls: 8 }).invoke(user("go"));
    expect(out.stopReason).toBe("done");
    // top + 8 + 64 leaves + 8 answers + top's answer.
    expect(model.requests.length).toBe(82);
    expect(seen.peak).toBeLessThanOrEqual(8);
    expect(seen.peak).toBeGreaterThan(1);
  });

  it("never deadlocks: a task call frees its slot while its subagent runs (limit 1, three levels)", async () => {
    const { model, seen } = fanOutModel(2, 2);
    const out = await createDeepAgent(model, { core, maxParallelToolCalls: 1 }).invoke(user("go"));
    expect(out.stopReason).toBe("done");
    expect(model.requests.length).toBe(1 + 2 + 4 + 2 + 1);
    expect(seen.peak).toBe(1);
  });
});

describe("summaries under the run's concurrency limit", () => {
  it("counts a summary's model call as one of the calls in flight", async () => {
    const seen: Concurrency = { active: 0, peak: 0 };
    // Two subagents; each lists a directory, and its second call is summarised first
    // (maxInputTokens 1: always over budget). A summary request has no tools.
    const model = new FakeChatModel(async (req) => {
      seen.active++;
      seen.peak = Math.max(seen.peak, seen.active);
      try {
        await new Promise((resolve) => setTimeout(resolve, 3));
        if (req.tools.length === 0) return `summary of ${req.messages[0]?.content}`;
        if (req.messages.some((m) => m.role === "tool")) return "done";
        if (req.messages.some((m) => m.content.includes("subtask"))) return { toolCalls: [{ name: "ls", args: { path: "/" } }] };
        return { toolCalls: [1, 2].map((i) => ({ name: "task", args: { description: `subtask ${i}` } })) };
      } finally {
        seen.active--;
      }
    });
    const out = await createDeepAgent(model, { core, maxParallelToolCalls: 1, maxInputTokens: 1, summarizationKeepMessages: 1 }).invoke(
      user("go"),
    );
    expect(out.stopReason).toBe("done");
    const summaries = model.requests.filter((r) => r.tools.length === 0).length;
    // Each subagent's second call, and the top's.
    expect(summaries).toBe(3);
    expect(seen.peak).toBe(1);
  });
});
