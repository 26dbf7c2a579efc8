/**
 * What the sandbox costs per `execute`: spawn-to-exit of `true`, confined (a `FilesystemBackend`
 * with `execute`: Landlock, namespaces, rlimits, the pids cgroup for root) against the same
 * command started unconfined by Node (`/bin/sh -c true`, the floor).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FilesystemBackend } from "engram";
import { type Checked, type MeasureOptions, timeChecked } from "./measure.js";
import type { Outcome, WorkloadResult } from "./results.js";

const ID = "core.sandbox-spawn";

/** Each call starts processes: few calls per sample, and samples long enough to steady them. */
const QUICK_SPAWNS: MeasureOptions = { warmup: 1, samples: 5, minSampleMs: 20, budgetMs: 1500 };
const STEADY_SPAWNS: MeasureOptions = { warmup: 2, samples: 9, minSampleMs: 100, budgetMs: 6000 };

function unconfinedTrue(cwd: string): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = spawn("/bin/sh", ["-c", "true"], { cwd, stdio: "ignore" });
    child.on("error", reject);
    child.on("exit", (code) => resolve(code));
  });
}

/** The sandbox row, when wanted. */
export async function sandboxRows(wanted: (id: string) => boolean, quick: boolean): Promise<WorkloadResult[]> {
  if (!wanted(ID)) return [];
  const root = mkdtempSync(join(tmpdir(), "engram-bench-sandbox-"));
  try {
    const backend = new FilesystemBackend({ rootDir: root, execute: true });
    const confined = async () => {
      const r = await backend.execute?.("true");
      if (!r || r.error) throw new Error(r?.error?.message ?? "the backend has no execute");
      return r.exitCode;
    };
    const subjects: [role: "ours-native" | "floor", label: string, call: () => Promise<number | null>][] = [
      ["ours-native", "engram-sandbox (confined)", confined],
      ["floor", "child_process.spawn (unconfined)", () => unconfinedTrue(root)],
    ];
    const checked: Checked[] = [];
    for (const [, label, call] of subjects) {
      try {
        const code = await call();
        checked.push(code === 0 ? { label, call } : { label, note: `exit code ${code}` });
      } catch (e) {
        checked.push({ label, note: `failed: ${(e as Error).message}` });
      }
    }
    const timed = await timeChecked(checked, quick ? QUICK_SPAWNS : STEADY_SPAWNS);
    const outcomes: WorkloadResult["outcomes"] = {};
    subjects.forEach(([role], i) => {
      outcomes[role] = timed[i] as Outcome;
    });
    return [
      {
        id: ID,
        title: "sandbox overhead: spawn-to-exit of `true`, confined vs unconfined",
        kind: "core",
        outcomes,
        maxRssKb: process.resourceUsage().maxRSS,
      },
    ];
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
