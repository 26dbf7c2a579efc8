/** The Durable Object store and checkpointer in workerd (miniflare), with a real SQLite-backed
 * Durable Object binding: the conformance suites run inside the object. */
import { expect, it } from "vitest";
import { checkpointerConformance, storeConformance } from "../../engram/src/testing/index.js";
import type { TestResult } from "./fixtures/harness.js";
import { registeredTests, useTestWorker } from "./fixtures/host.js";

const { call } = useTestWorker();

it("passes the Store conformance suite inside a Durable Object", async () => {
  const results = (await call("/conformance/store?object=store-suite")) as TestResult[];
  expect(results.filter((r) => r.error)).toEqual([]);
  expect(results.length).toBe(registeredTests((t) => storeConformance("x", t, () => ({}) as never)));
});

it("passes the Checkpointer conformance suite inside a Durable Object", async () => {
  const results = (await call("/conformance/checkpointer?object=checkpointer-suite")) as TestResult[];
  expect(results.filter((r) => r.error)).toEqual([]);
  expect(results.length).toBe(registeredTests((t) => checkpointerConformance("x", t, () => ({}) as never)));
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
