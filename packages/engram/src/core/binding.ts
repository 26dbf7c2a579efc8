/**
 * Adapts a raw binding (native or WASM: both export the same classes and functions, returning
 * one JSON string per call) to the typed {@link Core} API. One code path for both cores.
 * @module
 */
import { EngramError } from "../errors.js";
import { cutAt } from "./text.js";
import type {
  Core,
  CoreFileTable,
  CoreKind,
  CoreRouter,
  EditOptions,
  EditResult,
  ErrorData,
  FileInfo,
  GlobOptions,
  GlobResult,
  GrepOptions,
  GrepResult,
  ReadOptions,
  ReadResult,
  Redaction,
  Result,
  Route,
  WriteOptions,
} from "./types.js";

/** @internal What `@engram/native` and `@engram/wasm` both export. */
export interface RawBinding {
  normalizePath(path: string): string;
  formatNumbered(content: string, firstLine: number): string;
  errorData(code: string, subject: string, detail: string): string;
  filterPaths(optionsJson: string): string;
  rankBm25(query: string, documentsJson: string): string;
  redactSecrets(text: string): string;
  Router: new (prefixesJson: string) => RawRouter;
  FileTable: { new (): RawFileTable; fromSnapshot(bytes: Uint8Array): RawFileTable };
}

interface RawRouter {
  route(path: string): string;
  prefixes(): string;
}

interface RawFileTable {
  readonly size: number;
  write(path: string, data: Uint8Array, modifiedAt: number, ifVersion?: string | null): string;
  writeText(path: string, text: string, modifiedAt: number, ifVersion?: string | null): string;
  append(path: string, data: Uint8Array, modifiedAt: number): string;
  read(path: string, offset: number, limit?: number | null): string;
  readBytes(path: string): Uint8Array | null | undefined;
  ls(path: string): string;
  stat(path: string): string;
  delete(path: string): string;
  edit(optionsJson: string): string;
  grep(optionsJson: string): string;
  glob(optionsJson: string): string;
  snapshot(): Uint8Array;
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

function parse<T>(json: string): Result<T> {
  return JSON.parse(json) as Result<T>;
}

/** @internal Decodes grep results: content matches arrive grouped by file
 * (`[path, [line, text, ...]]`, negative line = context) and are expanded here. */
export function decodeGrep(json: string): Result<GrepResult> {
  const wire = JSON.parse(json) as Result<GrepResult> & { groups?: [string, (number | string)[]][] };
  if (!wire.groups) return wire;
  const matches: GrepResult["matches"] = [];
  for (const [path, flat] of wire.groups) {
    for (let i = 0; i < flat.length; i += 2) {
      const line = flat[i] as number;
      const text = flat[i + 1] as string;
      matches.push(line < 0 ? { path, line: -line, text, context: true } : { path, line, text });
    }
  }
  return { matches, truncated: wire.truncated ?? false };
}

/** The native core hands out Node Buffers; present the same plain Uint8Array as WASM does. */
function plainBytes(bytes: Uint8Array): Uint8Array {
  return bytes.constructor === Uint8Array ? bytes : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Runs a throwing binding call, turning its JSON error text into an {@link EngramError}. */
function orThrow<T>(call: () => T): T {
  try {
    return call();
  } catch (e) {
    throw EngramError.fromCoreText(e instanceof Error ? e.message : String(e));
  }
}

function checkContent(content: unknown): void {
  if (typeof content !== "string" && !(content instanceof Uint8Array)) {
    throw new EngramError("invalid_argument", `content must be a string or a Uint8Array, got ${describe(content)}`);
  }
}

/** Options of grep and glob: an object with a string pattern; a lone surrogate in the pattern
 * is `invalid_pattern`, in the path `invalid_path`. */
function checkSearch(options: unknown): ErrorData | undefined {
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

class FileTableHandle implements CoreFileTable {
  constructor(private readonly raw: RawFileTable) {}

  get size(): number {
    return this.raw.size;
  }

  write(path: string, content: string | Uint8Array, options: WriteOptions = {}): Result<{ path: string; version: string }> {
    const bad = checkPath(path);
    if (bad) return { error: bad };
    checkContent(content);
    requireObject(options, "options");
    const at = requireNumber(options.modifiedAt, "options.modifiedAt") ?? Date.now();
    if (options.ifVersion !== undefined) requireString(options.ifVersion, "options.ifVersion");
    const json =
      typeof content === "string"
        ? this.raw.writeText(path, content, at, options.ifVersion)
        : this.raw.write(path, content, at, options.ifVersion);
    return parse<{ path: string; version: string }>(json);
  }

  append(path: string, content: string | Uint8Array, options: { modifiedAt?: number } = {}): Result<{ path: string; version: string }> {
    const bad = checkPath(path);
    if (bad) return { error: bad };
    checkContent(content);
    requireNumber(requireObject<{ modifiedAt?: number }>(options, "options").modifiedAt, "options.modifiedAt");
    const bytes = typeof content === "string" ? new TextEncoder().encode(content) : content;
    return parse<{ path: string; version: string }>(this.raw.append(path, bytes, options.modifiedAt ?? Date.now()));
  }

  read(path: string, options: ReadOptions = {}): Result<ReadResult> {
    const bad = checkPath(path);
    if (bad) return { error: bad };
    requireObject(options, "options");
    requireNumber(options.offset, "options.offset");
    requireNumber(options.limit, "options.limit");
    return parse<ReadResult>(this.raw.read(path, toIndex(options.offset) ?? 0, toIndex(options.limit)));
  }

  readBytes(path: string): Uint8Array | undefined {
    if (checkPath(path)) return undefined;
    const bytes = this.raw.readBytes(path);
    return bytes ? plainBytes(bytes) : undefined;
  }

  snapshot(): Uint8Array {
    return plainBytes(this.raw.snapshot());
  }

  ls(path: string): Result<{ entries: FileInfo[] }> {
    const bad = checkPath(path);
    if (bad) return { error: bad };
    return parse<{ entries: FileInfo[] }>(this.raw.ls(path));
  }

  stat(path: string): Result<{ info: FileInfo }> {
    const bad = checkPath(path);
    if (bad) return { error: bad };
    return parse<{ info: FileInfo }>(this.raw.stat(path));
  }

  delete(path: string): Result<{ deleted: number }> {
    const bad = checkPath(path);
    if (bad) return { error: bad };
    return parse<{ deleted: number }>(this.raw.delete(path));
  }

  edit(options: EditOptions): Result<EditResult> {
    requireObject(options, "options");
    const bad = checkPath(options.path, "options.path");
    if (bad) return { error: bad };
    requireString(options.oldString, "options.oldString");
    requireString(options.newString, "options.newString");
    requireNumber(options.modifiedAt, "options.modifiedAt");
    if (options.ifVersion !== undefined) requireString(options.ifVersion, "options.ifVersion");
    const payload = { replaceAll: false, ...options, modifiedAt: options.modifiedAt ?? Date.now() };
    return parse<EditResult>(this.raw.edit(JSON.stringify(payload)));
  }

  grep(options: GrepOptions): Result<GrepResult> {
    const bad = checkSearch(options);
    if (bad) return { error: bad };
    requireNumber(options.maxCount, "options.maxCount");
    requireNumber(options.context, "options.context");
    const payload = {
      ...options,
      maxCount: toIndex(options.maxCount),
      context: toIndex(options.context),
    };
    return decodeGrep(this.raw.grep(JSON.stringify(payload)));
  }

  glob(options: GlobOptions): Result<GlobResult> {
    const bad = checkSearch(options);
    if (bad) return { error: bad };
    requireNumber(options.maxResults, "options.maxResults");
    const payload = { ...options, maxResults: toIndex(options.maxResults) };
    return parse<GlobResult>(this.raw.glob(JSON.stringify(payload)));
  }

  dispose(): void {
    this.raw.free?.();
  }
}

class RouterHandle implements CoreRouter {
  readonly prefixes: readonly string[];
  constructor(private readonly raw: RawRouter) {
    this.prefixes = Object.freeze(JSON.parse(raw.prefixes()) as string[]);
  }
  route(path: string): Result<Route> {
    const bad = checkPath(path);
    if (bad) return { error: bad };
    return parse<Route>(this.raw.route(path));
  }
}

/** @internal Wraps a loaded binding as a {@link Core}. Every argument is checked here, so a
 * wrong type is an {@link EngramError} `invalid_argument`, never a raw conversion message. */
export function wrapBinding(kind: CoreKind, raw: RawBinding): Core {
  return {
    kind,
    normalizePath: (path) => {
      const bad = checkPath(path);
      return bad ? { error: bad } : parse<{ path: string }>(raw.normalizePath(path));
    },
    formatNumbered: (content, firstLine) =>
      raw.formatNumbered(requireString(content, "content"), toIndex(requireNumber(firstLine, "firstLine")) ?? 1),
    errorData: (code, subject, detail = "") =>
      (
        JSON.parse(raw.errorData(requireString(code, "code"), requireString(subject, "subject"), requireString(detail, "detail"))) as {
          error: ErrorData;
        }
      ).error,
    filterPaths: (kind, pattern, root, paths) => {
      requireString(kind, "kind");
      requireString(pattern, "pattern");
      const bad = checkPath(root, "root");
      if (bad) return { error: bad };
      return parse<{ paths: string[] }>(raw.filterPaths(JSON.stringify({ kind, pattern, root, paths: requireStrings(paths, "paths") })));
    },
    rankBm25: (query, documents) => {
      const r = parse<{ scores: number[] }>(
        raw.rankBm25(requireString(query, "query"), JSON.stringify(requireStrings(documents, "documents"))),
      );
      if (r.error) throw new EngramError(r.error.code, r.error.message);
      return r.scores;
    },
    redactSecrets: (text) => JSON.parse(raw.redactSecrets(requireString(text, "text"))) as Redaction,
    createRouter: (prefixes) => {
      const json = JSON.stringify(requireStrings(prefixes, "prefixes"));
      return orThrow(() => new RouterHandle(new raw.Router(json)));
    },
    createFileTable: () => new FileTableHandle(new raw.FileTable()),
    restoreFileTable: (snapshot) => {
      if (!(snapshot instanceof Uint8Array)) {
        throw new EngramError("invalid_argument", `snapshot must be a Uint8Array, got ${describe(snapshot)}`);
      }
      return orThrow(() => new FileTableHandle(raw.FileTable.fromSnapshot(snapshot)));
    },
  };
}
