/**
 * `@engram/cloudflare`: Engram's durable state on Cloudflare — a {@link DurableObjectStore} and a
 * {@link DurableObjectCheckpointer} in a SQLite-backed Durable Object's storage (strongly
 * consistent; compare-and-swap is real; one object per user keeps that user's threads and
 * memory), the same on D1 ({@link D1Store}, {@link D1Checkpointer}), and long-term memory
 * extraction from the object's alarm ({@link AlarmExtraction}).
 * @packageDocumentation
 */
export type { DurableObjectSqlStorage, SqlCursor, SqlStorage, SqlValue } from "./sql.js";
export { SCHEMA_VERSION } from "./schema.js";
export { MAX_VALUE_BYTES } from "./items.js";
export { DurableObjectStore } from "./store.js";
export { DurableObjectCheckpointer } from "./checkpointer.js";
export type { D1Database, D1PreparedStatement } from "./d1.js";
export { D1Store } from "./d1-store.js";
export { AlarmExtraction, type AlarmExtractionOptions, type AlarmStorage } from "./alarm-extraction.js";
export { D1Checkpointer } from "./d1-checkpointer.js";
