/**
 * The few test-runner functions the conformance suites use, passed in by the caller (vitest's
 * `describe`, `it`, `expect` fit), so the library does not depend on a test runner.
 * @module
 */

/** The assertions the suites use. */
export interface Assertion {
  toBe(expected: unknown): void;
  toEqual(expected: unknown): void;
  toBeUndefined(): void;
  toBeDefined(): void;
  toMatchObject(expected: object): void;
  toBeGreaterThan(n: number): void;
  toBeInstanceOf(type: abstract new (...args: never[]) => unknown): void;
  not: Omit<Assertion, "not" | "rejects">;
  rejects: { toMatchObject(expected: object): Promise<void> };
}

/** `describe`, `it` and `expect` of a test runner. */
export interface TestApi {
  describe(name: string, fn: () => void): void;
  it(name: string, fn: () => Promise<void>, timeout?: number): void;
  expect(value: unknown): Assertion;
}

/** A unique, namespace-safe id for one test. */
export function uniqueId(label: string): string {
  return `${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
}

/** A small seeded PRNG (mulberry32), so property tests are reproducible from their seed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
