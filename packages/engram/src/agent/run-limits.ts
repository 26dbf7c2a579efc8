/**
 * The limits one `invoke`/`stream` holds for its whole tree of levels — the top agent and every
 * nested `task` subagent: one model-call budget and one concurrency limit, each a single object
 * the run's levels share (a per-level copy would let a fan-out of subagents multiply them).
 * @module
 */
import { abortError } from "./abort.js";

/** The model calls a run may still make. A call is reserved before it is made. */
export class ModelCallBudget {
  #used = 0;
  #exhausted = false;

  constructor(readonly max: number) {}

  /** Model calls reserved so far. */
  get used(): number {
    return this.#used;
  }

  /** Whether a level asked for a call after the budget ran out. */
  get exhausted(): boolean {
    return this.#exhausted;
  }

  /** Takes one call from the budget, or answers false when none is left. Checking and taking
   * are one synchronous step, so of levels asking at the same time only as many pass as there
   * are calls left. */
  reserve(): boolean {
    if (this.#used >= this.max) {
      this.#exhausted = true;
      return false;
    }
    this.#used++;
    return true;
  }
}

/** Before a model call: throws the signal's reason when the run was cancelled, else reserves the
 * call from `budget` (false: none is left). */
export function reserveModelCall(budget: ModelCallBudget, signal: AbortSignal | undefined): boolean {
  if (signal?.aborted) throw abortError(signal);
  return budget.reserve();
}

/**
 * At most `size` pieces of work at once across the run: model calls and tool calls. A tool
 * call that waits on subagents (`task`) gives its slot up while they run ({@link without}):
 * held, the slots of a fan-out of parents would leave none for the children they wait on.
 */
export class ConcurrencyLimit {
  #free: number;
  readonly #waiting: (() => void)[] = [];

  constructor(readonly size: number) {
    this.#free = size;
  }

  /** Runs `work` in a slot, waiting for one first when all are taken. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    await this.#acquire();
    try {
      return await work();
    } finally {
      this.#release();
    }
  }

  /** Runs `work` (called from inside {@link run}) with the caller's slot given up meanwhile,
   * and takes a slot again before returning. */
  async without<T>(work: () => Promise<T>): Promise<T> {
    this.#release();
    try {
      return await work();
    } finally {
      await this.#acquire();
    }
  }

  async #acquire(): Promise<void> {
    if (this.#free > 0) {
      this.#free--;
      return;
    }
    // The releasing side hands its slot straight to the first waiter.
    await new Promise<void>((resolve) => this.#waiting.push(resolve));
  }

  #release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#free++;
  }
}
