/**
 * `PostgresCheckpointer`: thread checkpoints on PostgreSQL (JSON document + files as bytea, with
 * the format version).
 * @module
 */
import {
  type Checkpoint,
  type Checkpointer,
  type ListThreadsOptions,
  type ThreadInfo,
  checkThreadId,
  checkThreadLimit,
  decodeCheckpoint,
  encodeCheckpoint,
} from "engram";
import type pg from "pg";
import { PgDatabase, type PostgresOptions } from "./database.js";

/** Options of {@link PostgresCheckpointer}. */
export type PostgresCheckpointerOptions = PostgresOptions;

/** A {@link Checkpointer} on PostgreSQL. Call `close()` when done. */
export class PostgresCheckpointer implements Checkpointer {
  readonly #db: PgDatabase;

  constructor(options: PostgresCheckpointerOptions) {
    this.#db = new PgDatabase(options);
  }

  /** The pool in use. */
  get pool(): pg.Pool {
    return this.#db.pool;
  }

  #sql(text: string): string {
    return text.replaceAll("S.", `${this.#db.schema}.`);
  }

  async get(threadId: string): Promise<Checkpoint | undefined> {
    checkThreadId(threadId);
    const r = await this.#db.query<{ doc: string; files: Buffer | null }>(
      this.#sql("SELECT doc, files FROM S.engram_checkpoints WHERE thread_id = $1"),
      [threadId],
    );
    const row = r.rows[0];
    return row && decodeCheckpoint(row.doc, row.files);
  }

  async put(threadId: string, checkpoint: Checkpoint): Promise<void> {
    checkThreadId(threadId);
    const e = encodeCheckpoint(checkpoint);
    await this.#db.query(
      this.#sql(
        "INSERT INTO S.engram_checkpoints (thread_id, format, doc, files, saved_at, interrupted) VALUES ($1, $2, $3, $4, $5, $6) " +
          "ON CONFLICT (thread_id) DO UPDATE SET format = excluded.format, doc = excluded.doc, files = excluded.files, " +
          "saved_at = excluded.saved_at, interrupted = excluded.interrupted",
      ),
      [
        threadId,
        e.version,
        e.doc,
        e.files ? Buffer.from(e.files.buffer, e.files.byteOffset, e.files.byteLength) : null,
        e.savedAt,
        e.interrupted,
      ],
    );
  }

  async delete(threadId: string): Promise<void> {
    checkThreadId(threadId);
    await this.#db.query(this.#sql("DELETE FROM S.engram_checkpoints WHERE thread_id = $1"), [threadId]);
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
    await this.#db.close();
  }
}
