/**
 * `SqliteStore`: the {@link Store} in one SQLite file (better-sqlite3), shared safely by several
 * processes: WAL, a busy timeout, and every write in a `BEGIN IMMEDIATE` transaction, so a
 * compare-and-swap reads and writes under one lock.
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
  type RawRow,
  type SearchOptions,
  type SearchResult,
  type Store,
  type StoreItem,
  checkKey,
  decodeValue,
  encodeValue,
  listRows,
  namespaceId,
  searchRows,
} from "engram/kit";
import type Database from "better-sqlite3";
import { type SqliteDatabase, type SqliteOptions, guard, openDatabase, storeError } from "./database.js";

/** Options of {@link SqliteStore}. */
export interface SqliteStoreOptions extends SqliteOptions {}

interface Row {
  key: string;
  value?: string;
  revision: number;
  updated_at: number;
}

/** Thrown inside a transaction to roll it back on a lost compare-and-swap. */
class Conflict {
  constructor(readonly index: number) {}
}

/**
 * A {@link Store} on SQLite. `changeToken` costs one `PRAGMA data_version` while nothing changed:
 * another process's commit is seen by the very next call, without reading the tables.
 */
export class SqliteStore implements Store {
  readonly #db: SqliteDatabase;
  readonly #statements = new Map<string, Database.Statement>();
  /** Change tokens by namespace id, valid while `PRAGMA data_version` stays `#dataVersion`. */
  readonly #tokens = new Map<string, string>();
  #dataVersion = -1;

  constructor(options: SqliteStoreOptions = {}) {
    this.#db = openDatabase(options);
  }

  /** The underlying connection (for inspection; do not write Engram's tables directly). */
  get database(): SqliteDatabase {
    return this.#db;
  }

  #stmt(sql: string): Database.Statement {
    let s = this.#statements.get(sql);
    if (!s) {
      s = this.#db.prepare(sql);
      this.#statements.set(sql, s);
    }
    return s;
  }

  async get<V>(namespace: Namespace, key: string): Promise<StoreItem<V> | undefined> {
    const ns = namespaceId(namespace);
    checkKey(key);
    const row = guard(
      () =>
        this.#stmt("SELECT key, value, revision, updated_at FROM engram_items WHERE ns = ? AND key = ?").get(ns, key) as Row | undefined,
    );
    if (!row) return undefined;
    const revision = String(row.revision);
    return { key: row.key, value: decodeValue(row.value as string, row.key, revision) as V, revision, updatedAt: row.updated_at };
  }

  /** Writes under `BEGIN IMMEDIATE`; returns the new revisions, or the index of a lost CAS. */
  #write(ops: readonly BatchOp[]): BatchResult {
    const prepared = ops.map((op) => ({
      op,
      ns: namespaceId(op.namespace),
      key: checkKey(op.key),
      text: op.op === "put" ? encodeValue(op.value) : "",
    }));
    const tx = this.#db.transaction(() => {
      const revisions: (string | null)[] = [];
      const touched = new Set<string>();
      let revision = 0;
      for (const [index, { op, ns, key, text }] of prepared.entries()) {
        const current = this.#stmt("SELECT revision FROM engram_items WHERE ns = ? AND key = ?").pluck().get(ns, key) as number | undefined;
        if (op.ifRevision !== undefined && (current === undefined ? null : String(current)) !== op.ifRevision) throw new Conflict(index);
        if (op.op === "delete" && current === undefined) {
          revisions.push(null);
          continue;
        }
        revision = this.#stmt("UPDATE engram_counters SET value = value + 1 WHERE name = 'revision' RETURNING value")
          .pluck()
          .get() as number;
        if (op.op === "put") {
          this.#stmt(
            "INSERT INTO engram_items (ns, key, value, revision, updated_at) VALUES (?, ?, ?, ?, ?) " +
              "ON CONFLICT (ns, key) DO UPDATE SET value = excluded.value, revision = excluded.revision, updated_at = excluded.updated_at",
          ).run(ns, key, text, revision, Date.now());
          revisions.push(String(revision));
        } else {
          this.#stmt("DELETE FROM engram_items WHERE ns = ? AND key = ?").run(ns, key);
          revisions.push(null);
        }
        touched.add(ns);
      }
      for (const ns of touched) {
        this.#stmt("INSERT INTO engram_namespaces (ns, token) VALUES (?, ?) ON CONFLICT (ns) DO UPDATE SET token = excluded.token").run(
          ns,
          revision,
        );
      }
      return { revisions, touched, revision };
    });
    let done: ReturnType<typeof tx>;
    try {
      done = tx.immediate();
    } catch (e) {
      if (e instanceof Conflict) return { ok: false, conflict: true, index: e.index };
      throw storeError(e);
    }
    // Our own commits do not change data_version: keep the cached tokens exact.
    for (const ns of done.touched) this.#tokens.set(ns, String(done.revision));
    return { ok: true, revisions: done.revisions };
  }

  async put<V>(namespace: Namespace, key: string, value: V, options: PutOptions = {}): Promise<PutResult> {
    const r = this.#write([
      { op: "put", namespace, key, value, ...(options.ifRevision !== undefined && { ifRevision: options.ifRevision }) },
    ]);
    return r.ok ? { ok: true, revision: r.revisions[0] as string } : { ok: false, conflict: true };
  }

  async delete(namespace: Namespace, keys: readonly string[]): Promise<number> {
    const ns = namespaceId(namespace);
    for (const key of keys) checkKey(key);
    if (keys.length === 0) return 0;
    const existing = guard(() =>
      keys.filter((k) => this.#stmt("SELECT 1 FROM engram_items WHERE ns = ? AND key = ?").get(ns, k) !== undefined),
    );
    if (existing.length === 0) return 0;
    // Counted inside the transaction: another process may delete some meanwhile.
    let removed = 0;
    const tx = this.#db.transaction(() => {
      removed = 0;
      let revision = 0;
      for (const key of keys) {
        if (this.#stmt("DELETE FROM engram_items WHERE ns = ? AND key = ?").run(ns, key).changes > 0) {
          removed++;
          revision = this.#stmt("UPDATE engram_counters SET value = value + 1 WHERE name = 'revision' RETURNING value")
            .pluck()
            .get() as number;
        }
      }
      if (removed > 0) {
        this.#stmt("INSERT INTO engram_namespaces (ns, token) VALUES (?, ?) ON CONFLICT (ns) DO UPDATE SET token = excluded.token").run(
          ns,
          revision,
        );
        this.#tokens.set(ns, String(revision));
      }
    });
    guard(() => tx.immediate());
    return removed;
  }

  async batch(ops: readonly BatchOp[]): Promise<BatchResult> {
    if (!Array.isArray(ops)) throw new EngramError("invalid_argument", "batch takes an array of operations");
    for (const op of ops) {
      if (op?.op !== "put" && op?.op !== "delete") throw new EngramError("invalid_argument", `unknown batch op ${JSON.stringify(op?.op)}`);
    }
    return this.#write(ops);
  }

  async changeToken(namespace: Namespace): Promise<string> {
    const ns = namespaceId(namespace);
    return guard(() => {
      const dv = this.#stmt("PRAGMA data_version").pluck().get() as number;
      if (dv !== this.#dataVersion) {
        this.#tokens.clear();
        this.#dataVersion = dv;
      }
      let token = this.#tokens.get(ns);
      if (token === undefined) {
        const t = this.#stmt("SELECT token FROM engram_namespaces WHERE ns = ?").pluck().get(ns) as number | undefined;
        token = String(t ?? 0);
        this.#tokens.set(ns, token);
      }
      return token;
    });
  }

  #fetch(namespace: Namespace) {
    const ns = namespaceId(namespace);
    return (from: Bound, to: string | undefined, limit: number, values: boolean): RawRow[] => {
      const sql =
        `SELECT key, ${values ? "value, " : ""}revision, updated_at FROM engram_items ` +
        `WHERE ns = ? AND key ${from.inclusive ? ">=" : ">"} ?${to === undefined ? "" : " AND key < ?"} ORDER BY key LIMIT ?`;
      const args = to === undefined ? [ns, from.key, limit] : [ns, from.key, to, limit];
      const rows = guard(() => this.#stmt(sql).all(...args) as Row[]);
      return rows.map((r) => ({
        key: r.key,
        ...(r.value !== undefined && { value: r.value }),
        revision: String(r.revision),
        updatedAt: r.updated_at,
      }));
    };
  }

  async list<V>(namespace: Namespace, options: ListOptions = {}): Promise<ListResult<V>> {
    return listRows<V>(this.#fetch(namespace), options);
  }

  async search<V>(namespace: Namespace, options: SearchOptions = {}): Promise<SearchResult<V>> {
    return searchRows<V>(this.#fetch(namespace), options);
  }

  /** Closes the connection. */
  close(): void {
    this.#db.close();
  }
}
