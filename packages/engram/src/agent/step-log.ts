/**
 * Durable runs, Engram's side: a run under way commits each step (a model turn, a tool call
 * started, a tool result) to its checkpointer as what changed since the step before, beside the
 * thread's checkpoint; the next run of the thread, once the owner is known dead, folds a dead
 * run's steps into the thread ({@link adoptSteps}). See `docs/guides/durable-runs.md`.
 * @module
 */
import type { StateMark } from "../backends/state.js";
import type { Core } from "../core/types.js";
import { EngramError, ResumeError } from "../errors.js";
import type { Message } from "../models/types.js";
import { type Checkpoint, type HistoryHead, checkpointFiles } from "./checkpointer.js";
import type { FileWrite } from "./file-writes.js";
import type { RunStep, StepOperations } from "./run-steps.js";
import type { LevelState } from "./runtime.js";
import { type ThreadFiles, tracksChanges } from "./thread-backend.js";

/** Where `state.data` keeps the tool phase a dead run left open: the calls' results that were
 * committed, and the calls that had started without one. */
export const OPEN_TOOLS = "engram.openTools";

/** A tool phase a dead run left open (see {@link OPEN_TOOLS}). */
export interface OpenTools {
  done: Record<string, Message>;
  started: string[];
}

/** The tool result that answers a call a crash interrupted. */
export function interruptedCallNotice(name: string): string {
  return (
    `Tool call '${name}' was interrupted: the process running it stopped (a crash or a kill) before it returned. ` +
    "It may or may not have taken effect: check before calling it again."
  );
}

/** What one step changed, as stored in {@link RunStep.doc}. */
export interface StepDoc {
  /** Messages kept from the step before (a prefix); `append` follows them. */
  keep: number;
  append: Message[];
  /** The whole middleware data, when it changed. */
  data?: Record<string, unknown>;
  /** A tool call about to run. */
  started?: string;
  /** A tool call's result. */
  done?: [string, Message];
  /** `RunStep.files` is a full snapshot (`full`) or a delta on the files before (`delta`). */
  files?: "full" | "delta";
  /** On a run's first step: the history point it follows (`runId:seq`); absent, the step is a
   * base (all messages appended, the whole data and files). Later steps follow the one before. */
  from?: string;
  /** On a run's first step: its depth (see {@link HistoryHead.depth}). */
  depth?: number;
  /** Writes to files outside the thread since the step before (see `file-writes.ts`). */
  writes?: FileWrite[];
}

/** Where a run's steps begin in the thread's history: after `head` (the point the loaded
 * checkpoint equals), unless it is missing or `maxDepth` deep — then from a base. */
export interface StepHistory {
  head: HistoryHead | undefined;
  maxDepth: number;
  /** The run's writes outside the thread since the last call (they go in the next step). */
  writes?: () => FileWrite[];
}

/** The id of a history point. */
export function pointId(p: { runId: string; seq: number }): string {
  return `${p.runId}:${p.seq}`;
}

/** What {@link StepLog.record} marks besides the state: a call starting, a call's result. */
export interface StepMark {
  started?: string;
  done?: [string, Message];
}

/** The steps one run commits (one per thread run, while it holds the thread's claim). */
export class StepLog {
  readonly runId = `run-${crypto.randomUUID()}`;
  #seq = 0;
  #chain: Promise<void> = Promise.resolve();
  #base: number;
  /** The messages as the last step left them (by identity: a message is never changed once in
   * the thread, only replaced), and the data as JSON. */
  #messages: Message[];
  #data: string;
  /** Where the files stood at the last step, and whether the steps have a base to apply
   * deltas to (the checkpoint's files, or a full snapshot in an earlier step). */
  #mark: StateMark | undefined;
  #hasBase: boolean;
  #lastSnapshot: Uint8Array | undefined;
  /** The history point the run's first step follows; undefined: it is a base. */
  readonly #from: HistoryHead | undefined;
  /** Whether the steps are kept as history: then a first step without `#from` is a base. */
  readonly #kept: boolean;
  readonly #writes: (() => FileWrite[]) | undefined;
  /** The last step's depth (or the head's, before the first step). */
  #depth: number;

  constructor(
    readonly ops: StepOperations,
    readonly threadId: string,
    base: number,
    state: LevelState,
    readonly files: ThreadFiles | undefined,
    history?: StepHistory,
  ) {
    this.#base = base;
    const head = history?.head && history.head.depth < history.maxDepth ? history.head : undefined;
    this.#from = head;
    this.#kept = history !== undefined;
    this.#writes = history?.writes;
    this.#depth = head?.depth ?? 0;
    // A base starts from nothing: every message appended, the whole files.
    const whole = this.#kept && !head;
    this.#messages = whole ? [] : [...state.messages];
    this.#data = JSON.stringify(state.data);
    this.#mark = files?.mark;
    this.#hasBase = whole ? false : !!(files?.ref || files?.bytes);
  }

  /** The history point the thread's state equals after the steps written so far (the loaded
   * head until this run writes one; undefined for a base not yet written). */
  head(): HistoryHead | undefined {
    if (this.#seq === 0) return this.#from;
    return { runId: this.runId, seq: this.#seq, depth: this.#depth };
  }

  /** Commits `state` as a step when it differs from the last one (a save's final state), and
   * returns the history point it equals. */
  async seal(state: LevelState): Promise<HistoryHead | undefined> {
    await this.record(state);
    return this.head();
  }

  /** The thread was saved (a checkpoint, which dropped every step): steps start again from it. */
  committed(revision: number | undefined, state: LevelState): void {
    if (revision !== undefined) this.#base = revision;
    this.#messages = [...state.messages];
    this.#data = JSON.stringify(state.data);
    this.#mark = this.files?.mark;
    this.#hasBase = !!(this.files?.ref || this.files?.bytes);
    this.#lastSnapshot = undefined;
  }

  /** Commits what changed since the last step (with `mark`); resolves once it is stored. Steps
   * are written one at a time, in the order asked. */
  record(state: LevelState, mark: StepMark = {}): Promise<void> {
    const next = this.#chain.then(() => this.#write(state, mark));
    this.#chain = next.catch(() => undefined);
    return next;
  }

  /** Drops this run's steps (a run refused with `conflict` leaves nothing behind). */
  async discard(): Promise<void> {
    await this.#chain;
    await this.ops.deleteSteps(this.threadId, this.runId);
  }

  async #write(state: LevelState, mark: StepMark): Promise<void> {
    const now = state.messages;
    const max = Math.min(now.length, this.#messages.length);
    let keep = 0;
    while (keep < max && now[keep] === this.#messages[keep]) keep++;
    const doc: StepDoc = { keep, append: now.slice(keep) };
    const data = JSON.stringify(state.data);
    const first = this.#seq === 0;
    // A run's first step carries the whole data: a point never depends on another run's data.
    if (data !== this.#data || (first && this.#kept)) doc.data = state.data;
    if (first && this.#kept) {
      if (this.#from) doc.from = pointId(this.#from);
      doc.depth = this.#depth + 1;
    }
    if (mark.started !== undefined) doc.started = mark.started;
    if (mark.done) doc.done = mark.done;
    // A base holds the whole files, when the thread has any.
    const files = await this.#filesChange(first && this.#kept && !this.#from && !!(this.files?.ref || this.files?.bytes));
    if (files) doc.files = files.kind;
    const writes = this.#writes?.() ?? [];
    if (writes.length > 0) doc.writes = writes;
    const unchanged = keep === this.#messages.length && keep === now.length && data === this.#data && !files && writes.length === 0;
    if (unchanged && !mark.started && !mark.done) return;
    const seq = this.#seq + 1;
    await this.ops.putStep(this.threadId, {
      runId: this.runId,
      seq,
      baseRevision: this.#base,
      doc: JSON.stringify(doc),
      ...(files && { files: files.bytes }),
      savedAt: Date.now(),
    });
    this.#seq = seq;
    this.#depth += 1;
    this.#messages = [...now];
    this.#data = data;
    if (files) {
      this.#mark = files.mark;
      this.#hasBase = true;
      if (files.snapshot) this.#lastSnapshot = files.snapshot;
    }
  }

  /** The files written since the last step: a delta when the state can tell one, else a full
   * snapshot (for a thread-scoped backend that is not a StateBackend: only when it differs). */
  async #filesChange(
    whole: boolean,
  ): Promise<{ kind: "full" | "delta"; bytes: Uint8Array; mark: StateMark | undefined; snapshot?: Uint8Array } | undefined> {
    const state = this.files?.state;
    if (!state) return undefined;
    if (tracksChanges(state)) {
      const tracked = await state.changesSince(this.#mark);
      if (tracked.unchanged && !whole) return undefined;
      if (tracked.delta && this.#hasBase) return { kind: "delta", bytes: tracked.delta, mark: tracked.mark };
      const bytes = await state.snapshot();
      return { kind: "full", bytes, mark: (await state.changesSince(undefined)).mark };
    }
    const bytes = await state.snapshot();
    const last = this.#lastSnapshot ?? this.files?.bytes;
    if (!whole && last && last.byteLength === bytes.byteLength && last.every((b, i) => b === bytes[i])) return undefined;
    return { kind: "full", bytes, mark: undefined, snapshot: bytes };
  }
}

/** `data` with the tool phase `messages` leave open ({@link OPEN_TOOLS}: the results `done` and
 * the calls `started` of the last assistant message's calls), or without one when none is open. */
export function withOpenTools(
  messages: readonly Message[],
  data: Record<string, unknown>,
  done: Record<string, Message>,
  started: Iterable<string>,
): Record<string, unknown> {
  const last = messages.at(-1);
  const calls = last?.role === "assistant" ? (last.toolCalls ?? []) : [];
  if (calls.length > 0) {
    const ids = new Set(calls.map((c) => c.id));
    const phase: OpenTools = {
      done: Object.fromEntries(Object.entries(done).filter(([id]) => ids.has(id))),
      started: [...started].filter((id) => ids.has(id) && !(id in done)),
    };
    return { ...data, [OPEN_TOOLS]: phase };
  }
  const { [OPEN_TOOLS]: _, ...rest } = data;
  return rest;
}

/** A dead run's steps folded into its thread: the checkpoint to put (from the revision the steps
 * extend), and how many steps the run had committed. */
export interface AdoptedRun {
  checkpoint: Checkpoint;
  steps: number;
  runId: string;
  /** The history point the adopted state equals, when the steps tell their depth. */
  head?: HistoryHead;
}

/**
 * The thread as the steps of a dead run left it, when `steps` hold a run that extends `saved`
 * (steps on another revision are stale: a run refused with `conflict`, or one whose thread was
 * saved since). A tool phase left open goes into `data` ({@link OPEN_TOOLS}) for the loop to
 * close. Damaged steps are a {@link ResumeError} (nothing is changed).
 */
export function adoptSteps(saved: Checkpoint | undefined, steps: RunStep[], core: Core): AdoptedRun | undefined {
  const base = saved?.revision ?? 0;
  const current = steps.filter((s) => s.baseRevision === base);
  const runId = current[0]?.runId;
  if (runId === undefined) return undefined;
  const mine = current.filter((s) => s.runId === runId).sort((a, b) => a.seq - b.seq);
  try {
    let messages = [...(saved?.messages ?? [])];
    let data: Record<string, unknown> = { ...(saved?.data ?? {}) };
    let files = saved ? checkpointFiles(saved, core) : undefined;
    const open = data[OPEN_TOOLS] as OpenTools | undefined;
    const done: Record<string, Message> = { ...(open?.done ?? {}) };
    const started = new Set(open?.started ?? []);
    let count = 0;
    let depth: number | undefined;
    for (const step of mine) {
      // Steps are taken up to the first gap (a step never stored ends the run's record).
      if (step.seq !== count + 1) break;
      const doc = JSON.parse(step.doc) as StepDoc;
      if (!Number.isInteger(doc.keep) || doc.keep < 0 || doc.keep > messages.length || !Array.isArray(doc.append))
        throw new Error(`step ${step.seq} is malformed`);
      messages = [...messages.slice(0, doc.keep), ...doc.append];
      if (count === 0 && Number.isSafeInteger(doc.depth)) depth = doc.depth;
      if (doc.data !== undefined) data = doc.data;
      if (doc.started !== undefined) started.add(doc.started);
      if (doc.done) done[doc.done[0]] = doc.done[1];
      if (doc.files && step.files) {
        if (doc.files === "full") files = step.files;
        else if (files) files = core.applyFileDeltas(files, [step.files]);
        else throw new Error(`step ${step.seq} changes files it has no base for`);
      }
      count++;
    }
    if (count === 0) return undefined;
    data = withOpenTools(messages, data, done, started);
    const checkpoint: Checkpoint = {
      messages,
      data,
      savedAt: Date.now(),
      ...(files && { files }),
      ...(saved?.userId !== undefined && { userId: saved.userId }),
    };
    const head = depth === undefined ? undefined : { runId, seq: count, depth: depth + count - 1 };
    return { checkpoint, steps: count, runId, ...(head && { head }) };
  } catch (e) {
    if (e instanceof EngramError && e.code !== "invalid_argument") throw e;
    throw new ResumeError(`cannot adopt the interrupted run of this thread: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** Where a thread's runs stand, for `engram threads list`: `interrupted` when a dead run left
 * committed steps (`step`: how many), `running` when a live run holds the thread. */
export async function runStatus(
  ops: StepOperations,
  threadId: string,
  revision: number | undefined,
): Promise<{ state: "interrupted" | "running"; step: number } | undefined> {
  const steps = (await ops.getSteps(threadId)).filter((s) => s.baseRevision === (revision ?? 0));
  const runId = steps[0]?.runId;
  let claim: Awaited<ReturnType<StepOperations["claimThread"]>>;
  try {
    claim = await ops.claimThread(threadId);
  } catch (e) {
    if (EngramError.hasCode(e, "conflict")) return { state: "running", step: steps.filter((s) => s.runId === runId).length };
    throw e;
  }
  await claim.release();
  if (runId === undefined) return undefined;
  return { state: "interrupted", step: steps.filter((s) => s.runId === runId).length };
}
