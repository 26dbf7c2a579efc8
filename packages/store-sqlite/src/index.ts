/**
 * `@engram/sqlite`: the embedded default — a {@link SqliteStore} and a {@link SqliteCheckpointer}
 * in one SQLite file (`defaultDatabasePath()`), safe for several processes.
 * @packageDocumentation
 */
export { SCHEMA_VERSION, type SqliteDatabase, type SqliteOptions, defaultDatabasePath } from "./database.js";
export { SqliteStore, type SqliteStoreOptions } from "./store.js";
export { SqliteCheckpointer, type SqliteCheckpointerOptions } from "./checkpointer.js";
