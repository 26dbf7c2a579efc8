/**
 * `@engram/cloudflare`: Engram's durable state on Cloudflare — a {@link DurableObjectStore} and a
 * {@link DurableObjectCheckpointer} in a SQLite-backed Durable Object's storage (strongly
 * consistent; compare-and-swap is real). One object per user keeps that user's threads and memory.
 * @packageDocumentation
 */
export type { DurableObjectSqlStorage, SqlCursor, SqlStorage, SqlValue } from "./sql.js";
export { SCHEMA_VERSION } from "./schema.js";
export { DurableObjectStore, MAX_VALUE_BYTES } from "./store.js";
export { DurableObjectCheckpointer } from "./checkpointer.js";
