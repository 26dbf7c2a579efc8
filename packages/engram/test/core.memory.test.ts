/**
 * Memory a file table holds outside the JavaScript heap, in real child processes: 80 tables of
 * 16 MB each are seeded and dropped in turn (1.28 GB in all), with an event-loop turn between
 * them as a server has between requests. A table that is dropped must not stay allocated until
 * an unrelated garbage collection: the native core tells V8 its size, and `clear()` releases a
 * table at once on both cores (WASM memory is otherwise given back only by a collection).
 * Results work the same way: the number columns of a glob or grep made in a loop that never
 * yields are freed by V8's collector, not held until the event loop turns.
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { core } from "./fixtures/session.js";

const TABLES = 80;
const MEGABYTES = 16;

/** How far a child's resident set grew above where it started, in MB. */
function growth(mode?: "clear"): number {
  return childGrowth("dropped-tables.ts", String(TABLES), String(MEGABYTES), ...(mode ? [mode] : []));
}

function childGrowth(fixtureName: string, ...rest: string[]): number {
  const fixture = join(import.meta.dirname, "fixtures/core", fixtureName);
  const args = ["--import", "tsx", fixture, ...rest];
  const out = execFileSync(process.execPath, args, { encoding: "utf8", env: { ...process.env, ENGRAM_CORE: core.kind } });
  const { baseline, peak } = JSON.parse(out.trim().split("\n").at(-1) as string) as { baseline: number; peak: number };
  return peak - baseline;
}

describe("memory of dropped file tables", () => {
  it.runIf(core.kind === "native")(
    "is given back without clear(): V8 knows a native table's size (growth well under the 1.28 GB seeded)",
    () => {
      expect(growth()).toBeLessThan((TABLES * MEGABYTES) / 2);
    },
    120_000,
  );

  it("is given back at once by clear() (growth of a few tables at most)", () => {
    expect(growth("clear")).toBeLessThan(MEGABYTES * 10);
  }, 120_000);
});

describe("memory of results made within one turn of the event loop", () => {
  // 1,000 globs and greps of 5,000 files each: their columns add up to ~200 MB. Lent to V8 as
  // external buffers, Node frees them only from the event loop, so a loop that never yields
  // held all of them (and every call wrote into fresh pages).
  it("is freed by the collector as the loop runs (growth well under what the results add up to)", () => {
    expect(childGrowth("results-in-one-turn.ts", "1000")).toBeLessThan(80);
  }, 120_000);
});
