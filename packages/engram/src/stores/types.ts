/**
 * The `Store`: a namespaced key → JSON value store with revisions for compare-and-swap and
 * prefix listings that the store evaluates itself (no full-namespace scans by callers).
 * InMemory, SQLite and PostgreSQL stores implement the same interface.
 * @module
 */

/** A namespace: a path of validated components, e.g. `["users", "u1", "filesystem"]`. */
export type Namespace = readonly string[];

/** One stored item. */
export interface StoreItem<V = unknown> {
  key: string;
  value: V;
  /** Changes on every put; compare-and-swap compares it. */
  revision: string;
  /** Milliseconds since the epoch of the last put. */
  updatedAt: number;
}

/** Options of {@link Store.put}. */
export interface PutOptions {
  /** Compare-and-swap: the put fails unless the current revision equals this; `null` means the
   * key must not exist. Default: unconditional. */
  ifRevision?: string | null;
}

/** Outcome of a put: the new revision, or a lost compare-and-swap. */
export type PutResult = { ok: true; revision: string } | { ok: false; conflict: true };

/** Options of {@link Store.list}. */
export interface ListOptions {
  /** Only keys starting with this. Default: all keys. */
  prefix?: string;
  /** Group keys by the next occurrence of this string after the prefix (S3-style): such keys are
   * reported once in `prefixes` instead of individually. Default: no grouping. */
  delimiter?: string;
  /** Include values. `false` lists keys and revisions only, which lets a caller find what
   * changed without transferring content. Default: `true`. */
  values?: boolean;
}

/** A listing, sorted by key. */
export interface ListResult<V = unknown> {
  items: StoreItem<V>[];
  /** Grouped key prefixes (with the delimiter), when a delimiter was given. */
  prefixes: string[];
}

/** The store interface every implementation provides. */
export interface Store {
  get<V = unknown>(namespace: Namespace, key: string): Promise<StoreItem<V> | undefined>;
  put<V = unknown>(namespace: Namespace, key: string, value: V, options?: PutOptions): Promise<PutResult>;
  /** Removes keys; returns how many existed. */
  delete(namespace: Namespace, keys: readonly string[]): Promise<number>;
  list<V = unknown>(namespace: Namespace, options?: ListOptions): Promise<ListResult<V>>;
  /** Optional: a token that changes whenever anything in the namespace changes, so a caller
   * holding a copy can tell in one call that it is still current. */
  changeToken?(namespace: Namespace): Promise<string>;
}

const COMPONENT = /^[A-Za-z0-9\-_.@+:~]+$/;

/** Throws a `TypeError` unless every component is non-empty and made of `[A-Za-z0-9-_.@+:~]`
 * (so no wildcard or separator can be injected through a user or thread id). */
export function validateNamespace(namespace: Namespace): Namespace {
  if (!Array.isArray(namespace) || namespace.length === 0) {
    throw new TypeError("a namespace is a non-empty array of strings");
  }
  for (const part of namespace) {
    if (typeof part !== "string" || !COMPONENT.test(part)) {
      throw new TypeError(`invalid namespace component ${JSON.stringify(part)}: use [A-Za-z0-9-_.@+:~]`);
    }
  }
  return namespace;
}
