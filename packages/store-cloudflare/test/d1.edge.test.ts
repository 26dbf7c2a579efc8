/** The D1 store and checkpointer in workerd (miniflare) with a real D1 binding: the conformance
 * suites run in the Worker, and concurrent compare-and-swap increments lose nothing. */
import { expect, it } from "vitest";
import { checkpointerConformance, storeConformance } from "../../engram/src/testing/index.js";
import type { TestResult } from "./fixtures/harness.js";
import { registeredTests, useTestWorker } from "./fixtures/host.js";

const { call } = useTestWorker();

it("passes the Store conformance suite on D1", async () => {
  const results = (await call("/d1/conformance/store")) as TestResult[];
  expect(results.filter((r) => r.error)).toEqual([]);
  expect(results.length).toBe(registeredTests((t) => storeConformance("x", t, () => ({}) as never)));
});

it("passes the Checkpointer conformance suite on D1", async () => {
  const results = (await call("/d1/conformance/checkpointer")) as TestResult[];
  expect(results.filter((r) => r.error)).toEqual([]);
  expect(results.length).toBe(registeredTests((t) => checkpointerConformance("x", t, () => ({}) as never)));
});

it("8 concurrent requests of 100 compare-and-swap increments each on one D1 key make exactly 800", async () => {
  const runs = (await Promise.all(Array.from({ length: 8 }, () => call("/d1/increment?key=n&times=100")))) as { conflicts: number }[];
  expect(await call("/d1/get?key=n")).toBe(800);
  // The requests overlapped: some of their swaps lost and were retried.
  expect(runs.reduce((n, r) => n + r.conflicts, 0)).toBeGreaterThan(0);
});
