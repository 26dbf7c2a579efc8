/** Timing: warm-up, then samples long enough to be measurable; median and spread per call. */

export interface Timing {
  /** Median time per call, milliseconds. */
  medianMs: number;
  /** Fastest and slowest sample, per call. */
  minMs: number;
  maxMs: number;
  samples: number;
  callsPerSample: number;
}

export interface MeasureOptions {
  warmup: number;
  samples: number;
  /** A sample repeats the call until it lasts at least this long. */
  minSampleMs: number;
  /** Stop taking samples after this much time (at least three are taken). */
  budgetMs: number;
}

export async function measure(fn: () => Promise<unknown>, o: MeasureOptions): Promise<Timing> {
  // Collect what preparing the subjects left (with --expose-gc, as the isolating run starts
  // each group): otherwise its marking runs during the first subject's samples.
  (globalThis as { gc?: () => void }).gc?.();
  for (let i = 0; i < o.warmup; i++) await fn();
  // Warm up until the rate settles, then size the samples by it. A call of a few µs runs
  // thousands of times before it is optimised (the JIT; for WASM, V8 moving hot functions from
  // its baseline compiler to the optimising one: edit ran at 40 µs for its first ~4,000 calls,
  // then 3.5 µs), and samples sized by one cold call timed mostly that start. Both sides of a
  // row get the same procedure; a slow call (over a window) is simply run once more.
  const windowMs = o.minSampleMs;
  let previous = Number.POSITIVE_INFINITY;
  let single = 0.0005;
  const warmStart = performance.now();
  for (;;) {
    const t0 = performance.now();
    let n = 0;
    do {
      await fn();
      n++;
    } while (performance.now() - t0 < windowMs);
    single = Math.max((performance.now() - t0) / n, 0.0005);
    const settled = single > previous * 0.9;
    previous = Math.min(previous, single);
    const elapsed = performance.now() - warmStart;
    // At least ten windows: the optimising tier arrives after a plateau, not gradually.
    if ((settled && elapsed >= windowMs * 10) || elapsed > Math.max(o.budgetMs / 2, windowMs)) break;
  }
  const calls = Math.max(1, Math.ceil(o.minSampleMs / single));
  const perCall: number[] = [];
  const started = performance.now();
  while (perCall.length < o.samples && (perCall.length < 3 || performance.now() - started < o.budgetMs)) {
    const s = performance.now();
    for (let i = 0; i < calls; i++) await fn();
    perCall.push((performance.now() - s) / calls);
  }
  perCall.sort((a, b) => a - b);
  const mid = perCall.length >> 1;
  const median = perCall.length % 2 ? (perCall[mid] as number) : ((perCall[mid - 1] as number) + (perCall[mid] as number)) / 2;
  return {
    medianMs: median,
    minMs: perCall[0] as number,
    maxMs: perCall[perCall.length - 1] as number,
    samples: perCall.length,
    callsPerSample: calls,
  };
}
