/**
 * Connecting Engram to PostgreSQL: a pool, a schema of its own, and migrations recorded in a
 * version table, applied under an advisory lock so processes starting together agree.
 * @module
 */
import pg from "pg";
import { EngramError } from "engram/kit";

/** Options shared by {@link PostgresStore} and {@link PostgresCheckpointer}: a connection string
 * (a pool is created and closed by `close()`) or a pool you own (left open by `close()`). */
export type PostgresOptions = ({ connectionString: string; pool?: undefined } | { pool: pg.Pool; connectionString?: undefined }) & {
  /** The schema holding Engram's tables (created when missing): lower-case letters, digits and
   * `_`, at most 40 characters. Default: `"public"`. */
  schema?: string;
};

/** The schema, one entry per version; `S` is replaced by the quoted schema. Append only. */
const MIGRATIONS: readonly string[] = [
  `CREATE SEQUENCE S.engram_revision;
   CREATE TABLE S.engram_items (
     ns text COLLATE "C" NOT NULL, key text COLLATE "C" NOT NULL, value text NOT NULL,
     revision bigint NOT NULL, updated_at bigint NOT NULL, PRIMARY KEY (ns, key));
   CREATE TABLE S.engram_namespaces (ns text COLLATE "C" PRIMARY KEY, token bigint NOT NULL);
   CREATE TABLE S.engram_checkpoints (
     thread_id text COLLATE "C" PRIMARY KEY, format integer NOT NULL, doc text NOT NULL, files bytea,
     saved_at bigint NOT NULL, interrupted boolean NOT NULL);`,
  // Incremental checkpoints: a thread's files as a full snapshot (seq 0) and the deltas saved
  // after it (seq 1, 2, …); the checkpoint document names them (`filesRef`).
  `CREATE TABLE S.engram_checkpoint_files (
     thread_id text COLLATE "C" NOT NULL, seq integer NOT NULL, bytes bytea NOT NULL, PRIMARY KEY (thread_id, seq));`,
  // Each checkpoint's revision, for compare-and-swap saves: from the schema's one sequence, so a
  // thread deleted and saved again never gets an old revision back. Threads saved before this
  // share one new revision.
  `ALTER TABLE S.engram_checkpoints ADD COLUMN revision bigint NOT NULL DEFAULT 0;
   UPDATE S.engram_checkpoints SET revision = (SELECT nextval('S.engram_revision'));`,
  // Recall of a user's earlier threads: the searchable messages of each thread saved with a
  // user, with a tsvector of each and a GIN index over them. Threads saved before have no user
  // and are never searched, so nothing is backfilled.
  `CREATE TABLE S.engram_thread_messages (
     thread_id text COLLATE "C" NOT NULL, seq integer NOT NULL, user_id text COLLATE "C" NOT NULL,
     role text NOT NULL, text text NOT NULL,
     words tsvector GENERATED ALWAYS AS (to_tsvector('simple', text)) STORED,
     PRIMARY KEY (thread_id, seq));
   CREATE INDEX engram_thread_messages_words ON S.engram_thread_messages USING gin (words);
   CREATE INDEX engram_thread_messages_user ON S.engram_thread_messages (user_id);`,
  // Durable runs: the steps a run commits while it is under way, beside its thread's checkpoint
  // (a checkpoint saved drops them). Who owns them is a session advisory lock, not a column.
  `CREATE TABLE S.engram_run_steps (
     thread_id text COLLATE "C" NOT NULL, run_id text COLLATE "C" NOT NULL, seq integer NOT NULL,
     base_revision bigint NOT NULL, saved_at bigint NOT NULL, doc text NOT NULL, files bytea,
     PRIMARY KEY (thread_id, run_id, seq));`,
  // Thread history: a save keeps its run's steps as points (`kept_at`: the revision it saved)
  // instead of dropping them; steps under way have none.
  `ALTER TABLE S.engram_run_steps ADD COLUMN kept_at bigint;`,
];

/** The schema version this code writes. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** A database failure as a `store_error` {@link EngramError} (Engram errors pass through). */
export function storeError(e: unknown): EngramError {
  if (e instanceof EngramError) return e;
  return new EngramError("store_error", `postgres: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
}

/** A pool bound to an Engram schema, migrated on first use. */
export class PgDatabase {
  readonly pool: pg.Pool;
  /** The quoted schema name, for SQL text. */
  readonly schema: string;
  /** The NOTIFY channel of this schema. */
  readonly channel: string;
  readonly #ownsPool: boolean;
  #ready: Promise<void> | undefined;

  constructor(options: PostgresOptions) {
    const schema = options.schema ?? "public";
    if (typeof schema !== "string" || !/^[a-z_][a-z0-9_]{0,39}$/.test(schema)) {
      throw new EngramError("invalid_argument", `schema must match [a-z_][a-z0-9_]{0,39}, got ${JSON.stringify(schema)}`);
    }
    if (options.pool) {
      this.pool = options.pool;
      this.#ownsPool = false;
    } else if (typeof options.connectionString === "string") {
      this.pool = new pg.Pool({ connectionString: options.connectionString });
      // An idle connection dropped by the server must not crash the process; the next query reconnects.
      this.pool.on("error", () => {});
      this.#ownsPool = true;
    } else {
      throw new EngramError("invalid_argument", "pass { connectionString } or { pool }");
    }
    this.schema = `"${schema}"`;
    this.channel = `engram_${schema}`;
  }

  /** Resolves once the schema is migrated (runs the migrations once per instance). */
  ready(): Promise<void> {
    this.#ready ??= this.#migrate().catch((e) => {
      this.#ready = undefined;
      throw storeError(e);
    });
    return this.#ready;
  }

  async #migrate(): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query("BEGIN");
      await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`engram-migrate:${this.schema}`]);
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${this.schema}`);
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${this.schema}.engram_migrations (version integer PRIMARY KEY, applied_at bigint NOT NULL)`,
      );
      const r = await client.query<{ v: number | null }>(`SELECT max(version) AS v FROM ${this.schema}.engram_migrations`);
      const current = r.rows[0]?.v ?? 0;
      if (current > SCHEMA_VERSION) {
        throw new EngramError(
          "store_error",
          `the database schema (version ${current}) is newer than this Engram understands (${SCHEMA_VERSION}): upgrade Engram`,
        );
      }
      for (let v = current + 1; v <= SCHEMA_VERSION; v++) {
        await client.query((MIGRATIONS[v - 1] as string).replaceAll("S.", `${this.schema}.`));
        await client.query(`INSERT INTO ${this.schema}.engram_migrations (version, applied_at) VALUES ($1, $2)`, [v, Date.now()]);
      }
      await client.query("COMMIT");
    } catch (e) {
      await client.query("ROLLBACK").catch(() => {});
      throw e;
    } finally {
      client.release();
    }
  }

  /** One query after migration; failures become `store_error`. */
  async query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>> {
    await this.ready();
    try {
      return await this.pool.query<R>(text, values);
    } catch (e) {
      throw storeError(e);
    }
  }

  /** Runs `fn` in a transaction on one client; rolls back when it throws. */
  async transaction<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    await this.ready();
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (e) {
      throw storeError(e);
    }
    try {
      await client.query("BEGIN");
      const out = await fn(client);
      await client.query("COMMIT");
      return out;
    } catch (e) {
      await client.query("ROLLBACK").catch(() => {});
      throw e;
    } finally {
      client.release();
    }
  }

  /** Ends the pool when this instance created it. */
  async close(): Promise<void> {
    if (this.#ownsPool) await this.pool.end();
  }
}
