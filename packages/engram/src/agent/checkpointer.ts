/**
 * Thread persistence. A checkpoint is the whole state of one thread after a run (or at an
 * interrupt); SQLite and PostgreSQL checkpointers implement the same interface.
 * @module
 */
import type { Message } from "../models/types.js";
import type { Interrupt } from "./types.js";

/** The saved state of one thread. */
export interface Checkpoint {
  messages: Message[];
  /** Middleware data (e.g. summarisation state). */
  data: Record<string, unknown>;
  /** Snapshot of the thread's State-backend files, when the thread has them. */
  files?: Uint8Array;
  /** Set while the thread waits for human decisions. */
  interrupt?: Interrupt;
  /** Milliseconds since the epoch. */
  savedAt: number;
}

/** Stores checkpoints by thread id. */
export interface Checkpointer {
  get(threadId: string): Promise<Checkpoint | undefined>;
  put(threadId: string, checkpoint: Checkpoint): Promise<void>;
  delete(threadId: string): Promise<void>;
}

/** Checkpoints in process memory (copied in and out, so callers cannot alias them). */
export class InMemoryCheckpointer implements Checkpointer {
  readonly #threads = new Map<string, Checkpoint>();

  async get(threadId: string): Promise<Checkpoint | undefined> {
    const cp = this.#threads.get(threadId);
    return cp && structuredClone(cp);
  }

  async put(threadId: string, checkpoint: Checkpoint): Promise<void> {
    this.#threads.set(threadId, structuredClone(checkpoint));
  }

  async delete(threadId: string): Promise<void> {
    this.#threads.delete(threadId);
  }
}
