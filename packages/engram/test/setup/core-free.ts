/** Setup of the `core-free` project: suites that never reach the core run once, not once per core
 * (vitest.config.ts, docs/decisions/2026-11-29-test-suite-time.md). The core is loaded as for
 * every suite, and every call into it is counted: a listed file that calls the core fails here,
 * naming the functions it called, so the list cannot go stale unnoticed. */
import { afterAll } from "vitest";
import { loadCore } from "../../src/core/loader.js";

const counted = Symbol("core calls counted");
const core = (await loadCore()) as unknown as Record<string | symbol, unknown>;
const calls = (core[counted] as Map<string, number> | undefined) ?? new Map<string, number>();
if (!core[counted]) {
  core[counted] = calls;
  for (const [name, value] of Object.entries(core)) {
    if (typeof value !== "function") continue;
    const original = value as (...args: unknown[]) => unknown;
    core[name] = function (this: unknown, ...args: unknown[]) {
      calls.set(name, (calls.get(name) ?? 0) + 1);
      return original.apply(this, args);
    };
  }
}

afterAll(() => {
  if (calls.size === 0) return;
  const called = [...calls].map(([name, n]) => `${name} (${n}×)`).join(", ");
  throw new Error(`this file calls the core (${called}): remove it from CORE_FREE in vitest.config.ts so that it runs on both cores`);
});
