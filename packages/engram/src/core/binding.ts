/**
 * Adapts a raw binding (native or WASM: both export the same classes and functions, with typed
 * arguments and results, errors as data) to the typed {@link Core} API. One code path for both
 * cores.
 * @module
 */
import type * as Native from "@engram/native";
import type * as Wasm from "@engram/wasm";
import { EngramError } from "../errors.js";
import { cutAt } from "./text.js";
import type {
  Core,
  CoreFanOut,
  CoreFileTable,
  CoreKind,
  CoreRouter,
  EditOptions,
  EditResult,
  ErrorData,
  FanGlobResult,
  FileInfo,
  FileTableMark,
  GlobAsk,
  GlobOptions,
  GlobResult,
  GrepMatch,
  GrepMergeOptions,
  GrepOptions,
  GrepResult,
  GrepSkip,
  LsResult,
  MemorySourceInput,
  MountPart,
  ReadOptions,
  ReadResult,
  Redaction,
  Result,
  Route,
  WriteOptions,
} from "./types.js";

/** @internal The calls declared once in the `engram_abi::calls!` table
 * (`bindings/abi/src/calls.rs`): their argument and result types are each binding's generated
 * declarations (napi-rs's `index.d.ts`, wasm-bindgen's `.d.ts`), never written here. A call
 * through this union type-checks against both. */
export type DeclaredCall =
  | "formatNumbered"
  | "estimateTokens"
  | "estimateTokensEach"
  | "rankBm25"
  | "neutralizeSectionTags"
  | "escapeTags"
  | "escapeField"
  | "skillsSection"
  | "factsBlock"
  | "relevanceScores"
  | "formatGrep"
  | "formatLs"
  | "formatGlob"
  | "formatRead"
  | "capOutput"
  | "redactSecrets"
  | "normalizePath"
  | "filterPaths"
  | "errorData"
  | "applyFileDeltas"
  | "memorySection"
  | "mountError"
  | "mergeGrep"
  | "mergeGlob"
  | "mergeLs"
  | "mountsUnder"
  | "lsTable"
  | "globAsks"
  | "globFanOut"
  | "grepFanOut"
  | "routeInto"
  | "createRouter"
  | "FileTable"
  | "GrepArgs";

/** @internal What each binding exports of {@link DeclaredCall}. */
export type DeclaredCalls = Pick<typeof Native, DeclaredCall> | Pick<typeof Wasm, DeclaredCall>;

/** @internal What `@engram/native` and `@engram/wasm` both export: the declared calls, typed by
 * the generated declarations, and the calls not in the table, typed here (plain objects from
 * napi-rs, getter objects from wasm-bindgen, read field by field); each binding's generated
 * `.d.ts` must stay assignable to this type, which `tsc` checks (node-access.ts, loader.ts). */
export type RawBinding = DeclaredCalls & UndeclaredCalls;

/** @internal A class instance a binding made, handed back to that binding: typed as both
 * bindings' class, so that a declared call taking it type-checks against both declarations (a
 * core wraps one binding, and only ever hands it its own instances). */
type Made<K extends "Router" | "FileTable" | "GrepArgs"> = (typeof Native)[K]["prototype"] & (typeof Wasm)[K]["prototype"];

/** An instance of a class of either binding, whose declared methods are called (a call on it
 * type-checks against both declarations). */
type Instance<K extends "Router" | "GlobFanOut" | "GrepFanOut"> = (typeof Native)[K]["prototype"] | (typeof Wasm)[K]["prototype"];

/** Releases a wasm-bindgen result object's WebAssembly memory now (a native result holds none). */
function release(value: object): void {
  (value as { free?: () => void }).free?.();
}

/** @internal The calls not in the `engram_abi::calls!` table: `restoreFileTable` takes its bytes
 * as each binding keeps them at one copy (native: into buffers it reuses; WASM: its own memory). */
export interface UndeclaredCalls {
  /** A table rebuilt from `snapshot()` bytes, or why they are not one. */
  restoreFileTable(bytes: Uint8Array): RawFileTable | RawFailure;
}

type Opt<T> = T | null | undefined;

/** @internal An error as the bindings return it (subject and detail: see {@link ErrorData}). */
export interface RawError {
  readonly code: string;
  readonly message: string;
  readonly subject?: Opt<string>;
  readonly detail?: Opt<string>;
}

/** Files in columns (`engram_core::api::FileColumns`): the paths joined by NUL, in chunks
 * (a path is never cut); size, modification time and version as numbers. */
interface RawFiles extends RawOut {
  readonly paths?: Opt<string[]>;
  readonly sizes?: Opt<ArrayLike<number>>;
  readonly modified?: Opt<ArrayLike<number>>;
  readonly versions?: Opt<ArrayLike<number>>;
  readonly truncated?: Opt<boolean>;
}

interface RawFanGlob extends RawFiles {
  readonly mounts?: Opt<ArrayLike<number>>;
}

/** A composite merge's answer (the `merged` kind: see `engram_core::composite::Merged`). */
interface RawMerged extends RawOut {
  readonly truncated?: Opt<boolean>;
  readonly paths?: Opt<string[]>;
  readonly sizes?: Opt<ArrayLike<number>>;
  readonly picks?: Opt<ArrayLike<number>>;
  readonly renamed?: Opt<string[]>;
}

/** How many files a `writeMany` wrote, or `error`. */
type RawSeeded = RawOut & { readonly written?: Opt<number> };

/** What a call that makes one thing (a router, a table, a snapshot, a column) returns instead
 * of it: `T | Failure`. */
interface RawFailure {
  readonly error: RawError;
  free?(): void;
}

/** Every typed result: its fields, or `error`. */
interface RawOut {
  readonly error?: Opt<RawError>;
  /** wasm-bindgen result objects: releases the object's WebAssembly memory. */
  free?(): void;
}

/** A directory's entries, or `error`. */
type RawEntries = RawOut & { readonly entries?: Opt<RawInfo[]> };

/** @internal */
export interface RawInfo {
  readonly path: string;
  readonly isDir: boolean;
  readonly size?: Opt<number>;
  readonly modifiedAt?: Opt<number>;
  readonly version?: Opt<string>;
  /** wasm-bindgen entries: releases the entry's WebAssembly memory. */
  free?(): void;
}

/** @internal Grep results in columns (see `engram_core::api::GrepColumns`). */
export interface RawGrep extends RawOut {
  readonly truncated?: Opt<boolean>;
  readonly groupPaths?: Opt<string[]>;
  readonly groupSizes?: Opt<ArrayLike<number>>;
  readonly lines?: Opt<ArrayLike<number>>;
  readonly texts?: Opt<string[]>;
  readonly files?: Opt<string[]>;
  readonly countPaths?: Opt<string[]>;
  readonly counts?: Opt<ArrayLike<number>>;
}

/** Where a path routes, or `error`. */
type RawRoute = RawOut & {
  readonly route?: Opt<number>;
  readonly prefix?: Opt<string>;
  readonly path?: Opt<string>;
  readonly outer?: Opt<string>;
};

/** @internal The file table's methods declared in the `engram_abi::calls!` table: typed by the
 * generated declarations of each binding's `FileTable` class, as {@link DeclaredCall}. */
export type DeclaredMethod =
  | "read"
  | "stat"
  | "edit"
  | "append"
  | "delete"
  | "ls"
  | "grep"
  | "glob"
  | "readBytes"
  | "deltaSince"
  | "snapshot"
  | "grepText"
  | "globText"
  | "lsText"
  | "readText"
  | "takeError";

/** A binding's file table: the declared methods (a method of one binding's class, never mixed),
 * and the rest typed here. The calls an agent makes most (`read`, `stat`, `edit`, `append`,
 * `write`) return one string (the content or the normalised path) and write their numbers
 * into `meta` (a Float64Array of 4, NaN = absent): no result object crosses. `null`/`undefined`
 * = failed; `takeError()` then gives the error. */
type RawFileTable = (Pick<Native.FileTable, DeclaredMethod> | Pick<Wasm.FileTable, DeclaredMethod>) & UndeclaredMethods;

/** The file table's methods not in the `engram_abi::calls!` table: `write` and `writeText` take
 * their content as each binding reads it at no extra copy (native: a borrowed typed array or
 * a string it transcodes itself; WASM: a vector in its own memory), the batch writes differ
 * per binding, and `clear` releases different things. */
interface UndeclaredMethods {
  readonly size: number;
  readonly changes: number;
  readonly lastVersion: number;
  write(path: string, data: Uint8Array, modifiedAt: number, ifVersion: string | null | undefined, meta: Float64Array): Opt<string>;
  writeText(path: string, text: string, modifiedAt: number, ifVersion: string | null | undefined, meta: Float64Array): Opt<string>;
  /** Native: NUL-joined paths and one content per file, each converted once straight into the
   * buffers the batch's files share; `room`: the bytes to make room for at first (UTF-16 units). */
  writeMany?(
    paths: string,
    contents: (string | Uint8Array)[],
    room: number,
    modifiedAt: number,
    modifiedEach?: Float64Array | null,
  ): RawSeeded;
  /** WASM: room for a batch's contents in WebAssembly memory (where it starts; none when memory
   * cannot hold it: `takeError()`), … */
  stage?(bytes: number): Opt<number>;
  /** … then the batch over the contents encoded there, one byte length per file. */
  writeManyStaged?(paths: string, lengths: Uint32Array, modifiedAt: number, modifiedEach?: Float64Array | null): RawSeeded;
  /** WASM: the linear memory `stage` points into. */
  memory?(): { readonly buffer: ArrayBufferLike };
  clear(): void;
  free?(): void;
}

const U32_MAX = 0xffff_ffff;

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : typeof value;
}

/** @internal The one check at the binding boundary: `value` must be a string, or an
 * {@link EngramError} `invalid_argument` is thrown (never a raw napi/wasm conversion message). */
export function requireString(value: unknown, what: string): string {
  if (typeof value !== "string") {
    throw new EngramError("invalid_argument", `${what} must be a string, got ${describe(value)}`);
  }
  return value;
}

function requireNumber(value: unknown, what: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || Number.isNaN(value)) {
    throw new EngramError("invalid_argument", `${what} must be a number, got ${describe(value)}`);
  }
  return value;
}

function requireObject<T extends object>(value: unknown, what: string): T {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new EngramError("invalid_argument", `${what} must be an object, got ${describe(value)}`);
  }
  return value as T;
}

function requireArray<T>(value: unknown, what: string): T[] {
  if (!Array.isArray(value)) throw new EngramError("invalid_argument", `${what} must be an array, got ${describe(value)}`);
  return value as T[];
}

/** The paths of listed entries (`{ path }` objects), each checked to be a string. */
function pathsOf(value: unknown, what: string): string[] {
  return requireArray<{ path?: unknown }>(value, what).map((e, i) =>
    requireString(requireObject<{ path?: unknown }>(e, `${what}[${i}]`).path, `${what}[${i}].path`),
  );
}

function requireStrings(value: unknown, what: string): string[] {
  if (!Array.isArray(value)) throw new EngramError("invalid_argument", `${what} must be an array of strings, got ${describe(value)}`);
  for (const [i, v] of value.entries()) requireString(v, `${what}[${i}]`);
  return value as string[];
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** @internal `String.prototype.isWellFormed` (ES2024), with a fallback for older runtimes. */
export function isWellFormed(text: string): boolean {
  const native = (text as unknown as { isWellFormed?: () => boolean }).isWellFormed;
  return native ? native.call(text) : !new RegExp(LONE_SURROGATE.source).test(text);
}

/** How many NUL characters `text` holds. */
function countNul(text: string): number {
  let n = 0;
  for (let at = text.indexOf("\0"); at !== -1; at = text.indexOf("\0", at + 1)) n++;
  return n;
}

function shown(text: string): string {
  return cutAt(text.replace(LONE_SURROGATE, "\uFFFD"), 200);
}

/** @internal A path crossing into the core: a non-string throws `invalid_argument`; a string
 * that is not well-formed UTF-16 (a lone surrogate, which the binding would turn into U+FFFD so
 * that two different names collide) is the `invalid_path` error returned as data. */
export function checkPath(value: unknown, what = "path"): ErrorData | undefined {
  const path = requireString(value, what);
  if (isWellFormed(path)) return undefined;
  return { code: "invalid_path", message: `Invalid path '${shown(path)}': not well-formed Unicode (a lone surrogate)` };
}

/** @internal Clamps a line index or count to what the core accepts: a non-negative 32-bit
 * integer. */
export function toIndex(n: number | undefined): number | undefined {
  if (n === undefined) return undefined;
  if (!Number.isFinite(n)) return n > 0 ? U32_MAX : 0;
  return Math.min(U32_MAX, Math.max(0, Math.floor(n)));
}

/** The `{ error }` of a typed result, as a plain object (the code is one of the core's pinned
 * codes), and the wasm-bindgen object released. */
function failed(r: RawOut): { error: ErrorData } {
  const error = errorOf(r.error as RawError);
  r.free?.();
  return { error };
}

/** @internal A binding's error as plain {@link ErrorData}, with its structure when it has one. */
export function errorOf(e: RawError): ErrorData {
  const error: ErrorData = { code: e.code as ErrorData["code"], message: e.message };
  const { subject, detail } = e;
  if (subject != null) error.subject = subject;
  if (detail != null) error.detail = detail;
  return error;
}

/** @internal */
export function fileInfo(i: RawInfo): FileInfo {
  const out: FileInfo = { path: i.path, isDir: i.isDir };
  if (i.size != null) out.size = i.size;
  if (i.modifiedAt != null) out.modifiedAt = i.modifiedAt;
  if (i.version != null) out.version = i.version;
  return out;
}

/** A listing's entries as plain objects, each WebAssembly entry released once copied: left to
 * the binding's FinalizationRegistry, they would pile up (with the JS values they hold) until
 * the event loop next runs a task, which a loop of awaited calls never lets it do. */
function entriesOf(raw: RawInfo[]): FileInfo[] {
  const entries = new Array<FileInfo>(raw.length);
  for (let i = 0; i < raw.length; i++) {
    const r = raw[i] as RawInfo;
    entries[i] = fileInfo(r);
    r.free?.();
  }
  return entries;
}

/** Files from columns ({@link RawFiles}); each is a file, never a directory. */
function decodeFiles(r: RawFiles, versionOf?: (tableVersion: number) => string): FileInfo[] {
  const sizes = r.sizes as ArrayLike<number>;
  const modified = r.modified as ArrayLike<number>;
  const versions = r.versions as ArrayLike<number>;
  const chunks = r.paths as string[];
  const files: FileInfo[] = new Array(sizes.length);
  let i = 0;
  for (const joined of chunks) {
    for (let from = 0; from <= joined.length; i++) {
      const nul = joined.indexOf("\0", from);
      const end = nul < 0 ? joined.length : nul;
      const path = joined.slice(from, end);
      from = end + 1;
      // Whole in one literal: adding the fields one by one moved each object through three
      // shapes and grew its property storage (5,000 files: ~40 µs and 80 KB more).
      // A template, not `String(n)`: V8 inlines the number-to-string conversion (5,000
      // versions: 26 -> 12 µs).
      const version = versionOf ? versionOf(versions[i] as number) : `${versions[i] as number}`;
      files[i] = { path, isDir: false, size: sizes[i] as number, modifiedAt: modified[i] as number, version };
    }
  }
  return files;
}

/** @internal Decodes grep results: content matches arrive in columns grouped by file
 * (`groupPaths[i]` owns the next `groupSizes[i]` lines and texts; a negative line is context). */
export function decodeGrep(r: RawGrep): Result<GrepResult> {
  if (r.error) return failed(r);
  const truncated = r.truncated ?? false;
  const files = r.files;
  const countPaths = r.countPaths;
  const groupPaths = r.groupPaths;
  let out: GrepResult;
  if (groupPaths) {
    const sizes = r.groupSizes as ArrayLike<number>;
    const lines = r.lines as ArrayLike<number>;
    const texts = r.texts as string[];
    const matches: NonNullable<GrepResult["matches"]> = new Array(texts.length);
    let k = 0;
    for (let g = 0; g < groupPaths.length; g++) {
      const path = groupPaths[g] as string;
      for (let end = k + (sizes[g] as number); k < end; k++) {
        const line = lines[k] as number;
        const text = texts[k] as string;
        matches[k] = line < 0 ? { path, line: -line, text, context: true } : { path, line, text };
      }
    }
    out = { matches, truncated };
  } else if (countPaths) {
    const n = r.counts as ArrayLike<number>;
    const counts: Record<string, number> = {};
    for (let i = 0; i < countPaths.length; i++) counts[countPaths[i] as string] = n[i] as number;
    out = { counts, truncated };
  } else {
    out = { files: files ?? [], truncated };
  }
  r.free?.();
  return out;
}

/** The native core hands out Node Buffers; present the same plain Uint8Array as WASM does. */
function plainBytes(bytes: Uint8Array): Uint8Array {
  return bytes.constructor === Uint8Array ? bytes : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** What a call made, or its failure thrown as an {@link EngramError}. */
function madeOrThrow<T extends object>(made: T): Exclude<T, RawFailure> {
  if (!("error" in made)) return made as Exclude<T, RawFailure>;
  const error = errorOf(made.error as RawError);
  release(made);
  throw EngramError.fromCore(error);
}

function checkContent(content: unknown): void {
  if (typeof content !== "string" && !(content instanceof Uint8Array)) {
    throw new EngramError("invalid_argument", `content must be a string or a Uint8Array, got ${describe(content)}`);
  }
}

/** @internal Options of grep and glob: an object with a string pattern; a lone surrogate in the pattern
 * is `invalid_pattern`, in the path `invalid_path`. */
export function checkSearch(options: unknown): ErrorData | undefined {
  const o = requireObject<{ pattern?: unknown; path?: unknown; glob?: unknown }>(options, "options");
  const pattern = requireString(o.pattern, "options.pattern");
  if (o.glob !== undefined) requireString(o.glob, "options.glob");
  for (const p of [pattern, o.glob as string | undefined]) {
    if (p !== undefined && !isWellFormed(p)) {
      return { code: "invalid_pattern", message: `Invalid pattern '${shown(p)}': not well-formed Unicode (a lone surrogate)` };
    }
  }
  return o.path === undefined ? undefined : checkPath(o.path, "options.path");
}

/** @internal Options of grep (see {@link checkSearch}), with the numbers, flags and mode type-checked. */
export function checkGrep(o: GrepOptions): ErrorData | undefined {
  const bad = checkSearch(o);
  if (bad) return bad;
  requireNumber(o.maxCount, "options.maxCount");
  requireNumber(o.context, "options.context");
  for (const flag of ["regex", "ignoreCase"] as const) {
    if (o[flag] !== undefined && typeof o[flag] !== "boolean") {
      throw new EngramError("invalid_argument", `options.${flag} must be a boolean, got ${describe(o[flag])}`);
    }
  }
  if (o.outputMode !== undefined) requireString(o.outputMode, "options.outputMode");
  return undefined;
}

// ---- tool text (the `text_or_error` calls of bindings/abi/src/calls.rs) ----
type RawText = RawOut & { readonly text?: Opt<string> };

function textOf(r: RawText): Result<{ text: string }> {
  if (r.error) return failed(r);
  const text = r.text as string;
  r.free?.();
  return { text };
}

/** What a search skipped, as the bindings' two columns: paths and reasons. */
function skippedColumns(result: { skipped?: readonly GrepSkip[] }): [string[], string[]] {
  const skipped = requireArray<GrepSkip>(requireObject<{ skipped?: unknown }>(result, "result").skipped ?? [], "result.skipped");
  return [pathsOf(skipped, "result.skipped"), skipped.map((s, i) => requireString(s.reason, `result.skipped[${i}].reason`))];
}

/** A cap in UTF-16 units, as the core takes it. */
function capOf(maxChars: unknown): number {
  return toIndex(requireNumber(maxChars, "maxChars")) ?? 0;
}
// ---- end tool text ----

const textEncoder = new TextEncoder();
/** Largest text (in bytes, at 3 per UTF-16 unit) encoded into a table's reused buffer. */
const SCRATCH_MAX = 1 << 20;
/** Whole-file reads up to this many UTF-16 units are kept for the next read of the same path. */
const RECENT_READ_MAX_CHARS = 16 * 1024;
/** How many recent reads (and, separately, stats) a table keeps; past it the oldest goes. */
const RECENT_ENTRIES = 64;

/** Keeps `value` under `key`, dropping the oldest entry when full. */
function remember<V>(map: Map<string, V>, key: string, value: V): void {
  if (map.size >= RECENT_ENTRIES) map.delete(map.keys().next().value as string);
  map.set(key, value);
}

class FileTableHandle implements CoreFileTable {
  /** `textAsBytes`: encode text with `TextEncoder` before the call (WASM: measured about 2×
   * cheaper for kilobyte-sized text than wasm-bindgen's own string passing); the native addon
   * takes the string as is. */
  constructor(
    private readonly raw: RawFileTable,
    private readonly GrepArgs: DeclaredCalls["GrepArgs"],
    private readonly textAsBytes = false,
  ) {}

  /** The binding's options object for one grep call (released by the caller). */
  #grepArgs(o: GrepOptions): Made<"GrepArgs"> {
    const args = new this.GrepArgs(o.pattern, o.path, o.glob, o.regex, o.ignoreCase, toIndex(o.maxCount), o.outputMode, toIndex(o.context));
    return args as Made<"GrepArgs">;
  }

  /** The numeric fields of the last result (see {@link RawFileTable}): reused by every call. */
  readonly #meta = new Float64Array(4);
  /**
   * Small whole-file reads and stats, answered again without crossing into the core while the
   * table is unchanged. The table has no other handle than this one, and every call that can
   * change it clears both (`#changing`), so an answer given from here is the core's answer.
   * An agent re-reads the same few files (its memory before every model call, the file it is
   * editing): those reads then cost a map lookup, not a boundary crossing and a UTF-8 → UTF-16
   * conversion.
   */
  readonly #recentReads = new Map<string, ReadResult>();
  readonly #recentStats = new Map<string, FileInfo>();

  /** Forgets every remembered answer: called before each call that may change the table. */
  #changing(): void {
    if (this.#recentReads.size > 0) this.#recentReads.clear();
    if (this.#recentStats.size > 0) this.#recentStats.clear();
  }
  /** Reused for encoding text that crosses as bytes (the binding copies it during the call). */
  #scratch = new Uint8Array(0);

  /** `text` as UTF-8: in the reused buffer when small (no garbage per call), else fresh. */
  #utf8(text: string): Uint8Array {
    const need = text.length * 3;
    if (need > SCRATCH_MAX) return textEncoder.encode(text);
    if (this.#scratch.length < need) this.#scratch = new Uint8Array(Math.max(need, 4096));
    return this.#scratch.subarray(0, textEncoder.encodeInto(text, this.#scratch).written);
  }

  /** The error of the call that just returned nothing. */
  #failed(): { error: ErrorData } {
    const e = this.raw.takeError();
    const error: ErrorData = e ? errorOf(e) : { code: "unsupported", message: "the core returned no result and no error" };
    if (e) release(e);
    return { error };
  }

  #written(path: Opt<string>): Result<{ path: string; version: string }> {
    return path == null ? this.#failed() : { path, version: String(this.#meta[0]) };
  }

  get size(): number {
    return this.raw.size;
  }

  get changes(): number {
    return this.raw.changes;
  }

  mark(): FileTableMark {
    return { lastVersion: this.raw.lastVersion, changes: this.raw.changes };
  }

  deltaSince(mark: FileTableMark): Uint8Array | undefined {
    const bytes = this.raw.deltaSince(mark.lastVersion, mark.changes);
    return bytes ? plainBytes(bytes) : undefined;
  }

  write(path: string, content: string | Uint8Array, options: WriteOptions = {}): Result<{ path: string; version: string }> {
    const bad = checkPath(path);
    if (bad) return { error: bad };
    checkContent(content);
    requireObject(options, "options");
    const at = requireNumber(options.modifiedAt, "options.modifiedAt") ?? Date.now();
    if (options.ifVersion !== undefined) requireString(options.ifVersion, "options.ifVersion");
    const meta = this.#meta;
    this.#changing();
    return this.#written(
      typeof content !== "string"
        ? this.raw.write(path, content, at, options.ifVersion, meta)
        : this.textAsBytes
          ? this.raw.write(path, this.#utf8(content), at, options.ifVersion, meta)
          : this.raw.writeText(path, content, at, options.ifVersion, meta),
    );
  }

  writeMany(
    files: Iterable<readonly [path: string, content: string | Uint8Array, modifiedAt?: number]>,
    options: { modifiedAt?: number } = {},
  ): Result<{ written: number }> {
    const at = requireNumber(requireObject<{ modifiedAt?: number }>(options, "options").modifiedAt, "options.modifiedAt") ?? Date.now();
    const list = Array.isArray(files) ? (files as (readonly [string, string | Uint8Array, number?])[]) : Array.from(files);
    const paths: string[] = new Array(list.length);
    const contents: (string | Uint8Array)[] = new Array(list.length);
    // Each file's own time, where any entry gives one; the others get `at`.
    let each: Float64Array | undefined;
    let units = 0;
    let typed = true;
    for (let i = 0; i < list.length; i++) {
      const [path, content, time] = list[i] as readonly [string, string | Uint8Array, number?];
      paths[i] = path;
      contents[i] = content;
      if (time !== undefined) {
        each ??= new Float64Array(list.length).fill(at);
        each[i] = requireNumber(time, `files[${i}] modifiedAt`) as number;
      }
      if (typeof content === "string") units += content.length;
      else if (content instanceof Uint8Array) units += content.byteLength;
      else typed = false;
      if (typeof path !== "string") typed = false;
    }
    // One look at the joined paths stands for one per path (a separator cannot pair two
    // surrogate halves): a lone surrogate anywhere, or a NUL inside a path (a NUL more than
    // the separators). Only then is each entry checked, in order, for the exact error.
    const joined = typed ? paths.join("\0") : "";
    if (!typed || !isWellFormed(joined) || countNul(joined) !== Math.max(0, list.length - 1)) {
      return { error: this.#firstBadEntry(paths, contents) };
    }
    this.#changing();
    const r = this.raw.writeMany
      ? this.raw.writeMany(joined, contents, units, at, each)
      : this.#writeManyStaged(joined, contents, units, at, each);
    if (!r) return this.#failed();
    if (r.error) return failed(r);
    const written = r.written as number;
    r.free?.();
    return { written };
  }

  /** The error of the first entry of a batch that cannot be written as given, in order: a
   * non-string path or a content of another type throws `invalid_argument`; a lone surrogate
   * in a path is `invalid_path`; a path with a NUL gets the core's error for it. */
  #firstBadEntry(paths: unknown[], contents: unknown[]): ErrorData {
    for (let i = 0; i < paths.length; i++) {
      const bad = checkPath(paths[i]);
      if (bad) return bad;
      if ((paths[i] as string).includes("\0")) {
        // A NUL would split the joined paths differently, and the core refuses such a path.
        this.raw.stat(paths[i] as string, this.#meta);
        return this.#failed().error;
      }
      checkContent(contents[i]);
    }
    return { code: "unsupported", message: "writeMany: the batch failed its check, but no entry did" };
  }

  /** WASM: the contents encoded straight into WebAssembly memory, back to back (see the
   * binding's `stage`), so they cross once and no JavaScript buffer is made for them. The room
   * starts at one byte per UTF-16 unit (most text is ASCII) and doubles when a text does not fit.
   * Nothing when the room cannot be had (`takeError()`: `too_large`; nothing is written). */
  #writeManyStaged(
    paths: string,
    contents: (string | Uint8Array)[],
    units: number,
    at: number,
    each: Float64Array | undefined,
  ): RawSeeded | undefined {
    const raw = this.raw as RawFileTable & Required<Pick<RawFileTable, "stage" | "writeManyStaged" | "memory">>;
    const memory = raw.memory();
    let room = 0;
    let view: Uint8Array = new Uint8Array(0);
    const grow = (need: number): boolean => {
      room = Math.max(room * 2, need);
      // `stage` keeps what is there and may grow memory, detaching earlier views: ask first.
      const start = raw.stage(room);
      if (start == null) return false;
      view = new Uint8Array(memory.buffer, start, room);
      return true;
    };
    if (!grow(Math.max(units, 16))) return undefined;
    const lengths = new Uint32Array(contents.length);
    let used = 0;
    for (let i = 0; i < contents.length; i++) {
      const content = contents[i] as string | Uint8Array;
      let n: number;
      if (typeof content === "string") {
        let r = textEncoder.encodeInto(content, view.subarray(used));
        while (r.read < content.length) {
          if (!grow(used + content.length * 3)) return undefined;
          r = textEncoder.encodeInto(content, view.subarray(used));
        }
        n = r.written;
      } else {
        if (room - used < content.byteLength && !grow(used + content.byteLength)) return undefined;
        view.set(content, used);
        n = content.byteLength;
      }
      lengths[i] = n;
      used += n;
    }
    return raw.writeManyStaged(paths, lengths, at, each);
  }

  append(path: string, content: string | Uint8Array, options: { modifiedAt?: number } = {}): Result<{ path: string; version: string }> {
    const bad = checkPath(path);
    if (bad) return { error: bad };
    checkContent(content);
    requireNumber(requireObject<{ modifiedAt?: number }>(options, "options").modifiedAt, "options.modifiedAt");
    const bytes = typeof content === "string" ? this.#utf8(content) : content;
    this.#changing();
    return this.#written(this.raw.append(path, bytes, options.modifiedAt ?? Date.now(), this.#meta));
  }

  read(path: string, options: ReadOptions = {}): Result<ReadResult> {
    const bad = checkPath(path);
    if (bad) return { error: bad };
    requireObject(options, "options");
    const offset = toIndex(requireNumber(options.offset, "options.offset")) ?? 0;
    const limit = toIndex(requireNumber(options.limit, "options.limit"));
    const whole = offset === 0 && limit === undefined;
    if (whole) {
      const hit = this.#recentReads.get(path);
      if (hit) return { content: hit.content, totalLines: hit.totalLines, offset: 0, lines: hit.lines };
    }
    const meta = this.#meta;
    const content = this.raw.read(path, offset, limit, meta);
    if (content == null) return this.#failed();
    const result = { content, totalLines: meta[0] as number, offset: meta[1] as number, lines: meta[2] as number };
    if (whole && content.length <= RECENT_READ_MAX_CHARS) remember(this.#recentReads, path, { ...result });
    return result;
  }

  readBytes(path: string): Uint8Array | undefined {
    if (checkPath(path)) return undefined;
    const bytes = this.raw.readBytes(path);
    return bytes ? plainBytes(bytes) : undefined;
  }

  snapshot(): Uint8Array {
    return plainBytes(this.raw.snapshot());
  }

  clear(): void {
    this.#changing();
    this.raw.clear();
  }

  ls(path: string): Result<{ entries: FileInfo[] }> {
    const bad = checkPath(path);
    if (bad) return { error: bad };
    const r: RawEntries = this.raw.ls(path);
    if (r.error) return failed(r);
    const entries = entriesOf(r.entries as RawInfo[]);
    r.free?.();
    return { entries };
  }

  stat(path: string): Result<{ info: FileInfo }> {
    const bad = checkPath(path);
    if (bad) return { error: bad };
    const hit = this.#recentStats.get(path);
    if (hit) return { info: { ...hit } };
    const meta = this.#meta;
    const shown = this.raw.stat(path, meta);
    if (shown == null) return this.#failed();
    const info: FileInfo = { path: shown, isDir: meta[0] === 1 };
    const size = meta[1] as number;
    const modifiedAt = meta[2] as number;
    const version = meta[3] as number;
    if (!Number.isNaN(size)) info.size = size;
    if (!Number.isNaN(modifiedAt)) info.modifiedAt = modifiedAt;
    if (!Number.isNaN(version)) info.version = String(version);
    remember(this.#recentStats, path, { ...info });
    return { info };
  }

  delete(path: string): Result<{ deleted: number }> {
    const bad = checkPath(path);
    if (bad) return { error: bad };
    this.#changing();
    const deleted = this.raw.delete(path);
    return typeof deleted === "number" ? { deleted } : failed(deleted);
  }

  edit(options: EditOptions): Result<EditResult> {
    requireObject(options, "options");
    const bad = checkPath(options.path, "options.path");
    if (bad) return { error: bad };
    requireString(options.oldString, "options.oldString");
    requireString(options.newString, "options.newString");
    requireNumber(options.modifiedAt, "options.modifiedAt");
    if (options.ifVersion !== undefined) requireString(options.ifVersion, "options.ifVersion");
    if (options.replaceAll !== undefined && typeof options.replaceAll !== "boolean") {
      throw new EngramError("invalid_argument", `options.replaceAll must be a boolean, got ${describe(options.replaceAll)}`);
    }
    this.#changing();
    const r = this.raw.edit(
      options.path,
      options.oldString,
      options.newString,
      options.replaceAll ?? false,
      options.modifiedAt ?? Date.now(),
      options.ifVersion,
      this.#meta,
    );
    if (r == null) return this.#failed();
    return { path: r, occurrences: this.#meta[0] as number, version: String(this.#meta[1]) };
  }

  grep(options: GrepOptions): Result<GrepResult> {
    const bad = checkGrep(options);
    if (bad) return { error: bad };
    const args = this.#grepArgs(options);
    try {
      return decodeGrep(this.raw.grep(args));
    } finally {
      args.free?.();
    }
  }

  glob(options: GlobOptions, versionOf?: (tableVersion: number) => string): Result<GlobResult> {
    const bad = checkSearch(options);
    if (bad) return { error: bad };
    requireNumber(options.maxResults, "options.maxResults");
    const r: RawFiles = this.raw.glob(options.pattern, options.path, toIndex(options.maxResults));
    if (r.error) return failed(r);
    const out: GlobResult = { files: decodeFiles(r, versionOf), truncated: r.truncated ?? false };
    r.free?.();
    return out;
  }

  // ---- tool text ----
  grepText(options: GrepOptions, maxChars: number): Result<{ text: string }> {
    const bad = checkGrep(options);
    if (bad) return { error: bad };
    const cap = capOf(maxChars);
    const args = this.#grepArgs(options);
    try {
      return textOf(this.raw.grepText(args, cap));
    } finally {
      args.free?.();
    }
  }

  globText(options: GlobOptions, maxChars: number): Result<{ text: string }> {
    const bad = checkSearch(options);
    if (bad) return { error: bad };
    requireNumber(options.maxResults, "options.maxResults");
    return textOf(this.raw.globText(options.pattern, options.path, toIndex(options.maxResults), capOf(maxChars)));
  }

  lsText(path: string, shown: string, maxChars: number): Result<{ text: string }> {
    const bad = checkPath(path);
    if (bad) return { error: bad };
    return textOf(this.raw.lsText(path, requireString(shown, "shown"), capOf(maxChars)));
  }

  readText(path: string, shown: string, options: { offset: number; limit: number }, maxChars: number): Result<{ text: string }> {
    const bad = checkPath(path);
    if (bad) return { error: bad };
    requireObject(options, "options");
    const offset = toIndex(requireNumber(options.offset, "options.offset")) ?? 0;
    const limit = toIndex(requireNumber(options.limit, "options.limit")) ?? 0;
    return textOf(this.raw.readText(path, requireString(shown, "shown"), offset, limit, capOf(maxChars)));
  }
  // ---- end tool text ----

  dispose(): void {
    this.raw.free?.();
  }
}

class RouterHandle implements CoreRouter {
  readonly prefixes: readonly string[];
  /** The router, as the declared calls that take it are typed. */
  readonly made: Made<"Router">;
  constructor(
    private readonly raw: Instance<"Router">,
    private readonly binding: RawBinding,
  ) {
    this.made = raw as Made<"Router">;
    this.prefixes = Object.freeze(raw.prefixes());
  }
  /** `[route, inner offset]` of the last {@link RouterHandle.route} (see `routeInto`). */
  readonly #meta = new Float64Array(2);

  route(path: string): Result<Route> {
    const bad = checkPath(path);
    if (bad) return { error: bad };
    // The outer path crosses as a string and the rest as numbers: no result object per call.
    const outer = this.binding.routeInto(this.made, path, this.#meta);
    if (outer != null) {
      const route = this.#meta[0] as number;
      const start = this.#meta[1] as number;
      const inner = start < 0 ? "/" : start === 0 ? outer : outer.slice(start);
      if (route < 0) return { route: null, prefix: null, path: inner, outer };
      return { route, prefix: this.prefixes[route] ?? null, path: inner, outer };
    }
    // Refused: the router's error.
    const r: RawRoute = this.raw.route(path);
    if (r.error) return failed(r);
    const out: Route = { route: r.route ?? null, prefix: r.prefix ?? null, path: r.path as string, outer: r.outer as string };
    r.free?.();
    return out;
  }

  // ---- composite fan-out: parts cross as columns; merged answers come back as picks into them ----

  mergeGrep(parts: readonly MountPart<GrepResult>[], options: GrepMergeOptions): Result<GrepResult> {
    const mode = options.outputMode ?? "content";
    const { mounts, truncated, counts } = partColumns(parts);
    const paths: string[] = [];
    const sizes: number[] = [];
    const context: number[] = [];
    const lines: GrepMatch[] = [];
    for (const [i, { result }] of parts.entries()) {
      const first = paths.length;
      if (mode === "content") {
        for (const m of result.matches ?? []) {
          if (paths.length > first && paths[paths.length - 1] === m.path) sizes[sizes.length - 1] = (sizes[sizes.length - 1] as number) + 1;
          else {
            paths.push(m.path);
            sizes.push(1);
          }
          context.push(m.context ? 1 : 0);
          lines.push(m);
        }
      } else if (mode === "count") {
        for (const [path, n] of Object.entries(result.counts ?? {})) {
          paths.push(path);
          sizes.push(n);
        }
      } else {
        for (const f of result.files ?? []) paths.push(f);
      }
      counts[i] = paths.length - first;
    }
    const r: RawMerged = this.binding.mergeGrep(
      this.made,
      mode,
      toIndex(options.maxCount),
      options.pathGlob,
      options.root,
      mounts,
      truncated,
      counts,
      joinPaths(paths),
      Uint32Array.from(sizes),
      Uint8Array.from(context),
    );
    if (r.error) return failed(r);
    const out = r.paths as string[];
    const n = r.sizes as ArrayLike<number>;
    let merged: GrepResult;
    if (mode === "content") {
      const picks = r.picks as ArrayLike<number>;
      const matches: GrepMatch[] = new Array(picks.length);
      let k = 0;
      for (let g = 0; g < out.length; g++) {
        const path = out[g] as string;
        for (let end = k + (n[g] as number); k < end; k++) {
          const m = lines[picks[k] as number] as GrepMatch;
          matches[k] = m.path === path ? m : { ...m, path };
        }
      }
      merged = { matches, truncated: r.truncated ?? false };
    } else if (mode === "count") {
      const c: Record<string, number> = {};
      for (let i = 0; i < out.length; i++) c[out[i] as string] = n[i] as number;
      merged = { counts: c, truncated: r.truncated ?? false };
    } else {
      merged = { files: out, truncated: r.truncated ?? false };
    }
    r.free?.();
    const skipped = this.#mergeSkipped(parts, options.root);
    return skipped ? { ...merged, skipped } : merged;
  }

  /** What the parts' searches skipped, seen from outside as their files are, smallest paths
   * first; `undefined` when nothing was skipped. */
  #mergeSkipped(parts: readonly MountPart<{ skipped?: GrepSkip[] }>[], root: string): GrepSkip[] | undefined {
    if (!parts.some((p) => p.result.skipped?.length)) return undefined;
    const merged = this.#mergePaths(
      parts.map(({ mount, result }) => ({ mount, items: result.skipped ?? [], truncated: false })),
      { root },
    );
    return "error" in merged || merged.kept.length === 0 ? undefined : merged.kept;
  }

  mergeGlob(parts: readonly MountPart<GlobResult>[], options: { pattern?: string; root: string; maxResults?: number }): Result<GlobResult> {
    const merged = this.#mergePaths(
      parts.map(({ mount, result }) => ({ mount, items: result.files, truncated: result.truncated })),
      options,
    );
    if ("error" in merged) return merged;
    const skipped = this.#mergeSkipped(parts, options.root);
    return { files: merged.kept, truncated: merged.truncated, ...(skipped && { skipped }) };
  }

  /** Items that carry a path, merged as a glob's files are (see `engram_core::composite::merge_glob_columns`):
   * a mount's seen under its outer path, the default backend's under a route left out, in path
   * order, filtered by `pattern` when given. */
  #mergePaths<T extends { path: string }>(
    parts: readonly { mount: number | null; items: readonly T[]; truncated: boolean }[],
    options: { pattern?: string; root: string; maxResults?: number },
  ): { kept: T[]; truncated: boolean } | { error: ErrorData } {
    const { mounts, truncated, counts } = partColumns(parts.map(({ mount, truncated }) => ({ mount, result: { truncated } })));
    const paths: string[] = [];
    const items: T[] = [];
    /** Per path: whether it came from a mount (the core sends only those outer paths back). */
    const mounted: boolean[] = [];
    for (const [i, part] of parts.entries()) {
      for (const item of part.items) {
        paths.push(item.path);
        items.push(item);
        mounted.push(part.mount !== null);
      }
      counts[i] = part.items.length;
    }
    const r: RawMerged = this.binding.mergeGlob(
      this.made,
      options.pattern,
      options.root,
      toIndex(options.maxResults),
      mounts,
      truncated,
      counts,
      joinPaths(paths),
    );
    if (r.error) return failed(r);
    const picks = r.picks as ArrayLike<number>;
    const renamed = r.renamed as string[];
    const kept: T[] = new Array(picks.length);
    for (let i = 0, k = 0; i < picks.length; i++) {
      const pick = picks[i] as number;
      const item = items[pick] as T;
      kept[i] = mounted[pick] ? { ...item, path: renamed[k++] as string } : item;
    }
    const out = { kept, truncated: r.truncated ?? false };
    r.free?.();
    return out;
  }

  mergeLs(dir: string, mount: number | null, listing: Readonly<LsResult>): Result<LsResult> {
    const { entries } = listing;
    const r: RawMerged = this.binding.mergeLs(this.made, requireString(dir, "dir"), mount, joinPaths(entries.map((e) => e.path)));
    if (r.error) return failed(r);
    const picks = r.picks as ArrayLike<number>;
    const renamed = r.renamed as string[];
    const out: FileInfo[] = new Array(picks.length);
    for (let i = 0, k = 0; i < picks.length; i++) {
      const pick = picks[i] as number;
      // A directory a route adds, or one of the mount's entries (renamed): the core's outer path.
      if (pick === MOUNT_POINT) out[i] = { path: renamed[k++] as string, isDir: true };
      else out[i] = mount === null ? (entries[pick] as FileInfo) : { ...(entries[pick] as FileInfo), path: renamed[k++] as string };
    }
    r.free?.();
    const skipped = this.#mergeSkipped([{ mount, result: listing }], dir);
    return skipped ? { entries: out, skipped } : { entries: out };
  }

  mountsUnder(dir: string): number[] {
    return Array.from(this.binding.mountsUnder(this.made, requireString(dir, "dir")));
  }

  globAsks(pattern: string, root: string): GlobAsk[] {
    const r = this.binding.globAsks(this.made, requireString(pattern, "pattern"), requireString(root, "root"));
    const asks = r.patterns.map((p, i) => ({ mount: r.mounts[i] as number, pattern: p, path: r.paths[i] as string }));
    release(r);
    return asks;
  }

  // ---- fan-out over resident tables: each table crosses as a handle, the answer once ----

  globFanOut(pattern: string, root: string, maxResults?: number): Result<{ fan: CoreFanOut<FanGlobResult> }> {
    requireNumber(maxResults, "maxResults");
    const bad = checkSearch({ pattern, path: root });
    if (bad) return { error: bad };
    const raw = this.binding.globFanOut(this.made, pattern, root, toIndex(maxResults));
    const fan = this.#fanOut(raw, (): Result<FanGlobResult> => {
      const r: RawFanGlob = raw.finish(this.made);
      if (r.error) return failed(r);
      const out = { files: decodeFiles(r), truncated: r.truncated ?? false, sources: r.mounts as ArrayLike<number> };
      r.free?.();
      return out;
    });
    return { fan };
  }

  grepFanOut(options: GrepOptions, root: string, textChars?: number): Result<{ fan: CoreFanOut<GrepResult> }> {
    const bad = checkGrep({ ...options, path: root });
    if (bad) return { error: bad };
    const o = options;
    const [max, context] = [toIndex(o.maxCount), toIndex(o.context)];
    const args = new this.binding.GrepArgs(o.pattern, undefined, o.glob, o.regex, o.ignoreCase, max, o.outputMode, context);
    try {
      const text = textChars === undefined ? undefined : capOf(textChars);
      const raw = this.binding.grepFanOut(this.made, args as Made<"GrepArgs">, root, text);
      return { fan: this.#fanOut(raw, () => decodeGrep(raw.finish(this.made))) };
    } finally {
      release(args);
    }
  }

  lsTable(dir: string, mount: number | null, inner: string, table: CoreFileTable): Result<{ entries: FileInfo[] }> {
    requireString(dir, "dir");
    const bad = checkPath(inner);
    if (bad) return { error: bad };
    const r: RawEntries = this.binding.lsTable(
      this.made,
      dir,
      mount ?? -1,
      inner,
      // biome-ignore lint/complexity/useLiteralKeys: the handle's private binding object, read within this module
      (table as FileTableHandle)["raw"] as Made<"FileTable">,
    );
    if (r.error) return failed(r);
    const out = { entries: entriesOf(r.entries as RawInfo[]) };
    r.free?.();
    return out;
  }

  /** A fan-out's steps; `finish` decodes its merged answer. */
  #fanOut<T>(raw: Instance<"GlobFanOut"> | Instance<"GrepFanOut">, finish: () => Result<T>): CoreFanOut<T> {
    const a = raw.asks();
    const asks = a.paths.map((path, i) => {
      const [mount, max] = [a.mounts[i] as number, a.maxCounts[i] as number];
      return { mount: mount < 0 ? null : mount, path, globbed: a.globbed[i] === 1, maxCount: max < 0 ? undefined : max };
    });
    release(a);
    const router = this.made;
    const done = <U>(r: U): U => {
      release(raw);
      return r;
    };
    return {
      asks,
      add: (mount, table) => {
        // biome-ignore lint/complexity/useLiteralKeys: the handle's private binding object, read within this module
        const e = raw.add(router, mount ?? -1, (table as FileTableHandle)["raw"] as Made<"FileTable">);
        if (e == null) return undefined;
        const error = errorOf(e);
        release(e);
        return error;
      },
      finish: () => done(finish()),
      text: (maxChars) => done(textOf(raw.text(router, capOf(maxChars)))),
      dispose: () => done(undefined),
    };
  }
}

/** Paths crossing into a composite merge: one string, NUL-separated (one crossing instead of
 * one per path; no path may hold a NUL, and the core reports one that does as malformed). */
function joinPaths(paths: readonly string[]): string {
  return paths.join("\0");
}

/** The pick of a directory that exists only because a route is mounted below it. */
const MOUNT_POINT = 0xffff_ffff;

/** The per-part columns of a composite fan-out (`counts` is filled in by the caller). */
function partColumns(parts: readonly MountPart<{ truncated: boolean }>[]) {
  const mounts = new Int32Array(parts.length);
  const truncated = new Uint8Array(parts.length);
  for (const [i, p] of parts.entries()) {
    mounts[i] = p.mount ?? -1;
    truncated[i] = p.result.truncated ? 1 : 0;
  }
  return { mounts, truncated, counts: new Uint32Array(parts.length) };
}

/** The kind numbers of {@link Core.memorySection}'s sources (see `engram_core::prompt::Source`). */
const SOURCE_KINDS: Record<MemorySourceInput["kind"], number> = { missing: 0, text: 1, error: 2, rendered: 3 };

/** How many normalised paths a core keeps (see `normalizePath` in {@link wrapBinding}), and the
 * longest path kept. */
const NORMALISED_CACHE = 4096;
const NORMALISED_PATH_MAX = 512;

/** @internal Wraps a loaded binding as a {@link Core}. Every argument is checked here, so a
 * wrong type is an {@link EngramError} `invalid_argument`, never a raw conversion message. */
export function wrapBinding(kind: CoreKind, raw: RawBinding): Core {
  /** The core's normalised form of recently seen paths. Normalising is a pure function of the
   * string, so a kept answer is the core's own: a backend normalising the same path on every
   * call (a routed read, an edit loop) skips the crossing. Bounded; starts over when full. */
  const normalised = new Map<string, string>();
  return {
    kind,
    normalizePath: (path) => {
      const known = normalised.get(path);
      if (known !== undefined) return { path: known };
      const bad = checkPath(path);
      if (bad) return { error: bad };
      const r: RawText = raw.normalizePath(path);
      if (r.error) return failed(r);
      const out = { path: r.text as string };
      r.free?.();
      if (path.length <= NORMALISED_PATH_MAX) {
        if (normalised.size >= NORMALISED_CACHE) normalised.clear();
        normalised.set(path, out.path);
      }
      return out;
    },
    formatNumbered: (content, firstLine) =>
      raw.formatNumbered(requireString(content, "content"), toIndex(requireNumber(firstLine, "firstLine")) ?? 1),
    errorData: (code, subject, detail = "") => {
      const e = raw.errorData(requireString(code, "code"), requireString(subject, "subject"), requireString(detail, "detail"));
      const out = errorOf(e);
      release(e);
      return out;
    },
    mountError: (error, prefix, request) => {
      const { code, message, subject, detail } = error;
      const str = (v: unknown) => (v == null ? undefined : String(v));
      const e = raw.mountError(
        String(code),
        String(message),
        str(subject),
        str(detail),
        requireString(prefix, "prefix"),
        requireString(request, "request"),
      );
      if (!e) return error;
      const out = errorOf(e);
      release(e);
      return out;
    },
    filterPaths: (kind, pattern, root, paths) => {
      requireString(kind, "kind");
      requireString(pattern, "pattern");
      const bad = checkPath(root, "root");
      if (bad) return { error: bad };
      const kept = raw.filterPaths(kind, pattern, root, requireStrings(paths, "paths"));
      if ("error" in kept) return failed(kept);
      // Indices, so each kept path is the caller's own string.
      const out: string[] = new Array(kept.length);
      for (let i = 0; i < kept.length; i++) out[i] = paths[kept[i] as number] as string;
      return { paths: out };
    },
    rankBm25: (query, documents) =>
      Array.from(raw.rankBm25(requireString(query, "query"), requireStrings(documents as string[], "documents"))),
    redactSecrets: (text) => {
      const r = raw.redactSecrets(requireString(text, "text"));
      const out: Redaction = { text: r.text, count: r.count };
      release(r);
      return out;
    },
    estimateTokens: (text) => raw.estimateTokens(requireString(text, "text")),
    estimateTokensEach: (texts) => Array.from(raw.estimateTokensEach(requireStrings(texts as string[], "texts"))),
    // ---- prompt assembly ----
    neutralizeSectionTags: (text) => raw.neutralizeSectionTags(requireString(text, "text")),
    escapeTags: (text) => raw.escapeTags(requireString(text, "text")),
    escapeField: (text) => raw.escapeField(requireString(text, "text")),
    memorySection: (sources, maxTokensPerSource) => {
      const n = sources.length;
      const paths: string[] = new Array(n);
      const texts: string[] = new Array(n);
      const kinds = new Uint8Array(n);
      for (let i = 0; i < n; i++) {
        const s = requireObject<MemorySourceInput>(sources[i], `sources[${i}]`);
        paths[i] = requireString(s.path, `sources[${i}].path`);
        kinds[i] = SOURCE_KINDS[s.kind] ?? 0;
        texts[i] = s.kind === "missing" ? "" : requireString(s.text, `sources[${i}].text`);
      }
      const r = raw.memorySection(paths, kinds, texts, toIndex(requireNumber(maxTokensPerSource, "maxTokensPerSource")) ?? 0);
      const out = { text: r.text, parts: r.numbers };
      release(r);
      return out;
    },
    skillsSection: (skills) =>
      raw.skillsSection(
        skills.map((s, i) => requireString(s.name, `skills[${i}].name`)),
        skills.map((s, i) => requireString(s.description, `skills[${i}].description`)),
        skills.map((s, i) => requireString(s.path, `skills[${i}].path`)),
      ),
    factsBlock: (input) => {
      const { facts } = input;
      return raw.factsBlock(
        requireStrings(input.summaries as string[], "summaries"),
        facts.map((f, i) => requireString(f.content, `facts[${i}].content`)),
        facts.map((f, i) => requireString(f.category, `facts[${i}].category`)),
        Float64Array.from(facts, (f) => f.confidence),
        facts.map((f) => f.sourceError ?? ""),
        Float64Array.from(input.scores ?? []),
        input.query ?? "",
        toIndex(requireNumber(input.maxTokens, "maxTokens")) ?? 0,
        toIndex(requireNumber(input.correctionTokens, "correctionTokens")) ?? 0,
      );
    },
    relevanceScores: (query, facts) =>
      Array.from(
        raw.relevanceScores(
          requireString(query, "query"),
          facts.map((f, i) => requireString(f.content, `facts[${i}].content`)),
          Float64Array.from(facts, (f) => f.confidence),
        ),
      ),
    // ---- end prompt assembly ----
    // ---- tool text ----
    formatGrep: (pattern, result, maxChars) => {
      const cap = capOf(maxChars);
      requireString(pattern, "pattern");
      const truncated = result.truncated === true;
      const [skippedPaths, skippedReasons] = skippedColumns(result);
      if (result.matches) {
        const m = result.matches;
        const numbers = new Int32Array(m.length);
        for (let i = 0; i < m.length; i++) numbers[i] = (m[i]?.context ? -1 : 1) * (m[i]?.line as number);
        return raw.formatGrep(
          pattern,
          "content",
          m.map((x) => x.path),
          numbers,
          m.map((x) => x.text),
          truncated,
          skippedPaths,
          skippedReasons,
          cap,
        );
      }
      if (result.counts) {
        const entries = Object.entries(result.counts);
        return raw.formatGrep(
          pattern,
          "count",
          entries.map(([p]) => p),
          Int32Array.from(entries, ([, n]) => n),
          [],
          truncated,
          skippedPaths,
          skippedReasons,
          cap,
        );
      }
      const files = result.files ?? [];
      return raw.formatGrep(pattern, "files_with_matches", files, new Int32Array(0), [], truncated, skippedPaths, skippedReasons, cap);
    },
    formatLs: (shown, result, maxChars) => {
      const [skippedPaths, skippedReasons] = skippedColumns(result);
      return raw.formatLs(
        requireString(shown, "shown"),
        pathsOf(result.entries, "result.entries"),
        Float64Array.from(result.entries, (e) => (e.isDir ? -1 : (e.size ?? 0))),
        skippedPaths,
        skippedReasons,
        capOf(maxChars),
      );
    },
    formatGlob: (pattern, result, maxChars) => {
      const [skippedPaths, skippedReasons] = skippedColumns(result);
      return raw.formatGlob(
        requireString(pattern, "pattern"),
        pathsOf(result.files, "result.files"),
        result.truncated === true,
        skippedPaths,
        skippedReasons,
        capOf(maxChars),
      );
    },
    formatRead: (shown, r, limit, maxChars) =>
      raw.formatRead(
        requireString(shown, "shown"),
        requireString(r.content, "result.content"),
        toIndex(r.offset) ?? 0,
        toIndex(r.totalLines) ?? 0,
        toIndex(r.lines) ?? 0,
        toIndex(requireNumber(limit, "limit")) ?? 0,
        capOf(maxChars),
      ),
    capOutput: (text, maxChars) => raw.capOutput(requireString(text, "text"), capOf(maxChars)),
    // ---- end tool text ----
    createRouter: (prefixes) => {
      const list = requireStrings(prefixes, "prefixes");
      for (const [i, p] of list.entries()) {
        const bad = checkPath(p, `prefixes[${i}]`);
        if (bad) throw EngramError.fromCore(bad);
      }
      return new RouterHandle(madeOrThrow(raw.createRouter(list)), raw);
    },
    createFileTable: () => new FileTableHandle(new raw.FileTable(), raw.GrepArgs, kind === "wasm"),
    restoreFileTable: (snapshot) => {
      if (!(snapshot instanceof Uint8Array)) {
        throw new EngramError("invalid_argument", `snapshot must be a Uint8Array, got ${describe(snapshot)}`);
      }
      return new FileTableHandle(madeOrThrow(raw.restoreFileTable(snapshot)), raw.GrepArgs, kind === "wasm");
    },
    applyFileDeltas: (snapshot, deltas) => {
      if (!(snapshot instanceof Uint8Array) || !Array.isArray(deltas) || !deltas.every((d) => d instanceof Uint8Array)) {
        throw new EngramError("invalid_argument", "applyFileDeltas needs a snapshot and an array of deltas (Uint8Array)");
      }
      // One crossing: the deltas concatenated, with their sizes.
      const lengths = Uint32Array.from(deltas, (d) => d.byteLength);
      const packed = new Uint8Array(lengths.reduce((a, n) => a + n, 0));
      let at = 0;
      for (const d of deltas) {
        packed.set(d, at);
        at += d.byteLength;
      }
      return plainBytes(madeOrThrow(raw.applyFileDeltas(snapshot, packed, lengths)));
    },
  };
}
