/**
 * The WASM module as shipped: its size raw and gzipped (zlib's default level, as the packaging
 * test measures it), its compile time in this process, and the cold start of a fresh Node
 * process (load and instantiate the core, then a first grep), median of 20.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";

export interface WasmModuleFigures {
  rawBytes: number;
  gzipBytes: number;
  /** `WebAssembly.compile` of the module's bytes, median ms. */
  compileMs: number;
  /** Fresh Node processes: `loadCore({ core: "wasm" })` and a first grep, median ms, and each run. */
  coldStartMs: number;
  coldStartRuns: number[];
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

export async function measureWasmModule(repo: string, runs = 20): Promise<WasmModuleFigures> {
  const bytes = readFileSync(join(repo, "bindings", "wasm", "pkg", "engram_wasm_bg.wasm"));
  const compile: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await WebAssembly.compile(bytes);
    compile.push(performance.now() - t);
  }
  const script =
    `const {loadCore}=await import("engram");const t=performance.now();const c=await loadCore({core:"wasm"});` +
    `const f=c.createFileTable();f.write("/a","x needle");if(f.grep({pattern:"needle"}).matches.length!==1)process.exit(1);` +
    "console.log(performance.now()-t)";
  const cold: number[] = [];
  for (let i = 0; i < runs; i++) {
    cold.push(
      Number(execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: join(repo, "benches"), encoding: "utf8" })),
    );
  }
  return {
    rawBytes: bytes.length,
    gzipBytes: gzipSync(bytes).length,
    compileMs: median(compile),
    coldStartMs: median(cold),
    coldStartRuns: cold,
  };
}
