/**
 * `DurableObjectCheckpointer`: thread checkpoints in a SQLite-backed Durable Object's storage
 * (the same as the store's, or another). The files are a full snapshot plus the deltas saved
 * after it; a save writes only the files that changed. Documents and files are kept in parts,
 * since a row holds at most 2 MB.
 * @module
 */
import {
  type Checkpoint,
  type Checkpointer,
  type FilesRef,
  type GetCheckpointOptions,
  type HistoryStep,
  type ListThreadsOptions,
  ProcessClaims,
  type PutCheckpointOptions,
  type RunStep,
  type StepKey,
  type ThreadClaim,
  type ThreadInfo,
  assembleCheckpoint,
  checkPutOptions,
  checkStepKeys,
  checkThreadId,
  checkThreadLimit,
  decodeCheckpoint,
  encodeCheckpoint,
  filesConflict,
  revisionConflict,
  sameFiles,
} from "engram/kit";
import { deleteHistorySteps, deleteRunSteps, dropAllSteps, getHistorySteps, getRunSteps, keepRunSteps, putRunStep } from "./run-steps.js";
import { nextRevision, openSchema } from "./schema.js";
import { type DurableObjectSqlStorage, blobParts, first, guard, joinBlobs, rows, textParts, threadPage } from "./sql.js";

interface HeadRow {
  revision: number;
  files_id: string | null;
  files_deltas: number | null;
}

const refOf = (row: HeadRow | undefined): FilesRef | undefined =>
  row?.files_id != null && row.files_deltas != null ? { id: row.files_id, deltas: row.files_deltas } : undefined;

/** A {@link Checkpointer} on a Durable Object's SQLite storage: `new DurableObjectCheckpointer(ctx.storage)`. */
export class DurableObjectCheckpointer implements Checkpointer {
  readonly #storage: DurableObjectSqlStorage;
  /** Saves append the changed files as a delta (see {@link Checkpointer.incremental}). */
  readonly incremental = true;
  /** Runs commit every step by default (see {@link Checkpointer.durable}). */
  readonly durable = true;
  readonly #claims = new ProcessClaims();

  constructor(storage: DurableObjectSqlStorage) {
    this.#storage = openSchema(storage);
  }

  /** Claims the thread for a run in this object (see {@link Checkpointer.claimThread}): an
   * object runs in one place at a time, so its process is the owner's liveness — a claim ends
   * with the run, or with the object's process (a crash, an eviction, a deploy). */
  async claimThread(threadId: string): Promise<ThreadClaim> {
    checkThreadId(threadId);
    return this.#claims.claim(threadId);
  }

  async putStep(threadId: string, step: RunStep): Promise<void> {
    checkThreadId(threadId);
    guard(() => putRunStep(this.#storage, threadId, step));
  }

  async getSteps(threadId: string): Promise<RunStep[]> {
    checkThreadId(threadId);
    return guard(() => getRunSteps(this.#storage, threadId));
  }

  async deleteSteps(threadId: string, runId: string): Promise<void> {
    checkThreadId(threadId);
    guard(() => deleteRunSteps(this.#storage, threadId, runId));
  }

  async getHistory(threadId: string): Promise<HistoryStep[]> {
    checkThreadId(threadId);
    return guard(() => getHistorySteps(this.#storage, threadId));
  }

  async deleteHistory(threadId: string, points: readonly StepKey[]): Promise<void> {
    checkThreadId(threadId);
    const keys = checkStepKeys(points);
    guard(() => deleteHistorySteps(this.#storage, threadId, keys));
  }

  async get(threadId: string, options: GetCheckpointOptions = {}): Promise<Checkpoint | undefined> {
    checkThreadId(threadId);
    const { sql } = this.#storage;
    // Synchronous reads: no other request of the object runs in between, so the document and
    // the parts it names are as one save left them.
    return guard(() => {
      const head = first<HeadRow>(sql, "SELECT revision, files_id, files_deltas FROM engram_checkpoints WHERE thread_id = ?", threadId);
      if (!head) return undefined;
      const doc = rows<{ text: string }>(sql, "SELECT text FROM engram_checkpoint_docs WHERE thread_id = ? ORDER BY part", threadId)
        .map((r) => r.text)
        .join("");
      const ref = refOf(head);
      if (!ref || sameFiles(ref, options.knownFiles)) return { ...decodeCheckpoint(doc), revision: head.revision };
      const bySeq = new Map<number, ArrayBuffer[]>();
      for (const r of rows<{ seq: number; bytes: ArrayBuffer }>(
        sql,
        "SELECT seq, bytes FROM engram_checkpoint_files WHERE thread_id = ? AND seq <= ? ORDER BY seq, part",
        threadId,
        ref.deltas,
      )) {
        const parts = bySeq.get(r.seq) ?? [];
        parts.push(r.bytes);
        bySeq.set(r.seq, parts);
      }
      const parts = [...bySeq].map(([seq, p]) => ({ seq, bytes: joinBlobs(p) }));
      return { ...assembleCheckpoint(doc, parts), revision: head.revision };
    });
  }

  async put(threadId: string, checkpoint: Checkpoint, options?: PutCheckpointOptions): Promise<number> {
    checkThreadId(threadId);
    const e = encodeCheckpoint(checkpoint);
    const keep = checkPutOptions(options);
    const { sql } = this.#storage;
    const addFiles = (seq: number, bytes: Uint8Array) => {
      for (const [part, b] of blobParts(bytes).entries()) {
        sql.exec("INSERT INTO engram_checkpoint_files (thread_id, seq, part, bytes) VALUES (?, ?, ?, ?)", threadId, seq, part, b);
      }
    };
    return guard(() =>
      this.#storage.transactionSync((): number => {
        const stored = first<HeadRow>(sql, "SELECT revision, files_id, files_deltas FROM engram_checkpoints WHERE thread_id = ?", threadId);
        const revision = stored?.revision ?? 0;
        if (e.expected !== undefined && e.expected !== revision) throw revisionConflict(threadId, e.expected, revision);
        if (e.base && !sameFiles(refOf(stored), e.base)) throw filesConflict(threadId, e.base, refOf(stored));
        const next = nextRevision(this.#storage);
        sql.exec(
          "INSERT INTO engram_checkpoints (thread_id, format, saved_at, interrupted, revision, files_id, files_deltas) VALUES (?, ?, ?, ?, ?, ?, ?) " +
            "ON CONFLICT (thread_id) DO UPDATE SET format = excluded.format, saved_at = excluded.saved_at, " +
            "interrupted = excluded.interrupted, revision = excluded.revision, files_id = excluded.files_id, files_deltas = excluded.files_deltas",
          threadId,
          e.version,
          e.savedAt,
          e.interrupted ? 1 : 0,
          next,
          e.filesRef?.id ?? null,
          e.filesRef?.deltas ?? null,
        );
        // A save holds the whole thread: the steps of the run that made it go (kept as history
        // when asked).
        if (keep !== undefined) keepRunSteps(this.#storage, threadId, keep, revision, next);
        deleteRunSteps(this.#storage, threadId);
        sql.exec("DELETE FROM engram_checkpoint_docs WHERE thread_id = ?", threadId);
        for (const [part, text] of textParts(e.doc).entries()) {
          sql.exec("INSERT INTO engram_checkpoint_docs (thread_id, part, text) VALUES (?, ?, ?)", threadId, part, text);
        }
        if (e.base) {
          // An append: only onto the files the caller saved.
          for (const [i, d] of e.deltas.entries()) addFiles(e.base.deltas + 1 + i, d);
          return next;
        }
        sql.exec("DELETE FROM engram_checkpoint_files WHERE thread_id = ?", threadId);
        if (e.files) {
          addFiles(0, e.files);
          for (const [i, d] of e.deltas.entries()) addFiles(1 + i, d);
        }
        return next;
      }),
    );
  }

  async delete(threadId: string): Promise<void> {
    checkThreadId(threadId);
    guard(() =>
      this.#storage.transactionSync(() => {
        for (const table of ["engram_checkpoints", "engram_checkpoint_docs", "engram_checkpoint_files"]) {
          this.#storage.sql.exec(`DELETE FROM ${table} WHERE thread_id = ?`, threadId);
        }
        dropAllSteps(this.#storage, threadId);
      }),
    );
  }

  async list(options: ListThreadsOptions = {}): Promise<{ threads: ThreadInfo[]; cursor?: string }> {
    const after = options.cursor === undefined ? undefined : checkThreadId(options.cursor);
    const limit = checkThreadLimit(options.limit);
    const found = guard(() =>
      rows<{ thread_id: string; saved_at: number; interrupted: number }>(
        this.#storage.sql,
        `SELECT thread_id, saved_at, interrupted FROM engram_checkpoints ${after === undefined ? "" : "WHERE thread_id > ?"} ORDER BY thread_id LIMIT ?`,
        ...(after === undefined ? [] : [after]),
        Number.isFinite(limit) ? limit + 1 : -1,
      ),
    );
    return threadPage(found, limit);
  }
}
