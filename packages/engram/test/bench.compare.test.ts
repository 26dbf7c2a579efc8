/** The bench comparison (benches/src/compare.ts): rows are compared by their in-run ratios, so a
 * machine twice as slow moves nothing; a row that lost ground to its reference is found and
 * ordered first; rows without a reference are scaled by the machine factor; rows of one report
 * only are named. */
import { describe, expect, it } from "vitest";
import { compareReports, renderComparison } from "../../../benches/src/compare.js";
import type { BenchReport, WorkloadResult } from "../../../benches/src/results.js";

const timing = (medianMs: number) => ({ medianMs, minMs: medianMs, maxMs: medianMs, samples: 9, callsPerSample: 1 });
function row(id: string, times: Partial<Record<"ours-native" | "ours-wasm" | "peer" | "floor", number>>): WorkloadResult {
  const outcomes = Object.fromEntries(Object.entries(times).map(([role, ms]) => [role, { label: role, ok: true, timing: timing(ms) }]));
  return { id, title: id, kind: "state", outcomes, maxRssKb: 0 };
}
function report(workloads: WorkloadResult[], cpus = "cpu A"): BenchReport {
  return {
    date: "2026-11-29",
    size: "medium",
    corpus: { files: 1, bytes: 1 },
    machine: { cpus, cores: 2, memoryGb: 1, node: "", platform: "" },
    workloads,
  };
}

describe("compareReports", () => {
  it("a machine twice as slow moves no ratio; a row that lost ground comes first", () => {
    const before = report([row("a", { "ours-native": 1, peer: 10, floor: 2 }), row("b", { "ours-native": 1, floor: 1 })]);
    const after = report([row("a", { "ours-native": 2, peer: 20, floor: 4 }), row("b", { "ours-native": 6, floor: 2 })]);
    const c = compareReports(before, after);
    expect(c.machineFactor).toBe(2);
    expect(c.changes[0]).toMatchObject({ id: "b", reference: "floor", before: 1, after: 3, change: 3 });
    expect(c.changes.filter((r) => r.id === "a").map((r) => r.change)).toEqual([1, 1]);
    const text = renderComparison(c, 1.5, false);
    expect(text).toContain("1 worse than 1.50×");
    expect(text).toMatch(/3\.00×\s+b\s/);
    expect(text).not.toMatch(/\sa\s+ours-native/);
  });

  it("scales a row without a reference by the machine factor, and names rows of one report only", () => {
    const before = report([row("ref", { "ours-native": 1, peer: 1 }), row("alone", { "ours-native": 4 }), row("gone", { floor: 1 })]);
    const after = report([row("ref", { "ours-native": 3, peer: 3 }), row("alone", { "ours-native": 6 }), row("new", { "ours-native": 1 })]);
    const c = compareReports(before, after);
    expect(c.machineFactor).toBe(3);
    expect(c.changes.find((r) => r.id === "alone")).toMatchObject({ reference: "machine", change: 0.5 });
    expect(c.unmatched.sort()).toEqual(["gone", "new"]);
  });

  it("leaves out a subject that failed or was skipped", () => {
    const failed = row("a", { peer: 1 });
    failed.outcomes["ours-native"] = { label: "x", ok: false, note: "skipped: no database" };
    const c = compareReports(report([row("a", { "ours-native": 1, peer: 1 })]), report([failed]));
    expect(c.changes).toEqual([]);
    expect(c.unmatched).toEqual(["a"]);
  });

  it("says when the two reports come from different processors", () => {
    const rows = [row("a", { "ours-native": 1, peer: 1 })];
    expect(compareReports(report(rows), report(rows)).otherMachine).toBeUndefined();
    const c = compareReports(report(rows, "AMD EPYC"), report(rows, "Intel(R) Xeon(R) Processor"));
    expect(c.otherMachine).toEqual({ before: "AMD EPYC", after: "Intel(R) Xeon(R) Processor" });
    expect(renderComparison(c, 1.5, false)).toMatch(/^different machines \("AMD EPYC" before/);
  });
});
