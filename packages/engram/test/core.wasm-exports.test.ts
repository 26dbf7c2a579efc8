/**
 * The WASM module's exports return one value (for cold start): Node 20 compiles a wrapper
 * with its optimising compiler for every multi-value export signature while it compiles the
 * module, ~0.15 ms each. A function, method or result field that returns a `String`, a `Vec`,
 * an `Option` of one or a `Result` as wasm-bindgen makes it fails here (see
 * bindings/wasm/src/lib.rs).
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { expect, it } from "vitest";

const wasmFile = createRequire(import.meta.url).resolve("@engram/wasm/engram_wasm_bg.wasm");

interface ExportedFunction {
  name: string;
  params: number;
  results: number;
}

/** Each exported function with its parameter and result counts, read from the binary. */
function exportedFunctions(bytes: Uint8Array): ExportedFunction[] {
  let at = 8;
  const u32 = (): number => {
    let value = 0;
    let shift = 0;
    let byte: number;
    do {
      byte = bytes[at++] as number;
      value += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    return value;
  };
  const skipLimits = (): void => {
    const flags = bytes[at++] as number;
    u32();
    if (flags & 1) u32();
  };
  const types: { params: number; results: number }[] = [];
  const functionTypes: number[] = [];
  const exports: { name: string; index: number }[] = [];
  while (at < bytes.length) {
    const id = bytes[at++] as number;
    const end = u32() + at;
    if (id === 1) {
      for (let n = u32(); n > 0; n--) {
        at++; // 0x60, a function type
        const params = u32();
        at += params;
        const results = u32();
        at += results;
        types.push({ params, results });
      }
    } else if (id === 2) {
      for (let n = u32(); n > 0; n--) {
        const moduleName = u32(); // (read before `at` moves past it)
        at += moduleName;
        const fieldName = u32();
        at += fieldName;
        const kind = bytes[at++];
        if (kind === 0) functionTypes.push(u32());
        else if (kind === 1) {
          at++;
          skipLimits();
        } else if (kind === 2) skipLimits();
        else at += 2; // a global: value type and mutability
      }
    } else if (id === 3) {
      for (let n = u32(); n > 0; n--) functionTypes.push(u32());
    } else if (id === 7) {
      for (let n = u32(); n > 0; n--) {
        const length = u32();
        const name = new TextDecoder().decode(bytes.subarray(at, at + length));
        at += length;
        const kind = bytes[at++];
        const index = u32();
        if (kind === 0) exports.push({ name, index });
      }
    }
    at = end;
  }
  return exports.map(({ name, index }) => ({ name, ...(types[functionTypes[index] as number] as { params: number; results: number }) }));
}

it("returns one value from every exported function and result getter", () => {
  const functions = exportedFunctions(readFileSync(wasmFile));
  // The reader found the exports: the per-call methods are there, each with its parameters.
  const read = functions.find((f) => f.name === "filetable_read");
  expect(read?.params).toBeGreaterThan(3);
  expect(functions.length).toBeGreaterThan(100);
  expect(functions.filter((f) => f.name.startsWith("__wbg_get_")).length).toBeGreaterThan(40);
  const multi = functions.filter((f) => f.results > 1).map((f) => f.name);
  expect(multi).toEqual([]);
});
