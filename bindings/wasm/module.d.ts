/**
 * `engram_wasm_bg.wasm` imported as a module, the way edge bundlers (wrangler, workerd, Vercel
 * Edge) hand it over: an already compiled `WebAssembly.Module`. Pass it to
 * `loadCore({ wasmModule })`.
 */
declare const wasmModule: WebAssembly.Module;
export default wasmModule;
