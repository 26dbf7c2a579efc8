/**
 * Saving the top level's state as the thread's checkpoint: compare-and-swap on the revision the
 * run loaded (a save another run made meanwhile is a `conflict`, never overwritten), only the
 * files written since the last save, the run's steps committed as a history point first when
 * the thread keeps history, then what a save leaves behind (steps restarted from it, history
 * pruned, the thread's files kept loaded for its next run).
 * @module
 */
import { EngramError } from "../errors.js";
import type { Checkpoint, Checkpointer } from "./checkpointer.js";
import { pruneHistory } from "./history.js";
import type { HistoryOperations, HistoryRetention } from "./run-steps.js";
import type { LevelState } from "./runtime.js";
import type { StepLog } from "./step-log.js";
import { type ThreadFiles, keepResident, saveWithFiles } from "./thread-backend.js";
import type { EventSink } from "./types.js";

/** Where and how a run's saves go. */
export interface SaveTarget {
  checkpointer: Checkpointer;
  threadId: string;
  /** Saved with the thread: recall searches only that user's threads. */
  userId?: string;
  /** The thread's files, and whether the run owns them (then they stay loaded after a save). */
  files: ThreadFiles | undefined;
  ownFiles: boolean;
  /** Which thread each loaded `StateBackend` belongs to (the agent's). */
  backendOwners: WeakMap<object, string>;
  /** The run's steps (a durable run). */
  log?: StepLog;
  /** The thread's history, when its steps are kept as points. */
  history?: { ops: HistoryOperations; retention: Required<HistoryRetention> };
  events: EventSink;
}

/** A run's saves: `revision` is the one the next save compares against (`undefined`: a
 * checkpointer without revisions, which saves unconditionally). */
export class ThreadSaves {
  constructor(
    readonly to: SaveTarget,
    public revision: number | undefined,
  ) {}

  /** Saves `s` as the thread's checkpoint; a save by another run since is a `conflict`. */
  async save(s: LevelState): Promise<void> {
    const { to } = this;
    const cp: Checkpoint = {
      messages: s.messages,
      data: s.data,
      savedAt: Date.now(),
      ...(to.userId !== undefined && { userId: to.userId }),
    };
    if (s.interrupt) cp.interrupt = s.interrupt;
    if (this.revision !== undefined) cp.revision = this.revision;
    // The saved state is a history point: the run's last step, committed first if it is not yet.
    const head = to.history && (await to.log?.seal(s));
    if (head) cp.history = head;
    try {
      // Only the files written since the last save, when the checkpointer appends deltas.
      this.revision = await saveWithFiles(to.checkpointer, to.threadId, cp, to.files, to.history && to.log && { keepSteps: to.log.runId });
    } catch (e) {
      if (!EngramError.hasCode(e, "conflict")) throw e;
      throw new EngramError(
        "conflict",
        `thread '${to.threadId}' was saved by another run while this one was under way: this run's messages and files were not saved (run it again to continue from that save). ${e.message}`,
        { cause: e },
      );
    }
    // The checkpoint dropped the thread's steps: the next ones extend it.
    to.log?.committed(this.revision, s);
    // Points retention no longer lists go (a failure leaves them, to go at a later save).
    if (to.history)
      await pruneHistory(to.history.ops, to.threadId, to.history.retention, head || undefined).catch((e: unknown) =>
        to.events.push({ type: "warning", message: `thread history not pruned: ${e instanceof Error ? e.message : String(e)}` }),
      );
    // Saved: the next run of this thread reuses the loaded files instead of restoring them.
    if (to.files && to.ownFiles) keepResident(to.backendOwners, to.threadId, to.files);
  }
}
