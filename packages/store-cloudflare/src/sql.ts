/**
 * The part of a Durable Object's storage these stores use (`ctx.storage`), typed here so the
 * package needs no Workers type package: `@cloudflare/workers-types`' `DurableObjectStorage`
 * fits. Also the error mapping and the chunking every table that holds large values shares.
 * @module
 */
import { EngramError } from "engram/kit";

/** A value SQLite hands back or takes: blobs come back as `ArrayBuffer`. */
export type SqlValue = ArrayBuffer | string | number | null;

/** The cursor `sql.exec` returns. */
export interface SqlCursor<T> extends Iterable<T> {
  toArray(): T[];
}

/** `ctx.storage.sql`. */
export interface SqlStorage {
  exec<T extends Record<string, SqlValue>>(query: string, ...bindings: unknown[]): SqlCursor<T>;
}

/** The storage of a SQLite-backed Durable Object (`ctx.storage`). */
export interface DurableObjectSqlStorage {
  readonly sql: SqlStorage;
  /** Runs `fn` in one transaction: it commits when `fn` returns and rolls back when it throws. */
  transactionSync<T>(fn: () => T): T;
}

/** A storage failure as a `store_error` {@link EngramError} (Engram errors pass through). */
export function storeError(e: unknown, source = "durable object sql"): EngramError {
  if (e instanceof EngramError) return e;
  return new EngramError("store_error", `${source}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
}

/** Runs `fn`, turning a storage failure into a `store_error` {@link EngramError}. */
export function guard<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    throw storeError(e);
  }
}

/** The rows of `query`, typed as the caller knows them (synchronous: the storage lives in the
 * Durable Object's own process). */
export function rows<T>(sql: SqlStorage, query: string, ...bindings: unknown[]): T[] {
  return sql.exec(query, ...bindings).toArray() as T[];
}

/** The first row of `query`, if any. The cursor is read to its end: a statement that writes
 * is then done whatever it returns. */
export function first<T>(sql: SqlStorage, query: string, ...bindings: unknown[]): T | undefined {
  return rows<T>(sql, query, ...bindings)[0];
}

/** A Durable Object's SQLite refuses strings and blobs over 2 MB; larger checkpoint parts are
 * kept as several rows of at most this many bytes. */
export const BLOB_PART_BYTES = 1 << 20;
/** The same for text, in UTF-16 code units (at most 3 UTF-8 bytes each: 1.5 MB). */
export const TEXT_PART_UNITS = 1 << 19;

/** `bytes` in parts of at most {@link BLOB_PART_BYTES}, each its own `ArrayBuffer` (the type
 * SQLite binds as a blob). Empty bytes are one empty part. */
export function blobParts(bytes: Uint8Array): ArrayBuffer[] {
  const out: ArrayBuffer[] = [];
  for (let at = 0; at < bytes.length || out.length === 0; at += BLOB_PART_BYTES) {
    out.push(bytes.slice(at, at + BLOB_PART_BYTES).buffer);
  }
  return out;
}

/** Joins parts read back from blob columns. */
export function joinBlobs(parts: readonly ArrayBuffer[]): Uint8Array {
  if (parts.length === 1) return new Uint8Array(parts[0] as ArrayBuffer);
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(new Uint8Array(p), at);
    at += p.byteLength;
  }
  return out;
}

/** `text` in parts of at most {@link TEXT_PART_UNITS} code units, never splitting a surrogate
 * pair (SQLite stores UTF-8, where half a pair would be lost). */
export function textParts(text: string): string[] {
  const out: string[] = [];
  let at = 0;
  do {
    let end = Math.min(at + TEXT_PART_UNITS, text.length);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    out.push(text.slice(at, end));
    at = end;
  } while (at < text.length);
  return out;
}

/** A page of `list()`: the rows asked for (`limit`, one more fetched to tell whether more
 * follow) as threads, with the cursor when more follow. */
export function threadPage(
  found: { thread_id: string; saved_at: number; interrupted: number }[],
  limit: number,
): { threads: { threadId: string; savedAt: number; interrupted: boolean }[]; cursor?: string } {
  const page = found.slice(0, limit);
  const threads = page.map((r) => ({ threadId: r.thread_id, savedAt: r.saved_at, interrupted: r.interrupted === 1 }));
  return found.length > page.length ? { threads, cursor: (page.at(-1) as { thread_id: string }).thread_id } : { threads };
}
