/**
 * The crash tests of durable runs, for one durable checkpointer (SQLite or PostgreSQL): real
 * processes (`engram/test/fixtures/agent/durable-run.ts`, bundled once so each starts with plain
 * node) over a real HTTP model server that counts requests, killed with SIGKILL at random moments.
 * A run that is killed is a process of its own, started ahead of its trial and told when to
 * begin. The runs that resume are made by two processes that live as long as the suite, each run
 * with a fresh checkpointer and agent: a trial pays for one process start, not two. The three
 * tests run side by side, each on a database of its own.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Checkpoint, type Checkpointer, type Message, StateBackend, loadCore } from "engram";
import { checkpointFiles } from "engram/kit";
import { prng } from "engram/testing";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type ScriptedModelServer, startScriptedModelServer } from "../../../examples/node/scripted-model-server.js";
import { OPEN_TOOLS, type OpenTools, adoptSteps } from "../../engram/src/agent/step-log.js";
import type { RunStep } from "../../engram/src/agent/run-steps.js";
import { bundledFixture } from "../../engram/test/fixtures/node-bundle.js";
import { Child } from "./helpers.js";

const root = join(import.meta.dirname, "../../..");
/** Steps of the scripted run: each calls `record` and writes `/notes/<step>.md`. */
const STEPS = 20;

type Opened = Checkpointer & {
  getSteps(threadId: string): Promise<RunStep[]>;
  close(): unknown;
};

/** What a run printed when it ended. */
interface RunResult {
  started: string[];
  adopted: boolean;
  stopReason?: string;
  messages?: Message[];
  error?: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Matches the line a run of `thread` prints on `event`. */
const lineOf = (thread: string, event: "ready" | "result") => (line: string) =>
  line.startsWith(`{"thread":${JSON.stringify(thread)},"event":"${event}"`);

/** The databases of the suite, one per test: a run stopped in a transaction of its database
 * holds nothing another test waits for. */
export type DurableDatabase = "crash" | "race" | "stopped";

/**
 * Registers the crash tests. `target` names a database of the suite (a file, or `url#schema`);
 * `open` opens a checkpointer on it.
 */
export function durableRunSuite(
  kind: "sqlite" | "pg",
  dir: string,
  target: (db: DurableDatabase) => string,
  open: (target: string) => Opened,
): void {
  let server: ScriptedModelServer;
  let bundle: string;
  /** The steps the model was asked for, in order, by thread (the request's model name). */
  const asked = new Map<string, number[]>();
  const askedOf = (thread: string) => asked.get(thread) ?? [];
  let reference: { messages: Message[]; files: Record<string, string>; ms: number };
  const core = loadCore();
  /** Every process started, ended in `afterAll` if still running. */
  const processes: Child[] = [];
  /** The two processes that resume the crash trials: each makes one run after the other. */
  let resumers: [Child, Child];

  /** A process making runs on database `db`. */
  const spawnProcess = (db: DurableDatabase) => {
    const child = new Child(bundle, [kind, target(db), server.baseURL]);
    processes.push(child);
    return child;
  };

  /** A process of its own for one run of `thread` from the start, which waits for `go`. */
  function owner(thread: string, effects: string, db: DurableDatabase = "crash"): Child {
    writeFileSync(effects, "");
    asked.set(thread, []);
    const child = spawnProcess(db);
    child.send(JSON.stringify({ thread, effects, mode: "start", waitGo: true }));
    return child;
  }

  /** Lets the run of `thread` in `child`, connected, begin. */
  async function go(child: Child, thread: string): Promise<void> {
    await child.waitFor(lineOf(thread, "ready"));
    child.send("go");
  }

  async function resultIn(child: Child, thread: string): Promise<RunResult> {
    return JSON.parse(await child.waitFor(lineOf(thread, "result"), 60_000)) as RunResult;
  }

  /** The result of the one run of an owner, which then exits cleanly. */
  async function ownerResult(child: Child, thread: string): Promise<RunResult> {
    const result = await resultIn(child, thread);
    child.proc.stdin?.end();
    const { code } = await child.exited;
    if (code !== 0) throw new Error(`run process failed (${code}): ${child.stderr}`);
    return result;
  }

  /** A run of `thread` by a long-lived process. */
  async function runToEnd(via: Child, thread: string, effects: string, mode: "start" | "resume"): Promise<RunResult> {
    writeFileSync(effects, "", { flag: "a" });
    via.send(JSON.stringify({ thread, effects, mode }));
    return resultIn(via, thread);
  }

  beforeAll(async () => {
    mkdirSync(dir, { recursive: true });
    bundle = await bundledFixture(join(root, "packages/engram/test/fixtures/agent/durable-run.ts"));
    server = await startScriptedModelServer(
      (request) => {
        const step = request.messages.filter((m) => m.role === "tool").length / 2;
        asked.set(request.model, [...askedOf(request.model), step]);
        if (step >= STEPS) return { text: "finished" };
        return {
          toolCalls: [
            { id: `rec-${step}`, name: "record", args: { step } },
            { id: `w-${step}`, name: "write_file", args: { file_path: `/notes/${step}.md`, content: `note ${step}\n` } },
          ],
        };
      },
      { chunkDelayMs: 1 },
    );
    resumers = [spawnProcess("crash"), spawnProcess("crash")];
    await Promise.all(resumers.map((r) => r.waitFor((l) => l === '"ready"')));
    // The uninterrupted run every trial must end as, and how long it runs once it is told to go.
    const child = owner("reference", join(dir, "effects-reference"));
    await go(child, "reference");
    const t0 = performance.now();
    const whole = await ownerResult(child, "reference");
    let ms = performance.now() - t0;
    expect(whole.stopReason).toBe("done");
    // The kills are drawn over the fastest of three such runs: one slowed by a burst of the
    // machine's load would put many kills after their run had ended.
    for (const [i, resumer] of resumers.entries()) {
      const thread = `timing-${i}`;
      const effects = join(dir, `effects-${thread}`);
      writeFileSync(effects, "");
      resumer.send(JSON.stringify({ thread, effects, mode: "start", waitGo: true }));
      await go(resumer, thread);
      const t = performance.now();
      expect((await resultIn(resumer, thread)).stopReason).toBe("done");
      ms = Math.min(ms, performance.now() - t);
    }
    reference = { messages: whole.messages ?? [], files: await filesOf("reference"), ms };
    expect(Object.keys(reference.files)).toHaveLength(STEPS);
  }, 120_000);
  afterAll(async () => {
    for (const child of processes) if (child.proc.exitCode === null && child.proc.signalCode === null) child.kill();
    await Promise.all(processes.map((child) => child.exited));
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The thread's notes as its checkpoint holds them. */
  async function filesOf(thread: string, db: DurableDatabase = "crash"): Promise<Record<string, string>> {
    const cp = open(target(db));
    try {
      const saved = await cp.get(thread);
      const bytes = saved && checkpointFiles(saved, await core);
      const state = bytes ? await StateBackend.restore(bytes, { core: await core }) : new StateBackend({ core: await core });
      const files: Record<string, string> = {};
      for (let i = 0; i < STEPS; i++) {
        const read = await state.read(`/notes/${i}.md`);
        if (!read.error) files[`/notes/${i}.md`] = read.content ?? "";
      }
      return files;
    } finally {
      await cp.close();
    }
  }

  /** What was committed when the process died: the checkpoint with the dead run's steps. */
  async function committed(thread: string): Promise<{ state: Checkpoint | undefined; steps: number }> {
    const cp = open(target("crash"));
    try {
      const saved = await cp.get(thread);
      const adopted = adoptSteps(saved, await cp.getSteps(thread), await core);
      return { state: adopted?.checkpoint ?? saved, steps: adopted?.steps ?? 0 };
    } finally {
      await cp.close();
    }
  }

  /** The ids of the tool calls whose result is committed in `state`. */
  const resultsIn = (state: Checkpoint | undefined) =>
    new Set([
      ...(state?.messages ?? []).flatMap((m) => (m.role === "tool" && m.toolCallId ? [m.toolCallId] : [])),
      ...Object.keys((state?.data[OPEN_TOOLS] as OpenTools | undefined)?.done ?? {}),
    ]);

  /** The final thread equals the uninterrupted run's, but for the notice of an interrupted call
   * (whose file, for a write, may be missing). Returns the calls answered with the notice. */
  async function sameAsReference(thread: string, messages: Message[], db: DurableDatabase = "crash"): Promise<string[]> {
    expect(messages.length).toBe(reference.messages.length);
    const noticed: string[] = [];
    messages.forEach((m, i) => {
      if (m.role === "tool" && m.content.includes("was interrupted")) {
        expect(m.content).toContain("may or may not have taken effect");
        expect(m.toolCallId).toBe(reference.messages[i]?.toolCallId);
        noticed.push(m.toolCallId as string);
      } else expect(m).toEqual(reference.messages[i]);
    });
    const files = await filesOf(thread, db);
    for (const [path, text] of Object.entries(reference.files)) {
      const step = Number(path.match(/\d+/)?.[0]);
      if (files[path] === undefined && noticed.includes(`w-${step}`)) continue;
      expect(files[path]).toBe(text);
    }
    return noticed;
  }

  it.concurrent(`${kind}: a 20-step run killed with SIGKILL at random moments (50 trials) resumes without repeating anything completed`, async () => {
    const rand = prng(kind === "sqlite" ? 36 : 63);
    const tally = {
      trials: 0,
      nothingCommitted: 0,
      finishedBeforeKill: 0,
      inFlightRequestLost: 0,
      notices: 0,
      adopted: 0,
      stepsAtKill: [] as number[],
    };
    const effectsOf = (n: number) => join(dir, `effects-${n}`);
    /** Trial `n`: `child` (started by `owner`) runs and is killed; `resumer` resumes the thread.
     * `started` is called once the run is under way (the lane starts its next owner). */
    const trial = async (n: number, child: Child, resumer: Child, started: () => void) => {
      const thread = `crash-${n}`;
      const effects = effectsOf(n);
      await go(child, thread);
      started();
      await sleep(rand() * reference.ms);
      child.kill();
      await child.exited;
      const before = askedOf(thread);
      const atKill = await committed(thread);
      const responses = (atKill.state?.messages ?? []).filter((m) => m.role === "assistant").length;
      const doneAtKill = resultsIn(atKill.state);
      tally.stepsAtKill.push(atKill.steps);
      if (atKill.steps === 0 && atKill.state?.messages.at(-1)?.content === "finished") {
        tally.finishedBeforeKill++;
        return;
      }
      // Killed before its first step was committed: nothing of the run exists, it is run again.
      if (!atKill.state) tally.nothingCommitted++;
      asked.set(thread, []);
      const resumed = await runToEnd(resumer, thread, effects, atKill.state ? "resume" : "start");
      expect(resumed.error).toBeUndefined();
      expect(resumed.stopReason).toBe("done");
      if (resumed.adopted) tally.adopted++;
      // No model request whose answer was committed is made again: the resumed run asks only
      // for steps from the first uncommitted answer on.
      const after = askedOf(thread);
      for (const step of after) expect(step).toBeGreaterThanOrEqual(responses);
      if (after[0] !== undefined && before.includes(after[0])) tally.inFlightRequestLost++;
      // No tool runs twice; the stream starts no call whose result was committed.
      const lines = readFileSync(effects, "utf8").split("\n").filter(Boolean);
      expect(new Set(lines).size).toBe(lines.length);
      for (const id of resumed.started) expect(doneAtKill.has(id)).toBe(false);
      tally.notices += (await sameAsReference(thread, resumed.messages ?? [])).length;
      tally.trials++;
    };
    // Two lanes of trials at a time (each trial its own thread and owner process), each with its
    // resumer: the machine waits on processes. A lane's next owner starts loading while the
    // trial before it runs, is killed, resumed and checked.
    await Promise.all(
      resumers.map(async (resumer, lane) => {
        let next = owner(`crash-${lane}`, effectsOf(lane));
        for (let n = lane; n < 50; n += 2) {
          const child = next;
          await trial(n, child, resumer, () => {
            if (n + 2 < 50) next = owner(`crash-${n + 2}`, effectsOf(n + 2));
          });
        }
      }),
    );
    console.log(
      `${kind} crash trials (a run takes ${Math.round(reference.ms)} ms): ${JSON.stringify({ ...tally, stepsAtKill: undefined })}`,
    );
    // The kills landed across the run, not all before it or after it.
    expect(tally.trials).toBeGreaterThanOrEqual(25);
    expect(Math.max(...tally.stepsAtKill)).toBeGreaterThan(20);
  }, 600_000);

  it.concurrent(`${kind}: two processes racing to resume a dead run — exactly one adopts it`, async () => {
    const owners = [0, 1, 2].map((round) => owner(`race-${round}`, join(dir, `effects-race-${round}`), "race"));
    const racers = [spawnProcess("race"), spawnProcess("race")];
    for (let round = 0; round < 3; round++) {
      const thread = `race-${round}`;
      const effects = join(dir, `effects-race-${round}`);
      const child = owners[round] as Child;
      await go(child, thread);
      while (askedOf(thread).length < 6 + round * 4) await sleep(2);
      child.kill();
      await child.exited;
      // Both connected, then let go together.
      for (const r of racers) r.send(JSON.stringify({ thread, effects, mode: "resume", waitGo: true }));
      await Promise.all(racers.map((r) => r.waitFor(lineOf(thread, "ready"))));
      for (const r of racers) r.send("go");
      const results = await Promise.all(racers.map((r) => resultIn(r, thread)));
      expect(results.filter((r) => r.adopted)).toHaveLength(1);
      // The other was refused while the adopter held the thread, or came after it had ended.
      const other = results.find((r) => !r.adopted) as RunResult;
      if (other.error !== undefined) expect(other.error).toBe("conflict");
      const winner = results.find((r) => r.adopted) as RunResult;
      await sameAsReference(thread, winner.messages ?? [], "race");
      const lines = readFileSync(effects, "utf8").split("\n").filter(Boolean);
      expect(new Set(lines).size).toBe(lines.length);
    }
  }, 120_000);

  it.concurrent(`${kind}: a live run stopped (SIGSTOP) longer than any timeout is never adopted`, async () => {
    const thread = "stopped";
    const effects = join(dir, "effects-stopped");
    const child = owner(thread, effects, "stopped");
    const resumer = spawnProcess("stopped");
    await go(child, thread);
    while (askedOf(thread).length < 5) await sleep(2);
    child.proc.kill("SIGSTOP");
    try {
      // Longer than SQLite's busy timeout (5 s) and anything else that waits.
      await sleep(6000);
      const other = await runToEnd(resumer, thread, effects, "resume");
      expect(other).toMatchObject({ error: "conflict", adopted: false, started: [] });
    } finally {
      child.proc.kill("SIGCONT");
    }
    const result = await ownerResult(child, thread);
    expect(result.stopReason).toBe("done");
    expect(await sameAsReference(thread, result.messages ?? [], "stopped")).toEqual([]);
  }, 60_000);
}
