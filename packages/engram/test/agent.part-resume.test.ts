/** Resume on its own (`agent/resume.ts`): decisions checked before anything runs, the review
 * taken by a save before any reviewed call runs (a conflict refuses the resume), reviewed calls
 * run as decided, suspended subagents resumed with their own decisions, a dead run's open tool
 * phase closed, a dead run's final answer recognised, and a dead run's steps folded into the
 * thread's checkpoint. */
import { describe, expect, it } from "vitest";
import { InMemoryCheckpointer } from "../src/agent/checkpointer.js";
import { RepeatedFailures } from "../src/agent/repeats.js";
import {
  adoptDeadRun,
  adoptedAnswer,
  checkDecisions,
  closeOpenPhase,
  decisionsFor,
  resumeReview,
  takeReview,
  type ResumingLevel,
} from "../src/agent/resume.js";
import { ConcurrencyLimit } from "../src/agent/run-limits.js";
import type { LevelState, RunScope } from "../src/agent/runtime.js";
import { OPEN_TOOLS, StepLog } from "../src/agent/step-log.js";
import { PENDING_TOOLS, type PendingTools } from "../src/agent/tool-phase.js";
import type { Interrupt } from "../src/agent/types.js";
import { EngramError, ResumeError } from "../src/errors.js";
import type { InterruptConfig } from "../src/middleware/hitl.js";
import type { Message, ToolCall } from "../src/models/types.js";
import type { Tool } from "../src/tools/types.js";
import { core } from "./fixtures/session.js";

const call = (id: string, name = "send", args: Record<string, unknown> = {}): ToolCall => ({ id, name, args });

/** A level to resume: `log` gets "save" for each save and "run <id>" for each call run. */
function levelOf(
  state: LevelState,
  options: { top?: boolean; interruptOn?: Record<string, InterruptConfig>; save?: () => Promise<void> } = {},
) {
  const log: string[] = [];
  const saved: LevelState[] = [];
  // The fields of the scope resuming reads: the thread, the subagents to resume, the review policy.
  const scope = { threadId: "t", resuming: new Map(), level: { options: { interruptOn: options.interruptOn ?? { send: true } } } };
  const level: ResumingLevel = {
    scope: scope as unknown as RunScope,
    state,
    hooks: {
      top: options.top ?? true,
      save: async (s) => {
        log.push("save");
        saved.push(structuredClone(s));
        await options.save?.();
      },
    },
    tools: new Map([["read", { idempotent: true } as unknown as Tool<never>]]),
    phase: {
      state,
      runTool: async (c) => {
        log.push(`run ${c.id}`);
        return { content: `ran ${c.id} with ${JSON.stringify(c.args)}` };
      },
      limit: new ConcurrencyLimit(4),
      events: { push: () => undefined },
      repeats: new RepeatedFailures(3),
      suspended: new Map(),
    },
  };
  return { level, log, saved, scope };
}

const reviewOf = (...ids: string[]): Interrupt => ({
  toolCalls: ids.map((id) => ({ id, name: "send", args: {}, allow: ["approve", "edit", "reject"] })),
});

/** A thread stopped for review of `calls`. */
const interrupted = (calls: ToolCall[]): LevelState => ({
  messages: [
    { role: "user", content: "go" },
    { role: "assistant", content: "", toolCalls: calls },
  ],
  data: {},
  interrupt: reviewOf(...calls.map((c) => c.id)),
});

describe("resume", () => {
  it("checks every decision before anything runs", () => {
    const review = reviewOf("a", "b");
    expect(() => checkDecisions(review, { a: { type: "approve" } })).toThrow(ResumeError);
    expect(() => checkDecisions(review, { a: { type: "approve" } })).toThrow("no decision for tool call 'b' (send)");
    const narrow: Interrupt = { toolCalls: [{ id: "a", name: "send", args: {}, allow: ["approve"] }] };
    expect(() => checkDecisions(narrow, { a: { type: "reject" } })).toThrow("'reject' is not allowed for send (allowed: approve)");
    expect(() => checkDecisions(review, { a: { type: "approve" }, b: { type: "reject" } })).not.toThrow();
  });

  it("gives each suspended subagent the decisions qualified by its task call", () => {
    const decisions = { "t1/a": { type: "approve" as const }, "t2/b": { type: "reject" as const }, "t1/c/d": { type: "approve" as const } };
    expect(decisionsFor(decisions, "t1")).toEqual({ a: { type: "approve" }, "c/d": { type: "approve" } });
    expect(decisionsFor(decisions, "t3")).toEqual({});
  });

  it("takes the review with a save before any reviewed call runs, and runs the calls as decided", async () => {
    const state = interrupted([call("a"), call("b"), call("c")]);
    const { level, log, saved } = levelOf(state);
    const stopped = await resumeReview(level, {
      a: { type: "approve" },
      b: { type: "edit", args: { to: "x" } },
      c: { type: "reject", message: "no" },
    });
    expect(stopped).toBeUndefined();
    expect(log[0]).toBe("save");
    expect(log.slice(1).sort()).toEqual(["run a", "run b"]);
    // The review's save has no interrupt: a second resume finds nothing to resume.
    expect(saved[0]?.interrupt).toBeUndefined();
    expect(state.interrupt).toBeUndefined();
    expect(state.messages.at(-4)?.toolCalls?.[1]?.args).toEqual({ to: "x" });
    expect(state.messages.slice(-3).map((m) => m.content)).toEqual([
      "ran a with {}",
      'ran b with {"to":"x"}',
      expect.stringMatching(/^The user rejected this send call: no/),
    ]);
  });

  it("refuses a resume whose review another run took first, running nothing", async () => {
    const state = interrupted([call("a")]);
    const { level, log } = levelOf(state, {
      save: async () => {
        throw new EngramError("conflict", "revision moved");
      },
    });
    const err = await resumeReview(level, { a: { type: "approve" } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ResumeError);
    expect((err as Error).message).toMatch(/was resumed or saved by another run/);
    expect(log).toEqual(["save"]);
    // Any other failure of the save is not a resume's to rename.
    const other = levelOf(interrupted([call("a")]), {
      save: async () => {
        throw new EngramError("invalid_argument", "disk");
      },
    });
    await expect(takeReview(other.level)).rejects.toMatchObject({ code: "invalid_argument" });
  });

  it("refuses a thread with nothing to resume, and a subagent level saves nothing", async () => {
    const { level } = levelOf({ messages: [{ role: "user", content: "hi" }], data: {} });
    await expect(resumeReview(level, {})).rejects.toThrow("thread 't' has no interrupted run to resume");
    const child = levelOf(interrupted([call("a")]), { top: false });
    await resumeReview(child.level, { a: { type: "approve" } });
    expect(child.log).toEqual(["run a"]);
  });

  it("resumes into the suspended subagents with their decisions; completed calls keep their results", async () => {
    const task = call("t1", "task");
    const state = interrupted([call("a", "read"), task]);
    const pending: PendingTools = {
      done: { a: { role: "tool", toolCallId: "a", content: "A" } },
      suspended: { t1: { name: "general-purpose", depth: 1, path: "task:general-purpose/1", state: { messages: [], data: {} } } },
    };
    state.data[PENDING_TOOLS] = pending;
    state.interrupt = { toolCalls: [{ id: "t1/w", name: "send", args: {}, allow: ["approve"] }] };
    const { level, log, saved, scope } = levelOf(state);
    let seen: unknown;
    level.phase.runTool = async (c) => {
      log.push(`run ${c.id}`);
      seen = structuredClone([...scope.resuming.entries()].map(([id, r]) => [id, r.decisions]));
      return { content: "subagent done" };
    };
    expect(await resumeReview(level, { "t1/w": { type: "approve" } })).toBeUndefined();
    expect(log).toEqual(["save", "run t1"]);
    expect(seen).toEqual([["t1", { w: { type: "approve" } }]]);
    expect(scope.resuming.size).toBe(0);
    // The review's save leaves the pending phase out; the state no longer has it either.
    expect(saved[0]?.data[PENDING_TOOLS]).toBeUndefined();
    expect(state.data[PENDING_TOOLS]).toBeUndefined();
    expect(state.messages.slice(-2).map((m) => m.content)).toEqual(["A", "subagent done"]);
  });

  it("closes a dead run's open tool phase at the top level only", async () => {
    const calls = [call("a", "send"), call("b", "read"), call("c", "send")];
    const open = (): LevelState => ({
      messages: [{ role: "assistant", content: "", toolCalls: calls }],
      data: { [OPEN_TOOLS]: { done: { c: { role: "tool", toolCallId: "c", content: "C" } }, started: ["a", "b"] } },
    });
    const child = levelOf(open(), { top: false });
    expect(await closeOpenPhase(child.level)).toBeUndefined();
    expect(child.log).toEqual([]);
    expect(child.level.state.data[OPEN_TOOLS]).toBeDefined();

    const state = open();
    const { level, log } = levelOf(state);
    expect(await closeOpenPhase(level)).toBeUndefined();
    // `a` had started (not idempotent): answered as interrupted; `b` is idempotent: runs again.
    expect(log).toEqual(["run b"]);
    expect(state.data[OPEN_TOOLS]).toBeUndefined();
    const results = state.messages.slice(1) as Message[];
    expect(results.map((m) => m.toolCallId)).toEqual(["a", "b", "c"]);
    expect(results[0]?.content).toMatch(/^Tool call 'send' was interrupted/);
  });

  it("recognises a dead run's final answer only in an adopted state", () => {
    const answered: LevelState = {
      messages: [
        { role: "user", content: "q" },
        { role: "assistant", content: "done" },
      ],
      data: {},
    };
    expect(adoptedAnswer({ state: answered, hooks: { top: true, save: async () => undefined, adopted: true } })).toBe(true);
    expect(adoptedAnswer({ state: answered, hooks: { top: true, save: async () => undefined } })).toBe(false);
    const calling: LevelState = { messages: [{ role: "assistant", content: "", toolCalls: [call("a")] }], data: {} };
    expect(adoptedAnswer({ state: calling, hooks: { top: true, save: async () => undefined, adopted: true } })).toBe(false);
  });

  it("folds a dead run's steps into the thread's checkpoint before anything runs; none left, nothing changes", async () => {
    const checkpointer = new InMemoryCheckpointer({ core });
    await checkpointer.put("t", { messages: [{ role: "user", content: "go" }], data: {}, savedAt: 0 });
    const saved = await checkpointer.get("t");
    // The dead run: a model turn asking for two calls, one started, none answered.
    const state: LevelState = { messages: [...(saved?.messages ?? [])], data: {} };
    const log = new StepLog(checkpointer, "t", saved?.revision ?? 0, state, undefined);
    state.messages.push({ role: "assistant", content: "", toolCalls: [call("a"), call("b")] });
    await log.record(state);
    await log.record(state, { started: "a" });

    const from = { checkpointer, threadId: "t", steps: checkpointer, history: undefined, core };
    const picked = await adoptDeadRun(from, saved);
    expect(picked.adopted).toEqual({ steps: 2 });
    expect(picked.saved?.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(picked.saved?.data[OPEN_TOOLS]).toEqual({ done: {}, started: ["a"] });
    expect(picked.saved?.revision).not.toBe(saved?.revision);
    expect(await checkpointer.getSteps("t")).toEqual([]);
    expect(await adoptDeadRun(from, picked.saved)).toEqual({ saved: picked.saved });
  });
});
