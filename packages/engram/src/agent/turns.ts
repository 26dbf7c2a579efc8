/**
 * Runs of one thread on one agent take turns. Each run loads the thread's checkpoint, works on
 * its own state and saves it whole; two at once would each save over the other (messages and
 * files of the first lost). A run waits until every earlier run of its thread has ended.
 * @module
 */
import { abortError } from "./abort.js";

/** The queue of runs per thread, oldest first. */
export class ThreadTurns {
  /** Per thread with runs under way: settles when the newest of them has ended. */
  readonly #tails = new Map<string, Promise<void>>();

  /**
   * Waits until every run of `threadId` that entered earlier has ended, and returns the
   * function that ends this one (call it exactly once). With nothing ahead it returns at once,
   * whatever `signal` says (the run itself reacts to it). An abort while waiting throws the
   * signal's reason and gives up the place in the queue; runs behind it still wait for the ones
   * ahead of it.
   */
  async enter(threadId: string, signal?: AbortSignal): Promise<() => void> {
    const ahead = this.#tails.get(threadId);
    let end!: () => void;
    const ended = new Promise<void>((resolve) => (end = resolve));
    const tail = ahead ? ahead.then(() => ended) : ended;
    this.#tails.set(threadId, tail);
    // Forgotten once this run and all ahead of it have ended, unless another run queued since.
    void tail.then(() => {
      if (this.#tails.get(threadId) === tail) this.#tails.delete(threadId);
    });
    const leave = end;
    if (!ahead) return leave;
    await new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        leave();
        reject(abortError(signal as AbortSignal));
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener("abort", onAbort, { once: true });
      void ahead.then(() => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      });
    });
    return leave;
  }
}
