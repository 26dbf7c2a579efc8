/**
 * `DurableObjectStore`: the {@link Store} in a SQLite-backed Durable Object's storage. The
 * object runs in one place at a time and its SQL calls are synchronous, so a write's read and
 * write happen with nothing in between, in one `transactionSync`: compare-and-swap is real.
 * @module
 */
import {
  type BatchOp,
  type BatchResult,
  type Bound,
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
import { type ItemRow, checkBatch, encodeSized, rangeQuery, rawRow, singlePut } from "./items.js";
import { nextRevision, openSchema } from "./schema.js";
import { type DurableObjectSqlStorage, first, guard, rows, storeError } from "./sql.js";

/** Thrown inside a transaction to roll it back on a lost compare-and-swap. */
class Conflict {
  constructor(readonly index: number) {}
}

/**
 * A {@link Store} on a Durable Object's SQLite storage. Construct it in the object's
 * constructor: `new DurableObjectStore(ctx.storage)`.
 */
export class DurableObjectStore implements Store {
  readonly #storage: DurableObjectSqlStorage;

  constructor(storage: DurableObjectSqlStorage) {
    this.#storage = openSchema(storage);
  }

  async get<V>(namespace: Namespace, key: string): Promise<StoreItem<V> | undefined> {
    const ns = namespaceId(namespace);
    checkKey(key);
    const row = guard(() =>
      first<ItemRow & { value: string }>(
        this.#storage.sql,
        "SELECT key, value, revision, updated_at FROM engram_items WHERE ns = ? AND key = ?",
        ns,
        key,
      ),
    );
    if (!row) return undefined;
    const revision = String(row.revision);
    return { key: row.key, value: decodeValue(row.value, row.key, revision) as V, revision, updatedAt: row.updated_at };
  }

  /** Writes in one transaction; returns the new revisions, or the index of a lost CAS. */
  #write(ops: readonly BatchOp[]): BatchResult {
    const prepared = ops.map((op) => {
      const ns = namespaceId(op.namespace);
      const key = checkKey(op.key);
      return { op, ns, key, text: op.op === "put" ? encodeSized(op.value, key) : "" };
    });
    const { sql } = this.#storage;
    try {
      const revisions = this.#storage.transactionSync(() => {
        const out: (string | null)[] = [];
        const touched = new Set<string>();
        let revision = 0;
        for (const [index, { op, ns, key, text }] of prepared.entries()) {
          const current = first<{ revision: number }>(sql, "SELECT revision FROM engram_items WHERE ns = ? AND key = ?", ns, key)?.revision;
          if (op.ifRevision !== undefined && (current === undefined ? null : String(current)) !== op.ifRevision) throw new Conflict(index);
          if (op.op === "delete" && current === undefined) {
            out.push(null);
            continue;
          }
          revision = nextRevision(this.#storage);
          if (op.op === "put") {
            sql.exec(
              "INSERT INTO engram_items (ns, key, value, revision, updated_at) VALUES (?, ?, ?, ?, ?) " +
                "ON CONFLICT (ns, key) DO UPDATE SET value = excluded.value, revision = excluded.revision, updated_at = excluded.updated_at",
              ns,
              key,
              text,
              revision,
              Date.now(),
            );
            out.push(String(revision));
          } else {
            sql.exec("DELETE FROM engram_items WHERE ns = ? AND key = ?", ns, key);
            out.push(null);
          }
          touched.add(ns);
        }
        for (const ns of touched) this.#touch(ns, revision);
        return out;
      });
      return { ok: true, revisions };
    } catch (e) {
      if (e instanceof Conflict) return { ok: false, conflict: true, index: e.index };
      throw storeError(e);
    }
  }

  /** Moves the namespace's change token to `revision`. */
  #touch(ns: string, revision: number): void {
    this.#storage.sql.exec(
      "INSERT INTO engram_namespaces (ns, token) VALUES (?, ?) ON CONFLICT (ns) DO UPDATE SET token = excluded.token",
      ns,
      revision,
    );
  }

  async put<V>(namespace: Namespace, key: string, value: V, options: PutOptions = {}): Promise<PutResult> {
    return singlePut.result(this.#write([singlePut.op(namespace, key, value, options)]));
  }

  async delete(namespace: Namespace, keys: readonly string[]): Promise<number> {
    const ns = namespaceId(namespace);
    for (const key of keys) checkKey(key);
    if (keys.length === 0) return 0;
    return guard(() =>
      this.#storage.transactionSync(() => {
        let removed = 0;
        let revision = 0;
        for (const key of new Set(keys)) {
          if (rows(this.#storage.sql, "DELETE FROM engram_items WHERE ns = ? AND key = ? RETURNING key", ns, key).length > 0) {
            removed++;
            revision = nextRevision(this.#storage);
          }
        }
        if (removed > 0) this.#touch(ns, revision);
        return removed;
      }),
    );
  }

  async batch(ops: readonly BatchOp[]): Promise<BatchResult> {
    return this.#write(checkBatch(ops));
  }

  async changeToken(namespace: Namespace): Promise<string> {
    const ns = namespaceId(namespace);
    const row = guard(() => first<{ token: number }>(this.#storage.sql, "SELECT token FROM engram_namespaces WHERE ns = ?", ns));
    return String(row?.token ?? 0);
  }

  #fetch(namespace: Namespace) {
    const ns = namespaceId(namespace);
    return (from: Bound, to: string | undefined, limit: number, values: boolean) => {
      const { query, args } = rangeQuery(ns, from, to, limit, values);
      return guard(() => rows<ItemRow>(this.#storage.sql, query, ...args)).map(rawRow);
    };
  }

  async list<V>(namespace: Namespace, options: ListOptions = {}): Promise<ListResult<V>> {
    return listRows<V>(this.#fetch(namespace), options);
  }

  async search<V>(namespace: Namespace, options: SearchOptions = {}): Promise<SearchResult<V>> {
    return searchRows<V>(this.#fetch(namespace), options);
  }
}
