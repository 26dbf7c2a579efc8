/**
 * One core in several worker threads of a process at once: each thread's tables keep their
 * own bytes while batches are written and released everywhere (native shares its buffers of
 * released batches between threads).
 */
import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { loadCore } from "../src/index.js";

/** Rounds of: seed a batch over one large buffer, check every file, release it. (A thread
 * imports the built package, as a user's worker would; this file's own imports are the sources.) */
const churn = `
const { parentPort, workerData } = require("node:worker_threads");
(async () => {
  const { loadCore } = await import("engram");
  const core = await loadCore();
  const { tag, rounds } = workerData;
  let checked = 0;
  for (let round = 0; round < rounds; round++) {
    const t = core.createFileTable();
    const files = Array.from({ length: 300 }, (_, i) => ["/" + tag + "/" + round + "/" + i + ".txt", tag + ":" + round + ":" + i + ":" + "é".repeat(2000)]);
    t.writeMany(files);
    const kept = core.restoreFileTable(t.snapshot());
    t.clear();
    for (const [path, text] of files) {
      if (kept.read(path).content !== text) throw new Error("thread " + tag + " round " + round + ": " + path + " changed");
      checked++;
    }
    kept.clear();
  }
  parentPort.postMessage({ checked, core: core.kind });
})().catch((e) => parentPort.postMessage({ error: String(e && e.stack || e) }));
`;

function run(tag: string, rounds: number): Promise<{ checked?: number; core?: string; error?: string }> {
  return new Promise((resolve, reject) => {
    const w = new Worker(churn, { eval: true, workerData: { tag, rounds } });
    w.once("message", (m) => {
      resolve(m);
      void w.terminate();
    });
    w.once("error", reject);
  });
}

describe("a core in worker threads", () => {
  it("3 threads and the main one seed, snapshot, restore and release batches at once, each keeping its own bytes", async () => {
    const core = await loadCore();
    const threads = ["a", "b", "c"].map((tag) => run(tag, 15));
    // The main thread churns too, between the threads' batches.
    for (let round = 0; round < 15; round++) {
      const t = core.createFileTable();
      t.writeMany(Array.from({ length: 300 }, (_, i) => [`/main/${i}.txt`, `main:${round}:${i}:${"x".repeat(4000)}`] as const));
      expect(t.read(`/main/${round}.txt`).content).toBe(`main:${round}:${round}:${"x".repeat(4000)}`);
      t.clear();
      await new Promise((r) => setImmediate(r));
    }
    const results = await Promise.all(threads);
    for (const r of results) expect(r).toEqual({ checked: 15 * 300, core: core.kind });
  }, 60_000);
});
