/**
 * Using Deno KV: opening it, the key prefix, reads and commits tried again while another process
 * writes the file, and the error mapping.
 * @module
 */
import { EngramError } from "engram/kit";
import type { DenoKv, KvAtomicOperation, KvKey, KvListSelector } from "./deno-kv.js";

/** A Deno KV failure as a `store_error` {@link EngramError} (Engram errors pass through). */
export function storeError(e: unknown): EngramError {
  if (e instanceof EngramError) return e;
  return new EngramError("store_error", `deno kv: ${messageOf(e)}`, { cause: e });
}

/** What Deno's local database answers while another process writes the same file: the operation
 * did nothing and may be tried again. */
const BUSY = /database is locked|database table is locked/i;
/** Tries of an operation the database found busy, and the most one pause between them lasts. */
const BUSY_TRIES = 60;
const BUSY_PAUSE_MS = 50;

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Runs `fn` — tried again while another process holds the database file — turning a Deno KV
 * failure into a `store_error` {@link EngramError}. */
export async function guard<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (e) {
      if (attempt < BUSY_TRIES && !(e instanceof EngramError) && BUSY.test(messageOf(e))) {
        await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(2 ** attempt, BUSY_PAUSE_MS)));
        continue;
      }
      throw storeError(e);
    }
  }
}

/** Commits `op` (see {@link guard}); an operation over Deno KV's limits is a `too_large`
 * {@link EngramError}. */
export async function commit(op: KvAtomicOperation): Promise<{ ok: true; versionstamp: string } | { ok: false }> {
  try {
    return await guard(() => op.commit());
  } catch (e) {
    const message = messageOf((e as Error).cause ?? e);
    if (/too large|too many/i.test(message)) {
      throw new EngramError("too_large", `the write is over a limit of one Deno KV atomic operation: ${message}`, { cause: e });
    }
    throw e;
  }
}

/** The entries of a range, read whole (and read again whole while the database is busy). */
export function listAll<T>(
  kv: DenoKv,
  selector: KvListSelector,
  options: { limit?: number } = {},
): Promise<{ key: readonly unknown[]; value: T; versionstamp: string }[]> {
  return guard(async () => {
    const out: { key: readonly unknown[]; value: T; versionstamp: string }[] = [];
    for await (const entry of kv.list<T>(selector, options)) out.push(entry);
    return out;
  });
}

/** `kv` when it has the methods of a Deno KV database; else `invalid_argument`. */
export function checkKv(kv: unknown): DenoKv {
  const k = kv as Partial<DenoKv> | null;
  if (typeof k?.get !== "function" || typeof k.getMany !== "function" || typeof k.list !== "function" || typeof k.atomic !== "function") {
    throw new EngramError("invalid_argument", "pass a Deno KV database (await Deno.openKv(path))");
  }
  return k as DenoKv;
}

/** The longest key prefix, in UTF-8 bytes: item keys (a 1024-byte store key after a namespace of
 * up to 512 bytes) must stay within Deno KV's 2 KiB. */
export const MAX_PREFIX_BYTES = 256;

/** Options every store here takes. */
export interface KvStoreOptions {
  /** The key parts every key of this store starts with, so Engram can share a database with an
   * app's own keys. Default: `["engram"]`. */
  prefix?: readonly string[];
}

/** The validated key prefix of `options`. */
export function keyPrefix(options: KvStoreOptions): KvKey {
  const prefix = options.prefix ?? ["engram"];
  if (!Array.isArray(prefix) || prefix.some((p) => typeof p !== "string")) {
    throw new EngramError("invalid_argument", "prefix must be an array of strings");
  }
  if (new TextEncoder().encode(prefix.join("")).length + 2 * prefix.length > MAX_PREFIX_BYTES) {
    throw new EngramError("invalid_argument", `prefix is longer than ${MAX_PREFIX_BYTES} bytes (keys must fit Deno KV's 2 KiB)`);
  }
  return [...prefix];
}

/** `Deno.openKv(path)` of the running Deno, typed as {@link DenoKv}: an `invalid_config`
 * {@link EngramError} outside Deno or where KV is not enabled (`--unstable-kv`). */
export async function openKv(path?: string): Promise<DenoKv & { close(): void }> {
  const deno = (globalThis as { Deno?: { openKv?: (path?: string) => Promise<DenoKv & { close(): void }> } }).Deno;
  if (typeof deno?.openKv !== "function") {
    throw new EngramError(
      "invalid_config",
      deno === undefined ? "Deno KV needs the Deno runtime" : "Deno KV is not enabled: run deno with --unstable-kv",
    );
  }
  const open = deno.openKv.bind(deno);
  return guard(() => (path === undefined ? open() : open(path)));
}
