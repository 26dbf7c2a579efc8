/**
 * Engram: deep agents with durable memory, on a Rust core that runs as a Node native addon or
 * as WebAssembly (workerd, browsers, Deno).
 *
 * This release exposes the core itself; the agent runtime, backends and memory build on it.
 * @packageDocumentation
 */
export * from "./core/index.js";
export { EngramError } from "./errors.js";
