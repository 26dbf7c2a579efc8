/**
 * Node-only access to the core's files. Reached through the `#node-access` import, which maps
 * to `node-access.web.ts` outside Node, so edge bundles never see a `node:` import.
 * @module
 */
import { readFileSync } from "node:fs";
import { realpath } from "node:fs/promises";
import { createRequire } from "node:module";
import type * as Native from "@engram/native";
import type * as Wasm from "@engram/wasm";
import type { RawBinding } from "./binding.js";

const require = createRequire(import.meta.url);

/** The `@engram/native` addon. Typed by its generated `index.d.ts`, which must stay assignable
 * to {@link RawBinding} (tsc fails on drift). */
export function loadNativeBinding(): RawBinding {
  const native: typeof Native = require("@engram/native");
  return native;
}

/** The bytes of `@engram/wasm`'s module file, read synchronously: the loader starts compiling
 * them before it imports the glue module, and `fs/promises` reads in several thread-pool round
 * trips whose callbacks wait behind that import, delaying the compile by the whole import. */
export function readWasmFile(): Promise<BufferSource> {
  return Promise.resolve(readWasmFileSync());
}

/** The bytes of `@engram/wasm`'s module file. */
export function readWasmFileSync(): Uint8Array<ArrayBuffer> {
  return readFileSync(require.resolve("@engram/wasm/engram_wasm_bg.wasm")) as Uint8Array<ArrayBuffer>;
}

/** `@engram/wasm`'s glue module, loaded synchronously where Node can `require` an ES module
 * (`process.features.require_module`: Node 20.19+, 22.12+); `undefined` where it cannot (the
 * loader imports it then). */
export function requireWasmGlue(): typeof Wasm | undefined {
  if ((process.features as { require_module?: boolean }).require_module !== true) return undefined;
  try {
    return require("@engram/wasm") as typeof Wasm;
  } catch {
    return undefined;
  }
}

/** The canonical host path of `path`, every symbolic link in it resolved (`fs.realpath`). */
export function realHostPath(path: string): Promise<string> {
  return realpath(path);
}
