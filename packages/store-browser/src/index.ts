/**
 * `@engram/browser`: Engram's durable state in a browser — an {@link IndexedDBStore} and an
 * {@link IndexedDBCheckpointer} in the origin's IndexedDB. Each write is one readwrite
 * transaction, atomic across the tabs and workers of the origin (compare-and-swap is real);
 * an agent's threads, AGENTS.md memory and long-term facts survive a reload.
 * @packageDocumentation
 */
export { type IndexedDBOptions, SCHEMA_VERSION } from "./database.js";
export { IndexedDBStore } from "./store.js";
export { IndexedDBCheckpointer, type IndexedDBCheckpointerOptions } from "./checkpointer.js";
