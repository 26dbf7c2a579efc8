/**
 * `#node-access` outside Node: the native core and local files do not exist here.
 * @module
 */
import { EngramError } from "../errors.js";
import type { RawBinding } from "./binding.js";

export function loadNativeBinding(): RawBinding {
  throw new EngramError("core_unavailable", "the native core needs Node.js");
}

export function readWasmFile(): Promise<BufferSource> {
  return Promise.reject(new EngramError("core_unavailable", "reading the WASM file needs Node.js; pass `wasmModule` instead"));
}

export function readWasmFileSync(): Uint8Array<ArrayBuffer> {
  throw new EngramError("core_unavailable", "reading the WASM file needs Node.js; pass `wasmModule` instead");
}

export function requireWasmGlue(): undefined {
  return undefined;
}

export function realHostPath(): Promise<string> {
  return Promise.reject(new EngramError("core_unavailable", "host paths need Node.js"));
}
