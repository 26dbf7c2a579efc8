/**
 * `IndexedDBStore`: the {@link Store} in a browser's IndexedDB. A write reads the revisions it
 * depends on and writes in one readwrite transaction, which IndexedDB runs alone among the
 * readwrite transactions over the same object stores of every tab of the origin:
 * compare-and-swap is real across tabs and workers.
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
import { Subscribers, announce } from "./changes.js";
import { Database, type IndexedDBOptions, request, sortable, storeError } from "./database.js";

/** An item's record in `items` (its value is in `values`, under the same key). */
interface ItemHead {
  key: string;
  revision: number;
  updatedAt: number;
}

const ITEM_STORES = ["items", "values", "namespaces", "meta"];

/** Thrown inside a transaction to roll it back on a lost compare-and-swap. */
class Conflict {
  constructor(readonly index: number) {}
}

/** The record key of `key` in namespace `ns`. */
const itemKey = (ns: string, key: string): IDBValidKey => [ns, sortable(key)];

/** The keys of `ns` from `from` to before `to` (to the namespace's end without `to`: an empty
 * array sorts after every binary key). */
function itemRange(ns: string, from: Bound, to: string | undefined): IDBKeyRange {
  return IDBKeyRange.bound(itemKey(ns, from.key), to === undefined ? [ns, []] : itemKey(ns, to), !from.inclusive, true);
}

/** `ops` when it is an array of put and delete operations; else `invalid_argument`. */
function checkBatch(ops: unknown): readonly BatchOp[] {
  if (!Array.isArray(ops)) throw new EngramError("invalid_argument", "batch takes an array of operations");
  const bad = ops.findIndex((op) => (op as BatchOp | undefined)?.op !== "put" && (op as BatchOp | undefined)?.op !== "delete");
  if (bad >= 0) throw new EngramError("invalid_argument", `unknown batch op ${JSON.stringify((ops[bad] as BatchOp | undefined)?.op)}`);
  return ops;
}

/**
 * A {@link Store} in IndexedDB: `new IndexedDBStore()` (database `"engram"` of the page's
 * origin). Every tab and worker of the origin that opens the same database sees the same items.
 */
export class IndexedDBStore implements Store {
  readonly #db: Database;
  readonly #subscribers: Subscribers;

  constructor(options: IndexedDBOptions = {}) {
    this.#db = new Database(options);
    this.#subscribers = new Subscribers(this.#db.name);
  }

  async get<V>(namespace: Namespace, key: string): Promise<StoreItem<V> | undefined> {
    const id = itemKey(namespaceId(namespace), checkKey(key));
    const found = await this.#db.run(["items", "values"], "readonly", async (tx) => {
      const [head, text] = await Promise.all([
        request<ItemHead | undefined>(tx.objectStore("items").get(id)),
        request<string | undefined>(tx.objectStore("values").get(id)),
      ]);
      return head && { head, text: text as string };
    });
    if (!found) return undefined;
    const revision = String(found.head.revision);
    return {
      key: found.head.key,
      value: decodeValue(found.text, found.head.key, revision) as V,
      revision,
      updatedAt: found.head.updatedAt,
    };
  }

  /** Writes in one transaction; the new revisions, or the index of a lost compare-and-swap. */
  async #write(ops: readonly BatchOp[]): Promise<BatchResult> {
    const prepared = ops.map((op) => {
      const ns = namespaceId(op.namespace);
      const key = checkKey(op.key);
      return { op, ns, key, id: itemKey(ns, key), text: op.op === "put" ? encodeValue(op.value) : "" };
    });
    try {
      const { revisions, touched } = await this.#db.run(ITEM_STORES, "readwrite", async (tx) => {
        const items = tx.objectStore("items");
        const values = tx.objectStore("values");
        const meta = tx.objectStore("meta");
        let revision = (await request<number | undefined>(meta.get("revision"))) ?? 0;
        const out: (string | null)[] = [];
        const touched = new Set<string>();
        const now = Date.now();
        for (const [index, { op, ns, key, id, text }] of prepared.entries()) {
          // Requests run in order: this read sees the batch's earlier writes.
          const current = await request<ItemHead | undefined>(items.get(id));
          if (op.ifRevision !== undefined && (current === undefined ? null : String(current.revision)) !== op.ifRevision) {
            throw new Conflict(index);
          }
          if (op.op === "delete" && current === undefined) {
            out.push(null);
            continue;
          }
          revision++;
          if (op.op === "put") {
            items.put({ key, revision, updatedAt: now } satisfies ItemHead, id);
            values.put(text, id);
            out.push(String(revision));
          } else {
            items.delete(id);
            values.delete(id);
            out.push(null);
          }
          touched.add(ns);
        }
        if (touched.size > 0) {
          meta.put(revision, "revision");
          for (const ns of touched) tx.objectStore("namespaces").put(revision, ns);
        }
        return { revisions: out, touched };
      });
      announce(this.#db.name, touched);
      return { ok: true, revisions };
    } catch (e) {
      if (e instanceof Conflict) return { ok: false, conflict: true, index: e.index };
      throw storeError(e, this.#db.name);
    }
  }

  async put<V>(namespace: Namespace, key: string, value: V, options: PutOptions = {}): Promise<PutResult> {
    const op: BatchOp = {
      op: "put",
      namespace,
      key,
      value,
      ...(options.ifRevision !== undefined && { ifRevision: options.ifRevision }),
    };
    const r = await this.#write([op]);
    return r.ok ? { ok: true, revision: r.revisions[0] as string } : { ok: false, conflict: true };
  }

  async delete(namespace: Namespace, keys: readonly string[]): Promise<number> {
    const ns = namespaceId(namespace);
    for (const key of keys) checkKey(key);
    if (keys.length === 0) return 0;
    try {
      const removed = await this.#db.run(ITEM_STORES, "readwrite", async (tx) => {
        const items = tx.objectStore("items");
        const meta = tx.objectStore("meta");
        let revision = (await request<number | undefined>(meta.get("revision"))) ?? 0;
        let count = 0;
        for (const key of new Set(keys)) {
          const id = itemKey(ns, key);
          if ((await request(items.count(id))) === 0) continue;
          items.delete(id);
          tx.objectStore("values").delete(id);
          count++;
          revision++;
        }
        if (count > 0) {
          meta.put(revision, "revision");
          tx.objectStore("namespaces").put(revision, ns);
        }
        return count;
      });
      if (removed > 0) announce(this.#db.name, [ns]);
      return removed;
    } catch (e) {
      throw storeError(e, this.#db.name);
    }
  }

  async batch(ops: readonly BatchOp[]): Promise<BatchResult> {
    return this.#write(checkBatch(ops));
  }

  async changeToken(namespace: Namespace): Promise<string> {
    const ns = namespaceId(namespace);
    const token = await this.#db.run(["namespaces"], "readonly", (tx) => request<number | undefined>(tx.objectStore("namespaces").get(ns)));
    return String(token ?? 0);
  }

  /** Up to `limit` rows of `ns` from `from` to before `to`, in key order, read in one transaction. */
  #fetch(namespace: Namespace) {
    const ns = namespaceId(namespace);
    return (from: Bound, to: string | undefined, limit: number, values: boolean): Promise<RawRow[]> =>
      this.#db.run(values ? ["items", "values"] : ["items"], "readonly", async (tx) => {
        const range = itemRange(ns, from, to);
        const [heads, texts] = await Promise.all([
          request<ItemHead[]>(tx.objectStore("items").getAll(range, limit)),
          values ? request<string[]>(tx.objectStore("values").getAll(range, limit)) : undefined,
        ]);
        return heads.map((h, i) => ({
          key: h.key,
          ...(texts && { value: texts[i] as string }),
          revision: String(h.revision),
          updatedAt: h.updatedAt,
        }));
      });
  }

  async list<V>(namespace: Namespace, options: ListOptions = {}): Promise<ListResult<V>> {
    return listRows<V>(this.#fetch(namespace), options);
  }

  async search<V>(namespace: Namespace, options: SearchOptions = {}): Promise<SearchResult<V>> {
    return searchRows<V>(this.#fetch(namespace), options);
  }

  /** Calls `listener` with the namespace of every change made through any `IndexedDBStore` on
   * this database, in this tab or another tab or worker of the origin (a `BroadcastChannel`);
   * returns the unsubscribe function. */
  subscribe(listener: (namespace: Namespace) => void): () => void {
    return this.#subscribers.add(listener);
  }

  /** Closes the store's connection to the database (the next call opens a new one). */
  close(): void {
    this.#db.close();
  }
}
