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

/** Samples for a quick look (`--size tiny` and the test run), and for the figures on the page. */
export const QUICK: MeasureOptions = { warmup: 1, samples: 3, minSampleMs: 2, budgetMs: 200 };
export const STEADY: MeasureOptions = { warmup: 2, samples: 9, minSampleMs: 20, budgetMs: 2500 };

/** A subject of a row after its answer was checked: the call to time, or why it is not timed. */
export type Checked = { label: string; call: () => Promise<unknown> } | { label: string; note: string };

/** A row's outcome for one subject: its timing, or the note saying why there is none. */
export interface Timed {
  label: string;
  ok: boolean;
  timing?: Timing;
  note?: string;
}

/** Times the checked subjects of a row together ({@link measureTogether}); the others keep their note. */
export async function timeChecked(subjects: readonly Checked[], o: MeasureOptions): Promise<Timed[]> {
  const calls = subjects.flatMap((s) => ("call" in s ? [s.call] : []));
  const timings = await measureTogether(calls, o);
  let next = 0;
  return subjects.map((s) =>
    "call" in s ? { label: s.label, ok: true, timing: timings[next++] as Timing } : { label: s.label, ok: false, note: s.note },
  );
}

type Gc = (options?: { type: "minor" | "major" }) => void;

/**
 * Times the subjects of one row: each warmed up on its own, then their samples taken in turns
 * (round robin, the first subject rotating each round) rather than one subject after the other.
 * On a shared machine the background load drifts over seconds; taking a row's samples in the
 * same stretch of time gives every subject the same weather, so the ratios a row reports are
 * steadier than the times themselves (small calls moved up to 3× between sequential runs).
 * With `--expose-gc`, a collection between samples keeps one subject's garbage from being
 * collected inside the next one's sample. Then the event loop turns once, as it does between a
 * server's requests: N-API runs a native object's finalizer from the loop, so without it no
 * native memory a sample let go of would be released before the row ends.
 */
export async function measureTogether(fns: readonly (() => Promise<unknown>)[], o: MeasureOptions): Promise<Timing[]> {
  const gc = (globalThis as { gc?: Gc }).gc;
  // Collect what preparing the subjects left (with --expose-gc, as the isolating run starts
  // each group): otherwise its marking runs during the first subject's samples.
  gc?.();
  const calls: number[] = [];
  for (const fn of fns) calls.push(await warmUp(fn, o));
  // A row where some subject's call fills a sample on its own (a peer's grep of 1 s) leaves tens
  // of megabytes of garbage per sample: every sample of such a row starts from a major
  // collection, or the next subject's sample would mark it. Elsewhere a minor one is enough.
  const collect: { type: "minor" | "major" } = { type: calls.some((n) => n <= 2) ? "major" : "minor" };
  const perCall: number[][] = fns.map(() => []);
  const started = performance.now();
  const budget = o.budgetMs * fns.length;
  for (let round = 0; round < o.samples && (round < 3 || performance.now() - started < budget); round++) {
    for (let k = 0; k < fns.length; k++) {
      const i = (k + round) % fns.length;
      const fn = fns[i] as () => Promise<unknown>;
      const n = calls[i] as number;
      gc?.(collect);
      await turnOfTheLoop();
      const s = performance.now();
      for (let c = 0; c < n; c++) await fn();
      (perCall[i] as number[]).push((performance.now() - s) / n);
    }
  }
  return perCall.map((samples, i) => summary(samples, calls[i] as number));
}

function turnOfTheLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Runs the call until its rate settles; returns how many calls make one sample. */
async function warmUp(fn: () => Promise<unknown>, o: MeasureOptions): Promise<number> {
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
  return Math.max(1, Math.ceil(o.minSampleMs / single));
}

/** Median, fastest and slowest of per-call times (`perCall` is sorted in place). */
export function summary(perCall: number[], calls: number): Timing {
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
