/**
 * `InMemoryStore`: the Store for tests and edge runtimes. Keys are kept sorted per namespace (by
 * code point, like the SQL stores; see {@link SortedKeys}) so prefix and delimiter listings are
 * range scans, never full scans.
 * @module
 */
import {
  type Bound,
  type RawRow,
  checkKey,
  compareKeys,
  decodeValue,
  encodeValue,
  listRows,
  namespaceFromId,
  namespaceId,
  searchRows,
} from "./rules.js";
import { SortedKeys } from "./sorted-keys.js";
import type {
  BatchOp,
  BatchResult,
  ListOptions,
  ListResult,
  Namespace,
  PutOptions,
  PutResult,
  SearchOptions,
  SearchResult,
  Store,
  StoreItem,
} from "./types.js";

interface Row {
  key: string;
  /** JSON text: values are serialised as a real store would. */
  value: string;
  revision: string;
  updatedAt: number;
}

interface Space {
  keys: SortedKeys;
  rows: Map<string, Row>;
  /** Bumped on every put and delete. */
  changes: number;
}

/** Values are serialised as JSON in and parsed out, as a real store would. */
export class InMemoryStore implements Store {
  readonly #spaces = new Map<string, Space>();
  readonly #listeners = new Set<(namespace: Namespace) => void>();
  #revision = 0;

  #space(namespace: Namespace, create: true): Space;
  #space(namespace: Namespace, create: false): Space | undefined;
  #space(namespace: Namespace, create: boolean): Space | undefined {
    const id = namespaceId(namespace);
    let space = this.#spaces.get(id);
    if (!space && create) {
      space = { keys: new SortedKeys(), rows: new Map(), changes: 0 };
      this.#spaces.set(id, space);
    }
    return space;
  }

  #changed(namespace: Namespace): void {
    if (this.#listeners.size === 0) return;
    const ns = namespaceFromId(namespaceId(namespace));
    for (const l of this.#listeners) queueMicrotask(() => l(ns));
  }

  async get<V>(namespace: Namespace, key: string): Promise<StoreItem<V> | undefined> {
    checkKey(key);
    const row = this.#space(namespace, false)?.rows.get(key);
    return (
      row && { key: row.key, value: decodeValue(row.value, row.key, row.revision) as V, revision: row.revision, updatedAt: row.updatedAt }
    );
  }

  #conflicts(space: Space | undefined, key: string, ifRevision: string | null | undefined): boolean {
    return ifRevision !== undefined && (space?.rows.get(key)?.revision ?? null) !== ifRevision;
  }

  #put(space: Space, key: string, text: string): string {
    const revision = String(++this.#revision);
    if (!space.rows.has(key)) space.keys.insert(key);
    space.changes++;
    space.rows.set(key, { key, value: text, revision, updatedAt: Date.now() });
    return revision;
  }

  #delete(space: Space | undefined, key: string): boolean {
    if (!space?.rows.delete(key)) return false;
    space.keys.delete(key);
    space.changes++;
    return true;
  }

  async put<V>(namespace: Namespace, key: string, value: V, options: PutOptions = {}): Promise<PutResult> {
    checkKey(key);
    const text = encodeValue(value);
    const space = this.#space(namespace, true);
    if (this.#conflicts(space, key, options.ifRevision)) return { ok: false, conflict: true };
    const revision = this.#put(space, key, text);
    this.#changed(namespace);
    return { ok: true, revision };
  }

  async delete(namespace: Namespace, keys: readonly string[]): Promise<number> {
    for (const key of keys) checkKey(key);
    const space = this.#space(namespace, false);
    let removed = 0;
    for (const key of keys) if (this.#delete(space, key)) removed++;
    if (removed > 0) this.#changed(namespace);
    return removed;
  }

  async batch(ops: readonly BatchOp[]): Promise<BatchResult> {
    // Validate everything, then check every condition, then apply: all or nothing.
    const texts = ops.map((op) => {
      namespaceId(op.namespace);
      checkKey(op.key);
      return op.op === "put" ? encodeValue(op.value) : "";
    });
    // Conditions see the effect of earlier ops in the same batch.
    const pending = new Map<string, string | null>();
    for (const [index, op] of ops.entries()) {
      const id = `${namespaceId(op.namespace)}\u0000${op.key}`;
      const current = pending.has(id) ? pending.get(id) : (this.#space(op.namespace, false)?.rows.get(op.key)?.revision ?? null);
      if (op.ifRevision !== undefined && current !== op.ifRevision) return { ok: false, conflict: true, index };
      pending.set(id, op.op === "put" ? `pending-${index}` : null);
    }
    const revisions: (string | null)[] = [];
    for (const [i, op] of ops.entries()) {
      if (op.op === "put") revisions.push(this.#put(this.#space(op.namespace, true), op.key, texts[i] as string));
      else {
        this.#delete(this.#space(op.namespace, false), op.key);
        revisions.push(null);
      }
      this.#changed(op.namespace);
    }
    return { ok: true, revisions };
  }

  async changeToken(namespace: Namespace): Promise<string> {
    return String(this.#space(namespace, false)?.changes ?? 0);
  }

  subscribe(listener: (namespace: Namespace) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #fetch(namespace: Namespace) {
    const space = this.#space(namespace, false);
    return (from: Bound, to: string | undefined, limit: number): RawRow[] => {
      if (!space) return [];
      const out: RawRow[] = [];
      if (limit > 0) {
        space.keys.scan(from, (key) => {
          if (to !== undefined && compareKeys(key, to) >= 0) return false;
          out.push(space.rows.get(key) as Row);
          return out.length < limit;
        });
      }
      return out;
    };
  }

  async list<V>(namespace: Namespace, options: ListOptions = {}): Promise<ListResult<V>> {
    return listRows<V>(this.#fetch(namespace), options);
  }

  async search<V>(namespace: Namespace, options: SearchOptions = {}): Promise<SearchResult<V>> {
    return searchRows<V>(this.#fetch(namespace), options);
  }
}
