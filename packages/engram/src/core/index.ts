export { loadCore, loadedCore, type LoadCoreOptions } from "./loader.js";
export type * from "./types.js";
