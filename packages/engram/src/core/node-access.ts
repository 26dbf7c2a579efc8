/**
 * Node-only access to the core's files. Reached through the `#node-access` import, which maps
 * to `node-access.web.ts` outside Node, so edge bundles never see a `node:` import.
 * @module
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import type { RawBinding } from "./binding.js";

const require = createRequire(import.meta.url);

/** The `@engram/native` addon. */
export function loadNativeBinding(): RawBinding {
  return require("@engram/native") as RawBinding;
}

/** The bytes of `@engram/wasm`'s module file. */
export function readWasmFile(): Promise<BufferSource> {
  return readFile(require.resolve("@engram/wasm/engram_wasm_bg.wasm"));
}
