/**
 * A user's wrapper keeps the fast path: `grep` through a `CompositeBackend` whose default
 * backend is a `StateBackend` behind a forwarding Proxy (a logging wrapper, say), on each core,
 * against the same composite over the plain `StateBackend` (the floor). The composite finds the
 * resident table by the `residentTable` capability, so the wrapper costs a property read, not a
 * per-backend search; a subject whose wrapper was asked to grep itself is rejected.
 */
import { type Backend, CompositeBackend, type Core, StateBackend } from "engram";
import { type Checked, QUICK, STEADY, timeChecked } from "./measure.js";
import type { Outcome, WorkloadResult } from "./results.js";

const ID = "composite.wrapped-state-grep";
const FILES = 2_000;
const TOKEN = "needle";

/** A forwarding Proxy that counts the backend's own searches. */
function wrapped(backend: StateBackend, searches: { count: number }): Backend {
  return new Proxy(backend, {
    get(target, key) {
      const value = Reflect.get(target, key, target);
      if (typeof value !== "function") return value;
      if (key === "grep" || key === "glob") searches.count++;
      return value.bind(target);
    },
  });
}

async function composite(core: Core, wrap: boolean, searches: { count: number }): Promise<CompositeBackend> {
  const state = new StateBackend({ core });
  const files: [string, string][] = [];
  for (let i = 0; i < FILES; i++) files.push([`/src/d${i % 40}/f${i}.ts`, `export const v${i} = ${i};\n${i % 7 === 0 ? TOKEN : "hay"}\n`]);
  await state.writeMany(files);
  const memories = new StateBackend({ core });
  await memories.write("/notes.md", `${TOKEN} in memory\n`);
  return new CompositeBackend(wrap ? wrapped(state, searches) : state, { "/memories/": memories }, { core });
}

/** The row, when wanted: native and WASM through the wrapper, the plain composite as the floor. */
export async function capabilityRows(cores: readonly Core[], wanted: (id: string) => boolean, quick: boolean): Promise<WorkloadResult[]> {
  if (!wanted(ID)) return [];
  const expected = Math.ceil(FILES / 7) + 1;
  const subjects: [role: "ours-native" | "ours-wasm" | "floor", label: string, core: Core, wrap: boolean][] = [];
  for (const core of cores) {
    const role = core.kind === "native" ? "ours-native" : "ours-wasm";
    subjects.push([role, `Proxy-wrapped StateBackend (${core.kind})`, core, true]);
  }
  const native = cores.find((c) => c.kind === "native") ?? (cores[0] as Core);
  subjects.push(["floor", "plain StateBackend (native)", native, false]);
  const checked: Checked[] = [];
  for (const [, label, core, wrap] of subjects) {
    const searches = { count: 0 };
    const c = await composite(core, wrap, searches);
    // Constructing the composite checks the backend's methods; count only what the search asks.
    searches.count = 0;
    const call = async () => (await c.grep(TOKEN, { outputMode: "count" })).counts;
    const counts = await call();
    const total = Object.values(counts ?? {}).reduce((a, b) => a + b, 0);
    if (total !== expected) checked.push({ label, note: `counted ${total} matching lines, expected ${expected}` });
    else if (searches.count > 0) checked.push({ label, note: "the composite asked the wrapper to search: the fast path was lost" });
    else checked.push({ label, call });
  }
  const timed = await timeChecked(checked, quick ? QUICK : STEADY);
  const outcomes: WorkloadResult["outcomes"] = {};
  subjects.forEach(([role], i) => {
    outcomes[role] = timed[i] as Outcome;
  });
  return [
    {
      id: ID,
      title: `grep count through a composite whose default backend is a Proxy-wrapped StateBackend (${FILES} files)`,
      kind: "core",
      outcomes,
      maxRssKb: process.resourceUsage().maxRSS,
    },
  ];
}
