/**
 * `PostgresStore`: the {@link Store} on PostgreSQL, for many processes and machines. Prefix
 * listings are range scans on the `(ns, key)` primary key (`COLLATE "C"`); compare-and-swap is
 * one conditional statement on the revision column; every change is announced with NOTIFY so
 * change tokens held by other processes are invalidated at once, without polling.
 * @module
 */
import type pg from "pg";
import {
  type BatchOp,
  type BatchResult,
  type Bound,
  EngramError,
  type ListOptions,
  type ListResult,
  type Namespace,
  type PutOptions,
  type PutResult,
  type RawRow,
  type SearchOptions,
  type SearchResult,
  type Store,
  type StoreItem,
  checkKey,
  decodeValue,
  encodeValue,
  listRows,
  namespaceFromId,
  namespaceId,
  searchRows,
} from "engram/kit";
import { PgDatabase, type PostgresOptions, storeError } from "./database.js";

/** Options of {@link PostgresStore}. */
export type PostgresStoreOptions = PostgresOptions & {
  /** Hold one connection that LISTENs for changes, so `changeToken` answers from memory until
   * another process changes the namespace, and `subscribe` works. Default: `true`. */
  listen?: boolean;
};

interface Row {
  key: string;
  value?: string;
  revision: string;
  updated_at: string;
}

type Querier = Pick<pg.PoolClient, "query">;

/** A lost compare-and-swap inside a batch. */
class Conflict {
  constructor(readonly index: number) {}
}

/** A {@link Store} on PostgreSQL. Call `close()` when done. */
export class PostgresStore implements Store {
  readonly #db: PgDatabase;
  readonly #listen: boolean;
  readonly #listeners = new Set<(namespace: Namespace) => void>();
  /** Change tokens by namespace id, valid while the LISTEN connection is up. */
  readonly #tokens = new Map<string, string>();
  /** Bumped per namespace by every notice, so a token read concurrently is not cached stale. */
  readonly #generations = new Map<string, number>();
  #epoch = 0;
  #listener: Promise<pg.PoolClient | undefined> | undefined;
  #closed = false;

  constructor(options: PostgresStoreOptions) {
    this.#db = new PgDatabase(options);
    this.#listen = options.listen ?? true;
  }

  /** The pool in use. */
  get pool(): pg.Pool {
    return this.#db.pool;
  }

  #sql(text: string): string {
    return text.replaceAll("S.", `${this.#db.schema}.`);
  }

  /** The LISTEN connection, (re)opened on demand; `undefined` when listening is off or failed. */
  #listening(): Promise<pg.PoolClient | undefined> {
    if (!this.#listen || this.#closed) return Promise.resolve(undefined);
    this.#listener ??= (async () => {
      await this.#db.ready();
      const client = await this.#db.pool.connect();
      const lost = () => {
        if (this.#listener === undefined) return;
        this.#listener = undefined;
        this.#epoch++;
        this.#tokens.clear();
        client.release(true);
      };
      client.on("error", lost);
      client.on("end", lost);
      client.on("notification", (msg) => {
        if (msg.channel !== this.#db.channel || msg.payload === undefined) return;
        this.#invalidate(msg.payload);
        const ns = namespaceFromId(msg.payload);
        for (const l of this.#listeners) l(ns);
      });
      await client.query(`LISTEN "${this.#db.channel}"`);
      return client;
    })().catch(() => {
      this.#listener = undefined;
      return undefined;
    });
    return this.#listener;
  }

  #invalidate(ns: string): void {
    this.#generations.set(ns, (this.#generations.get(ns) ?? 0) + 1);
    this.#tokens.delete(ns);
  }

  async get<V>(namespace: Namespace, key: string): Promise<StoreItem<V> | undefined> {
    const ns = namespaceId(namespace);
    checkKey(key);
    const r = await this.#db.query<Row>(
      this.#sql("SELECT key, value, revision, updated_at FROM S.engram_items WHERE ns = $1 AND key = $2"),
      [ns, key],
    );
    const row = r.rows[0];
    return (
      row && {
        key: row.key,
        value: decodeValue(row.value as string, row.key, row.revision) as V,
        revision: row.revision,
        updatedAt: Number(row.updated_at),
      }
    );
  }

  /** One write as one statement (the item, the namespace token and the notice together);
   * returns the new revision (`null` for a delete), or `undefined` on a lost CAS. */
  async #apply(
    q: Querier,
    ns: string,
    key: string,
    op: "put" | "delete",
    text: string,
    ifRevision: string | null | undefined,
  ): Promise<string | null | undefined> {
    const now = Date.now();
    let write: string;
    let args: unknown[];
    if (op === "put") {
      args = [ns, key, text, now];
      if (ifRevision === undefined) {
        write =
          "INSERT INTO S.engram_items (ns, key, value, revision, updated_at) VALUES ($1, $2, $3, nextval('S.engram_revision'), $4) " +
          "ON CONFLICT (ns, key) DO UPDATE SET value = excluded.value, revision = excluded.revision, updated_at = excluded.updated_at RETURNING revision";
      } else if (ifRevision === null) {
        write =
          "INSERT INTO S.engram_items (ns, key, value, revision, updated_at) VALUES ($1, $2, $3, nextval('S.engram_revision'), $4) " +
          "ON CONFLICT (ns, key) DO NOTHING RETURNING revision";
      } else {
        write =
          "UPDATE S.engram_items SET value = $3, revision = nextval('S.engram_revision'), updated_at = $4 " +
          "WHERE ns = $1 AND key = $2 AND revision::text = $5 RETURNING revision";
        args.push(ifRevision);
      }
    } else {
      args = [ns, key];
      write = "DELETE FROM S.engram_items WHERE ns = $1 AND key = $2";
      if (ifRevision !== undefined && ifRevision !== null) {
        write += " AND revision::text = $3";
        args.push(ifRevision);
      }
      write += " RETURNING nextval('S.engram_revision') AS revision";
    }
    const notify = args.length + 1;
    args.push(this.#db.channel);
    const sql =
      `WITH w AS (${write}), ` +
      "t AS (INSERT INTO S.engram_namespaces (ns, token) SELECT $1, revision FROM w " +
      "ON CONFLICT (ns) DO UPDATE SET token = excluded.token) " +
      `SELECT revision::text AS revision, pg_notify($${notify}, $1) FROM w`;
    let rows: { revision: string }[];
    try {
      rows = (await q.query<{ revision: string }>(this.#sql(sql), args)).rows;
    } catch (e) {
      throw storeError(e);
    }
    this.#invalidate(ns); // our own change: never answer from a token cached before it
    const row = rows[0];
    // A conditional delete of a row that is not there (or has another revision) fails; an
    // unconditional one of a missing row is a no-op.
    if (op === "delete") return row || ifRevision === undefined || ifRevision === null ? null : undefined;
    return row ? row.revision : undefined;
  }

  async put<V>(namespace: Namespace, key: string, value: V, options: PutOptions = {}): Promise<PutResult> {
    const ns = namespaceId(namespace);
    checkKey(key);
    const text = encodeValue(value);
    await this.#db.ready();
    const revision = await this.#apply(this.#db.pool, ns, key, "put", text, options.ifRevision);
    return typeof revision === "string" ? { ok: true, revision } : { ok: false, conflict: true };
  }

  async delete(namespace: Namespace, keys: readonly string[]): Promise<number> {
    const ns = namespaceId(namespace);
    for (const key of keys) checkKey(key);
    if (keys.length === 0) return 0;
    const r = await this.#db.query<{ n: string }>(
      this.#sql(
        "WITH d AS (DELETE FROM S.engram_items WHERE ns = $1 AND key = ANY($2::text[]) RETURNING key), " +
          "t AS (INSERT INTO S.engram_namespaces (ns, token) SELECT $1, nextval('S.engram_revision') WHERE EXISTS (SELECT 1 FROM d) " +
          "ON CONFLICT (ns) DO UPDATE SET token = excluded.token) " +
          "SELECT count(*)::text AS n, CASE WHEN count(*) > 0 THEN pg_notify($3, $1) END FROM d",
      ),
      [ns, [...new Set(keys)], this.#db.channel],
    );
    this.#invalidate(ns);
    return Number(r.rows[0]?.n ?? 0);
  }

  async batch(ops: readonly BatchOp[]): Promise<BatchResult> {
    if (!Array.isArray(ops)) throw new EngramError("invalid_argument", "batch takes an array of operations");
    const prepared = ops.map((op) => {
      if (op?.op !== "put" && op?.op !== "delete") throw new EngramError("invalid_argument", `unknown batch op ${JSON.stringify(op?.op)}`);
      return { op, ns: namespaceId(op.namespace), key: checkKey(op.key), text: op.op === "put" ? encodeValue(op.value) : "" };
    });
    try {
      const revisions = await this.#db.transaction(async (client) => {
        const out: (string | null)[] = [];
        for (const [index, { op, ns, key, text }] of prepared.entries()) {
          if (op.op === "delete" && op.ifRevision === null) {
            // "must not exist": holds unless the key is there.
            const r = await client.query(this.#sql("SELECT 1 FROM S.engram_items WHERE ns = $1 AND key = $2 FOR UPDATE"), [ns, key]);
            if (r.rowCount) throw new Conflict(index);
            out.push(null);
            continue;
          }
          const rev = await this.#apply(client, ns, key, op.op, text, op.ifRevision);
          if (rev === undefined) throw new Conflict(index);
          out.push(rev);
        }
        return out;
      });
      return { ok: true, revisions };
    } catch (e) {
      if (e instanceof Conflict) return { ok: false, conflict: true, index: e.index };
      throw storeError(e);
    }
  }

  /** The namespace's change token. With `listen` on, answered from memory until a NOTIFY (from
   * any process) says the namespace changed; otherwise one indexed read. */
  async changeToken(namespace: Namespace): Promise<string> {
    const ns = namespaceId(namespace);
    const listening = await this.#listening();
    if (listening) {
      const cached = this.#tokens.get(ns);
      if (cached !== undefined) return cached;
    }
    const generation = this.#generations.get(ns) ?? 0;
    const epoch = this.#epoch;
    const r = await this.#db.query<{ token: string }>(this.#sql("SELECT token::text AS token FROM S.engram_namespaces WHERE ns = $1"), [
      ns,
    ]);
    const token = r.rows[0]?.token ?? "0";
    if (listening && this.#listener && epoch === this.#epoch && generation === (this.#generations.get(ns) ?? 0))
      this.#tokens.set(ns, token);
    return token;
  }

  /** Calls `listener` with the namespace of every change, from any process (LISTEN/NOTIFY).
   * Starts listening when needed. */
  subscribe(listener: (namespace: Namespace) => void): () => void {
    this.#listeners.add(listener);
    void this.#listening();
    return () => this.#listeners.delete(listener);
  }

  /** Resolves once change notices are being received (after `subscribe`, for tests and tools
   * that must not miss the first change). */
  async listening(): Promise<boolean> {
    return (await this.#listening()) !== undefined;
  }

  #fetch(namespace: Namespace) {
    const ns = namespaceId(namespace);
    return async (from: Bound, to: string | undefined, limit: number, values: boolean): Promise<RawRow[]> => {
      const sql =
        `SELECT key, ${values ? "value, " : ""}revision::text AS revision, updated_at FROM S.engram_items ` +
        `WHERE ns = $1 AND key ${from.inclusive ? ">=" : ">"} $2${to === undefined ? "" : " AND key < $4"} ORDER BY key LIMIT $3`;
      const args = to === undefined ? [ns, from.key, limit] : [ns, from.key, limit, to];
      const r = await this.#db.query<Row>(this.#sql(sql), args);
      return r.rows.map((row) => ({
        key: row.key,
        ...(row.value !== undefined && { value: row.value }),
        revision: row.revision,
        updatedAt: Number(row.updated_at),
      }));
    };
  }

  async list<V>(namespace: Namespace, options: ListOptions = {}): Promise<ListResult<V>> {
    return listRows<V>(this.#fetch(namespace), options);
  }

  async search<V>(namespace: Namespace, options: SearchOptions = {}): Promise<SearchResult<V>> {
    return searchRows<V>(this.#fetch(namespace), options);
  }

  /** Stops listening and ends the pool when this store created it. */
  async close(): Promise<void> {
    this.#closed = true;
    const listener = this.#listener;
    this.#listener = undefined;
    const client = await listener;
    client?.release(true);
    await this.#db.close();
  }
}
