/**
 * `D1Checkpointer`: thread checkpoints in a D1 database, in the same tables as the Durable Object
 * checkpointer (documents and files kept in parts of at most a row's size). A save is one D1
 * batch — one transaction — whose first statements fail it whole when the stored revision or
 * files are not the ones the save starts from; a read is one batch too, so it sees one save.
 * @module
 */
import {
  type Checkpoint,
  type Checkpointer,
  type FilesRef,
  type GetCheckpointOptions,
  type ListThreadsOptions,
  type ThreadInfo,
  assembleCheckpoint,
  checkThreadId,
  checkThreadLimit,
  decodeCheckpoint,
  encodeCheckpoint,
  filesConflict,
  revisionConflict,
  sameFiles,
  EngramError,
} from "engram/kit";
import { type D1Database, type D1PreparedStatement, d1Guard, d1Rows, openD1Schema } from "./d1.js";
import { blobParts, joinBlobs, storeError, textParts, threadPage } from "./sql.js";

interface HeadRow {
  revision: number;
  files_id: string | null;
  files_deltas: number | null;
}

const HEAD = "SELECT revision, files_id, files_deltas FROM engram_checkpoints WHERE thread_id = ?";
const refOf = (row: HeadRow | undefined): FilesRef | undefined =>
  row?.files_id != null && row.files_deltas != null ? { id: row.files_id, deltas: row.files_deltas } : undefined;

/** A blob as D1 returns it (an array of bytes, or a buffer). */
const blobBytes = (b: unknown): ArrayBuffer => (b instanceof ArrayBuffer ? b : Uint8Array.from(b as ArrayLike<number>).buffer);

/** A {@link Checkpointer} on D1: `new D1Checkpointer(env.DB)`. */
export class D1Checkpointer implements Checkpointer {
  readonly #db: D1Database;
  #ready: Promise<void> | undefined;
  /** Saves append the changed files as a delta (see {@link Checkpointer.incremental}). */
  readonly incremental = true;

  constructor(db: D1Database) {
    this.#db = db;
    if (typeof db?.prepare !== "function" || typeof db.batch !== "function") {
      throw new EngramError("invalid_argument", "pass a D1 database binding (env.DB)");
    }
  }

  #open(): Promise<void> {
    this.#ready ??= openD1Schema(this.#db).catch((e) => {
      this.#ready = undefined;
      throw e;
    });
    return this.#ready;
  }

  async get(threadId: string, options: GetCheckpointOptions = {}): Promise<Checkpoint | undefined> {
    checkThreadId(threadId);
    await this.#open();
    const db = this.#db;
    const [head, docs, files] = await d1Guard(() =>
      db.batch([
        db.prepare(HEAD).bind(threadId),
        db.prepare("SELECT text FROM engram_checkpoint_docs WHERE thread_id = ? ORDER BY part").bind(threadId),
        db
          .prepare(
            "SELECT f.seq AS seq, f.bytes AS bytes FROM engram_checkpoint_files f JOIN engram_checkpoints c ON c.thread_id = f.thread_id " +
              "WHERE f.thread_id = ? AND f.seq <= c.files_deltas ORDER BY f.seq, f.part",
          )
          .bind(threadId),
      ]),
    );
    const row = head?.results[0] as HeadRow | undefined;
    const rowsOf = <T>(r: { results: unknown[] } | undefined) => (r?.results ?? []) as T[];
    if (!row) return undefined;
    const doc = rowsOf<{ text: string }>(docs)
      .map((r) => r.text)
      .join("");
    const ref = refOf(row);
    if (!ref || sameFiles(ref, options.knownFiles)) return { ...decodeCheckpoint(doc), revision: row.revision };
    const bySeq = new Map<number, ArrayBuffer[]>();
    for (const r of rowsOf<{ seq: number; bytes: unknown }>(files)) {
      const parts = bySeq.get(r.seq) ?? [];
      parts.push(blobBytes(r.bytes));
      bySeq.set(r.seq, parts);
    }
    const parts = [...bySeq].map(([seq, p]) => ({ seq, bytes: joinBlobs(p) }));
    return { ...assembleCheckpoint(doc, parts), revision: row.revision };
  }

  async put(threadId: string, checkpoint: Checkpoint): Promise<number> {
    checkThreadId(threadId);
    const e = encodeCheckpoint(checkpoint);
    await this.#open();
    const db = this.#db;
    const statements: D1PreparedStatement[] = [];
    if (e.expected !== undefined) {
      statements.push(
        db
          .prepare(
            "SELECT CASE WHEN coalesce((SELECT revision FROM engram_checkpoints WHERE thread_id = ?), 0) = ? " +
              "THEN 1 ELSE json_extract('{}', 'engram-conflict-revision') END",
          )
          .bind(threadId, e.expected),
      );
    }
    if (e.base) {
      statements.push(
        db
          .prepare(
            "SELECT CASE WHEN EXISTS (SELECT 1 FROM engram_checkpoints WHERE thread_id = ? AND files_id = ? AND files_deltas = ?) " +
              "THEN 1 ELSE json_extract('{}', 'engram-conflict-files') END",
          )
          .bind(threadId, e.base.id, e.base.deltas),
      );
    }
    const addFiles = (seq: number, bytes: Uint8Array) => {
      for (const [part, b] of blobParts(bytes).entries()) {
        statements.push(
          db.prepare("INSERT INTO engram_checkpoint_files (thread_id, seq, part, bytes) VALUES (?, ?, ?, ?)").bind(threadId, seq, part, b),
        );
      }
    };
    statements.push(db.prepare("UPDATE engram_counters SET value = value + 1 WHERE name = 'revision'"));
    const saveIndex = statements.length;
    statements.push(
      db
        .prepare(
          "INSERT INTO engram_checkpoints (thread_id, format, saved_at, interrupted, revision, files_id, files_deltas) " +
            "VALUES (?, ?, ?, ?, (SELECT value FROM engram_counters WHERE name = 'revision'), ?, ?) " +
            "ON CONFLICT (thread_id) DO UPDATE SET format = excluded.format, saved_at = excluded.saved_at, interrupted = excluded.interrupted, " +
            "revision = excluded.revision, files_id = excluded.files_id, files_deltas = excluded.files_deltas RETURNING revision",
        )
        .bind(threadId, e.version, e.savedAt, e.interrupted ? 1 : 0, e.filesRef?.id ?? null, e.filesRef?.deltas ?? null),
      db.prepare("DELETE FROM engram_checkpoint_docs WHERE thread_id = ?").bind(threadId),
    );
    for (const [part, text] of textParts(e.doc).entries()) {
      statements.push(db.prepare("INSERT INTO engram_checkpoint_docs (thread_id, part, text) VALUES (?, ?, ?)").bind(threadId, part, text));
    }
    if (e.base) {
      for (const [i, d] of e.deltas.entries()) addFiles(e.base.deltas + 1 + i, d);
    } else {
      statements.push(db.prepare("DELETE FROM engram_checkpoint_files WHERE thread_id = ?").bind(threadId));
      if (e.files) {
        addFiles(0, e.files);
        for (const [i, d] of e.deltas.entries()) addFiles(1 + i, d);
      }
    }
    try {
      const row = (await db.batch(statements))[saveIndex]?.results[0] as { revision: number } | undefined;
      if (!row) throw new EngramError("store_error", "d1: the save returned no revision");
      return row.revision;
    } catch (error) {
      const lost = /engram-conflict-(revision|files)/.exec(error instanceof Error ? error.message : String(error))?.[1];
      if (!lost) throw storeError(error, "d1");
      // The stored state as it is now, for the message.
      const [now] = await d1Rows<HeadRow>(db, HEAD, threadId);
      throw lost === "revision"
        ? revisionConflict(threadId, e.expected as number, now?.revision ?? 0)
        : filesConflict(threadId, e.base as FilesRef, refOf(now));
    }
  }

  async delete(threadId: string): Promise<void> {
    checkThreadId(threadId);
    await this.#open();
    const db = this.#db;
    await d1Guard(() =>
      db.batch(
        ["engram_checkpoints", "engram_checkpoint_docs", "engram_checkpoint_files"].map((table) =>
          db.prepare(`DELETE FROM ${table} WHERE thread_id = ?`).bind(threadId),
        ),
      ),
    );
  }

  async list(options: ListThreadsOptions = {}): Promise<{ threads: ThreadInfo[]; cursor?: string }> {
    const after = options.cursor === undefined ? undefined : checkThreadId(options.cursor);
    const limit = checkThreadLimit(options.limit);
    await this.#open();
    const found = await d1Rows<{ thread_id: string; saved_at: number; interrupted: number }>(
      this.#db,
      `SELECT thread_id, saved_at, interrupted FROM engram_checkpoints ${after === undefined ? "" : "WHERE thread_id > ?"} ORDER BY thread_id LIMIT ?`,
      ...(after === undefined ? [] : [after]),
      Number.isFinite(limit) ? limit + 1 : -1,
    );
    return threadPage(found, limit);
  }
}
