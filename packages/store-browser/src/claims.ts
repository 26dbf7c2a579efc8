/**
 * Claims of threads for durable runs, held with the Web Locks API: a lock named after the
 * database and the thread, taken only if free, held until the run releases it — or until the
 * tab or worker holding it is gone, which the browser itself tells (it releases a dead
 * context's locks). Locks are shared by every tab and worker of the origin. Where the API is
 * missing, claims hold within this page only.
 * @module
 */
import { ProcessClaims, type ThreadClaim, threadBusy } from "engram/kit";
import { storeError } from "./database.js";

/** The part of `navigator.locks` (a `LockManager`) claims use. */
interface Locks {
  request(name: string, options: { ifAvailable: boolean }, callback: (lock: unknown) => Promise<void>): Promise<void>;
}

/** Claims threads of one database. */
export class ThreadClaims {
  readonly #database: string;
  readonly #inPage = new ProcessClaims();

  constructor(database: string) {
    this.#database = database;
  }

  claim(threadId: string): Promise<ThreadClaim> {
    const locks = (globalThis as { navigator?: { locks?: Locks } }).navigator?.locks;
    if (typeof locks?.request !== "function") return Promise.resolve(this.#inPage.claim(threadId));
    return new Promise<ThreadClaim>((resolve, reject) => {
      let letGo = () => {};
      const held = new Promise<void>((resolveHeld) => {
        letGo = resolveHeld;
      });
      const done = locks.request(`engram-thread:${this.#database}:${threadId}`, { ifAvailable: true }, async (lock) => {
        if (lock === null) {
          reject(threadBusy(threadId));
          return;
        }
        resolve({
          // Resolves once the lock is free again (the callback has returned).
          release: async () => {
            letGo();
            await done.catch(() => {});
          },
        });
        await held;
      });
      done.catch((e: unknown) => reject(storeError(e, this.#database)));
    });
  }
}
