/**
 * Table growth: what one more `write` costs as an in-memory table fills, on both cores.
 * Two rows — the first files into an empty table and the last ones into a table already holding
 * the rest — whose ratio shows whether the table, its index or the WASM heap copy what they hold
 * as they grow (amortised growth keeps the two within noise; quadratic copying does not).
 */
import type { Core } from "engram";
import { type Timing, summary } from "./measure.js";
import type { WorkloadResult } from "./results.js";

/** One growth row per window: `first` (files 1..window) and `last` (files total-window+1..total). */
export interface GrowthRow {
  id: "core.write-growth-first" | "core.write-growth-last";
  title: string;
  timing: Timing;
}

const CONTENT = `${"export const value = 42; // growth bench line\n".repeat(22)}`; // ~1 KB

/** Fills fresh tables `rounds` times (after one untimed fill that warms the JIT) with `total`
 * 1 KB files written one by one into 100 directories, timing the first and the last `window`
 * writes of each fill. */
export function writeGrowth(core: Core, total: number, window: number, rounds: number): GrowthRow[] {
  const first: number[] = [];
  const last: number[] = [];
  for (let r = -1; r < rounds; r++) {
    const table = core.createFileTable();
    let t0 = performance.now();
    for (let i = 0; i < total; i++) {
      if (i === total - window) t0 = performance.now();
      const w = table.write(`/src/dir${i % 100}/file${i}.ts`, CONTENT);
      if (w.error) throw new Error(`write ${i} failed: ${w.error.code}`);
      if (i === window - 1 && r >= 0) first.push((performance.now() - t0) / window);
    }
    if (r >= 0) last.push((performance.now() - t0) / window);
    if (table.stat(`/src/dir${(total - 1) % 100}/file${total - 1}.ts`).error) throw new Error("the last file is missing");
  }
  const timing = (perCall: number[]) => summary(perCall, window);
  const n = total.toLocaleString("en-US");
  const w = window.toLocaleString("en-US");
  return [
    { id: "core.write-growth-first", title: `table growth: write of files 1–${w}, 1 KB each, one by one`, timing: timing(first) },
    {
      id: "core.write-growth-last",
      title: `table growth: write of the last ${w} of ${n} files (table already holding the rest)`,
      timing: timing(last),
    },
  ];
}

/** The growth rows of both cores, for `run.ts` (10,000 files; 2,000 in the tiny quick run). */
export function growthRows(cores: Core[], wanted: (id: string) => boolean, quick: boolean): WorkloadResult[] {
  if (!wanted("core.write-growth")) return [];
  const [total, window, rounds] = quick ? [2_000, 200, 2] : [10_000, 1_000, 5];
  const rows = new Map<string, WorkloadResult>();
  for (const core of cores) {
    const role = core.kind === "native" ? "ours-native" : "ours-wasm";
    for (const row of writeGrowth(core, total, window, rounds)) {
      const result = rows.get(row.id) ?? { id: row.id, title: row.title, kind: "core", outcomes: {}, maxRssKb: 0 };
      result.outcomes[role] = { label: `engram (${core.kind})`, ok: true, timing: row.timing };
      result.maxRssKb = process.resourceUsage().maxRSS;
      rows.set(row.id, result);
    }
  }
  return [...rows.values()];
}
