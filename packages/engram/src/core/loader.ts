/**
 * Finds and loads a build of the Rust core: the native addon in Node, WebAssembly elsewhere or
 * when the addon is missing. `ENGRAM_CORE=native|wasm` (or `loadCore({ core })`) forces one,
 * and then a failure is an error, never a silent fallback.
 * @module
 */
import { EngramError } from "../errors.js";
import { loadNativeBinding, readWasmFile } from "#node-access";
import { wrapBinding } from "./binding.js";
import type { Core, CoreKind } from "./types.js";

/** Options of {@link loadCore}. */
export interface LoadCoreOptions {
  /** Which core to load. Default: the `ENGRAM_CORE` environment variable when it is set; else
   * native in Node (WASM if the addon cannot be loaded) and WASM in other runtimes. */
  core?: CoreKind;
  /** A precompiled `engram_wasm_bg.wasm` module. Needed on edge runtimes that refuse to compile
   * WebAssembly from bytes (Cloudflare Workers, Vercel Edge); import it as a module there.
   * Default: the module is compiled from the package's own file (Node) or fetched (browsers). */
  wasmModule?: WebAssembly.Module;
}

const cache = new Map<CoreKind, Promise<Core>>();

/** Loads (once per kind) and returns the core. */
export async function loadCore(options: LoadCoreOptions = {}): Promise<Core> {
  const forced = options.core ?? coreFromEnv();
  if (forced) return load(forced, options);
  if (!isNode()) return load("wasm", options);
  try {
    return await load("native", options);
  } catch (nativeError) {
    try {
      return await load("wasm", options);
    } catch (wasmError) {
      throw new EngramError("core_unavailable", "neither the native nor the WASM core could be loaded", {
        cause: new AggregateError([nativeError, wasmError]),
      });
    }
  }
}

function load(kind: CoreKind, options: LoadCoreOptions): Promise<Core> {
  let pending = cache.get(kind);
  if (!pending) {
    pending = (kind === "native" ? loadNative() : loadWasm(options)).catch((cause: unknown) => {
      cache.delete(kind);
      throw new EngramError("core_unavailable", `the ${kind} core could not be loaded`, { cause });
    });
    cache.set(kind, pending);
  }
  return pending;
}

async function loadNative(): Promise<Core> {
  return wrapBinding("native", loadNativeBinding());
}

async function loadWasm(options: LoadCoreOptions): Promise<Core> {
  const glue = await import("@engram/wasm");
  if (options.wasmModule) {
    glue.initSync({ module: options.wasmModule });
  } else if (isNode()) {
    glue.initSync({ module: await WebAssembly.compile(await readWasmFile()) });
  } else {
    await glue.default();
  }
  return wrapBinding("wasm", glue as unknown as Parameters<typeof wrapBinding>[1]);
}

function coreFromEnv(): CoreKind | undefined {
  const value = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.ENGRAM_CORE;
  if (value === undefined || value === "") return undefined;
  if (value === "native" || value === "wasm") return value;
  throw new EngramError("core_unavailable", `ENGRAM_CORE must be "native" or "wasm", not ${JSON.stringify(value)}`);
}

function isNode(): boolean {
  const proc = (globalThis as { process?: { versions?: { node?: string } } }).process;
  return typeof proc?.versions?.node === "string";
}
