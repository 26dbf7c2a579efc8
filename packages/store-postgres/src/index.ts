/**
 * `@engram/postgres`: a {@link PostgresStore} and a {@link PostgresCheckpointer} for many
 * processes and machines, with LISTEN/NOTIFY change notices.
 * @packageDocumentation
 */
export { type PostgresOptions, SCHEMA_VERSION } from "./database.js";
export { PostgresStore, type PostgresStoreOptions } from "./store.js";
export { PostgresCheckpointer, type PostgresCheckpointerOptions } from "./checkpointer.js";
