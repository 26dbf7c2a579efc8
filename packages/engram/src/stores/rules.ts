/**
 * The rules every {@link Store} shares, in one place: key and value validation, code point
 * order, prefix ranges, cursors, filters and the listing walk. SQL stores only supply a
 * function that fetches a batch of rows of a key range.
 * @module
 */
import { EngramError } from "../errors.js";
import type { FilterCondition, ListOptions, ListResult, Namespace, SearchOptions, SearchResult, Store, StoreItem } from "./types.js";
import { MAX_KEY_BYTES, validateNamespace } from "./types.js";

const encoder = new TextEncoder();
const LONE_SURROGATE = /\p{Cs}/u;

function invalid(message: string): EngramError {
  return new EngramError("invalid_argument", message);
}

/** Throws an `invalid_argument` {@link EngramError} unless `text` may be part of a key: a
 * well-formed string without NUL, at most {@link MAX_KEY_BYTES} UTF-8 bytes (when `limitLength`:
 * a longer prefix is valid, it just matches nothing). */
export function checkKeyText(text: unknown, what: string, allowEmpty: boolean, limitLength = true): string {
  if (typeof text !== "string") throw invalid(`${what} must be a string, got ${typeof text}`);
  if (!allowEmpty && text.length === 0) throw invalid(`${what} must not be empty`);
  if (text.includes("\u0000")) throw invalid(`${what} must not contain NUL`);
  if (LONE_SURROGATE.test(text)) throw invalid(`${what} must be well-formed Unicode (no lone surrogates)`);
  if (limitLength && text.length > MAX_KEY_BYTES / 3 && encoder.encode(text).length > MAX_KEY_BYTES) {
    throw invalid(`${what} is longer than ${MAX_KEY_BYTES} UTF-8 bytes`);
  }
  return text;
}

/** Validates a key: a non-empty, well-formed string of at most `MAX_KEY_BYTES` UTF-8 bytes without NUL. */
export function checkKey(key: unknown): string {
  return checkKeyText(key, "a store key", false);
}

/** The namespace as one string (components joined by `/`, which components cannot contain). */
export function namespaceId(namespace: Namespace): string {
  return validateNamespace(namespace).join("/");
}

/** The inverse of {@link namespaceId}. */
export function namespaceFromId(id: string): Namespace {
  return id.split("/");
}

/** The JSON text of a value; throws `invalid_argument` for what JSON cannot hold. */
export function encodeValue(value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (e) {
    throw invalid(`a store value must be JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (text === undefined) throw invalid(`a store value must be JSON, got ${typeof value}`);
  return text;
}

/**
 * A stored value that is not JSON (another program wrote the table, a damaged disk): a
 * `store_error` that names the key, with the row's revision and raw text so a caller can
 * quarantine it (move the text aside, replace the row by compare-and-swap). Recognise it with
 * {@link isDamagedValue}, which also holds for an error from another copy of the package.
 */
export class DamagedValueError extends EngramError {
  override readonly name: string = "DamagedValueError";
  constructor(
    /** The key whose value is damaged. */
    readonly damagedKey: string,
    /** The damaged row's revision. */
    readonly revision: string,
    /** The stored text, as it is. */
    readonly raw: string,
    cause: unknown,
  ) {
    super(
      "store_error",
      `the stored value of key ${JSON.stringify(damagedKey)} is damaged (not JSON: ${cause instanceof Error ? cause.message : String(cause)})`,
      {
        cause,
      },
    );
  }
}

/** Whether `e` is a {@link DamagedValueError} (by its fields: any copy of the package). */
export function isDamagedValue(e: unknown): e is DamagedValueError {
  const d = e as DamagedValueError;
  return (
    EngramError.hasCode(e, "store_error") && typeof d.damagedKey === "string" && typeof d.revision === "string" && typeof d.raw === "string"
  );
}

/** A stored value's JSON text decoded; a {@link DamagedValueError} when it is not JSON. */
export function decodeValue(text: string, key: string, revision: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new DamagedValueError(key, revision, text, e);
  }
}

/**
 * A listing in which a damaged item ({@link DamagedValueError}) costs only itself: when the
 * listing with values meets one, the keys are listed without values and each item is read on
 * its own. The damaged keys are reported, not returned as items.
 */
export async function listReadable<V>(
  store: Store,
  namespace: Namespace,
  options: ListOptions = {},
): Promise<ListResult<V> & { damaged: string[] }> {
  try {
    return { ...(await store.list<V>(namespace, options)), damaged: [] };
  } catch (e) {
    if (!isDamagedValue(e) || options.values === false) throw e;
  }
  const keys = await store.list<V>(namespace, { ...options, values: false });
  const damaged: string[] = [];
  const items: StoreItem<V>[] = [];
  for (const listed of keys.items) {
    try {
      const item = await store.get<V>(namespace, listed.key);
      if (item) items.push(item);
    } catch (e) {
      if (!isDamagedValue(e)) throw e;
      damaged.push(listed.key);
    }
  }
  return { ...keys, items, damaged };
}

/** Compares by Unicode code point (UTF-8 byte order), not by UTF-16 code unit. */
export function compareKeys(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates (astral code points) sort after U+E000..U+FFFF.
    if (x >= 0xd800 && y >= 0xd800) return (x < 0xe000 ? x + 0x2000 : x - 0x800) - (y < 0xe000 ? y + 0x2000 : y - 0x800);
    return x - y;
  }
  return a.length - b.length;
}

/** The smallest string greater (by code point) than every string starting with `prefix`;
 * `undefined` when there is none (empty, or only U+10FFFF). */
export function prefixEnd(prefix: string): string | undefined {
  const cps = Array.from(prefix);
  while (cps.length > 0) {
    const cp = (cps.pop() as string).codePointAt(0) as number;
    if (cp === 0x10ffff) continue;
    const next = cp === 0xd7ff ? 0xe000 : cp + 1;
    return cps.join("") + String.fromCodePoint(next);
  }
  return undefined;
}

/** Where a listing resumes: at `key` (inclusive) or just after it. */
export interface Bound {
  key: string;
  inclusive: boolean;
}

function encodeCursor(bound: Bound): string {
  return `${bound.inclusive ? "f" : "a"}:${bound.key}`;
}

function decodeCursor(cursor: unknown): Bound {
  if (typeof cursor !== "string" || !/^[fa]:/.test(cursor)) throw invalid(`invalid cursor ${JSON.stringify(cursor)}`);
  return { key: checkKeyText(cursor.slice(2), "a cursor", true, false), inclusive: cursor[0] === "f" };
}

function checkLimit(limit: unknown): number {
  if (limit === undefined) return Number.POSITIVE_INFINITY;
  if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1)
    throw invalid(`limit must be a positive integer, got ${String(limit)}`);
  return limit;
}

/** A row as a store fetched it: the value still encoded (only rows that are returned get
 * decoded). */
export interface RawRow {
  key: string;
  /** JSON text; absent when values were not requested. */
  value?: string;
  revision: string;
  updatedAt: number;
}

/** Fetches up to `limit` rows with `from <= key < to` (code point order), sorted by key. */
export type FetchRows = (from: Bound, to: string | undefined, limit: number, values: boolean) => Promise<RawRow[]> | RawRow[];

/** The key range of a prefix, narrowed by a cursor. */
function range(prefix: string, cursor: string | undefined): { from: Bound; to: string | undefined } {
  let from: Bound = { key: prefix, inclusive: true };
  if (cursor !== undefined) {
    const c = decodeCursor(cursor);
    const cmp = compareKeys(c.key, from.key);
    if (cmp > 0 || (cmp === 0 && !c.inclusive)) from = c;
  }
  return { from, to: prefixEnd(prefix) };
}

function toItem<V>(row: RawRow, values: boolean): StoreItem<V> {
  return {
    key: row.key,
    value: (values && row.value !== undefined ? decodeValue(row.value, row.key, row.revision) : undefined) as V,
    revision: row.revision,
    updatedAt: row.updatedAt,
  };
}

/** Batch size of a walk: the page plus one (to know whether more follow), within bounds. */
function batchSize(limit: number): number {
  return Math.min(Math.max(limit + 1, 16), 512);
}

/**
 * A listing with the rules of {@link ListOptions}: a range walk that reports each delimiter
 * group once and jumps past it, so the work is proportional to the result, not the namespace.
 * With a delimiter the walk reads keys only (a group's row is never returned, and values can be
 * large); the values of the items it keeps are then read one range per run of items.
 */
export async function listRows<V>(fetch: FetchRows, options: ListOptions = {}): Promise<ListResult<V>> {
  const prefix = checkKeyText(options.prefix ?? "", "prefix", true, false);
  const delimiter = options.delimiter === undefined ? undefined : checkKeyText(options.delimiter, "delimiter", false, false);
  const values = options.values ?? true;
  const limit = checkLimit(options.limit);
  const walkValues = values && delimiter === undefined;
  const result: ListResult<V> = { items: [], prefixes: [] };
  // Runs of consecutive items (no group between them), as [first, end) indices into the items.
  const runs: [number, number][] = [];
  let runStart = 0;
  let { from, to } = range(prefix, options.cursor);
  const maxSize = batchSize(limit);
  // Without a delimiter every fetched row is part of the answer. With one, a batch could be
  // mostly rows of a group that is reported once, so batches start at one row after each jump
  // and double while rows keep being answers: the work stays proportional to the result.
  let size = delimiter === undefined ? maxSize : 1;
  walk: for (;;) {
    if (to !== undefined && compareKeys(from.key, to) >= 0) break;
    const rows = await fetch(from, to, size, walkValues);
    let jumped = false;
    for (const row of rows) {
      if (result.items.length + result.prefixes.length >= limit) {
        result.cursor = encodeCursor(from);
        break walk;
      }
      const cut = delimiter === undefined ? -1 : row.key.indexOf(delimiter, prefix.length);
      if (cut >= 0) {
        const group = row.key.slice(0, cut + (delimiter as string).length);
        result.prefixes.push(group);
        if (result.items.length > runStart) runs.push([runStart, result.items.length]);
        runStart = result.items.length;
        const end = prefixEnd(group);
        if (end === undefined) break walk;
        from = { key: end, inclusive: true };
        jumped = true;
        break;
      }
      result.items.push(toItem<V>(row, walkValues));
      from = { key: row.key, inclusive: false };
    }
    if (jumped) {
      size = 1;
      continue;
    }
    if (rows.length < size) break;
    size = Math.min(size * 2, maxSize);
  }
  if (result.items.length > runStart) runs.push([runStart, result.items.length]);
  if (values && !walkValues) await readValues(fetch, result.items, runs, to);
  return result;
}

/** Reads the values of `items` (listed without them), one range per run of consecutive items.
 * An item changed meanwhile gets its new value and revision; one deleted meanwhile is dropped. */
async function readValues<V>(fetch: FetchRows, items: StoreItem<V>[], runs: [number, number][], to: string | undefined): Promise<void> {
  const gone = new Set<StoreItem<V>>();
  for (const [first, end] of runs) {
    const rows = await fetch({ key: (items[first] as StoreItem<V>).key, inclusive: true }, to, end - first, true);
    const byKey = new Map(rows.map((r) => [r.key, r]));
    for (let i = first; i < end; i++) {
      const item = items[i] as StoreItem<V>;
      // A row inserted inside the run meanwhile can push one of ours past the range: alone.
      const row = byKey.get(item.key) ?? (await fetch({ key: item.key, inclusive: true }, to, 1, true)).find((r) => r.key === item.key);
      if (row === undefined) gone.add(item);
      else Object.assign(item, toItem<V>(row, true));
    }
  }
  if (gone.size > 0) {
    const kept = items.filter((i) => !gone.has(i));
    items.splice(0, items.length, ...kept);
  }
}

/** A search: the range walk of {@link listRows} with {@link matchesFilter} on each value. */
export async function searchRows<V>(fetch: FetchRows, options: SearchOptions = {}): Promise<SearchResult<V>> {
  const prefix = checkKeyText(options.prefix ?? "", "prefix", true, false);
  const limit = checkLimit(options.limit);
  const filter = options.filter ?? {};
  checkFilter(filter);
  const result: SearchResult<V> = { items: [] };
  let { from, to } = range(prefix, options.cursor);
  const size = batchSize(limit);
  for (;;) {
    if (to !== undefined && compareKeys(from.key, to) >= 0) return result;
    const rows = await fetch(from, to, size, true);
    for (const row of rows) {
      const item = toItem<V>(row, true);
      if (!matchesFilter(item.value, filter)) {
        from = { key: row.key, inclusive: false };
        continue;
      }
      if (result.items.length >= limit) {
        result.cursor = encodeCursor(from);
        return result;
      }
      result.items.push(item);
      from = { key: row.key, inclusive: false };
    }
    if (rows.length < size) return result;
  }
}

const OPERATORS = new Set(["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$exists"]);

function isOperatorObject(c: unknown): c is Record<string, unknown> {
  if (typeof c !== "object" || c === null || Array.isArray(c)) return false;
  const keys = Object.keys(c);
  return keys.length > 0 && keys.every((k) => k.startsWith("$"));
}

/** Throws `invalid_argument` for a filter with an unknown operator or a malformed operand. */
export function checkFilter(filter: unknown): void {
  if (typeof filter !== "object" || filter === null || Array.isArray(filter)) throw invalid("a filter is an object of field → condition");
  for (const [field, cond] of Object.entries(filter)) {
    if (field === "") throw invalid("a filter field must not be empty");
    if (!isOperatorObject(cond)) continue;
    for (const [op, operand] of Object.entries(cond)) {
      if (!OPERATORS.has(op)) throw invalid(`unknown filter operator ${op} on ${JSON.stringify(field)}`);
      if ((op === "$in" || op === "$nin") && !Array.isArray(operand)) throw invalid(`${op} needs an array`);
      if (op === "$exists" && typeof operand !== "boolean") throw invalid("$exists needs a boolean");
      if (["$gt", "$gte", "$lt", "$lte"].includes(op) && typeof operand !== "number" && typeof operand !== "string") {
        throw invalid(`${op} needs a number or a string`);
      }
    }
  }
}

const MISSING = Symbol("missing");

function fieldOf(value: unknown, path: string): unknown {
  let v: unknown = value;
  for (const part of path.split(".")) {
    if (typeof v !== "object" || v === null || Array.isArray(v) || !Object.hasOwn(v, part)) return MISSING;
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => deepEqual(x, bb[i]));
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return (
    ka.length === kb.length &&
    ka.every((k) => Object.hasOwn(b, k) && deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
  );
}

function compareOrdered(a: unknown, b: number | string): number | undefined {
  if (typeof a === "number" && typeof b === "number") return a - b;
  if (typeof a === "string" && typeof b === "string") return compareKeys(a, b);
  return undefined;
}

function holds(v: unknown, cond: FilterCondition): boolean {
  if (!isOperatorObject(cond)) return v !== MISSING && deepEqual(v, cond);
  for (const [op, operand] of Object.entries(cond)) {
    let ok: boolean;
    switch (op) {
      case "$eq":
        ok = v !== MISSING && deepEqual(v, operand);
        break;
      case "$ne":
        ok = v === MISSING || !deepEqual(v, operand);
        break;
      case "$in":
        ok = v !== MISSING && (operand as unknown[]).some((x) => deepEqual(v, x));
        break;
      case "$nin":
        ok = v === MISSING || !(operand as unknown[]).some((x) => deepEqual(v, x));
        break;
      case "$exists":
        ok = (v !== MISSING) === operand;
        break;
      default: {
        const c = compareOrdered(v, operand as number | string);
        ok = c !== undefined && (op === "$gt" ? c > 0 : op === "$gte" ? c >= 0 : op === "$lt" ? c < 0 : c <= 0);
      }
    }
    if (!ok) return false;
  }
  return true;
}

/** Whether a value satisfies every condition of a filter (see {@link SearchOptions.filter}). */
export function matchesFilter(value: unknown, filter: Record<string, FilterCondition>): boolean {
  for (const [field, cond] of Object.entries(filter)) if (!holds(fieldOf(value, field), cond)) return false;
  return true;
}
