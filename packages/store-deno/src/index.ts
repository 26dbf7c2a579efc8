/**
 * `@engram/deno`: Engram's durable state in Deno KV — a {@link DenoKvStore} and a
 * {@link DenoKvCheckpointer} on `Deno.openKv()` (compare-and-swap by atomic checks, strongly
 * consistent reads; values and checkpoints over KV's 64 KiB value limit are kept in parts).
 * Deno needs `--unstable-kv` and read/write permission for the database file.
 * @packageDocumentation
 */
export {
  type DenoKv,
  type KvAtomicOperation,
  type KvEntryMaybe,
  type KvKey,
  type KvKeyPart,
  type KvListSelector,
  KV_LIMITS,
} from "./deno-kv.js";
export { type KvStoreOptions, openKv } from "./kv.js";
export { DenoKvStore, MAX_BATCH_KEYS } from "./store.js";
export { DenoKvCheckpointer, type DenoKvCheckpointerOptions } from "./checkpointer.js";
