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
  for (let i = 0; i < o.warmup; i++) await fn();
  const t0 = performance.now();
  await fn();
  const single = Math.max(performance.now() - t0, 0.0005);
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
