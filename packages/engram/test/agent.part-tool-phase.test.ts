/** The tool phase of the run loop on its own (`agent/tool-phase.ts`): calls run in slots of the
 * run's limit with their step marks and events, results join the thread in the model's order,
 * a suspended subagent keeps the phase, and a dead run's open phase is sorted and finished. */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { RepeatedFailures } from "../src/agent/repeats.js";
import { ConcurrencyLimit } from "../src/agent/run-limits.js";
import type { LevelState, Suspension } from "../src/agent/runtime.js";
import type { StepMark } from "../src/agent/step-log.js";
import {
  PENDING_TOOLS,
  type PendingTools,
  type ToolPhase,
  callTool,
  closeToolPhase,
  finishOpenPhase,
  runToolCalls,
  sortOpenCalls,
} from "../src/agent/tool-phase.js";
import type { AgentEvent } from "../src/agent/types.js";
import type { Message, ToolCall } from "../src/models/types.js";
import type { RunContext, Tool, ToolResult } from "../src/tools/types.js";

const call = (id: string, name = "echo", args: Record<string, unknown> = {}): ToolCall => ({ id, name, args });

/** A phase over `run` (the `wrapToolCall` chain's stand-in), recording events and step marks. */
function phaseOf(run: (call: ToolCall) => Promise<ToolResult>, options: { slots?: number; repeats?: number } = {}) {
  const state: LevelState = { messages: [], data: {} };
  const events: AgentEvent[] = [];
  const marks: StepMark[] = [];
  const phase: ToolPhase = {
    state,
    runTool: run,
    limit: new ConcurrencyLimit(options.slots ?? 4),
    events: { push: (e) => events.push(e) },
    repeats: new RepeatedFailures(options.repeats ?? 3),
    suspended: new Map(),
    step: async (_s, mark) => {
      if (mark) marks.push(mark);
    },
  };
  return { phase, state, events, marks };
}

const suspension = (name: string, callIds: string[]): Suspension => ({
  name,
  depth: 1,
  path: `task:${name}/1`,
  state: {
    messages: [],
    data: {},
    interrupt: { toolCalls: callIds.map((id) => ({ id, name: "write_file", args: {}, allow: ["approve", "reject"] })) },
  },
});

describe("tool phase", () => {
  it("runs every call with a started mark before and a done mark after, events around it", async () => {
    const { phase, events, marks } = phaseOf(async (c) => ({ content: `ran ${c.id}` }));
    const results = await runToolCalls(phase, [call("a"), call("b")]);
    expect([...results.keys()].sort()).toEqual(["a", "b"]);
    expect(results.get("a")).toEqual({ role: "tool", toolCallId: "a", content: "ran a" });
    for (const id of ["a", "b"]) {
      const started = marks.findIndex((m) => m.started === id);
      const done = marks.findIndex((m) => m.done?.[0] === id);
      expect(started).toBeGreaterThanOrEqual(0);
      expect(done).toBeGreaterThan(started);
    }
    expect(events.slice(0, 2).map((e) => e.type)).toEqual(["tool_start", "tool_start"]);
    expect(events.filter((e) => e.type === "tool_end")).toHaveLength(2);
  });

  it("holds to the run's concurrency limit", async () => {
    let running = 0;
    let most = 0;
    const { phase } = phaseOf(
      async () => {
        running++;
        most = Math.max(most, running);
        await new Promise((r) => setTimeout(r, 5));
        running--;
        return { content: "ok" };
      },
      { slots: 2 },
    );
    await runToolCalls(
      phase,
      ["a", "b", "c", "d", "e"].map((id) => call(id)),
    );
    expect(most).toBe(2);
  });

  it("turns a throwing tool into an error result, and counts repeated failures in the model's order", async () => {
    const { phase, events } = phaseOf(
      async () => {
        throw new Error("boom");
      },
      { repeats: 2 },
    );
    const first = await runToolCalls(phase, [call("a", "echo", { x: 1 })]);
    expect(first.get("a")?.content).toBe("Error: echo failed: boom");
    const second = await runToolCalls(phase, [call("b", "echo", { x: 1 })]);
    expect(second.get("b")?.content).toMatch(/^Error: echo failed: boom\n\nThis exact call .* has now failed 2 times in a row/s);
    expect(phase.repeats.exhausted(call("c", "echo", { x: 1 }))).toBe(true);
    expect(events.filter((e) => e.type === "tool_end" && e.isError)).toHaveLength(2);
  });

  it("closes a phase by answering the calls in the model's order, whatever order they finished in", async () => {
    const { phase, state } = phaseOf(async () => ({ content: "x" }));
    const results = new Map<string, Message>([
      ["b", { role: "tool", toolCallId: "b", content: "B" }],
      ["a", { role: "tool", toolCallId: "a", content: "A" }],
    ]);
    expect(closeToolPhase(phase, [call("a"), call("b")], results)).toBe(false);
    expect(state.messages.map((m) => m.content)).toEqual(["A", "B"]);
    expect(state.interrupt).toBeUndefined();
  });

  it("keeps a phase whose subagent stopped for review, with the subagent's calls qualified by the task call", async () => {
    const { phase, state } = phaseOf(async () => ({ content: "x" }));
    phase.suspended.set("t1", suspension("researcher", ["w1"]));
    const done = new Map<string, Message>([["a", { role: "tool", toolCallId: "a", content: "A" }]]);
    expect(closeToolPhase(phase, [call("a"), call("t1", "task")], done)).toBe(true);
    expect(state.messages).toEqual([]);
    expect(phase.suspended.size).toBe(0);
    const pending = state.data[PENDING_TOOLS] as PendingTools;
    expect(Object.keys(pending.done)).toEqual(["a"]);
    expect(Object.keys(pending.suspended)).toEqual(["t1"]);
    expect(state.interrupt?.toolCalls).toEqual([
      {
        id: "t1/w1",
        name: "write_file",
        args: {},
        allow: ["approve", "reject"],
        subagent: { name: "researcher", depth: 1, path: "task:researcher/1" },
      },
    ]);
  });

  it("leaves out the result of a task call whose subagent stopped for review", async () => {
    const { phase, events } = phaseOf(async (c) => {
      if (c.id === "t1") phase.suspended.set("t1", suspension("general-purpose", ["w"]));
      return { content: "ended" };
    });
    const results = await runToolCalls(phase, [call("a"), call("t1", "task")]);
    expect([...results.keys()]).toEqual(["a"]);
    expect(events.filter((e) => e.type === "tool_end").map((e) => (e.type === "tool_end" ? e.call.id : ""))).toEqual(["a"]);
  });

  it("sorts a dead run's open calls: results stand, unstarted and idempotent ones run again, the rest were interrupted", () => {
    const done: Message = { role: "tool", toolCallId: "a", content: "A" };
    const sorted = sortOpenCalls(
      { done: { a: done }, started: ["b", "c"] },
      [call("a"), call("b", "send"), call("c", "read"), call("d", "send")],
      (name) => name === "read",
    );
    expect([...sorted.results.keys()]).toEqual(["a"]);
    expect(sorted.rerun.map((c) => c.id)).toEqual(["c", "d"]);
    expect(sorted.interrupted.map((c) => c.id)).toEqual(["b"]);
  });

  it("finishes an open phase: an interrupted call is answered as such (warned, committed), the others run", async () => {
    const ran: string[] = [];
    const { phase, events, marks } = phaseOf(async (c) => {
      ran.push(c.id);
      return { content: `ran ${c.id}` };
    });
    const results = await finishOpenPhase(phase, {
      results: new Map([["a", { role: "tool", toolCallId: "a", content: "A" }]]),
      rerun: [call("c")],
      interrupted: [call("b", "send")],
    });
    expect(ran).toEqual(["c"]);
    expect(results.get("a")?.content).toBe("A");
    expect(results.get("b")?.content).toMatch(/^Tool call 'send' was interrupted/);
    expect(results.get("c")?.content).toBe("ran c");
    expect(marks[0]?.done?.[0]).toBe("b");
    expect(events.some((e) => e.type === "warning" && e.message.includes("send (b) was interrupted"))).toBe(true);
  });

  it("answers an unknown tool and unreadable arguments with an error the model can act on", async () => {
    const seen: unknown[] = [];
    const tool = {
      name: "lookup",
      description: "looks up",
      schema: z.object({ id: z.string() }),
      async run(input: { id: string }) {
        seen.push(input);
        return { content: `found ${input.id}` };
      },
    } as unknown as Tool<never>;
    const tools = new Map([["lookup", tool]]);
    const run: RunContext = { threadId: "t", depth: 0, warn: () => undefined };
    expect(await callTool(tools, call("1", "nope"), run)).toEqual({
      content: "Error: unknown tool 'nope'. Available: lookup",
      isError: true,
    });
    const bad = await callTool(tools, { ...call("2", "lookup"), argsError: "unexpected end of JSON" }, run);
    expect(bad.content).toMatch(/^Error: invalid arguments for lookup: unexpected end of JSON/);
    expect(await callTool(tools, call("3", "lookup", { id: 7 }), run)).toMatchObject({ isError: true });
    expect(await callTool(tools, call("4", "lookup", { id: "x" }), run)).toEqual({ content: "found x" });
    expect(seen).toEqual([{ id: "x" }]);
  });
});
