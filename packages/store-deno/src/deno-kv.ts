/**
 * The part of Deno KV these stores use, typed here so the package needs no Deno type
 * declarations (Deno's own `Deno.Kv` is one: a test checks it with `deno check`), and the limits
 * Deno KV enforces. Types and constants only: nothing to import.
 * @module
 */
/** A key part as these stores write them (Deno KV also takes bigints, booleans and bytes). */
export type KvKeyPart = string | number;
/** A Deno KV key. */
export type KvKey = readonly KvKeyPart[];

/** An entry as Deno KV reads it: `versionstamp` is `null` when the key is absent. */
export interface KvEntryMaybe<T> {
  key: readonly unknown[];
  value: T | null;
  versionstamp: string | null;
}

/** One range of {@link DenoKv.list}: a prefix (optionally narrowed by `start`), or `start`–`end`. */
export type KvListSelector = { prefix: KvKey; start?: KvKey } | { prefix: KvKey; end?: KvKey } | { start: KvKey; end: KvKey };

/** A Deno KV atomic operation (`kv.atomic()`). */
export interface KvAtomicOperation {
  check(...checks: { key: KvKey; versionstamp: string | null }[]): this;
  set(key: KvKey, value: unknown): this;
  delete(key: KvKey): this;
  commit(): Promise<{ ok: true; versionstamp: string } | { ok: false }>;
}

/** The Deno KV database (`await Deno.openKv(path)`). */
export interface DenoKv {
  get<T = unknown>(key: KvKey): Promise<KvEntryMaybe<T>>;
  /** At most {@link KV_LIMITS.readKeys} keys, read from one snapshot. */
  getMany<T extends readonly unknown[]>(keys: readonly [...{ [K in keyof T]: KvKey }]): Promise<{ [K in keyof T]: KvEntryMaybe<T[K]> }>;
  list<T = unknown>(
    selector: KvListSelector,
    options?: { limit?: number },
  ): AsyncIterable<{ key: readonly unknown[]; value: T; versionstamp: string }>;
  atomic(): KvAtomicOperation;
}

/** What Deno KV refuses (Deno 2, local and Deno Deploy alike): an operation over one of these
 * fails whole. */
export const KV_LIMITS = {
  /** The largest value, in bytes (strings count 1 byte per Latin-1 character, else 2 per UTF-16 unit). */
  valueBytes: 65_536,
  /** The longest key written, in bytes of its encoding. */
  keyBytes: 2048,
  /** Keys one `getMany` reads. */
  readKeys: 10,
  /** Checks of one atomic operation. */
  checks: 100,
  /** Mutations (sets and deletes) of one atomic operation. */
  mutations: 1000,
  /** Bytes of keys and values one atomic operation writes. */
  mutationBytes: 819_200,
} as const;
