/**
 * Finds and loads a build of the Rust core: the native addon in Node, WebAssembly elsewhere or
 * when the addon is missing. `ENGRAM_CORE=native|wasm` (or `loadCore({ core })`) forces one,
 * and then a failure is an error, never a silent fallback.
 * @module
 */
import { ConfigError, EngramError } from "../errors.js";
import { loadNativeBinding, readWasmFile, readWasmFileSync, requireWasmGlue } from "#node-access";
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
  /** Where to get the WebAssembly module when it is not precompiled: a `fetch` `Response` (or a
   * promise of one), compiled while it downloads with `WebAssembly.compileStreaming` (a response
   * that is not served as `application/wasm` is read whole, then compiled), or the module's
   * bytes. Not with {@link wasmModule}. In Node the default (the package's own file, compiled
   * lazily from its bytes) starts faster than a streamed response: Node 20 compiles every
   * function of a streamed module up front.
   * Default: the package's own file (Node, Deno) or wasm-bindgen's fetch next to its glue. */
  wasmSource?: Response | PromiseLike<Response> | BufferSource;
}

const cache = new Map<CoreKind, Promise<Core>>();
/** Cores whose load has finished, for {@link loadedCore}. */
const loaded = new Map<CoreKind, Core>();

/** Loads (once per kind) and returns the core. */
export async function loadCore(options: LoadCoreOptions = {}): Promise<Core> {
  checkWasmSource(options);
  const forced = options.core ?? coreFromEnv();
  if (forced) return load(forced, options);
  if (runtime() !== "node") return load("wasm", options);
  try {
    return await load("native", options);
  } catch (nativeError) {
    try {
      const core = await load("wasm", options);
      noticeWasmFallback(nativeError);
      return core;
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
  if ((forced ?? "native") === "native" && runtime() === "node") {
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
  if (options.wasmModule === undefined && options.wasmSource === undefined && runtime() === "node") {
    // Node, the package's own file: read, compiled (lazily: V8 compiles each function on its
    // first call) and instantiated without an event-loop turn. Awaiting an async compile and
    // the glue's dynamic import let the garbage collection that importing engram scheduled run
    // inside the load (measured: 10–25 ms of a ~40 ms cold start); the native core never waits.
    const glue = requireWasmGlue();
    if (glue !== undefined) {
      glue.initSync({ module: new WebAssembly.Module(readWasmFileSync()) });
      return wrapBinding("wasm", glue);
    }
  }
  // The module (a given source, or the package's file in Node and Deno) is compiled on V8's
  // background threads while the glue module loads, not after it. The file as bytes with
  // `WebAssembly.compile`, not `compileStreaming`: Node 20 compiles every function eagerly on the
  // streaming path (~4× the CPU of the lazy whole-buffer compile for this module).
  const compiled = options.wasmModule ?? compileSource(options);
  const [glue, module] = await Promise.all([import("@engram/wasm"), compiled]);
  if (module) {
    glue.initSync({ module });
  } else {
    // Browsers and workers: wasm-bindgen fetches the file next to its glue and instantiates it
    // with `instantiateStreaming` (compiled while it downloads).
    await glue.default();
  }
  // Typed by wasm-bindgen's generated .d.ts: tsc fails when it drifts from RawBinding.
  return wrapBinding("wasm", glue);
}

/** The module compiled from {@link LoadCoreOptions.wasmSource}, or from the package's file where
 * it can be read (Node, Deno); `undefined` elsewhere (wasm-bindgen fetches it). */
function compileSource(options: LoadCoreOptions): Promise<WebAssembly.Module> | undefined {
  const source = options.wasmSource;
  if (source !== undefined) {
    return isBytes(source) ? WebAssembly.compile(source) : Promise.resolve(source).then(compileResponse);
  }
  return runtime() === "other" ? undefined : readWasmFile().then((bytes) => WebAssembly.compile(bytes));
}

/** Compiles a fetched module while it downloads; `compileStreaming` accepts only responses served
 * as `application/wasm`, so another type (a file server's `application/octet-stream`) is read
 * whole first. A failed response (404) is an error naming its status. */
async function compileResponse(response: Response): Promise<WebAssembly.Module> {
  if (!isResponse(response)) throw new ConfigError("wasmSource", "must be a Response, a promise of one, or the module's bytes");
  if (!response.ok) throw new EngramError("core_unavailable", `fetching the WASM module failed: HTTP ${response.status}`);
  const type = response.headers.get("content-type")?.split(";")[0]?.trim().toLowerCase();
  if (type === "application/wasm" && typeof Response === "function" && response instanceof Response) {
    return WebAssembly.compileStreaming(response);
  }
  return WebAssembly.compile(await response.arrayBuffer());
}

function isBytes(value: unknown): value is BufferSource {
  return ArrayBuffer.isView(value) || value instanceof ArrayBuffer;
}

/** A `Response` of this realm or another one (a polyfill, another `fetch`): what is read of it. */
function isResponse(value: unknown): value is Response {
  const r = value as Partial<Response> | null;
  return typeof r === "object" && r !== null && typeof r.arrayBuffer === "function" && typeof r.headers?.get === "function";
}

/** {@link LoadCoreOptions.wasmSource}: bytes, a response or a promise of one, and never with a
 * precompiled module ({@link ConfigError} `invalid_config` otherwise). */
function checkWasmSource(options: LoadCoreOptions): void {
  const source: unknown = options.wasmSource;
  if (source === undefined) return;
  if (options.wasmModule !== undefined) throw new ConfigError("wasmSource", "give either wasmModule or wasmSource, not both");
  const thenable = typeof (source as PromiseLike<unknown> | null)?.then === "function";
  if (!isBytes(source) && !thenable && !isResponse(source)) {
    throw new ConfigError("wasmSource", "must be a Response, a promise of one, or the module's bytes");
  }
}

function coreFromEnv(): CoreKind | undefined {
  const value = readEnv("ENGRAM_CORE");
  if (value === undefined || value === "") return undefined;
  if (value === "native" || value === "wasm") return value;
  throw new EngramError("core_unavailable", `ENGRAM_CORE must be "native" or "wasm", not ${JSON.stringify(value)}`);
}

interface DenoGlobal {
  env: { get(name: string): string | undefined };
  permissions?: { querySync?(descriptor: { name: "env"; variable: string }): { state: string } };
}

/** An environment variable, or `undefined` where reading it is not allowed: Deno without
 * `--allow-env` throws (or prompts) on `process.env` / `Deno.env`, so there the permission is
 * queried first and the variable read only when it is already granted. Never throws. */
function readEnv(name: string): string | undefined {
  const g = globalThis as { Deno?: DenoGlobal; process?: { env?: Record<string, string | undefined> } };
  try {
    if (g.Deno !== undefined) {
      const state = g.Deno.permissions?.querySync?.({ name: "env", variable: name }).state;
      return state === "granted" ? g.Deno.env.get(name) : undefined;
    }
    return g.process?.env?.[name];
  } catch {
    return undefined;
  }
}

/** Node (and Node-compatible runtimes such as Bun) load the native addon by default; Deno and
 * the rest (workerd, browsers) load WebAssembly. Deno and Node read the WASM file from disk. */
function runtime(): "node" | "deno" | "other" {
  const g = globalThis as { Deno?: unknown; process?: { versions?: { node?: string } } };
  if (g.Deno !== undefined) return "deno";
  return typeof g.process?.versions?.node === "string" ? "node" : "other";
}

/**
 * The `@engram/native-<platform>` package that holds the native addon for this machine (napi-rs
 * names: `linux-x64-gnu`, `linux-x64-musl`, `darwin-arm64`, `win32-x64-msvc`, ...).
 * @internal
 */
export function nativePackageName(): string {
  const proc = (globalThis as { process?: NodeLikeProcess }).process;
  const platform = proc?.platform ?? "unknown";
  const arch = proc?.arch ?? "unknown";
  let abi = "";
  if (platform === "win32") abi = "-msvc";
  else if (platform === "linux") abi = isMusl(proc) ? "-musl" : "-gnu";
  return `@engram/native-${platform}-${arch}${abi}`;
}

interface NodeLikeProcess {
  platform?: string;
  arch?: string;
  report?: { getReport?(): unknown };
}

function isMusl(proc: NodeLikeProcess | undefined): boolean {
  try {
    const report = proc?.report?.getReport?.() as { header?: { glibcVersionRuntime?: string } } | undefined;
    return report?.header !== undefined && report.header.glibcVersionRuntime === undefined;
  } catch {
    return false;
  }
}

/** Why the native addon is not there, in a few words: not installed, or the load error's first line. */
function nativeFailure(error: unknown): string {
  const cause = error instanceof EngramError && error.code === "core_unavailable" ? error.cause : error;
  const { code, message } = (cause ?? {}) as { code?: unknown; message?: unknown };
  const text = typeof message === "string" ? message : String(cause);
  if (code === "MODULE_NOT_FOUND" || text.startsWith("Cannot find native binding")) return "is not installed";
  return `did not load (${text.split("\n")[0]})`;
}

/**
 * The error of a feature that needs the native core (`FilesystemBackend`, file memory storage)
 * when it cannot be loaded: {@link EngramError} `core_unavailable`, naming the package to install.
 * @internal
 */
export function nativeCoreRequired(feature: string, cause: unknown): EngramError {
  if (runtime() !== "node") {
    return new EngramError(
      "core_unavailable",
      `${feature} needs Node.js and Engram's native core; this runtime has only the WebAssembly core`,
      { cause },
    );
  }
  return new EngramError(
    "core_unavailable",
    `${feature} needs Engram's native core, which ${nativeFailure(cause)} for ${nativePackageName().slice("@engram/native-".length)}: npm install ${nativePackageName()}`,
    { cause },
  );
}

let noticed = false;

/** Says once per process that Node runs on WebAssembly because the native addon did not load. */
function noticeWasmFallback(nativeError: unknown): void {
  if (noticed) return;
  noticed = true;
  console.warn(
    `[engram] the native core ${nativeFailure(nativeError)} for this platform: using the WebAssembly core. FilesystemBackend needs the native one (npm install ${nativePackageName()}); set ENGRAM_CORE=wasm to choose WebAssembly without this notice.`,
  );
}
