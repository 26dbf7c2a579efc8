export { loadCore, type LoadCoreOptions } from "./loader.js";
export type * from "./types.js";
