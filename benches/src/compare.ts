/**
 * Two bench reports side by side, by what survives a change of machine: each row's in-run ratios
 * (Engram against the peer and against the plain-JS floor, measured in the same process minutes
 * apart), not its absolute times, which move with the VM's speed.
 *
 * `tsx benches/src/compare.ts <before> <after> [--noise 1.5] [--all]` where a report is a results
 * JSON path or `git:<rev>:<path>`. Prints the rows whose ratio moved past the noise band, the
 * median machine factor (how much slower or faster the references themselves ran), and a count.
 * @module
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { BenchReport, WorkloadResult } from "./results.js";
import type { Role } from "./subjects.js";

const OURS: readonly Role[] = ["ours-native", "ours-wasm"];
const REFERENCES: readonly Role[] = ["peer", "floor"];

export interface RatioChange {
  id: string;
  ours: Role;
  /** A subject of the same run, or `machine`: a row without one, its own time scaled by
   * {@link Comparison.machineFactor} (coarser: the VM's speed does not move every workload alike). */
  reference: Role | "machine";
  before: number;
  after: number;
  /** `after / before`: above 1, Engram lost ground to the reference. */
  change: number;
}

export interface Comparison {
  changes: RatioChange[];
  /** Median over rows of a reference's own time after / before: the machine, not the code. */
  machineFactor: number | undefined;
  /** Rows of one report only (added, removed, or without a timing in one of them). */
  unmatched: string[];
  /** The two reports' processors when they differ: then even in-run ratios move (a workload
   * bound by memory and one bound by calls do not scale alike), so nothing here is a regression. */
  otherMachine?: { before: string; after: string };
}

function median(xs: readonly number[]): number | undefined {
  if (xs.length === 0) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

function medianMs(w: WorkloadResult, role: Role): number | undefined {
  const o = w.outcomes[role];
  const t = o?.ok ? o.timing?.medianMs : undefined;
  return t !== undefined && t > 0 ? t : undefined;
}

export function compareReports(before: BenchReport, after: BenchReport): Comparison {
  const earlier = new Map(before.workloads.map((w) => [w.id, w]));
  const changes: RatioChange[] = [];
  const machine: number[] = [];
  const unmatched: string[] = [];
  const alone: [WorkloadResult, WorkloadResult][] = [];
  for (const now of after.workloads) {
    const then = earlier.get(now.id);
    earlier.delete(now.id);
    let paired = false;
    for (const reference of REFERENCES) {
      const r0 = then && medianMs(then, reference);
      const r1 = medianMs(now, reference);
      if (r0 === undefined || r1 === undefined) continue;
      machine.push(r1 / r0);
      for (const ours of OURS) {
        const o0 = then && medianMs(then, ours);
        const o1 = medianMs(now, ours);
        if (o0 === undefined || o1 === undefined) continue;
        const b = o0 / r0;
        const a = o1 / r1;
        changes.push({ id: now.id, ours, reference, before: b, after: a, change: a / b });
        paired = true;
      }
    }
    if (!paired && then) alone.push([then, now]);
    else if (!paired) unmatched.push(now.id);
  }
  unmatched.push(...earlier.keys());
  const machineFactor = median(machine);
  for (const [then, now] of alone) {
    let paired = false;
    for (const ours of OURS) {
      const o0 = medianMs(then, ours);
      const o1 = medianMs(now, ours);
      if (o0 === undefined || o1 === undefined || machineFactor === undefined) continue;
      changes.push({ id: now.id, ours, reference: "machine", before: o0, after: o1, change: o1 / o0 / machineFactor });
      paired = true;
    }
    if (!paired) unmatched.push(now.id);
  }
  changes.sort((x, y) => y.change - x.change);
  const cpus = [before.machine?.cpus ?? "", after.machine?.cpus ?? ""] as const;
  return { changes, machineFactor, unmatched, ...(cpus[0] !== cpus[1] && { otherMachine: { before: cpus[0], after: cpus[1] } }) };
}

/** A report from a file, or from git (`git:<rev>:<path>`), as an earlier page's run is kept. */
export function loadReport(spec: string): BenchReport {
  const git = /^git:([^:]+):(.+)$/.exec(spec);
  const text = git ? execFileSync("git", ["show", `${git[1]}:${git[2]}`], { encoding: "utf8" }) : readFileSync(spec, "utf8");
  return JSON.parse(text) as BenchReport;
}

export function renderComparison(c: Comparison, noise: number, all: boolean): string {
  const x = (v: number) => `${v.toFixed(2)}×`;
  const lines: string[] = [];
  if (c.otherMachine)
    lines.push(
      `different machines ("${c.otherMachine.before}" before, "${c.otherMachine.after}" after): ratios are not comparable either; re-run the earlier code here`,
    );
  const moved = c.changes.filter((r) => all || r.change > noise || r.change < 1 / noise);
  lines.push(
    `machine factor (the references' own time, after / before, median over rows): ${c.machineFactor === undefined ? "—" : x(c.machineFactor)}`,
  );
  lines.push(
    `${c.changes.length} ratios compared; ${c.changes.filter((r) => r.change > noise).length} worse than ${x(noise)}, ` +
      `${c.changes.filter((r) => r.change < 1 / noise).length} better than ${x(1 / noise)}`,
  );
  for (const r of moved)
    lines.push(
      `${x(r.change).padStart(8)}  ${r.id.padEnd(30)} ${r.ours.padEnd(12)} / ${r.reference.padEnd(7)} ${r.before.toPrecision(3)} → ${r.after.toPrecision(3)}`,
    );
  if (c.unmatched.length > 0) lines.push(`not compared (one report only, or no timing): ${c.unmatched.join(", ")}`);
  return lines.join("\n");
}

function main(argv: readonly string[]): void {
  const positional = argv.filter((a, i) => !a.startsWith("--") && argv[i - 1] !== "--noise");
  const noiseAt = argv.indexOf("--noise");
  const noise = noiseAt >= 0 ? Number(argv[noiseAt + 1]) : 1.5;
  if (positional.length !== 2 || !(noise > 1)) {
    console.error("usage: tsx benches/src/compare.ts <before.json|git:rev:path> <after.json|git:rev:path> [--noise 1.5] [--all]");
    process.exit(2);
  }
  const [before, after] = positional as [string, string];
  console.log(renderComparison(compareReports(loadReport(before), loadReport(after)), noise, argv.includes("--all")));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main(process.argv.slice(2));
