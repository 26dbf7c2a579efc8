/**
 * Claims of threads by live runs, across processes: a kernel lock on a lock file per thread in
 * a directory beside the database (`FsFile.tryLock`). The kernel drops a lock when its process
 * dies (crash, SIGKILL), so a claim never outlives its owner and never needs a timeout; a stopped
 * or slow owner keeps it. Claims of one process are also kept apart in the process itself.
 * @module
 */
import { EngramError, ProcessClaims, type ThreadClaim, releasedOnce, threadBusy } from "engram/kit";
import { storeError } from "./kv.js";

/** The part of `Deno` the claims use. */
interface DenoFiles {
  mkdir(path: string, options: { recursive: boolean }): Promise<void>;
  open(path: string, options: { read: boolean; write: boolean; create: boolean }): Promise<LockFile>;
}

interface LockFile {
  tryLock(exclusive: boolean): Promise<boolean>;
  unlock(): Promise<void>;
  close(): void;
}

const encoder = new TextEncoder();

/** Claims threads through lock files in `dir`. */
export class LockFileClaims {
  readonly #dir: string;
  readonly #process = new ProcessClaims();

  constructor(dir: string) {
    if (typeof dir !== "string" || dir === "") throw new EngramError("invalid_argument", "runLocks must be a directory path");
    this.#dir = dir;
  }

  async claim(threadId: string): Promise<ThreadClaim> {
    const deno = (globalThis as { Deno?: DenoFiles }).Deno;
    if (typeof deno?.open !== "function") throw new EngramError("invalid_config", "lock files for run claims need the Deno runtime");
    const own = this.#process.claim(threadId);
    let file: LockFile | undefined;
    try {
      await deno.mkdir(this.#dir, { recursive: true });
      // Named by a hash of the id (any id, fixed length); never removed, so that two processes
      // always lock the same file.
      const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(threadId)));
      const name = Array.from(digest.subarray(0, 20), (b) => b.toString(16).padStart(2, "0")).join("");
      file = await deno.open(`${this.#dir}/${name}.lock`, { read: true, write: true, create: true });
      if (typeof file.tryLock !== "function") throw new EngramError("invalid_config", "runLocks needs Deno 2.7 or later (FsFile.tryLock)");
      if (!(await file.tryLock(true))) throw threadBusy(threadId);
    } catch (e) {
      file?.close();
      await own.release();
      throw storeError(e);
    }
    const held = file;
    return releasedOnce(async () => {
      try {
        await held.unlock();
      } finally {
        held.close();
        await own.release();
      }
    });
  }
}
