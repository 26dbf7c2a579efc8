/** A tiny async queue: producers push while a consumer drains, for streaming events. */
export class Channel<T> {
  readonly #items: T[] = [];
  #wake: (() => void) | undefined;

  /** `discard`: nobody reads the items (an `invoke`, which only wants the final output), so
   * `push` keeps nothing. Default: false. */
  constructor(private readonly discard = false) {}

  push(item: T): void {
    if (this.discard) return;
    this.#items.push(item);
    this.#wake?.();
  }

  /** Yields queued items until `done` settles, then whatever is left. */
  async *drainUntil(done: Promise<unknown>): AsyncGenerator<T> {
    let finished = false;
    const settled = done.then(
      () => {
        finished = true;
      },
      () => {
        finished = true;
      },
    );
    for (;;) {
      while (this.#items.length > 0) yield this.#items.shift() as T;
      if (finished) return;
      await Promise.race([settled, new Promise<void>((resolve) => (this.#wake = resolve))]);
      this.#wake = undefined;
    }
  }
}
