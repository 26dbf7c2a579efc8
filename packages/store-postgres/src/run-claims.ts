/**
 * Claims of threads by live runs, across processes: a session-level advisory lock, held on a
 * connection of the claim's own for as long as the run lasts. The server releases it when the
 * run ends or when the connection dies with its process (crash, SIGKILL, OOM): no timeout is
 * involved, and a stopped or slow owner keeps it.
 * @module
 */
import { type ThreadClaim, releasedOnce, threadBusy } from "engram/kit";
import pg from "pg";
import { type PgDatabase, storeError } from "./database.js";

/** The connections holding claims: apart from the checkpointer's pool, so that runs holding
 * threads never starve its queries. */
export class RunClaims {
  readonly #db: PgDatabase;
  #pool: pg.Pool | undefined;

  constructor(db: PgDatabase) {
    this.#db = db;
  }

  #connections(): pg.Pool {
    if (!this.#pool) {
      const given = this.#db.pool.options as pg.PoolConfig;
      // The password is kept off the enumerable options: copied by name.
      this.#pool = new pg.Pool({ ...given, password: given.password, max: 64, idleTimeoutMillis: 10_000 });
      this.#pool.on("error", () => {});
    }
    return this.#pool;
  }

  /** The lock's key: the schema and the thread, hashed to the 64 bits advisory locks take. */
  #key(threadId: string): string {
    return `engram-run:${this.#db.schema}:${threadId}`;
  }

  async claim(threadId: string): Promise<ThreadClaim> {
    let client: pg.PoolClient;
    try {
      client = await this.#connections().connect();
    } catch (e) {
      throw storeError(e);
    }
    const key = this.#key(threadId);
    let got: boolean;
    try {
      const r = await client.query<{ got: boolean }>("SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS got", [key]);
      got = r.rows[0]?.got === true;
    } catch (e) {
      client.release(e as Error);
      throw storeError(e);
    }
    if (!got) {
      client.release();
      throw threadBusy(threadId);
    }
    return releasedOnce(async () => {
      try {
        await client.query("SELECT pg_advisory_unlock(hashtextextended($1, 0))", [key]);
        client.release();
      } catch (e) {
        // The connection is gone (and the lock with it): dropped, not reused.
        client.release(e as Error);
      }
    });
  }

  async close(): Promise<void> {
    const pool = this.#pool;
    this.#pool = undefined;
    await pool?.end();
  }
}
