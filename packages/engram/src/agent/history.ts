/**
 * A thread's history: the steps its runs committed, kept by each save as points of its past
 * (`Checkpointer.getHistory`). Reading a point replays the steps from the nearest base before
 * it; a fork saves a point as a new thread, a rewind saves it as the thread again. Retention
 * (how many points, how old) decides what is listed; points nothing listed depends on are
 * dropped. See `docs/guides/durable-runs.md`.
 * @module
 */
import type { Backend } from "../backends/protocol.js";
import type { Core } from "../core/types.js";
import { EngramError } from "../errors.js";
import type { Message } from "../models/types.js";
import { type Checkpoint, type Checkpointer, type HistoryHead, checkThreadId } from "./checkpointer.js";
import { type FileWrite, undoWrites } from "./file-writes.js";
import { type HistoryOperations, type HistoryRetention, type HistoryStep, type StepKey, hasHistoryOperations } from "./run-steps.js";
import { OPEN_TOOLS, type OpenTools, type StepDoc as PointDoc, pointId, withOpenTools } from "./step-log.js";

export type { HistoryRetention } from "./run-steps.js";

/** {@link HistoryRetention} with its defaults. */
export const DEFAULT_HISTORY_RETENTION: Required<HistoryRetention> = { maxPoints: 100, maxAgeMs: 30 * 24 * 3600 * 1000 };

/** Validates a retention; throws an `invalid_argument` {@link EngramError}. */
export function checkRetention(retention: HistoryRetention | undefined): Required<HistoryRetention> {
  const r = retention ?? {};
  if (typeof r !== "object" || r === null) throw new EngramError("invalid_argument", "history retention must be an object");
  const maxPoints = r.maxPoints ?? DEFAULT_HISTORY_RETENTION.maxPoints;
  const maxAgeMs = r.maxAgeMs ?? DEFAULT_HISTORY_RETENTION.maxAgeMs;
  if (!Number.isSafeInteger(maxPoints) || maxPoints < 1)
    throw new EngramError("invalid_argument", `history maxPoints must be a positive integer, got ${String(r.maxPoints)}`);
  if (typeof maxAgeMs !== "number" || !(maxAgeMs > 0))
    throw new EngramError("invalid_argument", `history maxAgeMs must be a positive number, got ${String(r.maxAgeMs)}`);
  return { maxPoints, maxAgeMs };
}

/** One point of a thread's history, as {@link listHistory} reports it. */
export interface HistoryPoint {
  /** `runId:seq`: what {@link readHistoryPoint}, {@link forkThread} and {@link rewindThread} take. */
  id: string;
  runId: string;
  seq: number;
  savedAt: number;
  /** How many messages the thread had at this point. */
  messages: number;
  /** What the step was: a model turn, a tool call about to run, a tool call's result, or
   * another change of the state (a base, the state a run saved). */
  kind: "turn" | "call" | "result" | "state";
  /** Whether the thread's saved state is this point. */
  current: boolean;
}

/** The thread's state at a history point. */
export interface PointState {
  /** The thread's messages. Inside a tool phase (a point after a call started or returned),
   * its last message is the model's calls, and the results so far are in `data`
   * (`engram.openTools`): a run from this state closes the phase as a resumed run would. */
  messages: Message[];
  data: Record<string, unknown>;
  /** The thread's State files (a `StateBackend` snapshot), when it had any. */
  files?: Uint8Array;
  /** The point, as a checkpoint's {@link HistoryHead}. */
  head: HistoryHead;
}

/** The history operations of `checkpointer`, or an `unsupported` {@link EngramError}. */
export function historyOf(checkpointer: Checkpointer): Checkpointer & HistoryOperations {
  if (!hasHistoryOperations(checkpointer))
    throw new EngramError(
      "unsupported",
      "this checkpointer keeps no thread history (it needs claimThread, putStep, getSteps, deleteSteps, getHistory and deleteHistory)",
    );
  return checkpointer;
}

function parseDoc(step: HistoryStep): PointDoc {
  let doc: PointDoc;
  try {
    doc = JSON.parse(step.doc) as PointDoc;
  } catch {
    throw damaged(step, "its document is not JSON");
  }
  if (typeof doc !== "object" || doc === null || !Number.isInteger(doc.keep) || doc.keep < 0 || !Array.isArray(doc.append))
    throw damaged(step, "its document is malformed");
  return doc;
}

function damaged(step: StepKey, why: string): EngramError {
  return new EngramError("store_error", `damaged history point '${pointId(step)}': ${why}`);
}

/** The points of a thread by id, with their documents, in order. */
class Points {
  readonly byId = new Map<string, { step: HistoryStep; doc: PointDoc }>();
  readonly ordered: { step: HistoryStep; doc: PointDoc }[] = [];

  constructor(steps: HistoryStep[]) {
    for (const step of steps) {
      const entry = { step, doc: parseDoc(step) };
      this.byId.set(pointId(step), entry);
      this.ordered.push(entry);
    }
  }

  /** The id of the point `id` follows; undefined for a base. */
  parent(id: string): string | undefined {
    const entry = this.byId.get(id);
    if (!entry) return undefined;
    const { step, doc } = entry;
    if (step.seq > 1) return pointId({ runId: step.runId, seq: step.seq - 1 });
    return doc.from;
  }

  /** `id` and the points it follows back to its base, newest first; undefined when one is missing. */
  chain(id: string): string[] | undefined {
    const out: string[] = [];
    for (let at: string | undefined = id; at !== undefined; at = this.parent(at)) {
      if (!this.byId.has(at)) return undefined;
      out.push(at);
    }
    return out;
  }
}

/** The points retention lists, oldest first: the newest `maxPoints` younger than `maxAgeMs`
 * whose steps back to their base are all stored. */
function visible(points: Points, retention: Required<HistoryRetention>, now: number): string[] {
  const young = points.ordered.filter((p) => p.step.savedAt >= now - retention.maxAgeMs).map((p) => pointId(p.step));
  return young.slice(-retention.maxPoints).filter((id) => points.chain(id) !== undefined);
}

function kindOf(doc: PointDoc): HistoryPoint["kind"] {
  if (doc.started !== undefined) return "call";
  if (doc.done) return "result";
  if (doc.append.at(-1)?.role === "assistant") return "turn";
  return "state";
}

/** Options of {@link listHistory}. */
export interface ListHistoryOptions {
  retention?: HistoryRetention;
  /** The time retention measures ages from. Default: now. */
  now?: number;
}

/**
 * The thread's history points retention keeps, oldest first. Throws `unsupported` for a
 * checkpointer without history, `invalid_argument` for a bad thread id.
 */
export async function listHistory(checkpointer: Checkpointer, threadId: string, options: ListHistoryOptions = {}): Promise<HistoryPoint[]> {
  const ops = historyOf(checkpointer);
  checkThreadId(threadId);
  const retention = checkRetention(options.retention);
  const [steps, saved] = await Promise.all([ops.getHistory(threadId), checkpointer.get(threadId)]);
  const points = new Points(steps);
  const current = saved?.history && pointId(saved.history);
  const counts = new Map<string, number>();
  const count = (id: string): number => {
    const known = counts.get(id);
    if (known !== undefined) return known;
    // Iterative: a chain can be long.
    const chain = points.chain(id) ?? [];
    let n = 0;
    for (const at of chain.reverse()) {
      const { doc } = points.byId.get(at) as { doc: PointDoc };
      n = (counts.get(at) ?? doc.keep + doc.append.length) as number;
      counts.set(at, n);
    }
    return n;
  };
  return visible(points, retention, options.now ?? Date.now()).map((id) => {
    const { step, doc } = points.byId.get(id) as { step: HistoryStep; doc: PointDoc };
    return {
      id,
      runId: step.runId,
      seq: step.seq,
      savedAt: step.savedAt,
      messages: count(id),
      kind: kindOf(doc),
      current: id === current,
    };
  });
}

/** The state at one point of `points` (replayed from its base). */
function stateAt(points: Points, threadId: string, id: string, core: Pick<Core, "applyFileDeltas">): PointState {
  if (!points.byId.has(id))
    throw new EngramError("invalid_argument", `thread '${threadId}' has no history point '${id}' (see its history for the points kept)`);
  const chain = points.chain(id);
  if (!chain)
    throw new EngramError(
      "invalid_argument",
      `history point '${id}' of thread '${threadId}' can no longer be read (retention dropped a point it follows)`,
    );
  let messages: Message[] = [];
  let data: Record<string, unknown> = {};
  let files: Uint8Array | undefined;
  let depth = 0;
  let done: Record<string, Message> = {};
  let started = new Set<string>();
  for (const at of chain.reverse()) {
    const { step, doc } = points.byId.get(at) as { step: HistoryStep; doc: PointDoc };
    if (doc.keep > messages.length) throw damaged(step, `it keeps ${doc.keep} messages of ${messages.length}`);
    messages = [...messages.slice(0, doc.keep), ...doc.append];
    if (doc.data !== undefined) {
      data = doc.data;
      const open = data[OPEN_TOOLS] as OpenTools | undefined;
      if (step.seq === 1) {
        done = { ...(open?.done ?? {}) };
        started = new Set(open?.started ?? []);
      }
    }
    if (doc.started !== undefined) started.add(doc.started);
    if (doc.done) done[doc.done[0]] = doc.done[1];
    if (doc.files && step.files) {
      if (doc.files === "full") files = step.files;
      else if (files) files = core.applyFileDeltas(files, [step.files]);
      else throw damaged(step, "it changes files it has no base for");
    }
    depth = step.seq === 1 && Number.isSafeInteger(doc.depth) ? (doc.depth as number) : depth + 1;
  }
  const { runId, seq } = (points.byId.get(id) as { step: HistoryStep }).step;
  data = withOpenTools(messages, data, done, started);
  return { messages, data, ...(files && { files }), head: { runId, seq, depth } };
}

/** The thread's state at point `id` (see {@link listHistory}): its messages, data and State files. */
export async function readHistoryPoint(
  checkpointer: Checkpointer,
  threadId: string,
  id: string,
  core: Pick<Core, "applyFileDeltas">,
): Promise<PointState> {
  const ops = historyOf(checkpointer);
  checkThreadId(threadId);
  return stateAt(new Points(await ops.getHistory(threadId)), threadId, checkPointId(id), core);
}

function checkPointId(id: unknown): string {
  if (typeof id !== "string" || !/^.+:[1-9][0-9]*$/s.test(id))
    throw new EngramError("invalid_argument", `a history point id is 'runId:seq', got ${JSON.stringify(String(id)).slice(0, 80)}`);
  return id;
}

/** The checkpoint that saves `state`, from `from`'s user (recall keeps searching only theirs). */
function checkpointOf(state: PointState, from: Checkpoint | undefined, head: boolean): Checkpoint {
  return {
    messages: state.messages,
    data: state.data,
    savedAt: Date.now(),
    ...(state.files && { files: state.files }),
    ...(from?.userId !== undefined && { userId: from.userId }),
    ...(head && { history: state.head }),
  };
}

/**
 * A new thread `newThreadId` whose state is the point `id` of `threadId` (messages, data, State
 * files); it starts a history of its own. A `conflict` when `newThreadId` exists already.
 * Resolves to its revision.
 */
export async function forkThread(
  checkpointer: Checkpointer,
  threadId: string,
  id: string,
  newThreadId: string,
  core: Pick<Core, "applyFileDeltas">,
): Promise<number | undefined> {
  checkThreadId(newThreadId);
  const state = await readHistoryPoint(checkpointer, threadId, id, core);
  const from = await checkpointer.get(threadId);
  const revision = await checkpointer.put(newThreadId, { ...checkpointOf(state, from, false), revision: 0 });
  return typeof revision === "number" ? revision : undefined;
}

/** Options of {@link rewindThread}. */
export interface RewindOptions {
  /** The thread's backend as its runs had it: the files its steps after the point wrote
   * outside the thread (a `FilesystemBackend`'s, a `StoreBackend`'s) are put back through it.
   * Needed when there are such writes. */
  backend?: Backend;
}

/**
 * The writes outside the thread to undo to go from the saved state (`head`) back to `target`,
 * oldest first: those of the points after their last common point. A `target` off the saved
 * state's line whose own points wrote files is `unsupported` (those writes cannot be redone).
 */
function writesToUndo(points: Points, head: HistoryHead | undefined, target: string): FileWrite[] {
  const line = head ? points.chain(pointId(head)) : undefined;
  if (!line) return [];
  const targetLine = points.chain(target) ?? [];
  const onTarget = new Set(targetLine);
  const since = line.slice(
    0,
    line.findIndex((id) => onTarget.has(id)),
  );
  const common = line.find((id) => onTarget.has(id));
  const branch = common === undefined ? targetLine : targetLine.slice(0, targetLine.indexOf(common));
  const writesOf = (ids: string[]) => ids.reverse().flatMap((id) => points.byId.get(id)?.doc.writes ?? []);
  if (writesOf([...branch]).length > 0)
    throw new EngramError(
      "unsupported",
      `history point '${target}' is on a line the thread left, and its steps wrote files outside the thread: rewind to a point on the current line, or fork from it`,
    );
  return writesOf(common === undefined ? [...line] : since);
}

/** What {@link rewindThread} did. */
export interface RewindResult {
  /** The thread's revision after the rewind. */
  revision: number | undefined;
  /** The point the thread now is. */
  point: string;
  /** How many messages the thread had before the rewind and has after it. */
  messagesBefore: number;
  messagesAfter: number;
  /** The files outside the thread put back (see {@link RewindOptions.backend}). */
  filesRestored: string[];
}

/**
 * Sets thread `threadId` back to its point `id`: its messages, data and State files are the
 * point's (a save, compare-and-swap on the revision read; the points after `id` stay in the
 * history, so a rewind can itself be undone), and files its runs wrote outside the thread since
 * get back what those writes replaced ({@link RewindOptions.backend}). All or nothing: every
 * such file is checked first — one changed by someone else since (its version is not the one
 * the run's write left) makes the rewind a `conflict` naming it, and nothing is changed. The
 * thread is claimed meanwhile: while a live run holds it, the rewind is a `conflict` too.
 */
export async function rewindThread(
  checkpointer: Checkpointer,
  threadId: string,
  id: string,
  core: Pick<Core, "applyFileDeltas">,
  options: RewindOptions = {},
): Promise<RewindResult> {
  const ops = historyOf(checkpointer);
  checkThreadId(threadId);
  const claim = await ops.claimThread(threadId);
  try {
    const points = new Points(await ops.getHistory(threadId));
    const state = stateAt(points, threadId, checkPointId(id), core);
    const saved = await checkpointer.get(threadId);
    const writes = writesToUndo(points, saved?.history, id);
    if (writes.length > 0 && !options.backend)
      throw new EngramError(
        "invalid_argument",
        `thread '${threadId}': its steps after '${id}' wrote files outside the thread (${writes[0]?.path}, …): pass its backend to put them back`,
      );
    const filesRestored = options.backend ? await undoWrites(options.backend, writes) : [];
    const revision = await checkpointer.put(threadId, { ...checkpointOf(state, saved, true), revision: saved?.revision ?? 0 });
    return {
      revision: typeof revision === "number" ? revision : undefined,
      point: id,
      messagesBefore: saved?.messages.length ?? 0,
      messagesAfter: state.messages.length,
      filesRestored,
    };
  } finally {
    await claim.release();
  }
}

/**
 * Drops the thread's points that retention no longer lists and nothing listed follows (nor
 * the thread's saved state `head`): the saved state and every listed point stay readable.
 * Resolves to how many points were dropped.
 */
export async function pruneHistory(
  ops: HistoryOperations,
  threadId: string,
  retention: HistoryRetention | undefined,
  head: HistoryHead | undefined,
  now = Date.now(),
): Promise<number> {
  const r = checkRetention(retention);
  const steps = await ops.getHistory(threadId);
  const points = new Points(steps);
  const needed = new Set<string>();
  for (const id of [...visible(points, r, now), ...(head ? [pointId(head)] : [])]) for (const at of points.chain(id) ?? []) needed.add(at);
  const drop = steps.filter((s) => !needed.has(pointId(s))).map((s) => ({ runId: s.runId, seq: s.seq }));
  if (drop.length > 0) await ops.deleteHistory(threadId, drop);
  return drop.length;
}
