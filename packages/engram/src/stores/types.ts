/**
 * The `Store`: a namespaced key → JSON value store with revisions for compare-and-swap and
 * prefix listings that the store evaluates itself (no full-namespace scans by callers).
 * InMemory, SQLite and PostgreSQL stores implement the same interface and pass the same
 * conformance suite (`engram/testing`).
 *
 * Rules every implementation follows (one home: `stores/keys.ts` and `stores/listing.ts`):
 * - keys are non-empty, well-formed Unicode strings of at most {@link MAX_KEY_BYTES} UTF-8 bytes
 *   without NUL; values are JSON (what `JSON.stringify` accepts; they come back as
 *   `JSON.parse` gives them);
 * - listings are sorted by Unicode code point (UTF-8 byte order, as SQLite and PostgreSQL
 *   `COLLATE "C"` sort);
 * - a revision is never reused for a key, even after a delete and a new put.
 * @module
 */
import { EngramError } from "../errors.js";

/** A namespace: a path of validated components, e.g. `["users", "u1", "filesystem"]`. */
export type Namespace = readonly string[];

/** The longest key, in UTF-8 bytes. */
export const MAX_KEY_BYTES = 1024;

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
  /** At most this many entries (items plus grouped prefixes) per page; the result's `cursor`
   * continues. Default: no limit (one page). */
  limit?: number;
  /** Continue after the page that returned this cursor (same prefix and delimiter).
   * Default: from the first key. */
  cursor?: string;
}

/** A listing, sorted by key. */
export interface ListResult<V = unknown> {
  items: StoreItem<V>[];
  /** Grouped key prefixes (with the delimiter), when a delimiter was given. */
  prefixes: string[];
  /** Present when more entries follow: pass it as {@link ListOptions.cursor}. */
  cursor?: string;
}

/**
 * A condition on one value field in {@link SearchOptions.filter}: a JSON value (deep equality)
 * or an object of operators, all of which must hold: `$eq`, `$ne` (deep (in)equality), `$gt`,
 * `$gte`, `$lt`, `$lte` (numbers with numbers, strings with strings by code point; other
 * pairs never match), `$in`, `$nin` (an array of values), `$exists` (boolean).
 */
export type FilterCondition =
  | unknown
  | {
      $eq?: unknown;
      $ne?: unknown;
      $gt?: number | string;
      $gte?: number | string;
      $lt?: number | string;
      $lte?: number | string;
      $in?: unknown[];
      $nin?: unknown[];
      $exists?: boolean;
    };

/** Options of {@link Store.search}. */
export interface SearchOptions {
  /** Only keys starting with this. Default: all keys. */
  prefix?: string;
  /** Field path (dot-separated, into the value object) → condition; all must hold. Items whose
   * value lacks a field fail its condition (except `$exists: false` and `$ne`/`$nin`).
   * Default: every item. */
  filter?: Record<string, FilterCondition>;
  /** At most this many items per page. Default: no limit. */
  limit?: number;
  /** Continue after the page that returned this cursor (same prefix and filter). */
  cursor?: string;
}

/** A page of search results, sorted by key. */
export interface SearchResult<V = unknown> {
  items: StoreItem<V>[];
  /** Present when more items may follow. */
  cursor?: string;
}

/** One write of a {@link Store.batch}. */
export type BatchOp =
  | { op: "put"; namespace: Namespace; key: string; value: unknown; ifRevision?: string | null }
  | { op: "delete"; namespace: Namespace; key: string; ifRevision?: string | null };

/** Outcome of a batch: every write applied (with the new revision of each put, `null` for a
 * delete), or none because the compare-and-swap of op `index` failed. */
export type BatchResult = { ok: true; revisions: (string | null)[] } | { ok: false; conflict: true; index: number };

/** The store interface every implementation provides. */
export interface Store {
  get<V = unknown>(namespace: Namespace, key: string): Promise<StoreItem<V> | undefined>;
  put<V = unknown>(namespace: Namespace, key: string, value: V, options?: PutOptions): Promise<PutResult>;
  /** Removes keys; returns how many existed. */
  delete(namespace: Namespace, keys: readonly string[]): Promise<number>;
  list<V = unknown>(namespace: Namespace, options?: ListOptions): Promise<ListResult<V>>;
  /** Items of a namespace whose value matches a filter. Optional for compatibility with stores
   * written before it existed; every store of this package has it. */
  search?<V = unknown>(namespace: Namespace, options?: SearchOptions): Promise<SearchResult<V>>;
  /** Applies writes atomically: all or none (a delete of a missing key without `ifRevision`
   * is not a failure). Optional like `search`. */
  batch?(ops: readonly BatchOp[]): Promise<BatchResult>;
  /** Optional: a token that changes whenever anything in the namespace changes, so a caller
   * holding a copy can tell in one call that it is still current. */
  changeToken?(namespace: Namespace): Promise<string>;
  /** Optional: calls `listener` with the namespace of every change made through any instance on
   * the same data (other processes included, where the store can push changes). Returns the
   * unsubscribe function. */
  subscribe?(listener: (namespace: Namespace) => void): () => void;
}

const COMPONENT = /^[A-Za-z0-9\-_.@+:~]+$/;

/** Throws an `EngramError` (`invalid_argument`) unless every component is non-empty and made of `[A-Za-z0-9-_.@+:~]`
 * (so no wildcard or separator can be injected through a user or thread id), with at most 16
 * components of at most 128 characters each. */
export function validateNamespace(namespace: Namespace): Namespace {
  if (!Array.isArray(namespace) || namespace.length === 0 || namespace.length > 16) {
    throw new EngramError("invalid_argument", "a namespace is a non-empty array of at most 16 strings");
  }
  for (const part of namespace) {
    if (typeof part !== "string" || part.length > 128 || !COMPONENT.test(part)) {
      throw new EngramError("invalid_argument", `invalid namespace component ${JSON.stringify(part)}: use [A-Za-z0-9-_.@+:~], at most 128`);
    }
  }
  return namespace;
}
