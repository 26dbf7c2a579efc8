/** The Durable Object store and checkpointer in workerd (miniflare), with a real SQLite-backed
 * Durable Object binding: the conformance suites run inside the object. */
import { join } from "node:path";
import { checkpointerConformance, storeConformance } from "engram/testing";
import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { TestResult } from "./fixtures/harness.js";
import { type Bundle, bundleWorker, startWorker } from "./fixtures/host.js";

let bundle: Bundle;
let mf: Miniflare;

beforeAll(async () => {
  bundle = await bundleWorker(join(import.meta.dirname, "fixtures/worker.ts"));
  mf = await startWorker(bundle);
});

afterAll(async () => {
  await mf?.dispose();
  await bundle?.dispose();
});

/** How many tests a suite registers (counted here, in Node, by the same suite function). */
function testCount(register: (t: Parameters<typeof storeConformance>[1]) => void): number {
  let n = 0;
  register({ describe: (_, fn) => fn(), it: () => void n++, expect: () => ({}) as never });
  return n;
}

async function call(path: string): Promise<unknown> {
  const res = await mf.dispatchFetch(`http://localhost${path}`);
  const body = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body;
}

it("passes the Store conformance suite inside a Durable Object", async () => {
  const results = (await call("/conformance/store?object=store-suite")) as TestResult[];
  expect(results.filter((r) => r.error)).toEqual([]);
  expect(results.length).toBe(testCount((t) => storeConformance("x", t, () => ({}) as never)));
});

it("passes the Checkpointer conformance suite inside a Durable Object", async () => {
  const results = (await call("/conformance/checkpointer?object=checkpointer-suite")) as TestResult[];
  expect(results.filter((r) => r.error)).toEqual([]);
  expect(results.length).toBe(testCount((t) => checkpointerConformance("x", t, () => ({}) as never)));
});

it("keeps checkpoints over a row's 2 MB in parts, and refuses an oversized value with too_large", async () => {
  expect(await call("/large?object=large")).toEqual({
    sameContent: true,
    sameFiles: true,
    tooLarge: "too_large",
    notStorage: "invalid_argument",
  });
});

it("8 concurrent requests of 100 compare-and-swap increments each on one key make exactly 800, every time", async () => {
  for (const round of [1, 2, 3]) {
    const key = `n${round}`;
    const runs = (await Promise.all(Array.from({ length: 8 }, () => call(`/increment?object=counter&key=${key}&times=100`)))) as {
      conflicts: number;
    }[];
    expect(await call(`/get?object=counter&key=${key}`)).toBe(800);
    // The requests overlapped: some of their swaps lost and were retried.
    expect(runs.reduce((n, r) => n + r.conflicts, 0)).toBeGreaterThan(0);
  }
});
