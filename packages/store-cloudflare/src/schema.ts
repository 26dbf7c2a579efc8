/**
 * The tables Engram keeps in a Durable Object's SQLite storage, and their migrations, applied in
 * one transaction the first time a store or checkpointer opens the storage. A Durable Object runs
 * in one place at a time, so nothing else migrates meanwhile.
 * @module
 */
import { EngramError } from "engram/kit";
import { type DurableObjectSqlStorage, first, guard } from "./sql.js";

/** The schema, one entry per version; never edit a published entry, append a new one. */
export const MIGRATIONS: readonly string[] = [
  // One revision counter for items and checkpoints, so a revision is never handed out twice, not
  // even after a delete. Small columns come before values, so walks over keys never read one.
  // Checkpoint documents and files are kept in parts (a row holds at most 2 MB).
  `CREATE TABLE engram_counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
   INSERT INTO engram_counters (name, value) VALUES ('revision', 0);
   CREATE TABLE engram_items (
     id INTEGER PRIMARY KEY, ns TEXT NOT NULL, key TEXT NOT NULL,
     revision INTEGER NOT NULL, updated_at INTEGER NOT NULL, value TEXT NOT NULL,
     UNIQUE (ns, key));
   CREATE TABLE engram_namespaces (ns TEXT PRIMARY KEY, token INTEGER NOT NULL);
   CREATE TABLE engram_checkpoints (
     id INTEGER PRIMARY KEY, thread_id TEXT NOT NULL UNIQUE, format INTEGER NOT NULL,
     saved_at INTEGER NOT NULL, interrupted INTEGER NOT NULL, revision INTEGER NOT NULL,
     files_id TEXT, files_deltas INTEGER);
   CREATE TABLE engram_checkpoint_docs (
     thread_id TEXT NOT NULL, part INTEGER NOT NULL, text TEXT NOT NULL, PRIMARY KEY (thread_id, part));
   CREATE TABLE engram_checkpoint_files (
     thread_id TEXT NOT NULL, seq INTEGER NOT NULL, part INTEGER NOT NULL, bytes BLOB NOT NULL,
     PRIMARY KEY (thread_id, seq, part));`,
  // The steps of runs under way (durable runs): a head row each, the document (kind 0) and the
  // files change (kind 1) in parts.
  `CREATE TABLE engram_run_steps (
     thread_id TEXT NOT NULL, run_id TEXT NOT NULL, seq INTEGER NOT NULL,
     base_revision INTEGER NOT NULL, saved_at INTEGER NOT NULL, has_files INTEGER NOT NULL,
     PRIMARY KEY (thread_id, run_id, seq));
   CREATE TABLE engram_run_step_parts (
     thread_id TEXT NOT NULL, run_id TEXT NOT NULL, seq INTEGER NOT NULL, kind INTEGER NOT NULL,
     part INTEGER NOT NULL, text TEXT, bytes BLOB,
     PRIMARY KEY (thread_id, run_id, seq, kind, part));`,
  // Thread history: a save keeps its run's steps as points (`kept_at`: the revision it saved)
  // instead of dropping them; steps under way have none.
  `ALTER TABLE engram_run_steps ADD COLUMN kept_at INTEGER;`,
];

/** The schema version this code writes. */
export const SCHEMA_VERSION = MIGRATIONS.length;

const ready = new WeakSet<DurableObjectSqlStorage>();

/** Creates or migrates Engram's tables in `storage` (once per storage object). */
export function openSchema(storage: DurableObjectSqlStorage): DurableObjectSqlStorage {
  if (typeof storage?.sql?.exec !== "function" || typeof storage.transactionSync !== "function") {
    throw new EngramError(
      "invalid_argument",
      "pass a SQLite-backed Durable Object's storage (ctx.storage; the class needs a new_sqlite_classes migration)",
    );
  }
  if (ready.has(storage)) return storage;
  guard(() =>
    storage.transactionSync(() => {
      const { sql } = storage;
      sql.exec("CREATE TABLE IF NOT EXISTS engram_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)");
      const current = first<{ v: number | null }>(sql, "SELECT max(version) AS v FROM engram_migrations")?.v ?? 0;
      if (current > SCHEMA_VERSION) {
        throw new EngramError(
          "store_error",
          `the storage schema (version ${current}) is newer than this Engram understands (${SCHEMA_VERSION}): upgrade Engram`,
        );
      }
      for (let v = current + 1; v <= SCHEMA_VERSION; v++) {
        sql.exec(MIGRATIONS[v - 1] as string);
        sql.exec("INSERT INTO engram_migrations (version, applied_at) VALUES (?, ?)", v, Date.now());
      }
    }),
  );
  ready.add(storage);
  return storage;
}

/** The next revision of the storage's one counter (inside the caller's transaction). */
export function nextRevision(storage: DurableObjectSqlStorage): number {
  const row = first<{ value: number }>(storage.sql, "UPDATE engram_counters SET value = value + 1 WHERE name = 'revision' RETURNING value");
  return (row as { value: number }).value;
}
