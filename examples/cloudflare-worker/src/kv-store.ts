/**
 * An Engram `Store` on a Workers KV namespace (or anything KV-shaped: `get`, `put`, `delete`,
 * `list` by prefix). Values are JSON; the revision and time live in each key's metadata, so a
 * listing without values costs one `list` call. Listing rules (order, delimiters, cursors) come
 * from engram's `listRows`, the same code the SQLite and PostgreSQL stores use.
 *
 * KV is eventually consistent and has no compare-and-swap: `ifRevision` is checked by reading
 * first, which is good enough for one user's memory but not for many concurrent writers. For
 * those, back the Store with D1 or a Durable Object instead.
 */
import {
  type FetchRows,
  type ListOptions,
  type ListResult,
  type Namespace,
  type PutOptions,
  type PutResult,
  type RawRow,
  type Store,
  type StoreItem,
  checkKey,
  compareKeys,
  encodeValue,
  listRows,
  validateNamespace,
} from "engram";

/** The subset of `KVNamespace` (from `@cloudflare/workers-types`) this store uses. */
export interface KvNamespaceLike {
  get(key: string): Promise<string | null>;
  getWithMetadata<M>(key: string): Promise<{ value: string | null; metadata: M | null }>;
  put(key: string, value: string, options?: { metadata?: unknown }): Promise<void>;
  delete(key: string): Promise<void>;
  list<M>(options?: { prefix?: string; cursor?: string; limit?: number }): Promise<{
    keys: { name: string; metadata?: M }[];
    list_complete: boolean;
    cursor?: string;
  }>;
}

interface Meta {
  revision: string;
  updatedAt: number;
}

export class KvStore implements Store {
  constructor(private readonly kv: KvNamespaceLike) {}

  async get<V = unknown>(namespace: Namespace, key: string): Promise<StoreItem<V> | undefined> {
    const { value, metadata } = await this.kv.getWithMetadata<Meta>(this.#id(namespace, key));
    if (value === null || metadata === null) return undefined;
    return { key, value: JSON.parse(value) as V, ...metadata };
  }

  async put<V = unknown>(namespace: Namespace, key: string, value: V, options: PutOptions = {}): Promise<PutResult> {
    const id = this.#id(namespace, key);
    const text = encodeValue(value);
    if (options.ifRevision !== undefined) {
      const current = (await this.kv.getWithMetadata<Meta>(id)).metadata?.revision ?? null;
      if (current !== options.ifRevision) return { ok: false, conflict: true };
    }
    const meta: Meta = { revision: crypto.randomUUID(), updatedAt: Date.now() };
    await this.kv.put(id, text, { metadata: meta });
    return { ok: true, revision: meta.revision };
  }

  async delete(namespace: Namespace, keys: readonly string[]): Promise<number> {
    let removed = 0;
    for (const key of keys) {
      const id = this.#id(namespace, key);
      if ((await this.kv.get(id)) !== null) removed++;
      await this.kv.delete(id);
    }
    return removed;
  }

  list<V = unknown>(namespace: Namespace, options?: ListOptions): Promise<ListResult<V>> {
    const base = this.#id(namespace, "");
    const fetchRows: FetchRows = async (from, to, limit, values) => {
      const rows: RawRow[] = [];
      let cursor: string | undefined;
      do {
        const page = await this.kv.list<Meta>({ prefix: base, ...(cursor && { cursor }) });
        for (const { name, metadata } of page.keys) {
          const key = name.slice(base.length);
          const c = compareKeys(key, from.key);
          if (c < 0 || (c === 0 && !from.inclusive) || (to !== undefined && compareKeys(key, to) >= 0) || !metadata) continue;
          rows.push({ key, ...metadata, ...(values && { value: (await this.kv.get(name)) ?? "null" }) });
          if (rows.length >= limit) return rows;
        }
        cursor = page.list_complete ? undefined : page.cursor;
      } while (cursor);
      return rows;
    };
    return listRows<V>(fetchRows, options);
  }

  /** Namespace components cannot contain "/", so `<namespace>/<key>` never collides. */
  #id(namespace: Namespace, key: string): string {
    return `${validateNamespace(namespace).join("/")}/${key === "" ? "" : checkKey(key)}`;
  }
}
