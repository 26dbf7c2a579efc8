/**
 * The checkpointer side of durable runs: the steps a run commits while it is under way (kept
 * beside the thread's checkpoint, never in it) and the claim that says which live run owns them.
 * Checkpointers store steps as given; what a step means is Engram's (`step-log.ts`).
 * @module
 */
import { EngramError } from "../errors.js";
import { checkKeyText } from "../stores/rules.js";

/** One committed step of a run under way (see `Checkpointer.putStep`). */
export interface RunStep {
  /** The run that wrote it (a non-empty string without NUL, at most 256 characters). */
  runId: string;
  /** 1, 2, … in the order the run wrote its steps. */
  seq: number;
  /** The revision of the thread's checkpoint the run's steps extend (0: none). */
  baseRevision: number;
  /** What the step changed, as JSON (Engram's format: checkpointers store it as is). */
  doc: string;
  /** The change to the thread's files, when they changed (Engram's format: stored as is). */
  files?: Uint8Array;
  /** Milliseconds since the epoch. */
  savedAt: number;
}

/** A live run's hold on a thread (see `Checkpointer.claimThread`). */
export interface ThreadClaim {
  /** Lets the thread go; calling it again does nothing. */
  release(): Promise<void>;
}

/** The checkpointer operations of durable runs, when a checkpointer has them all. */
export interface StepOperations {
  claimThread(threadId: string): Promise<ThreadClaim>;
  putStep(threadId: string, step: RunStep): Promise<void>;
  getSteps(threadId: string): Promise<RunStep[]>;
  deleteSteps(threadId: string, runId: string): Promise<void>;
}

/** Whether `checkpointer` has every operation of durable runs. */
export function hasStepOperations<T extends object>(checkpointer: T): checkpointer is T & StepOperations {
  const c = checkpointer as Partial<StepOperations>;
  return (
    typeof c.claimThread === "function" &&
    typeof c.putStep === "function" &&
    typeof c.getSteps === "function" &&
    typeof c.deleteSteps === "function"
  );
}

/** Validates a step; throws an `invalid_argument` {@link EngramError}. Returns a copy (bytes too). */
export function checkRunStep(step: RunStep): RunStep {
  const bad = (what: string) => new EngramError("invalid_argument", `a run step needs ${what}`);
  if (typeof step !== "object" || step === null) throw bad("to be an object");
  const runId = checkKeyText(step.runId, "a step's runId", false);
  if (runId.length > 256) throw bad("a runId of at most 256 characters");
  if (!Number.isSafeInteger(step.seq) || step.seq < 1) throw bad(`seq an integer ≥ 1, got ${String(step.seq)}`);
  if (!Number.isSafeInteger(step.baseRevision) || step.baseRevision < 0)
    throw bad(`baseRevision an integer ≥ 0, got ${String(step.baseRevision)}`);
  if (typeof step.doc !== "string") throw bad("doc as a string");
  if (step.files !== undefined && !(step.files instanceof Uint8Array)) throw bad("files as a Uint8Array");
  const savedAt = typeof step.savedAt === "number" && Number.isFinite(step.savedAt) ? step.savedAt : Date.now();
  return {
    runId,
    seq: step.seq,
    baseRevision: step.baseRevision,
    doc: step.doc,
    ...(step.files && { files: new Uint8Array(step.files) }),
    savedAt,
  };
}

/** The `conflict` error of a claim refused because a live run holds the thread. */
export function threadBusy(threadId: string): EngramError {
  return new EngramError(
    "conflict",
    `thread '${threadId}' is being run by another live run (it holds the thread until it ends): run it again when that run has ended`,
  );
}

/** The `conflict` error of a step stored twice. */
export function stepConflict(threadId: string, runId: string, seq: number): EngramError {
  return new EngramError("conflict", `thread '${threadId}': run '${runId}' already stored its step ${seq}`);
}

/** A {@link ThreadClaim} whose `release` runs `letGo` the first time only (a second call, or
 * one while the first is under way, does nothing more). */
export function releasedOnce(letGo: () => void | Promise<void>): ThreadClaim {
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      await letGo();
    },
  };
}

/** Claims of threads held in this process: for checkpointers whose storage is the process
 * itself (or a private in-memory database), the process is the owner's liveness. */
export class ProcessClaims {
  readonly #held = new Set<string>();

  claim(threadId: string): ThreadClaim {
    if (this.#held.has(threadId)) throw threadBusy(threadId);
    this.#held.add(threadId);
    return releasedOnce(() => {
      this.#held.delete(threadId);
    });
  }
}

/** A step a save kept as a point of the thread's history (see `Checkpointer.getHistory`). */
export interface HistoryStep extends RunStep {
  /** The revision of the save that kept it: points are ordered by it, then run and `seq`. */
  keptAt: number;
}

/** How much history a thread keeps: the newest `maxPoints` points no older than `maxAgeMs`. */
export interface HistoryRetention {
  /** Default: 100. */
  maxPoints?: number;
  /** Milliseconds. Default: 30 days. */
  maxAgeMs?: number;
}

/** Options of `Checkpointer.put`. */
export interface PutCheckpointOptions {
  /** The run whose steps extending the stored revision the put keeps as history points
   * (checkpointers with {@link HistoryOperations}); every other step of the thread is dropped. */
  keepSteps?: string;
}

/** One history point, by its run and sequence number. */
export interface StepKey {
  runId: string;
  seq: number;
}

/** The checkpointer operations of thread history, with {@link StepOperations} and the
 * `keepSteps` option of `put`. */
export interface HistoryOperations extends StepOperations {
  getHistory(threadId: string): Promise<HistoryStep[]>;
  deleteHistory(threadId: string, points: readonly StepKey[]): Promise<void>;
}

/** Whether `checkpointer` keeps thread history (and has every operation of durable runs). */
export function hasHistoryOperations<T extends object>(checkpointer: T): checkpointer is T & HistoryOperations {
  const c = checkpointer as Partial<HistoryOperations>;
  return hasStepOperations(checkpointer) && typeof c.getHistory === "function" && typeof c.deleteHistory === "function";
}

/** History points in their order: by the save that kept them, then run, then `seq`. */
export function historyOrder(a: HistoryStep, b: HistoryStep): number {
  if (a.keptAt !== b.keptAt) return a.keptAt - b.keptAt;
  if (a.runId !== b.runId) return a.runId < b.runId ? -1 : 1;
  return a.seq - b.seq;
}

/** Validates {@link PutCheckpointOptions}; throws an `invalid_argument` {@link EngramError}. */
export function checkPutOptions(options: PutCheckpointOptions | undefined): string | undefined {
  if (options === undefined || options.keepSteps === undefined) return undefined;
  return checkKeyText(options.keepSteps, "keepSteps (a run id)", false);
}

/** Validates the points of `deleteHistory`; throws an `invalid_argument` {@link EngramError}. */
export function checkStepKeys(points: readonly StepKey[]): StepKey[] {
  if (!Array.isArray(points)) throw new EngramError("invalid_argument", "deleteHistory needs an array of { runId, seq }");
  return points.map((p) => {
    if (typeof p !== "object" || p === null || !Number.isSafeInteger(p.seq) || p.seq < 1)
      throw new EngramError("invalid_argument", "a history point needs a runId and an integer seq ≥ 1");
    return { runId: checkKeyText(p.runId, "a history point's runId", false), seq: p.seq };
  });
}
