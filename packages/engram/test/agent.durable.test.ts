/** Durable runs in one process: every step committed beside the checkpoint, a dead run's steps
 * adopted by the next run (nothing completed runs again), a live run never stolen, a run refused
 * with `conflict` leaving nothing. The real processes (SIGKILL, SQLite, PostgreSQL) are in the
 * stores' suites. */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type AgentEvent,
  type Checkpoint,
  type Checkpointer,
  ConfigError,
  FakeChatModel,
  InMemoryCheckpointer,
  type Message,
  type Tool,
  createDeepAgent,
} from "../src/index.js";
import type { RunStep, ThreadClaim } from "../src/agent/run-steps.js";
import { OPEN_TOOLS, adoptSteps } from "../src/agent/step-log.js";
import { checkpointFiles } from "../src/agent/checkpointer.js";
import { StateBackend } from "../src/backends/state.js";
import { core, user } from "./fixtures/session.js";

const quiet = { core, enableSubagents: false, enableMemory: false, enableSkills: false } as const;

/** A promise and its resolve. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

/**
 * An in-memory checkpointer whose runs can "die": `kill(threadId)` lets go of the claim as the
 * kernel would for a dead process, while the run itself stays stuck where it was (it never
 * writes again). Everything else is the in-memory checkpointer's.
 */
class Killable extends InMemoryCheckpointer {
  readonly durable = true;
  readonly #claims = new Map<string, ThreadClaim>();

  override async claimThread(threadId: string): Promise<ThreadClaim> {
    const claim = await super.claimThread(threadId);
    this.#claims.set(threadId, claim);
    return claim;
  }

  async kill(threadId: string): Promise<void> {
    await this.#claims.get(threadId)?.release();
  }
}

/**
 * The scripted work: step i (i = tool results so far / 2) calls `record` (an effect outside the
 * thread, counted) and writes `/notes/<i>.md`; after `steps` steps it answers "finished".
 * Calls have fixed ids, so two runs of the script make equal messages.
 */
function scripted(steps: number, hang?: { modelAt?: number; recordAt?: number; lookAt?: number }) {
  const effects: string[] = [];
  const requests: number[] = [];
  let stuck = false;
  const model = new FakeChatModel(async (req) => {
    const i = req.messages.filter((m) => m.role === "tool").length / 3;
    requests.push(i);
    if (hang?.modelAt === i && !stuck) {
      stuck = true;
      await new Promise(() => undefined);
    }
    if (i >= steps) return "finished";
    return {
      toolCalls: [
        { id: `rec-${i}`, name: "record", args: { step: i } },
        { id: `write-${i}`, name: "write_file", args: { file_path: `/notes/${i}.md`, content: `note ${i}` } },
        { id: `look-${i}`, name: "look", args: { step: i } },
      ],
    };
  });
  const record: Tool<{ step: number }> = {
    name: "record",
    description: "Records an effect.",
    schema: z.object({ step: z.number() }),
    async run({ step }) {
      effects.push(`record ${step}`);
      if (hang?.recordAt === step && !stuck) {
        stuck = true;
        await new Promise(() => undefined);
      }
      return { content: `recorded ${step}` };
    },
  };
  const look: Tool<{ step: number }> = {
    name: "look",
    description: "Looks (changes nothing).",
    schema: z.object({ step: z.number() }),
    idempotent: true,
    async run({ step }) {
      effects.push(`look ${step}`);
      if (hang?.lookAt === step && !stuck) {
        stuck = true;
        await new Promise(() => undefined);
      }
      return { content: `looked ${step}` };
    },
  };
  return { model, tools: [record, look] as unknown as Tool<never>[], effects, requests };
}

/** The thread's notes (the files the script writes), by path. */
const fileHash = async (checkpointer: Checkpointer, threadId: string) => {
  const cp = await checkpointer.get(threadId);
  const bytes = cp && checkpointFiles(cp, core);
  const state = bytes ? await StateBackend.restore(bytes, { core }) : new StateBackend({ core });
  const files: Record<string, string> = {};
  for (let i = 0; i < 8; i++) {
    const read = await state.read(`/notes/${i}.md`);
    if (!read.error) files[`/notes/${i}.md`] = read.content ?? "";
  }
  return files;
};

/** Waits until `cond` holds (the stuck run has reached its point). */
async function until(cond: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 500 && !(await cond()); i++) await new Promise((r) => setTimeout(r, 5));
  expect(await cond()).toBe(true);
}

describe("durable runs (in one process)", () => {
  it("commits every step beside the checkpoint, and a finished run leaves none", async () => {
    const checkpointer = new Killable();
    const stored: RunStep[] = [];
    const putStep = checkpointer.putStep.bind(checkpointer);
    checkpointer.putStep = async (id, step) => {
      await putStep(id, step);
      stored.push(step);
    };
    const { model, tools } = scripted(3);
    const out = await createDeepAgent(model, { ...quiet, checkpointer, tools }).invoke(user("go"), { threadId: "t" });
    expect(out.messages.at(-1)?.content).toBe("finished");
    expect(await checkpointer.getSteps("t")).toEqual([]);
    // Every step is what changed: the first holds the user's message, later ones only new messages.
    // Per model turn one step, per tool call two (started, result): 1 + 4 turns + 3 × 3 × 2.
    expect(stored.map((s) => s.seq)).toEqual(Array.from({ length: 23 }, (_, i) => i + 1));
    const docs = stored.map((s) => JSON.parse(s.doc) as { keep: number; append: Message[]; started?: string; done?: unknown });
    expect(docs[0]?.append.map((m) => m.content)).toEqual(["go"]);
    // Each step holds what changed: never the thread again.
    for (const d of docs.slice(1)) expect(d.append.length).toBeLessThanOrEqual(4);
    expect(docs.filter((d) => d.started).length).toBe(9);
    expect(docs.filter((d) => d.done).length).toBe(9);
    // Written files travel as deltas.
    expect(stored.filter((s) => s.files).length).toBe(3);
    // The same thread as a run that saves once.
    const once = scripted(3);
    const plain = new InMemoryCheckpointer();
    const ref = await createDeepAgent(once.model, { ...quiet, checkpointer: plain, tools: once.tools }).invoke(user("go"), {
      threadId: "t",
    });
    expect(out.messages).toEqual(ref.messages);
    expect(await fileHash(checkpointer, "t")).toEqual(await fileHash(plain, "t"));
  });

  it("defaults to one save per run for a checkpointer that is not durable, and refuses step without the operations", async () => {
    const plain = new InMemoryCheckpointer();
    const puts: string[] = [];
    const spying: Checkpointer = {
      get: (id, o) => plain.get(id, o),
      put: (id, cp) => {
        puts.push(id);
        return plain.put(id, cp);
      },
      delete: (id) => plain.delete(id),
    };
    const { model, tools } = scripted(2);
    await createDeepAgent(model, { ...quiet, checkpointer: spying, tools }).invoke(user("go"), { threadId: "d" });
    expect(puts).toEqual(["d"]);
    expect(() => createDeepAgent(model, { ...quiet, checkpointer: spying, durability: "step" })).toThrow(ConfigError);
    expect(() => createDeepAgent(model, { ...quiet, checkpointer: plain, durability: "often" as "step" })).toThrow(ConfigError);
    // In memory, steps only when asked.
    const inMemory = new InMemoryCheckpointer();
    let stepsSeen = 0;
    const watched: Checkpointer = {
      get: (id, o) => inMemory.get(id, o),
      put: (id, cp) => inMemory.put(id, cp),
      delete: (id) => inMemory.delete(id),
      claimThread: (id) => inMemory.claimThread(id),
      putStep: (id, s) => {
        stepsSeen++;
        return inMemory.putStep(id, s);
      },
      getSteps: (id) => inMemory.getSteps(id),
      deleteSteps: (id, r) => inMemory.deleteSteps(id, r),
    };
    await createDeepAgent(scripted(1).model, { ...quiet, checkpointer: watched, tools }).invoke(user("go"), { threadId: "e" });
    expect(stepsSeen).toBe(0);
    await createDeepAgent(scripted(1).model, { ...quiet, checkpointer: watched, tools, durability: "step" }).invoke(user("go"), {
      threadId: "f",
    });
    expect(stepsSeen).toBeGreaterThan(2);
  });

  for (const [label, hang, interrupted] of [
    ["inside a model call", { modelAt: 2 }, []],
    ["inside a tool that is not idempotent", { recordAt: 2 }, ["rec-2"]],
    ["inside an idempotent tool", { lookAt: 2 }, []],
  ] as const) {
    it(`adopts a dead run (killed ${label}): nothing completed runs again, the thread ends as an uninterrupted run's`, async () => {
      const checkpointer = new Killable();
      const first = scripted(5, hang);
      const stuck = createDeepAgent(first.model, { ...quiet, checkpointer, tools: first.tools }).invoke(user("go"), { threadId: "k" });
      void stuck.catch(() => undefined);
      await until(async () => first.requests.length === 3 && (hang.modelAt !== undefined || first.effects.some((e) => e.endsWith(" 2"))));
      await new Promise((r) => setTimeout(r, 20));
      await checkpointer.kill("k");

      // The next run adopts the dead run's steps: it goes on from them.
      const next = scripted(5);
      const events: AgentEvent[] = [];
      for await (const ev of createDeepAgent(next.model, { ...quiet, checkpointer, tools: next.tools }).stream(
        { messages: [] },
        { threadId: "k" },
      ))
        events.push(ev);
      const final = events.at(-1);
      expect(final?.type).toBe("final");
      const messages = final?.type === "final" ? final.output.messages : [];
      expect(messages.at(-1)?.content).toBe("finished");
      // No model request made again, except the one in flight: step 2's when the model was stuck.
      expect(next.requests).toEqual(hang.modelAt === 2 ? [2, 3, 4, 5] : [3, 4, 5]);
      // No tool run twice, except an idempotent one that was running.
      const all = [...first.effects, ...next.effects];
      const twice = all.filter((e, i) => all.indexOf(e) !== i);
      expect(twice).toEqual(hang.lookAt !== undefined ? ["look 2"] : []);
      // The stream says nothing already committed: no tool event of an earlier step.
      const toolIds = events.flatMap((e) => (e.type === "tool_start" || e.type === "tool_end" ? [e.call.id] : []));
      for (const id of toolIds) expect(Number(id.split("-")[1])).toBeGreaterThanOrEqual(2);
      expect(events.some((e) => e.type === "warning" && e.message.includes("resumed the run"))).toBe(true);

      // The thread equals an uninterrupted run's, but for the notice of the interrupted call.
      const plain = new InMemoryCheckpointer();
      const ref = scripted(5);
      const whole = await createDeepAgent(ref.model, { ...quiet, checkpointer: plain, tools: ref.tools }).invoke(user("go"), {
        threadId: "k",
      });
      expect(messages.length).toBe(whole.messages.length);
      messages.forEach((m, i) => {
        if (m.role === "tool" && (interrupted as readonly string[]).includes(m.toolCallId ?? "")) {
          expect(m.content).toContain("was interrupted");
          expect(m.content).toContain("may or may not have taken effect");
        } else expect(m).toEqual(whole.messages[i]);
      });
      expect(await fileHash(checkpointer, "k")).toEqual(await fileHash(plain, "k"));
      expect(await checkpointer.getSteps("k")).toEqual([]);
      expect((await checkpointer.get("k"))?.data[OPEN_TOOLS]).toBeUndefined();
    });
  }

  for (const modelAt of [0, 2]) {
    it(`finishes a dead run (killed in model call ${modelAt}) before new messages join the thread`, async () => {
      const checkpointer = new Killable();
      const first = scripted(5, { modelAt });
      void createDeepAgent(first.model, { ...quiet, checkpointer, tools: first.tools })
        .invoke(user("go"), { threadId: "k" })
        .catch(() => undefined);
      await until(() => first.requests.length === modelAt + 1);
      await new Promise((r) => setTimeout(r, 20));
      await checkpointer.kill("k");

      // A new message on the thread: the dead run's task is carried out first, as it would
      // have been without the kill, and the new message follows its answer.
      const next = scripted(5);
      const out = await createDeepAgent(next.model, { ...quiet, checkpointer, tools: next.tools }).invoke(user("and then"), {
        threadId: "k",
      });
      expect(next.requests).toEqual([modelAt, 1, 2, 3, 4, 5, 5].slice(modelAt));
      const plain = new InMemoryCheckpointer();
      const ref = scripted(5);
      const agent = createDeepAgent(ref.model, { ...quiet, checkpointer: plain, tools: ref.tools });
      await agent.invoke(user("go"), { threadId: "k" });
      const whole = await agent.invoke(user("and then"), { threadId: "k" });
      expect(out.messages).toEqual(whole.messages);
      expect(await fileHash(checkpointer, "k")).toEqual(await fileHash(plain, "k"));
      expect(await checkpointer.getSteps("k")).toEqual([]);
    });
  }

  it("keeps new messages out of a thread whose resumed run stops for review, and says so", async () => {
    const checkpointer = new Killable();
    const first = scripted(5, { modelAt: 0 });
    void createDeepAgent(first.model, { ...quiet, checkpointer, tools: first.tools })
      .invoke(user("go"), { threadId: "k" })
      .catch(() => undefined);
    await until(() => first.requests.length === 1);
    await new Promise((r) => setTimeout(r, 20));
    await checkpointer.kill("k");
    const next = scripted(5);
    const events: AgentEvent[] = [];
    const agent = createDeepAgent(next.model, { ...quiet, checkpointer, tools: next.tools, interruptOn: { record: true } });
    for await (const ev of agent.stream(user("and then"), { threadId: "k" })) events.push(ev);
    const final = events.at(-1);
    expect(final?.type === "final" && final.output.interrupt?.toolCalls.map((c) => c.id)).toEqual(["rec-0"]);
    expect(events.some((e) => e.type === "warning" && e.message.includes("new messages were not added"))).toBe(true);
    expect((await checkpointer.get("k"))?.messages.some((m) => m.content === "and then")).toBe(false);
  });

  it("never takes a live run's thread: another run is refused with conflict, and the thread is free once it ends", async () => {
    const checkpointer = new Killable();
    const hold = gate();
    const model = new FakeChatModel(async () => {
      await hold.opened;
      return "held";
    });
    const owner = createDeepAgent(model, { ...quiet, checkpointer }).invoke(user("hold"), { threadId: "live" });
    await until(async () => (await checkpointer.getSteps("live")).length > 0);
    const other = createDeepAgent(new FakeChatModel(["never"]), { ...quiet, checkpointer });
    await expect(other.invoke({ messages: [] }, { threadId: "live" })).rejects.toMatchObject({ name: "EngramError", code: "conflict" });
    expect((await checkpointer.getSteps("live")).length).toBeGreaterThan(0);
    hold.open();
    expect((await owner).messages.at(-1)?.content).toBe("held");
    const after = await createDeepAgent(new FakeChatModel(["next"]), { ...quiet, checkpointer }).invoke(user("again"), {
      threadId: "live",
    });
    expect(after.messages.map((m) => m.content)).toEqual(["hold", "held", "again", "next"]);
  });

  it("leaves nothing behind when its save is refused with conflict", async () => {
    const checkpointer = new Killable();
    const hold = gate();
    const model = new FakeChatModel(async (req) => {
      if (req.messages.at(-1)?.role === "user")
        return { toolCalls: [{ id: "w", name: "write_file", args: { file_path: "/a.md", content: "a" } }] };
      await hold.opened;
      return "done";
    });
    const loser = createDeepAgent(model, { ...quiet, checkpointer }).invoke(user("write"), { threadId: "race" });
    await until(async () => (await checkpointer.getSteps("race")).length >= 4);
    // A writer that does not claim the thread saves meanwhile (a run with durability "run").
    const winner = createDeepAgent(new FakeChatModel(["theirs"]), { ...quiet, checkpointer, durability: "run" });
    await winner.invoke(user("their turn"), { threadId: "race" });
    hold.open();
    await expect(loser).rejects.toMatchObject({ code: "conflict" });
    expect(await checkpointer.getSteps("race")).toEqual([]);
    expect((await checkpointer.get("race"))?.messages.map((m) => m.content)).toEqual(["their turn", "theirs"]);
  });

  it("ignores steps that extend another revision, and reports damaged steps as a ResumeError", () => {
    const saved: Checkpoint = { messages: [{ role: "user", content: "a" }], data: {}, savedAt: 1, revision: 7 };
    const step = (more: Partial<RunStep>): RunStep => ({
      runId: "r",
      seq: 1,
      baseRevision: 7,
      doc: JSON.stringify({ keep: 1, append: [{ role: "assistant", content: "b" }] }),
      savedAt: 2,
      ...more,
    });
    expect(adoptSteps(saved, [step({ baseRevision: 6 })], core)).toBeUndefined();
    expect(adoptSteps(saved, [step({})], core)?.checkpoint.messages.map((m) => m.content)).toEqual(["a", "b"]);
    // A gap ends the run's record.
    expect(adoptSteps(saved, [step({}), step({ seq: 3, doc: JSON.stringify({ keep: 0, append: [] }) })], core)?.steps).toBe(1);
    expect(() => adoptSteps(saved, [step({ doc: "{" })], core)).toThrow(/cannot adopt/);
    expect(() => adoptSteps(saved, [step({ doc: JSON.stringify({ keep: 5, append: [] }) })], core)).toThrow(/malformed/);
  });
});
