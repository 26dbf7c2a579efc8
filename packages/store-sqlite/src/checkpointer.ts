/**
 * `SqliteCheckpointer`: thread checkpoints in the same SQLite file as the store (or another).
 * The files are a full snapshot plus the deltas saved after it, as BLOBs beside the JSON document
 * (which names them), with the format version; a save writes only the files that changed.
 * @module
 */
import {
  type Checkpoint,
  type Checkpointer,
  type ListThreadsOptions,
  type ThreadInfo,
  checkThreadId,
  checkThreadLimit,
  type GetCheckpointOptions,
  type MessageSearchHit,
  type MessageSearchQuery,
  assembleCheckpoint as assemble,
  checkMessageSearch,
  decodeCheckpoint,
  encodeCheckpoint,
  filesConflict,
  revisionConflict,
  sameFiles,
  type HistoryStep,
  type PutCheckpointOptions,
  type RunStep,
  type StepKey,
  type ThreadClaim,
  ProcessClaims,
  checkPutOptions,
  checkRunStep,
  checkStepKeys,
  historyOrder,
  stepConflict,
} from "engram/kit";
import { type SqliteDatabase, type SqliteOptions, defaultDatabasePath, guard, openDatabase } from "./database.js";
import { claimLockFile } from "./run-claims.js";
import { indexThread, searchIndex, unindexThread } from "./message-index.js";

/** A stored step's row. */
interface StepRow {
  run_id: string;
  seq: number;
  base_revision: number;
  saved_at: number;
  doc: string;
  files: Uint8Array | null;
}

function stepOf(r: StepRow): RunStep {
  return {
    runId: r.run_id,
    seq: r.seq,
    baseRevision: r.base_revision,
    savedAt: r.saved_at,
    doc: r.doc,
    ...(r.files && { files: new Uint8Array(r.files) }),
  };
}

/** Options of {@link SqliteCheckpointer}. */
export interface SqliteCheckpointerOptions extends SqliteOptions {}

/** A {@link Checkpointer} on SQLite; safe to share between processes. */
export class SqliteCheckpointer implements Checkpointer {
  readonly #db: SqliteDatabase;
  /** Saves append the changed files as a delta (see {@link Checkpointer.incremental}). */
  readonly incremental = true;
  /** A file: runs commit every step by default (see {@link Checkpointer.durable}). */
  readonly durable: boolean;
  /** Where the runs' lock files live (`<database>.runs/`); none for a private in-memory
   * database, whose runs are this process's. */
  readonly #lockDir: string | undefined;
  readonly #processClaims = new ProcessClaims();

  constructor(options: SqliteCheckpointerOptions = {}) {
    this.#db = openDatabase(options);
    const path = options.path ?? defaultDatabasePath();
    const inMemory = path === ":memory:" || path === "";
    this.durable = !inMemory;
    this.#lockDir = inMemory ? undefined : `${path}.runs`;
  }

  /** Claims the thread with a kernel lock on its lock file beside the database (see
   * {@link Checkpointer.claimThread}): released when the run ends or its process dies. */
  async claimThread(threadId: string): Promise<ThreadClaim> {
    checkThreadId(threadId);
    if (this.#lockDir === undefined) return this.#processClaims.claim(threadId);
    return claimLockFile(this.#lockDir, threadId);
  }

  async putStep(threadId: string, step: RunStep): Promise<void> {
    checkThreadId(threadId);
    const s = checkRunStep(step);
    guard(() => {
      try {
        this.#db
          .prepare(
            "INSERT INTO engram_run_steps (thread_id, run_id, seq, base_revision, saved_at, doc, files) VALUES (?, ?, ?, ?, ?, ?, ?)",
          )
          .run(threadId, s.runId, s.seq, s.baseRevision, s.savedAt, s.doc, s.files ? Buffer.from(s.files) : null);
      } catch (e) {
        if ((e as { code?: unknown }).code === "SQLITE_CONSTRAINT_UNIQUE") throw stepConflict(threadId, s.runId, s.seq);
        throw e;
      }
    });
  }

  async getSteps(threadId: string): Promise<RunStep[]> {
    checkThreadId(threadId);
    const rows = guard(
      () =>
        this.#db
          .prepare(
            "SELECT run_id, seq, base_revision, saved_at, doc, files FROM engram_run_steps WHERE thread_id = ? AND kept_at IS NULL ORDER BY run_id, seq",
          )
          .all(threadId) as StepRow[],
    );
    return rows.map(stepOf);
  }

  async getHistory(threadId: string): Promise<HistoryStep[]> {
    checkThreadId(threadId);
    const rows = guard(
      () =>
        this.#db
          .prepare(
            "SELECT run_id, seq, base_revision, saved_at, doc, files, kept_at FROM engram_run_steps WHERE thread_id = ? AND kept_at IS NOT NULL",
          )
          .all(threadId) as (StepRow & { kept_at: number })[],
    );
    return rows.map((r) => ({ ...stepOf(r), keptAt: r.kept_at })).sort(historyOrder);
  }

  async deleteHistory(threadId: string, points: readonly StepKey[]): Promise<void> {
    checkThreadId(threadId);
    const keys = checkStepKeys(points);
    const drop = this.#db.prepare("DELETE FROM engram_run_steps WHERE thread_id = ? AND run_id = ? AND seq = ? AND kept_at IS NOT NULL");
    guard(() =>
      this.#db.transaction(() => {
        for (const k of keys) drop.run(threadId, k.runId, k.seq);
      })(),
    );
  }

  async deleteSteps(threadId: string, runId: string): Promise<void> {
    checkThreadId(threadId);
    guard(() =>
      this.#db.prepare("DELETE FROM engram_run_steps WHERE thread_id = ? AND run_id = ? AND kept_at IS NULL").run(threadId, runId),
    );
  }

  async get(threadId: string, options: GetCheckpointOptions = {}): Promise<Checkpoint | undefined> {
    checkThreadId(threadId);
    // One read transaction: the document and the files parts it names, as one writer left them.
    return guard(() =>
      this.#db.transaction(() => {
        const row = this.#db.prepare("SELECT doc, files, revision FROM engram_checkpoints WHERE thread_id = ?").get(threadId) as
          | { doc: string; files: Uint8Array | null; revision: number }
          | undefined;
        if (!row) return undefined;
        const head = decodeCheckpoint(row.doc, row.files);
        // Files kept in the row (the first format), or none, or the caller holds them already.
        if (row.files || !head.filesRef || sameFiles(head.filesRef, options.knownFiles)) return { ...head, revision: row.revision };
        const parts = this.#db
          .prepare("SELECT seq, bytes FROM engram_checkpoint_files WHERE thread_id = ? AND seq <= ? ORDER BY seq")
          .all(threadId, head.filesRef.deltas) as { seq: number; bytes: Uint8Array }[];
        return { ...assemble(row.doc, parts), revision: row.revision };
      })(),
    );
  }

  async put(threadId: string, checkpoint: Checkpoint, options?: PutCheckpointOptions): Promise<number> {
    checkThreadId(threadId);
    const e = encodeCheckpoint(checkpoint);
    const keep = checkPutOptions(options);
    // The run kept as history, then every other step under way dropped.
    const endSteps = (revision: number, next: number) => {
      if (keep !== undefined)
        this.#db
          .prepare("UPDATE engram_run_steps SET kept_at = ? WHERE thread_id = ? AND run_id = ? AND base_revision = ? AND kept_at IS NULL")
          .run(next, threadId, keep, revision);
      this.#db.prepare("DELETE FROM engram_run_steps WHERE thread_id = ? AND kept_at IS NULL").run(threadId);
    };
    const bytes = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength);
    const addParts = this.#db.prepare("INSERT INTO engram_checkpoint_files (thread_id, seq, bytes) VALUES (?, ?, ?)");
    return guard(() =>
      this.#db
        .transaction((): number => {
          // Writers take turns (an immediate transaction), so what is read here stays stored
          // until this commits: both checks are compare-and-swap.
          const stored = this.#db
            .prepare(
              // A damaged document names no files (json_extract would throw): it can be replaced.
              "SELECT CASE WHEN json_valid(doc) THEN json_extract(doc, '$.filesRef.id') END AS id, " +
                "CASE WHEN json_valid(doc) THEN json_extract(doc, '$.filesRef.deltas') END AS deltas, files, revision " +
                "FROM engram_checkpoints WHERE thread_id = ?",
            )
            .get(threadId) as { id: string | null; deltas: number | null; files: Uint8Array | null; revision: number } | undefined;
          const revision = stored?.revision ?? 0;
          if (e.expected !== undefined && e.expected !== revision) throw revisionConflict(threadId, e.expected, revision);
          const next = this.#db
            .prepare("UPDATE engram_counters SET value = value + 1 WHERE name = 'revision' RETURNING value")
            .pluck()
            .get() as number;
          if (e.base) {
            // An append: only onto the files the caller saved.
            const ref = stored?.id != null && stored.deltas != null && !stored.files ? { id: stored.id, deltas: stored.deltas } : undefined;
            if (!sameFiles(ref, e.base)) throw filesConflict(threadId, e.base, ref);
            for (const [i, d] of e.deltas.entries()) addParts.run(threadId, e.base.deltas + 1 + i, bytes(d));
            this.#db
              .prepare("UPDATE engram_checkpoints SET format = ?, doc = ?, saved_at = ?, interrupted = ?, revision = ? WHERE thread_id = ?")
              .run(e.version, e.doc, e.savedAt, e.interrupted ? 1 : 0, next, threadId);
            indexThread(this.#db, threadId, e.userId, checkpoint.messages);
            endSteps(revision, next);
            return next;
          }
          this.#db
            .prepare(
              "INSERT INTO engram_checkpoints (thread_id, format, doc, files, saved_at, interrupted, revision) VALUES (?, ?, ?, NULL, ?, ?, ?) " +
                "ON CONFLICT (thread_id) DO UPDATE SET format = excluded.format, doc = excluded.doc, files = NULL, " +
                "saved_at = excluded.saved_at, interrupted = excluded.interrupted, revision = excluded.revision",
            )
            .run(threadId, e.version, e.doc, e.savedAt, e.interrupted ? 1 : 0, next);
          this.#db.prepare("DELETE FROM engram_checkpoint_files WHERE thread_id = ?").run(threadId);
          if (e.files) {
            addParts.run(threadId, 0, bytes(e.files));
            for (const [i, d] of e.deltas.entries()) addParts.run(threadId, 1 + i, bytes(d));
          }
          indexThread(this.#db, threadId, e.userId, checkpoint.messages);
          endSteps(revision, next);
          return next;
        })
        .immediate(),
    );
  }

  async delete(threadId: string): Promise<void> {
    checkThreadId(threadId);
    guard(() =>
      this.#db.transaction(() => {
        this.#db.prepare("DELETE FROM engram_checkpoints WHERE thread_id = ?").run(threadId);
        this.#db.prepare("DELETE FROM engram_checkpoint_files WHERE thread_id = ?").run(threadId);
        this.#db.prepare("DELETE FROM engram_run_steps WHERE thread_id = ?").run(threadId);
        unindexThread(this.#db, threadId);
      })(),
    );
  }

  /** The user's threads, ranked by the database's full-text index (FTS5, BM25) over their user
   * and assistant messages (see {@link Checkpointer.searchMessages}). */
  async searchMessages(search: MessageSearchQuery): Promise<MessageSearchHit[]> {
    const checked = checkMessageSearch(search);
    return guard(() => searchIndex(this.#db, checked));
  }

  async list(options: ListThreadsOptions = {}): Promise<{ threads: ThreadInfo[]; cursor?: string }> {
    const after = options.cursor === undefined ? undefined : checkThreadId(options.cursor);
    const limit = checkThreadLimit(options.limit);
    const rows = guard(
      () =>
        this.#db
          .prepare(
            `SELECT thread_id, saved_at, interrupted FROM engram_checkpoints ${after === undefined ? "" : "WHERE thread_id > ?"} ORDER BY thread_id LIMIT ?`,
          )
          .all(...(after === undefined ? [] : [after]), Number.isFinite(limit) ? limit + 1 : -1) as {
          thread_id: string;
          saved_at: number;
          interrupted: number;
        }[],
    );
    const page = rows.slice(0, limit);
    const threads = page.map((r) => ({ threadId: r.thread_id, savedAt: r.saved_at, interrupted: r.interrupted === 1 }));
    return rows.length > page.length ? { threads, cursor: (page.at(-1) as { thread_id: string }).thread_id } : { threads };
  }

  /** Closes the connection. */
  close(): void {
    this.#db.close();
  }
}
