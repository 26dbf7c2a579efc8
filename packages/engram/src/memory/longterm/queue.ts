/**
 * The debounced update queue: work items keyed by `(threadId, userId, agentName)`, coalesced
 * per key, processed one at a time by a single worker.
 *
 * - Each key is due `debounceMs` after its latest `add` (a key that keeps receiving items waits;
 *   other keys are not held back).
 * - One timer at most, armed for the earliest due item and only while the worker is idle: no
 *   timer spins while an update runs; the worker looks for due items again after each one.
 * - An item added while its key is being processed waits as a new entry and runs afterwards.
 * - A failing item is reported and the worker carries on.
 * - {@link UpdateQueue.pause} holds the worker while something more urgent runs (an agent's turn
 *   on the same local model): no item starts, the one in progress is aborted through its signal,
 *   and whatever work `process` hands back waits under its key for the next idle time. Items
 *   start only after `quietMs` without a pause.
 * - {@link UpdateQueue.stop} ends the queue without processing: the item in progress is aborted
 *   and everything left is handed to the caller (to keep it for later).
 * - In Node the timer does not keep the process alive; pending work is flushed when the event
 *   loop empties (`beforeExit`) and by {@link UpdateQueue.close}.
 * @module
 */
import { EngramError } from "../../errors.js";

/** Options of {@link UpdateQueue}. */
export interface UpdateQueueOptions<T> {
  /** Delay after the latest add of a key before it is processed, in ms. `0` = as soon as the
   * worker is free. */
  debounceMs: number;
  /** Processes one item; a rejection is passed to `onError`. `signal` aborts when the queue is
   * paused or stopped: `process` then resolves to the work it did not finish (queued again under
   * the same key), or `undefined` when nothing is left. */
  process: (item: T, signal: AbortSignal) => Promise<T | undefined | void>;
  /** Merges a pending item with a newer one for the same key. Default: the newer one wins. */
  merge?: (older: T, newer: T) => T;
  /** Called with each failure of `process`. Default: ignored. */
  onError?: (error: unknown, item: T) => void;
  /** After the last pause ends, no item starts for this long, in ms (except in a flush).
   * Default: `0`. */
  quietMs?: number;
}

interface Entry<T> {
  item: T;
  dueAt: number;
}

type Timer = ReturnType<typeof setTimeout>;

/** A debounced, coalescing, single-worker queue (see the module comment). */
export class UpdateQueue<T> {
  readonly #pending = new Map<string, Entry<T>>();
  readonly #options: UpdateQueueOptions<T>;
  #timer: Timer | undefined;
  #timerAt = Infinity;
  #worker: Promise<void> | undefined;
  /** Set by flush/close: everything pending is due now. */
  #draining = 0;
  #closed = false;
  #stopped = false;
  /** Pauses in force (see {@link pause}). */
  #paused = 0;
  /** When the last pause ended (ms). */
  #resumedAt = -Infinity;
  /** Aborts the item in progress. */
  #inProgress: AbortController | undefined;
  /** Flushes waiting for a pause to end. */
  readonly #resumeWaiters: (() => void)[] = [];

  constructor(options: UpdateQueueOptions<T>) {
    this.#options = options;
  }

  /** Items waiting (not counting the one being processed). */
  get pending(): number {
    return this.#pending.size;
  }

  /** True while an item is being processed. */
  get busy(): boolean {
    return this.#worker !== undefined;
  }

  /**
   * Adds an item. A pending item with the same key is merged with it (see
   * {@link UpdateQueueOptions.merge}) and its due time restarts. `immediate` makes it due now.
   * Throws after {@link close}.
   */
  add(key: string, item: T, options: { immediate?: boolean } = {}): void {
    if (this.#closed) throw new EngramError("unsupported", "the long-term memory queue is closed");
    const older = this.#pending.get(key);
    const merged = older && this.#options.merge ? this.#options.merge(older.item, item) : item;
    // Re-insert so iteration order follows the latest add.
    this.#pending.delete(key);
    const dueAt = options.immediate || this.#draining > 0 ? 0 : Date.now() + this.#options.debounceMs;
    this.#pending.set(key, { item: merged, dueAt });
    exitFlush.register(this);
    this.#schedule();
  }

  /** True while at least one {@link pause} is in force. */
  get paused(): boolean {
    return this.#paused > 0;
  }

  /**
   * Holds the worker until the returned function is called (pauses nest): no item starts, and
   * the item in progress is aborted — what its `process` hands back is queued again, due at the
   * next idle time. Calling the returned function again does nothing.
   */
  pause(): () => void {
    this.#paused++;
    this.#clearTimer();
    this.#inProgress?.abort(new EngramError("aborted", "long-term memory extraction paused for a turn"));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#paused--;
      if (this.#paused === 0) this.#resumedAt = Date.now();
      this.#schedule();
    };
  }

  /** Removes pending items whose key satisfies `match`; returns how many. The item being
   * processed, if any, is not affected. */
  discard(match: (key: string, item: T) => boolean): number {
    let n = 0;
    for (const [key, entry] of this.#pending) {
      if (match(key, entry.item)) {
        this.#pending.delete(key);
        n++;
      }
    }
    this.#schedule();
    return n;
  }

  /** Processes everything pending now (and anything made due meanwhile); resolves when the
   * queue is idle. While the queue is paused, the flush waits for the pause to end. */
  async flush(): Promise<void> {
    this.#draining++;
    try {
      for (const entry of this.#pending.values()) entry.dueAt = 0;
      while (!this.#stopped) {
        this.#schedule();
        if (this.#worker) await this.#worker;
        else if (this.#paused > 0 && this.#pending.size > 0) await this.#waitForResume();
        else if (!this.#hasDue()) return;
      }
    } finally {
      this.#draining--;
    }
  }

  /** Flushes, then stops: no timer remains and later {@link add}s throw. Idempotent. */
  async close(): Promise<void> {
    await this.flush();
    this.#closed = true;
    this.#clearTimer();
  }

  /**
   * Stops without processing anything more: later {@link add}s throw, the item in progress is
   * aborted and awaited, and every item left — pending ones and what the aborted one handed
   * back — is returned for the caller to keep.
   */
  async stop(): Promise<T[]> {
    this.#closed = true;
    this.#stopped = true;
    this.#clearTimer();
    this.#inProgress?.abort(new EngramError("aborted", "long-term memory queue stopped"));
    await this.#worker;
    const left = [...this.#pending.values()].map((e) => e.item);
    this.#pending.clear();
    for (const resume of this.#resumeWaiters.splice(0)) resume();
    exitFlush.unregister(this);
    return left;
  }

  /** Resolves when the pauses end (or the queue stops). */
  #waitForResume(): Promise<void> {
    return new Promise((resolve) => this.#resumeWaiters.push(resolve));
  }

  #hasDue(now = Date.now()): boolean {
    for (const entry of this.#pending.values()) if (entry.dueAt <= now) return true;
    return false;
  }

  /** Starts the worker when something is due, else arms one timer for the earliest due time. */
  #schedule(): void {
    if (this.#worker || this.#stopped) return; // the worker looks again when its item is done
    if (this.#paused > 0) return; // the last pause's release schedules again
    for (const resume of this.#resumeWaiters.splice(0)) resume();
    const now = Date.now();
    let earliest = Infinity;
    for (const entry of this.#pending.values()) earliest = Math.min(earliest, entry.dueAt);
    if (earliest !== Infinity && this.#draining === 0) earliest = Math.max(earliest, this.#resumedAt + (this.#options.quietMs ?? 0));
    if (earliest <= now) {
      this.#clearTimer();
      this.#worker = this.#run().finally(() => {
        this.#worker = undefined;
        this.#schedule();
      });
      return;
    }
    if (earliest === Infinity) {
      this.#clearTimer();
      exitFlush.unregister(this); // idle: nothing to save at exit
      return;
    }
    if (this.#timer && this.#timerAt === earliest) return;
    this.#clearTimer();
    this.#timerAt = earliest;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#timerAt = Infinity;
      this.#schedule();
    }, earliest - now);
    (this.#timer as { unref?: () => void }).unref?.();
  }

  #clearTimer(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerAt = Infinity;
  }

  /** Processes due items, earliest first, until none is due (or a pause or stop comes). */
  async #run(): Promise<void> {
    await Promise.resolve(); // let the caller of add() finish its synchronous work first
    for (;;) {
      if (this.#paused > 0 || this.#stopped) return;
      const now = Date.now();
      if (this.#draining === 0 && now < this.#resumedAt + (this.#options.quietMs ?? 0)) return;
      let next: [string, Entry<T>] | undefined;
      for (const e of this.#pending) if (e[1].dueAt <= now && (!next || e[1].dueAt < next[1].dueAt)) next = e;
      if (!next) return;
      const [key, { item }] = next;
      this.#pending.delete(key);
      const controller = new AbortController();
      this.#inProgress = controller;
      try {
        const left = await this.#options.process(item, controller.signal);
        if (left !== undefined) this.#requeue(key, left);
      } catch (error) {
        try {
          this.#options.onError?.(error, item);
        } catch {
          // A throwing error handler must not stop the worker.
        }
      } finally {
        this.#inProgress = undefined;
      }
    }
  }

  /** Puts back work an item did not finish, before a newer item of its key (merged), due now. */
  #requeue(key: string, left: T): void {
    const newer = this.#pending.get(key);
    const item = newer && this.#options.merge ? this.#options.merge(left, newer.item) : (newer?.item ?? left);
    this.#pending.set(key, { item, dueAt: newer?.dueAt ?? 0 });
    exitFlush.register(this);
  }
}

/** Flushes queues with pending work when a Node process's event loop empties, so a short
 * script that never calls `close()` still saves its memory. One listener for all queues; a
 * queue is registered only while it has work, so idle queues are never retained. */
const exitFlush = (() => {
  type Proc = { on?: (event: string, fn: () => void) => unknown; off?: (event: string, fn: () => void) => unknown };
  const queues = new Set<{ flush(): Promise<void> }>();
  const proc = (globalThis as { process?: Proc }).process;
  let listening = false;
  const onBeforeExit = () => {
    for (const q of queues) void q.flush();
  };
  return {
    register(q: { flush(): Promise<void> }): void {
      queues.add(q);
      if (!listening && typeof proc?.on === "function") {
        proc.on("beforeExit", onBeforeExit);
        listening = true;
      }
    },
    unregister(q: { flush(): Promise<void> }): void {
      queues.delete(q);
      if (queues.size === 0 && listening && typeof proc?.off === "function") {
        proc.off("beforeExit", onBeforeExit);
        listening = false;
      }
    },
  };
})();
