/**
 * `PostgresCheckpointer`: thread checkpoints on PostgreSQL (JSON document + files as bytea: a full
 * snapshot plus the deltas saved after it, so a save writes only the files that changed; with the
 * format version).
 * @module
 */
import {
  type Checkpoint,
  type Checkpointer,
  type ListThreadsOptions,
  type ThreadInfo,
  checkThreadId,
  checkThreadLimit,
  type Core,
  type GetCheckpointOptions,
  type MessageSearchHit,
  type MessageSearchQuery,
  assembleCheckpoint as assemble,
  checkMessageSearch,
  decodeCheckpoint,
  encodeCheckpoint,
  filesConflict,
  loadCore,
  revisionConflict,
  sameFiles,
  type HistoryStep,
  type PutCheckpointOptions,
  type RunStep,
  type StepKey,
  type ThreadClaim,
  checkPutOptions,
  checkRunStep,
  checkStepKeys,
  historyOrder,
  stepConflict,
} from "engram/kit";
import type pg from "pg";
import { PgDatabase, type PostgresOptions, storeError } from "./database.js";
import { RunClaims } from "./run-claims.js";
import { indexThread, searchIndex } from "./message-index.js";

/** A stored step's row. */
interface StepRow {
  run_id: string;
  seq: number;
  base_revision: string;
  saved_at: string;
  doc: string;
  files: Buffer | null;
}

function stepOf(row: StepRow): RunStep {
  return {
    runId: row.run_id,
    seq: row.seq,
    baseRevision: Number(row.base_revision),
    savedAt: Number(row.saved_at),
    doc: row.doc,
    ...(row.files && { files: new Uint8Array(row.files) }),
  };
}

/** Options of {@link PostgresCheckpointer}. */
export type PostgresCheckpointerOptions = PostgresOptions & {
  /** The core whose BM25 ranks {@link PostgresCheckpointer.searchMessages}. Default: `loadCore()`'s. */
  core?: Core | Promise<Core>;
};

/** A {@link Checkpointer} on PostgreSQL. Call `close()` when done. */
export class PostgresCheckpointer implements Checkpointer {
  readonly #db: PgDatabase;
  /** Saves append the changed files as a delta (see {@link Checkpointer.incremental}). */
  readonly incremental = true;
  /** Runs commit every step by default (see {@link Checkpointer.durable}). */
  readonly durable = true;
  readonly #core: Core | Promise<Core> | undefined;
  readonly #claims: RunClaims;

  constructor(options: PostgresCheckpointerOptions) {
    const { core, ...database } = options;
    this.#db = new PgDatabase(database as PostgresOptions);
    this.#core = core;
    this.#claims = new RunClaims(this.#db);
  }

  /** Claims the thread with a session-level advisory lock on a connection of its own (see
   * {@link Checkpointer.claimThread}): the server releases it when the run ends or the
   * connection dies with its process. */
  async claimThread(threadId: string): Promise<ThreadClaim> {
    checkThreadId(threadId);
    await this.#db.ready();
    return this.#claims.claim(threadId);
  }

  async putStep(threadId: string, step: RunStep): Promise<void> {
    checkThreadId(threadId);
    const s = checkRunStep(step);
    await this.#db.ready();
    try {
      await this.#db.pool.query(
        this.#sql(
          "INSERT INTO S.engram_run_steps (thread_id, run_id, seq, base_revision, saved_at, doc, files) VALUES ($1, $2, $3, $4, $5, $6, $7)",
        ),
        [threadId, s.runId, s.seq, s.baseRevision, s.savedAt, s.doc, s.files ? Buffer.from(s.files) : null],
      );
    } catch (e) {
      if ((e as { code?: unknown }).code === "23505") throw stepConflict(threadId, s.runId, s.seq);
      throw storeError(e);
    }
  }

  async getSteps(threadId: string): Promise<RunStep[]> {
    checkThreadId(threadId);
    const r = await this.#db.query<StepRow>(
      this.#sql(
        "SELECT run_id, seq, base_revision, saved_at, doc, files FROM S.engram_run_steps WHERE thread_id = $1 AND kept_at IS NULL ORDER BY run_id, seq",
      ),
      [threadId],
    );
    return r.rows.map(stepOf);
  }

  async deleteSteps(threadId: string, runId: string): Promise<void> {
    checkThreadId(threadId);
    await this.#db.query(this.#sql("DELETE FROM S.engram_run_steps WHERE thread_id = $1 AND run_id = $2 AND kept_at IS NULL"), [
      threadId,
      runId,
    ]);
  }

  async getHistory(threadId: string): Promise<HistoryStep[]> {
    checkThreadId(threadId);
    const r = await this.#db.query<StepRow & { kept_at: string }>(
      this.#sql(
        "SELECT run_id, seq, base_revision, saved_at, doc, files, kept_at FROM S.engram_run_steps WHERE thread_id = $1 AND kept_at IS NOT NULL",
      ),
      [threadId],
    );
    return r.rows.map((row) => ({ ...stepOf(row), keptAt: Number(row.kept_at) })).sort(historyOrder);
  }

  async deleteHistory(threadId: string, points: readonly StepKey[]): Promise<void> {
    checkThreadId(threadId);
    const keys = checkStepKeys(points);
    if (keys.length === 0) return;
    await this.#db.query(
      this.#sql(
        "DELETE FROM S.engram_run_steps WHERE thread_id = $1 AND kept_at IS NOT NULL AND (run_id, seq) IN (SELECT * FROM unnest($2::text[], $3::int[]))",
      ),
      [threadId, keys.map((k) => k.runId), keys.map((k) => k.seq)],
    );
  }

  /** The pool in use. */
  get pool(): pg.Pool {
    return this.#db.pool;
  }

  #sql(text: string): string {
    return text.replaceAll("S.", `${this.#db.schema}.`);
  }

  async get(threadId: string, options: GetCheckpointOptions = {}): Promise<Checkpoint | undefined> {
    checkThreadId(threadId);
    const r = await this.#db.query<{ doc: string; files: Buffer | null; revision: string }>(
      this.#sql("SELECT doc, files, revision FROM S.engram_checkpoints WHERE thread_id = $1"),
      [threadId],
    );
    const row = r.rows[0];
    if (!row) return undefined;
    const head = decodeCheckpoint(row.doc, row.files);
    // Files kept in the row (the first format), or none, or the caller holds them already.
    if (row.files || !head.filesRef || sameFiles(head.filesRef, options.knownFiles)) return { ...head, revision: Number(row.revision) };
    // The parts the document names, read with the document in one snapshot (REPEATABLE READ),
    // so a concurrent save cannot mix two versions.
    return this.#db.transaction(async (client) => {
      await client.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
      const again = await client.query<{ doc: string; files: Buffer | null; revision: string }>(
        this.#sql("SELECT doc, files, revision FROM S.engram_checkpoints WHERE thread_id = $1"),
        [threadId],
      );
      const now = again.rows[0];
      if (!now) return undefined;
      const ref = decodeCheckpoint(now.doc, now.files).filesRef;
      if (now.files || !ref) return { ...decodeCheckpoint(now.doc, now.files), revision: Number(now.revision) };
      const parts = await client.query<{ seq: number; bytes: Buffer }>(
        this.#sql("SELECT seq, bytes FROM S.engram_checkpoint_files WHERE thread_id = $1 AND seq <= $2 ORDER BY seq"),
        [threadId, ref.deltas],
      );
      return { ...assemble(now.doc, parts.rows), revision: Number(now.revision) };
    });
  }

  async put(threadId: string, checkpoint: Checkpoint, options?: PutCheckpointOptions): Promise<number> {
    const keep = checkPutOptions(options);
    checkThreadId(threadId);
    const e = encodeCheckpoint(checkpoint);
    const bytes = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength);
    const addParts = async (client: pg.PoolClient, first: number, parts: Uint8Array[]) => {
      for (const [i, d] of parts.entries()) {
        await client.query(this.#sql("INSERT INTO S.engram_checkpoint_files (thread_id, seq, bytes) VALUES ($1, $2, $3)"), [
          threadId,
          first + i,
          bytes(d),
        ]);
      }
    };
    return this.#db.transaction(async (client): Promise<number> => {
      try {
        // The stored row, locked until commit: the checks below are compare-and-swap.
        const r = await client.query<{ doc: string; files: boolean; revision: string }>(
          this.#sql("SELECT doc, files IS NOT NULL AS files, revision FROM S.engram_checkpoints WHERE thread_id = $1 FOR UPDATE"),
          [threadId],
        );
        const row = r.rows[0];
        const revision = row ? Number(row.revision) : 0;
        if (e.expected !== undefined && e.expected !== revision) throw revisionConflict(threadId, e.expected, revision);
        if (e.base) {
          // An append: only onto the files the caller saved.
          const ref = row && !row.files ? decodeCheckpoint(row.doc).filesRef : undefined;
          if (!sameFiles(ref, e.base)) throw filesConflict(threadId, e.base, ref);
          await addParts(client, e.base.deltas + 1, e.deltas);
          const updated = await client.query<{ revision: string }>(
            this.#sql(
              "UPDATE S.engram_checkpoints SET format = $2, doc = $3, saved_at = $4, interrupted = $5, revision = nextval('S.engram_revision') " +
                "WHERE thread_id = $1 RETURNING revision",
            ),
            [threadId, e.version, e.doc, e.savedAt, e.interrupted],
          );
          await indexThread(client, this.#sql("S.engram_thread_messages"), threadId, e.userId, checkpoint.messages);
          await this.#endSteps(client, threadId, keep, revision, Number(updated.rows[0]?.revision));
          return Number(updated.rows[0]?.revision);
        }
        // A new thread has no row to lock: a writer that inserted it meanwhile makes this
        // insert fail (unique key) when the put expected none, or is replaced otherwise.
        const written = await client.query<{ revision: string }>(
          this.#sql(
            "INSERT INTO S.engram_checkpoints (thread_id, format, doc, files, saved_at, interrupted, revision) " +
              "VALUES ($1, $2, $3, NULL, $4, $5, nextval('S.engram_revision')) " +
              (e.expected === 0
                ? ""
                : "ON CONFLICT (thread_id) DO UPDATE SET format = excluded.format, doc = excluded.doc, files = NULL, " +
                  "saved_at = excluded.saved_at, interrupted = excluded.interrupted, revision = excluded.revision ") +
              "RETURNING revision",
          ),
          [threadId, e.version, e.doc, e.savedAt, e.interrupted],
        );
        await client.query(this.#sql("DELETE FROM S.engram_checkpoint_files WHERE thread_id = $1"), [threadId]);
        if (e.files) await addParts(client, 0, [e.files, ...e.deltas]);
        await indexThread(client, this.#sql("S.engram_thread_messages"), threadId, e.userId, checkpoint.messages);
        await this.#endSteps(client, threadId, keep, revision, Number(written.rows[0]?.revision));
        return Number(written.rows[0]?.revision);
      } catch (err) {
        if (e.expected === 0 && (err as { code?: unknown }).code === "23505") throw revisionConflict(threadId, 0, undefined);
        throw storeError(err);
      }
    });
  }

  /** In a save: keeps the steps of run `keep` extending `revision` as history (kept at `next`),
   * then drops every other step under way. */
  async #endSteps(client: pg.PoolClient, threadId: string, keep: string | undefined, revision: number, next: number): Promise<void> {
    if (keep !== undefined)
      await client.query(
        this.#sql(
          "UPDATE S.engram_run_steps SET kept_at = $1 WHERE thread_id = $2 AND run_id = $3 AND base_revision = $4 AND kept_at IS NULL",
        ),
        [next, threadId, keep, revision],
      );
    await client.query(this.#sql("DELETE FROM S.engram_run_steps WHERE thread_id = $1 AND kept_at IS NULL"), [threadId]);
  }

  async delete(threadId: string): Promise<void> {
    checkThreadId(threadId);
    await this.#db.transaction(async (client) => {
      try {
        await client.query(this.#sql("DELETE FROM S.engram_checkpoints WHERE thread_id = $1"), [threadId]);
        await client.query(this.#sql("DELETE FROM S.engram_checkpoint_files WHERE thread_id = $1"), [threadId]);
        await client.query(this.#sql("DELETE FROM S.engram_thread_messages WHERE thread_id = $1"), [threadId]);
        await client.query(this.#sql("DELETE FROM S.engram_run_steps WHERE thread_id = $1"), [threadId]);
      } catch (err) {
        throw storeError(err);
      }
    });
  }

  /** The user's threads: the messages sharing a word with the query come from the database's
   * full-text index (`tsvector`, GIN), ranked with the core's BM25 (see
   * {@link Checkpointer.searchMessages}). */
  async searchMessages(search: MessageSearchQuery): Promise<MessageSearchHit[]> {
    const checked = checkMessageSearch(search);
    const core = await (this.#core ?? loadCore());
    return searchIndex((text, values) => this.#db.query(text, values), this.#db.schema, core, checked);
  }

  async list(options: ListThreadsOptions = {}): Promise<{ threads: ThreadInfo[]; cursor?: string }> {
    const after = options.cursor === undefined ? undefined : checkThreadId(options.cursor);
    const limit = checkThreadLimit(options.limit);
    const r = await this.#db.query<{ thread_id: string; saved_at: string; interrupted: boolean }>(
      this.#sql(`SELECT thread_id, saved_at, interrupted FROM S.engram_checkpoints WHERE thread_id > $1 ORDER BY thread_id LIMIT $2`),
      [after ?? "", Number.isFinite(limit) ? limit + 1 : null],
    );
    const page = r.rows.slice(0, limit);
    const threads = page.map((row) => ({ threadId: row.thread_id, savedAt: Number(row.saved_at), interrupted: row.interrupted }));
    return r.rows.length > page.length ? { threads, cursor: (page.at(-1) as { thread_id: string }).thread_id } : { threads };
  }

  /** Ends the pool when this checkpointer created it. */
  async close(): Promise<void> {
    await this.#claims.close();
    await this.#db.close();
  }
}
