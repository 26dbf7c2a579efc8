/**
 * What the Durable Object and D1 stores share about items: the value size limit and the range
 * query listings and searches walk with.
 * @module
 */
import {
  type BatchOp,
  type BatchResult,
  type Bound,
  EngramError,
  type PutOptions,
  type PutResult,
  type RawRow,
  encodeValue,
} from "engram/kit";

/** The largest value a store here keeps, in UTF-8 bytes of its JSON: a row of a Durable
 * Object's SQLite or of D1 holds at most 2 MB, key included. */
export const MAX_VALUE_BYTES = 1_900_000;

const encoder = new TextEncoder();

/** `value` as stored (JSON); a `too_large` {@link EngramError} over {@link MAX_VALUE_BYTES}. */
export function encodeSized(value: unknown, key: string): string {
  const text = encodeValue(value);
  if (text.length > MAX_VALUE_BYTES / 3 && encoder.encode(text).length > MAX_VALUE_BYTES) {
    throw new EngramError("too_large", `the value of '${key}' is over ${MAX_VALUE_BYTES} bytes as JSON (a row's limit on Cloudflare)`);
  }
  return text;
}

/** An item row as the range query returns it. */
export interface ItemRow {
  key: string;
  value?: string;
  revision: number;
  updated_at: number;
}

/** The query for up to `limit` items of `ns` from `from` to before `to`, in key order. */
export function rangeQuery(
  ns: string,
  from: Bound,
  to: string | undefined,
  limit: number,
  values: boolean,
): { query: string; args: unknown[] } {
  const query =
    `SELECT key, ${values ? "value, " : ""}revision, updated_at FROM engram_items ` +
    `WHERE ns = ? AND key ${from.inclusive ? ">=" : ">"} ?${to === undefined ? "" : " AND key < ?"} ORDER BY key LIMIT ?`;
  return { query, args: to === undefined ? [ns, from.key, limit] : [ns, from.key, to, limit] };
}

/** A row of {@link rangeQuery} as the listing helpers take it. */
export function rawRow(r: ItemRow): RawRow {
  return {
    key: r.key,
    ...(r.value !== undefined && { value: r.value }),
    revision: String(r.revision),
    updatedAt: r.updated_at,
  };
}

const BATCH_OPS = new Set(["put", "delete"]);

/** `ops` when it is an array of put and delete operations; else `invalid_argument`. */
export function checkBatch(ops: unknown): readonly BatchOp[] {
  if (!Array.isArray(ops)) throw new EngramError("invalid_argument", "batch takes an array of operations");
  const bad = ops.findIndex((op) => !BATCH_OPS.has((op as BatchOp | undefined)?.op as string));
  if (bad >= 0) throw new EngramError("invalid_argument", `unknown batch op ${JSON.stringify((ops[bad] as BatchOp | undefined)?.op)}`);
  return ops;
}

/** A `put` as the one operation of a batch, and the batch's answer as the put's. */
export const singlePut = {
  op: (namespace: BatchOp["namespace"], key: string, value: unknown, options: PutOptions): BatchOp => ({
    op: "put",
    namespace,
    key,
    value,
    ...(options.ifRevision !== undefined && { ifRevision: options.ifRevision }),
  }),
  result: (r: BatchResult): PutResult => (r.ok ? { ok: true, revision: r.revisions[0] as string } : { ok: false, conflict: true }),
};
