/**
 * workerd's cold start with the WASM core: a Worker bundled as wrangler bundles it (the packaging
 * test's `bundleWorker`), run by miniflare. Timed from outside (workerd's clocks stand still
 * between I/O): the runtime up with the bundle and the compiled module loaded, then the first
 * request (the core instantiated, a file written and grepped), then a second one (warm).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface WorkerdFigures {
  /** `new Miniflare(…)` until ready, median ms. */
  readyMs: number;
  /** The first request, median ms. */
  firstRequestMs: number;
  /** A second request on the same isolate, median ms. */
  warmRequestMs: number;
  runs: number;
}

const WORKER = `import { loadCore } from "engram";
import wasmModule from "@engram/wasm/engram_wasm_bg.wasm";
export default {
  async fetch() {
    const core = await loadCore({ wasmModule });
    const table = core.createFileTable();
    table.write("/a.txt", "x needle");
    return new Response(String(table.grep({ pattern: "needle" }).matches.length));
  },
};
`;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] as number;

export async function measureWorkerd(repo: string, runs = 5): Promise<WorkerdFigures> {
  const { bundleWorker } = (await import(join(repo, "scripts", "pack-test", "workerd.mjs"))) as {
    bundleWorker(root: string, dir: string, out: string): Promise<{ dir: string; code: Buffer }>;
  };
  const { Miniflare } = (await import(join(repo, "node_modules", "miniflare", "dist", "src", "index.js"))) as {
    Miniflare: new (o: unknown) => { ready: Promise<unknown>; dispatchFetch(url: string): Promise<Response>; dispose(): Promise<void> };
  };
  // Inside the repository, so that "engram" and "@engram/wasm" resolve as they do for users.
  const dir = mkdtempSync(join(repo, "benches", ".workerd-"));
  try {
    mkdirSync(join(dir, "src"));
    writeFileSync(join(dir, "src", "index.ts"), WORKER);
    const bundle = await bundleWorker(repo, dir, join(dir, "out"));
    const { readFileSync } = await import("node:fs");
    const wasm = readFileSync(join(bundle.dir, "engram_wasm_bg.wasm"));
    const ready: number[] = [];
    const first: number[] = [];
    const warm: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      const mf = new Miniflare({
        modules: [
          { type: "ESModule", path: join(bundle.dir, "index.js"), contents: bundle.code.toString("utf8") },
          { type: "CompiledWasm", path: join(bundle.dir, "engram_wasm_bg.wasm"), contents: wasm },
        ],
        modulesRoot: bundle.dir,
        compatibilityDate: "2025-06-01",
      });
      try {
        await mf.ready;
        const t1 = performance.now();
        const a = await (await mf.dispatchFetch("http://localhost/")).text();
        const t2 = performance.now();
        const b = await (await mf.dispatchFetch("http://localhost/")).text();
        const t3 = performance.now();
        if (a !== "1" || b !== "1") throw new Error(`the worker answered ${a}, ${b}`);
        ready.push(t1 - t0);
        first.push(t2 - t1);
        warm.push(t3 - t2);
      } finally {
        await mf.dispose();
      }
    }
    return { readyMs: median(ready), firstRequestMs: median(first), warmRequestMs: median(warm), runs };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
