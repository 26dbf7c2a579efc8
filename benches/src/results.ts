/**
 * What a bench run produces: each workload's outcome per subject, and the report of a run (the
 * results JSON that `--render` turns into docs/benchmarks.md).
 * @module
 */
import type { SizeName } from "./corpus.js";
import type { Kind, Role } from "./subjects.js";
import type { Timing } from "./measure.js";

export interface Outcome {
  label: string;
  ok: boolean;
  /** Why the answer was rejected, or why the subject does not offer the workload. */
  note?: string;
  timing?: Timing;
}

export interface WorkloadResult {
  id: string;
  title: string;
  kind: Kind | "core";
  outcomes: Partial<Record<Role, Outcome>>;
  /** Max resident set size of this process after the workload, KiB. */
  maxRssKb: number;
  /** The run that measured this row (its report's `date`); rows of a merged report may differ. */
  measuredAt?: string;
}

export interface BenchReport {
  date: string;
  size: SizeName;
  corpus: { files: number; bytes: number };
  /** Size of the WASM module as the `@engram/wasm` package ships it. */
  wasmBytes?: number;
  machine: { cpus: string; cores: number; memoryGb: number; node: string; platform: string };
  workloads: WorkloadResult[];
}
