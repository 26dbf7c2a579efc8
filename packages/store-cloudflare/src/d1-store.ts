/**
 * `D1Store`: the {@link Store} in a D1 database. A write is one D1 batch, which D1 runs as one
 * transaction on the database's primary: a compare-and-swap is a statement in the batch that
 * fails, rolling the whole batch back, when the stored revision is not the expected one.
 * @module
 */
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
  type SearchOptions,
  type SearchResult,
  type Store,
  type StoreItem,
  checkKey,
  decodeValue,
  listRows,
  namespaceId,
  searchRows,
} from "engram/kit";
import { type D1Database, type D1PreparedStatement, d1Rows, openD1Schema } from "./d1.js";
import { type ItemRow, checkBatch, encodeSized, rangeQuery, rawRow, singlePut } from "./items.js";
import { storeError } from "./sql.js";

/** The marker of a lost compare-and-swap in D1's error: SQLite names the bad JSON path, and the
 * path names the operation. */
const CONFLICT = /engram-conflict-(\d+)/;

const REVISION = "(SELECT value FROM engram_counters WHERE name = 'revision')";
const EXISTS = "EXISTS (SELECT 1 FROM engram_items WHERE ns = ? AND key = ?)";

/**
 * A {@link Store} on D1: `new D1Store(env.DB)`. Reads and writes go to the database's primary
 * (no read replicas are used), so every call sees every write that returned before it.
 */
export class D1Store implements Store {
  readonly #db: D1Database;
  #ready: Promise<void> | undefined;

  constructor(db: D1Database) {
    if (typeof db?.prepare !== "function" || typeof db.batch !== "function") {
      throw new EngramError("invalid_argument", "pass a D1 database binding (env.DB)");
    }
    this.#db = db;
  }

  /** The schema, created on first use (and tried again after a failure). */
  #open(): Promise<void> {
    this.#ready ??= openD1Schema(this.#db).catch((e) => {
      this.#ready = undefined;
      throw e;
    });
    return this.#ready;
  }

  async get<V>(namespace: Namespace, key: string): Promise<StoreItem<V> | undefined> {
    const ns = namespaceId(namespace);
    checkKey(key);
    await this.#open();
    const [row] = await d1Rows<ItemRow & { value: string }>(
      this.#db,
      "SELECT key, value, revision, updated_at FROM engram_items WHERE ns = ? AND key = ?",
      ns,
      key,
    );
    if (!row) return undefined;
    const revision = String(row.revision);
    return { key: row.key, value: decodeValue(row.value, row.key, revision) as V, revision, updatedAt: row.updated_at };
  }

  /** The statements of one operation; `returns` is the index (in them) of the one whose rows
   * answer it: the put's revision, or the deleted key. */
  #statements(op: BatchOp, index: number, ns: string, key: string, text: string): { statements: D1PreparedStatement[]; returns: number } {
    const db = this.#db;
    const out: D1PreparedStatement[] = [];
    if (op.ifRevision !== undefined) {
      out.push(
        db
          .prepare(
            "SELECT CASE WHEN (SELECT CAST(revision AS TEXT) FROM engram_items WHERE ns = ? AND key = ?) IS ? " +
              `THEN 1 ELSE json_extract('{}', 'engram-conflict-${index}') END`,
          )
          .bind(ns, key, op.ifRevision),
      );
    }
    const touch = (condition: string, ...args: unknown[]) =>
      db
        .prepare(
          `INSERT INTO engram_namespaces (ns, token) SELECT ?, value FROM engram_counters WHERE name = 'revision'${condition} ` +
            "ON CONFLICT (ns) DO UPDATE SET token = excluded.token",
        )
        .bind(ns, ...args);
    if (op.op === "put") {
      out.push(
        db.prepare("UPDATE engram_counters SET value = value + 1 WHERE name = 'revision'"),
        db
          .prepare(
            `INSERT INTO engram_items (ns, key, value, revision, updated_at) VALUES (?, ?, ?, ${REVISION}, ?) ` +
              "ON CONFLICT (ns, key) DO UPDATE SET value = excluded.value, revision = excluded.revision, updated_at = excluded.updated_at " +
              "RETURNING revision",
          )
          .bind(ns, key, text, Date.now()),
        touch(""),
      );
      return { statements: out, returns: out.length - 2 };
    }
    // A delete changes the revision and the namespace's token only when the item exists.
    out.push(
      db.prepare(`UPDATE engram_counters SET value = value + 1 WHERE name = 'revision' AND ${EXISTS}`).bind(ns, key),
      touch(` AND ${EXISTS}`, ns, key),
      db.prepare("DELETE FROM engram_items WHERE ns = ? AND key = ? RETURNING key").bind(ns, key),
    );
    return { statements: out, returns: out.length - 1 };
  }

  /** Writes in one batch; returns the new revisions (null for deletes), or the index of a lost CAS. */
  async #write(ops: readonly BatchOp[]): Promise<BatchResult & { deleted?: number }> {
    const prepared = ops.map((op) => {
      const ns = namespaceId(op.namespace);
      const key = checkKey(op.key);
      return { op, ns, key, text: op.op === "put" ? encodeSized(op.value, key) : "" };
    });
    if (prepared.length === 0) return { ok: true, revisions: [] };
    await this.#open();
    const statements: D1PreparedStatement[] = [];
    const answers: number[] = [];
    for (const [index, { op, ns, key, text }] of prepared.entries()) {
      const one = this.#statements(op, index, ns, key, text);
      answers.push(statements.length + one.returns);
      statements.push(...one.statements);
    }
    let results: { results: Record<string, unknown>[] }[];
    try {
      results = await this.#db.batch(statements);
    } catch (e) {
      const lost = CONFLICT.exec(e instanceof Error ? e.message : String(e));
      if (lost) return { ok: false, conflict: true, index: Number(lost[1]) };
      throw storeError(e, "d1");
    }
    const rowsOf = (i: number) => results[answers[i] as number]?.results ?? [];
    const revisions = prepared.map(({ op }, i) => (op.op === "put" ? String((rowsOf(i)[0] as { revision: number }).revision) : null));
    const deleted = prepared.filter(({ op }, i) => op.op === "delete" && rowsOf(i).length > 0).length;
    return { ok: true, revisions, deleted };
  }

  async put<V>(namespace: Namespace, key: string, value: V, options: PutOptions = {}): Promise<PutResult> {
    return singlePut.result(await this.#write([singlePut.op(namespace, key, value, options)]));
  }

  async delete(namespace: Namespace, keys: readonly string[]): Promise<number> {
    const r = await this.#write([...new Set(keys)].map((key) => ({ op: "delete", namespace, key })));
    return r.ok ? (r.deleted ?? 0) : 0;
  }

  async batch(ops: readonly BatchOp[]): Promise<BatchResult> {
    const { deleted: _, ...result } = await this.#write(checkBatch(ops));
    return result;
  }

  async changeToken(namespace: Namespace): Promise<string> {
    const ns = namespaceId(namespace);
    await this.#open();
    const [row] = await d1Rows<{ token: number }>(this.#db, "SELECT token FROM engram_namespaces WHERE ns = ?", ns);
    return String(row?.token ?? 0);
  }

  #fetch(namespace: Namespace) {
    const ns = namespaceId(namespace);
    return async (from: Bound, to: string | undefined, limit: number, values: boolean) => {
      await this.#open();
      const { query, args } = rangeQuery(ns, from, to, limit, values);
      return (await d1Rows<ItemRow>(this.#db, query, ...args)).map(rawRow);
    };
  }

  async list<V>(namespace: Namespace, options: ListOptions = {}): Promise<ListResult<V>> {
    return listRows<V>(this.#fetch(namespace), options);
  }

  async search<V>(namespace: Namespace, options: SearchOptions = {}): Promise<SearchResult<V>> {
    return searchRows<V>(this.#fetch(namespace), options);
  }
}
