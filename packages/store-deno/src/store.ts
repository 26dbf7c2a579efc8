/**
 * `DenoKvStore`: the {@link Store} in Deno KV. An item is one entry whose versionstamp is its
 * revision; a write reads the entries it changes, then commits in one atomic operation that
 * checks each is still as read (`kv.atomic().check(...)`), so compare-and-swap is real across
 * processes. A commit that lost to another writer is retried from a fresh read; a lost
 * compare-and-swap the caller asked for is reported.
 * @module
 */
import {
  type BatchOp,
  type BatchResult,
  type Bound,
  EngramError,
  type ListOptions,
  type ListResult,
  MAX_KEY_BYTES,
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
import { type BlobRef, Blobs, INLINE_UNITS, type StoredText, blobOf } from "./blobs.js";
import { type DenoKv, KV_LIMITS, type KvEntryMaybe, type KvKey } from "./deno-kv.js";
import { type KvStoreOptions, checkKv, commit, guard, keyPrefix, listAll } from "./kv.js";

/** An item's entry: its value as stored and when it was last put. */
interface ItemEntry {
  v: StoredText;
  t: number;
}

/** The most keys one batch may write: each is checked in the same atomic operation. */
export const MAX_BATCH_KEYS = 64;
/** The inline values of one commit stay under this many bytes (larger ones become blobs), within
 * the atomic operation's total size. */
const INLINE_BUDGET_BYTES = 480_000;
/** A namespace id longer than this is stored as its digest, so a key of the longest namespace
 * and the longest store key fits Deno KV's key limit. */
const NAMESPACE_INLINE_BYTES = 512;
/** Reads retried when a value's blob was replaced in between. */
const READ_ATTEMPTS = 5;

const encoder = new TextEncoder();

/** The key part of a namespace: its id, or `#` and the SHA-256 of a long one (ids use no `#`). */
async function namespacePart(namespace: Namespace): Promise<string> {
  const id = namespaceId(namespace);
  if (id.length <= NAMESPACE_INLINE_BYTES) return id;
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(id)));
  return `#${Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** One write of a batch, validated. */
interface Prepared {
  op: BatchOp;
  key: KvKey;
  ns: string;
  text: string | undefined;
}

/**
 * A {@link Store} on Deno KV: `new DenoKvStore(await Deno.openKv(path))` (Deno needs
 * `--unstable-kv`). Values of any size (over 64 KiB they are kept in parts); reads are strongly
 * consistent.
 */
export class DenoKvStore implements Store {
  readonly #kv: DenoKv;
  readonly #prefix: KvKey;
  readonly #blobs: Blobs;

  constructor(kv: DenoKv, options: KvStoreOptions = {}) {
    this.#kv = checkKv(kv);
    this.#prefix = keyPrefix(options);
    this.#blobs = new Blobs(this.#kv, this.#prefix);
  }

  #itemKey(ns: string, key: string): KvKey {
    return [...this.#prefix, "item", ns, key];
  }

  #tokenKey(ns: string): KvKey {
    return [...this.#prefix, "token", ns];
  }

  /** The item of an entry, its value read (a blob too); `undefined` when the entry is absent. */
  async #item(key: string, entry: KvEntryMaybe<ItemEntry>, values: boolean): Promise<RawRow | "stale" | undefined> {
    if (entry.versionstamp === null || entry.value === null) return undefined;
    const row: RawRow = { key, revision: entry.versionstamp, updatedAt: entry.value.t };
    if (!values) return row;
    const text = await this.#blobs.readText(entry.value.v);
    return text === undefined ? "stale" : { ...row, value: text };
  }

  /** The item under `kvKey`, read again while its blob is being replaced. */
  async #read(kvKey: KvKey, key: string, values: boolean, first?: KvEntryMaybe<ItemEntry>): Promise<RawRow | undefined> {
    let entry = first;
    for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
      entry ??= await guard(() => this.#kv.get<ItemEntry>(kvKey));
      const row = await this.#item(key, entry, values);
      if (row !== "stale") return row;
      entry = undefined;
    }
    throw new EngramError("store_error", `the value of '${key}' kept changing while it was read (its parts were replaced)`);
  }

  async get<V>(namespace: Namespace, key: string): Promise<StoreItem<V> | undefined> {
    const ns = await namespacePart(namespace);
    checkKey(key);
    const row = await this.#read(this.#itemKey(ns, key), key, true);
    if (!row) return undefined;
    return { key, value: decodeValue(row.value as string, key, row.revision) as V, revision: row.revision, updatedAt: row.updatedAt };
  }

  /** Applies `ops` in one atomic operation; `existed`: how many deleted keys were there. */
  async #write(ops: readonly BatchOp[]): Promise<BatchResult & { existed: number }> {
    const prepared: Prepared[] = [];
    for (const op of ops) {
      const ns = await namespacePart(op.namespace);
      const key = checkKey(op.key);
      prepared.push({ op, ns, key: this.#itemKey(ns, key), text: op.op === "put" ? encodeValue(op.value) : undefined });
    }
    if (prepared.length === 0) return { ok: true, revisions: [], existed: 0 };
    const keys = new Map(prepared.map((p) => [JSON.stringify(p.key), p.key]));
    if (keys.size > MAX_BATCH_KEYS) {
      throw new EngramError(
        "too_large",
        `a batch writes at most ${MAX_BATCH_KEYS} keys on Deno KV (one atomic operation), got ${keys.size}`,
      );
    }
    const values = new Map<Prepared, StoredText>();
    let committed = false;
    try {
      await this.#stageValues(prepared, values);
      for (;;) {
        const read = await this.#readEntries([...keys.values()]);
        const plan = this.#plan(prepared, read);
        if (!plan.ok) return { ...plan, existed: 0 };
        const op = this.#kv.atomic();
        for (const [id, entry] of read) op.check({ key: keys.get(id) as KvKey, versionstamp: entry.versionstamp });
        const retired: BlobRef[] = [];
        const now = Date.now();
        for (const [id, last] of plan.final) {
          const kvKey = keys.get(id) as KvKey;
          const old = blobOf(read.get(id)?.value?.v);
          if (old) retired.push(old);
          if (last === undefined) op.delete(kvKey);
          else {
            const v = values.get(last) as StoredText;
            op.set(kvKey, { v, t: now } satisfies ItemEntry);
            const blob = blobOf(v);
            if (blob) this.#blobs.confirm(op, blob);
          }
        }
        // Blobs of puts a later put of the same key replaced in this batch are never named.
        for (const [p, v] of values) {
          const blob = blobOf(v);
          if (blob && plan.final.get(JSON.stringify(p.key)) !== p) retired.push(blob);
        }
        for (const blob of retired) this.#blobs.retire(op, blob);
        for (const ns of plan.touched) op.set(this.#tokenKey(ns), ns);
        const result = await commit(op);
        if (!result.ok) continue;
        committed = true;
        // The commit stands whatever happens here: what a failure leaves stays retired, for sweep().
        await this.#blobs.drop(retired).catch(() => undefined);
        return { ok: true, revisions: prepared.map((p) => (p.text === undefined ? null : result.versionstamp)), existed: plan.existed };
      }
    } finally {
      if (!committed) {
        const staged = [...values.values()].map(blobOf).filter((b): b is BlobRef => b !== undefined);
        await this.#blobs.drop(staged).catch(() => undefined);
      }
    }
  }

  /** Each put's value as stored, into `out` (as each is staged, so a failure leaves nothing
   * unknown): inline while the rest of the commit's inline values fit the budget, the largest
   * first as blobs otherwise. */
  async #stageValues(prepared: readonly Prepared[], out: Map<Prepared, StoredText>): Promise<void> {
    const puts = prepared.filter((p) => p.text !== undefined).sort((a, b) => (b.text as string).length - (a.text as string).length);
    let inline = puts.reduce((n, p) => n + Math.min((p.text as string).length, INLINE_UNITS + 1) * 2, 0);
    for (const p of puts) {
      const text = p.text as string;
      if (text.length <= INLINE_UNITS && inline <= INLINE_BUDGET_BYTES) out.set(p, { text });
      else out.set(p, { blob: await this.#blobs.stage(encoder.encode(text)) });
      inline -= Math.min(text.length, INLINE_UNITS + 1) * 2;
    }
  }

  /** The entries under `keys`, by key id, read `KV_LIMITS.readKeys` at a time. */
  async #readEntries(keys: readonly KvKey[]): Promise<Map<string, KvEntryMaybe<ItemEntry>>> {
    const out = new Map<string, KvEntryMaybe<ItemEntry>>();
    for (let at = 0; at < keys.length; at += KV_LIMITS.readKeys) {
      const chunk = keys.slice(at, at + KV_LIMITS.readKeys);
      const entries = await guard(() => this.#kv.getMany<ItemEntry[]>(chunk));
      for (const [i, entry] of entries.entries()) out.set(JSON.stringify(chunk[i]), entry);
    }
    return out;
  }

  /** The batch applied in order to what was read: the last write of each key (`undefined`: a
   * delete), the namespaces that change, how many deletes found their key — or the index of
   * the first compare-and-swap that does not hold. */
  #plan(
    prepared: readonly Prepared[],
    read: Map<string, KvEntryMaybe<ItemEntry>>,
  ):
    | { ok: true; final: Map<string, Prepared | undefined>; touched: Set<string>; existed: number }
    | { ok: false; conflict: true; index: number } {
    const final = new Map<string, Prepared | undefined>();
    const touched = new Set<string>();
    let existed = 0;
    for (const [index, p] of prepared.entries()) {
      const id = JSON.stringify(p.key);
      const written = final.has(id);
      const exists = written ? final.get(id) !== undefined : read.get(id)?.versionstamp != null;
      const expected = p.op.ifRevision;
      // A revision written by this batch is not known before it commits: no caller can name it.
      const holds = expected === undefined || (expected === null ? !exists : !written && exists && read.get(id)?.versionstamp === expected);
      if (!holds) return { ok: false, conflict: true, index };
      if (p.text !== undefined) {
        final.set(id, p);
        touched.add(p.ns);
      } else {
        if (exists) {
          existed++;
          touched.add(p.ns);
        }
        final.set(id, undefined);
      }
    }
    return { ok: true, final, touched, existed };
  }

  async put<V>(namespace: Namespace, key: string, value: V, options: PutOptions = {}): Promise<PutResult> {
    const r = await this.#write([
      { op: "put", namespace, key, value, ...(options.ifRevision !== undefined && { ifRevision: options.ifRevision }) },
    ]);
    return r.ok ? { ok: true, revision: r.revisions[0] as string } : { ok: false, conflict: true };
  }

  /** Removes keys, in atomic operations of up to {@link MAX_BATCH_KEYS} keys each. */
  async delete(namespace: Namespace, keys: readonly string[]): Promise<number> {
    const unique = [...new Set(keys)];
    for (const key of unique) checkKey(key);
    await namespacePart(namespace);
    let existed = 0;
    for (let at = 0; at < unique.length; at += MAX_BATCH_KEYS) {
      const ops = unique.slice(at, at + MAX_BATCH_KEYS).map((key): BatchOp => ({ op: "delete", namespace, key }));
      const r = await this.#write(ops);
      existed += r.existed;
    }
    return existed;
  }

  async batch(ops: readonly BatchOp[]): Promise<BatchResult> {
    if (!Array.isArray(ops)) throw new EngramError("invalid_argument", "batch takes an array of operations");
    const bad = ops.findIndex((op) => op?.op !== "put" && op?.op !== "delete");
    if (bad >= 0) throw new EngramError("invalid_argument", `unknown batch op ${JSON.stringify((ops[bad] as BatchOp | undefined)?.op)}`);
    const { existed: _, ...result } = await this.#write(ops);
    return result;
  }

  /** The namespace's token: the versionstamp of the last commit that changed it (`"0"`: none). */
  async changeToken(namespace: Namespace): Promise<string> {
    const ns = await namespacePart(namespace);
    return (await guard(() => this.#kv.get(this.#tokenKey(ns)))).versionstamp ?? "0";
  }

  #fetch(namespace: Namespace) {
    return async (from: Bound, to: string | undefined, limit: number, values: boolean): Promise<RawRow[]> => {
      // A key longer than any stored one starts past them all.
      if (from.key.length > MAX_KEY_BYTES / 3 && encoder.encode(from.key).length > MAX_KEY_BYTES) return [];
      const ns = await namespacePart(namespace);
      const base = [...this.#prefix, "item", ns];
      // NUL sorts first, and no key holds one: `key + "\0"` is the first key after `key`.
      const start = [...base, from.inclusive ? from.key : `${from.key}\u0000`];
      const selector = to === undefined ? { prefix: base, start } : { start, end: [...base, to] };
      const rows: RawRow[] = [];
      for (const entry of await listAll<ItemEntry>(this.#kv, selector, { limit })) {
        const key = entry.key.at(-1) as string;
        const row = await this.#read(this.#itemKey(ns, key), key, values, entry);
        if (row) rows.push(row);
      }
      return rows;
    };
  }

  async list<V>(namespace: Namespace, options: ListOptions = {}): Promise<ListResult<V>> {
    return listRows<V>(this.#fetch(namespace), options);
  }

  async search<V>(namespace: Namespace, options: SearchOptions = {}): Promise<SearchResult<V>> {
    return searchRows<V>(this.#fetch(namespace), options);
  }

  /** Drops value parts no item names any more: those a writer replaced but did not get to drop,
   * and those staged more than `olderThanMs` (default: an hour) ago by a writer that died before
   * its commit. Returns how many values' parts were dropped. */
  async sweep(options: { olderThanMs?: number } = {}): Promise<number> {
    return this.#blobs.sweep(options.olderThanMs ?? 3_600_000);
  }
}
