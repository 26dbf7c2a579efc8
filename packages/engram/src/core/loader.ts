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
/** Cores whose load has finished, for {@link loadedCore}. */
const loaded = new Map<CoreKind, Core>();

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
    pending = (kind === "native" ? loadNative() : loadWasm(options)).then(
      (core) => {
        if (!loaded.has(kind)) loaded.set(kind, core);
        return loaded.get(kind) as Core;
      },
      (cause: unknown) => {
        cache.delete(kind);
        throw new EngramError("core_unavailable", `the ${kind} core could not be loaded`, { cause });
      },
    );
    cache.set(kind, pending);
  }
  return pending;
}

/**
 * The core, synchronously, for the few functions that must stay synchronous (`redactSecrets`).
 * Returns the core {@link loadCore} has loaded (the `ENGRAM_CORE` one when that is set); in
 * Node, when nothing is loaded yet and the native core is allowed, loads the native addon
 * synchronously. Elsewhere (edge runtimes, or `ENGRAM_CORE=wasm` before any load) it throws
 * {@link EngramError} `core_unavailable`: `await loadCore()` first.
 */
export function loadedCore(): Core {
  const forced = coreFromEnv();
  const ready = forced ? loaded.get(forced) : (loaded.get("native") ?? loaded.get("wasm"));
  if (ready) return ready;
  if ((forced ?? "native") === "native" && isNode()) {
    try {
      const core = wrapBinding("native", loadNativeBinding());
      loaded.set("native", core);
      if (!cache.has("native")) cache.set("native", Promise.resolve(core));
      return core;
    } catch (cause) {
      if (forced) throw new EngramError("core_unavailable", "the native core could not be loaded", { cause });
    }
  }
  throw new EngramError(
    "core_unavailable",
    `the ${forced ?? "Engram"} core is not loaded yet: await loadCore() before calling this synchronous function`,
  );
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
