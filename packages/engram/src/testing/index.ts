/**
 * `engram/testing`: conformance suites that any `Store` or `Checkpointer`
 * implementation can run. Pass your test runner's `describe`, `it` and `expect`:
 *
 * ```ts
 * import { describe, expect, it } from "vitest";
 * import { storeConformance } from "engram/testing";
 * storeConformance("MyStore", { describe, it, expect }, () => myStore);
 * ```
 * @packageDocumentation
 */
export { type Assertion, type TestApi, prng, uniqueId } from "./api.js";
export { type StoreConformanceOptions, storeConformance } from "./store.js";
export { checkpointerConformance, sampleCheckpoint } from "./checkpointer.js";
