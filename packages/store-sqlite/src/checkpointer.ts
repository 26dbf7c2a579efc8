/**
 * `SqliteCheckpointer`: thread checkpoints in the same SQLite file as the store (or another).
 * The files snapshot is kept as a BLOB beside the JSON document, with the format version.
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
import { type SqliteDatabase, type SqliteOptions, guard, openDatabase } from "./database.js";

/** Options of {@link SqliteCheckpointer}. */
export interface SqliteCheckpointerOptions extends SqliteOptions {}

/** A {@link Checkpointer} on SQLite; safe to share between processes. */
export class SqliteCheckpointer implements Checkpointer {
  readonly #db: SqliteDatabase;

  constructor(options: SqliteCheckpointerOptions = {}) {
    this.#db = openDatabase(options);
  }

  async get(threadId: string): Promise<Checkpoint | undefined> {
    checkThreadId(threadId);
    const row = guard(
      () =>
        this.#db.prepare("SELECT doc, files FROM engram_checkpoints WHERE thread_id = ?").get(threadId) as
          | { doc: string; files: Uint8Array | null }
          | undefined,
    );
    return row && decodeCheckpoint(row.doc, row.files);
  }

  async put(threadId: string, checkpoint: Checkpoint): Promise<void> {
    checkThreadId(threadId);
    const e = encodeCheckpoint(checkpoint);
    guard(() =>
      this.#db
        .prepare(
          "INSERT INTO engram_checkpoints (thread_id, format, doc, files, saved_at, interrupted) VALUES (?, ?, ?, ?, ?, ?) " +
            "ON CONFLICT (thread_id) DO UPDATE SET format = excluded.format, doc = excluded.doc, files = excluded.files, " +
            "saved_at = excluded.saved_at, interrupted = excluded.interrupted",
        )
        .run(
          threadId,
          e.version,
          e.doc,
          e.files ? Buffer.from(e.files.buffer, e.files.byteOffset, e.files.byteLength) : null,
          e.savedAt,
          e.interrupted ? 1 : 0,
        ),
    );
  }

  async delete(threadId: string): Promise<void> {
    checkThreadId(threadId);
    guard(() => this.#db.prepare("DELETE FROM engram_checkpoints WHERE thread_id = ?").run(threadId));
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
