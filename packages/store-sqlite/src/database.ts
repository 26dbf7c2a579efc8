/**
 * Opening an Engram SQLite database: WAL, a busy timeout, and schema migrations recorded in a
 * version table, applied under `BEGIN IMMEDIATE` so processes starting together agree.
 * @module
 */
import { mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import { EngramError } from "engram/kit";

/** A better-sqlite3 connection. */
export type SqliteDatabase = Database.Database;

/** Options shared by {@link SqliteStore} and {@link SqliteCheckpointer}. */
export interface SqliteOptions {
  /** The database file; `":memory:"` for a private in-memory database. Default:
   * {@link defaultDatabasePath}. The directory is created when missing. */
  path?: string;
  /** How long a write waits for another process's transaction, in milliseconds. Default: 5000. */
  busyTimeoutMs?: number;
}

/** `$ENGRAM_HOME/engram.db` when `ENGRAM_HOME` is set, else `~/.engram/engram.db`. */
export function defaultDatabasePath(): string {
  const home = process.env.ENGRAM_HOME;
  return home ? join(home, "engram.db") : join(homedir(), ".engram", "engram.db");
}

/** The schema, one entry per version; never edit a published entry, append a new one. */
export const MIGRATIONS: readonly string[] = [
  `CREATE TABLE engram_counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
   INSERT INTO engram_counters (name, value) VALUES ('revision', 0);
   CREATE TABLE engram_items (
     ns TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
     revision INTEGER NOT NULL, updated_at INTEGER NOT NULL,
     PRIMARY KEY (ns, key)) WITHOUT ROWID;
   CREATE TABLE engram_namespaces (ns TEXT PRIMARY KEY, token INTEGER NOT NULL) WITHOUT ROWID;
   CREATE TABLE engram_checkpoints (
     thread_id TEXT PRIMARY KEY, format INTEGER NOT NULL, doc TEXT NOT NULL, files BLOB,
     saved_at INTEGER NOT NULL, interrupted INTEGER NOT NULL) WITHOUT ROWID;`,
  // Incremental checkpoints: a thread's files as a full snapshot (seq 0) and the deltas saved
  // after it (seq 1, 2, …); the checkpoint document names them (`filesRef`).
  `CREATE TABLE engram_checkpoint_files (
     thread_id TEXT NOT NULL, seq INTEGER NOT NULL, bytes BLOB NOT NULL, PRIMARY KEY (thread_id, seq));`,
  // Each checkpoint's revision, for compare-and-swap saves: from the database's one counter, so
  // a thread deleted and saved again never gets an old revision back. Threads saved before this
  // share one new revision.
  `ALTER TABLE engram_checkpoints ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;
   UPDATE engram_counters SET value = value + 1 WHERE name = 'revision';
   UPDATE engram_checkpoints SET revision = (SELECT value FROM engram_counters WHERE name = 'revision');`,
  // Items and checkpoints in rowid tables with a unique key index. A WITHOUT ROWID table keeps
  // whole rows in its key b-tree, interior pages included, and these rows are kilobytes (a file,
  // a conversation): a lookup walked such records at every level (a missing key took 50 µs, now
  // 2). The small columns come first, so a walk over keys never reads into a value.
  `CREATE TABLE engram_items_v4 (
     id INTEGER PRIMARY KEY, ns TEXT NOT NULL, key TEXT NOT NULL,
     revision INTEGER NOT NULL, updated_at INTEGER NOT NULL, value TEXT NOT NULL,
     UNIQUE (ns, key));
   INSERT INTO engram_items_v4 (ns, key, revision, updated_at, value)
     SELECT ns, key, revision, updated_at, value FROM engram_items ORDER BY ns, key;
   DROP TABLE engram_items;
   ALTER TABLE engram_items_v4 RENAME TO engram_items;
   CREATE TABLE engram_checkpoints_v4 (
     id INTEGER PRIMARY KEY, thread_id TEXT NOT NULL UNIQUE, format INTEGER NOT NULL,
     saved_at INTEGER NOT NULL, interrupted INTEGER NOT NULL, revision INTEGER NOT NULL DEFAULT 0,
     doc TEXT NOT NULL, files BLOB);
   INSERT INTO engram_checkpoints_v4 (thread_id, format, saved_at, interrupted, revision, doc, files)
     SELECT thread_id, format, saved_at, interrupted, revision, doc, files FROM engram_checkpoints ORDER BY thread_id;
   DROP TABLE engram_checkpoints;
   ALTER TABLE engram_checkpoints_v4 RENAME TO engram_checkpoints;`,
  // Recall of a user's earlier threads: the searchable messages of each thread saved with a
  // user, and an FTS5 index over them (kept by triggers). Threads saved before have no user and
  // are never searched, so nothing is backfilled.
  `CREATE TABLE engram_thread_messages (
     id INTEGER PRIMARY KEY, thread_id TEXT NOT NULL, user_id TEXT NOT NULL, seq INTEGER NOT NULL,
     role TEXT NOT NULL, text TEXT NOT NULL);
   CREATE INDEX engram_thread_messages_thread ON engram_thread_messages (thread_id, seq);
   CREATE VIRTUAL TABLE engram_message_search USING fts5(
     text, content = 'engram_thread_messages', content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 0');
   CREATE TRIGGER engram_thread_messages_added AFTER INSERT ON engram_thread_messages BEGIN
     INSERT INTO engram_message_search (rowid, text) VALUES (new.id, new.text);
   END;
   CREATE TRIGGER engram_thread_messages_removed AFTER DELETE ON engram_thread_messages BEGIN
     INSERT INTO engram_message_search (engram_message_search, rowid, text) VALUES ('delete', old.id, old.text);
   END;`,
  // Durable runs: the steps a run commits while it is under way, beside its thread's checkpoint
  // (a checkpoint saved drops them). Who owns them is a kernel lock, not a column.
  `CREATE TABLE engram_run_steps (
     id INTEGER PRIMARY KEY, thread_id TEXT NOT NULL, run_id TEXT NOT NULL, seq INTEGER NOT NULL,
     base_revision INTEGER NOT NULL, saved_at INTEGER NOT NULL, doc TEXT NOT NULL, files BLOB,
     UNIQUE (thread_id, run_id, seq));`,
  // Thread history: a save keeps its run's steps as points (`kept_at`: the revision it saved)
  // instead of dropping them; steps under way have none.
  `ALTER TABLE engram_run_steps ADD COLUMN kept_at INTEGER;`,
];

/** The schema version this code writes. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** A database failure as a `store_error` {@link EngramError} (Engram errors pass through). */
export function storeError(e: unknown): EngramError {
  if (e instanceof EngramError) return e;
  return new EngramError("store_error", `sqlite: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
}

/** Runs `fn`, turning a database failure into a `store_error` {@link EngramError}. */
export function guard<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    throw storeError(e);
  }
}

/** Opens (creating and migrating when needed) the database at `options.path`. */
export function openDatabase(options: SqliteOptions = {}): SqliteDatabase {
  const path = options.path ?? defaultDatabasePath();
  const busy = options.busyTimeoutMs ?? 5000;
  if (!Number.isInteger(busy) || busy < 0)
    throw new EngramError("invalid_argument", `busyTimeoutMs must be a non-negative integer, got ${busy}`);
  return guard(() => {
    if (path !== ":memory:" && path !== "") mkdirSync(dirname(path), { recursive: true });
    const db = new Database(path, { timeout: busy });
    try {
      db.pragma(`busy_timeout = ${busy}`);
      if (path !== ":memory:") useWal(db, busy);
      db.pragma("synchronous = NORMAL");
      migrate(db);
    } catch (e) {
      db.close();
      throw e;
    }
    return db;
  });
}

/**
 * Switches the database to WAL. Switching needs the database to itself, and SQLite can answer
 * `SQLITE_BUSY` at once instead of waiting out the busy timeout (seen with 4 processes opening one
 * new database), so a process that opens a new database while another is creating or migrating
 * it retries until the busy timeout.
 * Once one process has switched, the mode is stored in the file and the others find it set.
 */
function useWal(db: SqliteDatabase, busyMs: number): void {
  const deadline = Date.now() + busyMs;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let wait = 1; ; wait = Math.min(wait * 2, 50)) {
    try {
      db.pragma("journal_mode = WAL");
      return;
    } catch (e) {
      if ((e as { code?: unknown }).code !== "SQLITE_BUSY" || Date.now() >= deadline) throw e;
      Atomics.wait(pause, 0, 0, wait);
    }
  }
}

function migrate(db: SqliteDatabase): void {
  db.transaction(() => {
    db.exec("CREATE TABLE IF NOT EXISTS engram_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)");
    const current = (db.prepare("SELECT max(version) FROM engram_migrations").pluck().get() as number | null) ?? 0;
    if (current > SCHEMA_VERSION) {
      throw new EngramError(
        "store_error",
        `the database schema (version ${current}) is newer than this Engram understands (${SCHEMA_VERSION}): upgrade Engram`,
      );
    }
    for (let v = current + 1; v <= SCHEMA_VERSION; v++) {
      db.exec(MIGRATIONS[v - 1] as string);
      db.prepare("INSERT INTO engram_migrations (version, applied_at) VALUES (?, ?)").run(v, Date.now());
    }
  }).immediate();
}
