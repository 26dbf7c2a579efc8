/**
 * Claims of threads by live runs, across processes: a kernel lock on a lock file per thread
 * beside the database. The kernel drops a lock when its process dies (crash, SIGKILL, OOM), so a
 * claim never outlives its owner and never needs a timeout; a stopped or slow owner keeps it.
 *
 * The lock is SQLite's own: each lock file is an empty database held in an exclusive transaction
 * (SQLite takes POSIX advisory locks, which the kernel releases with the process, and keeps
 * connections of one process apart too). Node has no `flock` of its own.
 * @module
 */
import { createHash } from "node:crypto";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { type ThreadClaim, releasedOnce, threadBusy } from "engram/kit";
import { storeError } from "./database.js";

/** The lock file of a thread: named by a hash of its id (any id, fixed length). Lock files are
 * never removed: a file removed while another process opens it would split the lock in two. */
export function lockFileOf(dir: string, threadId: string): string {
  return join(dir, `${createHash("sha256").update(threadId).digest("hex").slice(0, 40)}.lock`);
}

/** Claims `threadId` through its lock file in `dir`; a `conflict` when a live run holds it. */
export function claimLockFile(dir: string, threadId: string): ThreadClaim {
  let db: Database.Database;
  try {
    mkdirSync(dir, { recursive: true });
    db = new Database(lockFileOf(dir, threadId), { timeout: 0 });
  } catch (e) {
    throw storeError(e);
  }
  try {
    db.exec("BEGIN EXCLUSIVE");
  } catch (e) {
    db.close();
    if ((e as { code?: unknown }).code === "SQLITE_BUSY") throw threadBusy(threadId);
    throw storeError(e);
  }
  return releasedOnce(() => {
    try {
      db.exec("ROLLBACK");
    } finally {
      db.close();
    }
  });
}
