/**
 * Long-term memory extraction that survives the isolate: a Durable Object's request keeps what
 * memory has not extracted yet as pending work in the object's storage and sets an alarm; the
 * alarm — in whatever isolate runs the object then — extracts it. A timer after the response
 * would die with an evicted isolate; an alarm is stored with the object and retried by the
 * runtime until its handler succeeds.
 * @module
 */
import { EngramError, type LongTermMemory } from "engram/kit";

/** The alarm methods of a Durable Object's storage (`ctx.storage`). */
export interface AlarmStorage {
  getAlarm(): Promise<number | null>;
  setAlarm(scheduledTime: number | Date): Promise<void>;
}

/** Options of {@link AlarmExtraction}. */
export interface AlarmExtractionOptions {
  /** How long after a request its extraction runs, in ms (later captures in that time are
   * extracted by the same alarm). Default: `30_000`. */
  delayMs?: number;
  /** How long after an alarm whose extraction failed the next one runs, in ms. Default: `60_000`. */
  retryMs?: number;
}

/** The long-term memory calls this needs. */
type Memory = Pick<LongTermMemory, "close" | "flush" | "pendingWork">;

/**
 * Runs long-term memory extraction from Durable Object alarms. The memory must keep its pending
 * work in the object's storage: give the agent (or `LongTermMemory`) a `DurableObjectStore` as
 * `store`.
 *
 * ```ts
 * // at the end of fetch(), with the agent made for this request:
 * await this.extraction.defer(agent.longTermMemory);
 * // and
 * async alarm() { await this.extraction.run(makeAgent().longTermMemory); }
 * ```
 */
export class AlarmExtraction {
  readonly #storage: AlarmStorage;
  readonly #delayMs: number;
  readonly #retryMs: number;

  constructor(storage: AlarmStorage, options: AlarmExtractionOptions = {}) {
    if (typeof storage?.setAlarm !== "function" || typeof storage.getAlarm !== "function") {
      throw new EngramError("invalid_argument", "pass a Durable Object's storage (ctx.storage)");
    }
    this.#storage = storage;
    this.#delayMs = checkDelay(options.delayMs ?? 30_000, "delayMs");
    this.#retryMs = checkDelay(options.retryMs ?? 60_000, "retryMs");
  }

  /** Closes `memory` without extracting — what it captured becomes pending work in storage —
   * and sets the alarm when there is pending work (an earlier alarm, if sooner, stays). */
  async defer(memory: Memory | undefined): Promise<void> {
    if (!memory) return;
    await memory.close({ timeoutMs: 0 });
    if ((await memory.pendingWork()).length > 0) await this.#schedule(this.#delayMs);
  }

  /** The alarm's work: extracts every pending entry with `memory`, then closes it. Work that
   * failed stays pending and sets the alarm again, `retryMs` later. */
  async run(memory: Memory | undefined): Promise<void> {
    if (!memory) return;
    try {
      await memory.flush();
    } finally {
      await memory.close({ timeoutMs: 0 });
    }
    if ((await memory.pendingWork()).length > 0) await this.#schedule(this.#retryMs);
  }

  async #schedule(delayMs: number): Promise<void> {
    const at = Date.now() + delayMs;
    const current = await this.#storage.getAlarm();
    if (current === null || current > at) await this.#storage.setAlarm(at);
  }
}

function checkDelay(ms: unknown, name: string): number {
  if (typeof ms !== "number" || !Number.isFinite(ms) || ms < 0) {
    throw new EngramError("invalid_argument", `${name} must be a number of milliseconds ≥ 0, got ${String(ms)}`);
  }
  return ms;
}
