/**
 * Adapts a raw binding (native or WASM: both export the same classes and functions, returning
 * one JSON string per call) to the typed {@link Core} API. One code path for both cores.
 * @module
 */
import { EngramError } from "../errors.js";
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

class FileTableHandle implements CoreFileTable {
  constructor(private readonly raw: RawFileTable) {}

  get size(): number {
    return this.raw.size;
  }

  write(path: string, content: string | Uint8Array, options: WriteOptions = {}) {
    const at = options.modifiedAt ?? Date.now();
    const json =
      typeof content === "string"
        ? this.raw.writeText(path, content, at, options.ifVersion)
        : this.raw.write(path, content, at, options.ifVersion);
    return parse<{ path: string; version: string }>(json);
  }

  append(path: string, content: string | Uint8Array, options: { modifiedAt?: number } = {}) {
    const bytes = typeof content === "string" ? new TextEncoder().encode(content) : content;
    return parse<{ path: string; version: string }>(this.raw.append(path, bytes, options.modifiedAt ?? Date.now()));
  }

  read(path: string, options: ReadOptions = {}) {
    return parse<ReadResult>(this.raw.read(path, toIndex(options.offset) ?? 0, toIndex(options.limit)));
  }

  readBytes(path: string): Uint8Array | undefined {
    const bytes = this.raw.readBytes(path);
    return bytes ? plainBytes(bytes) : undefined;
  }

  snapshot(): Uint8Array {
    return plainBytes(this.raw.snapshot());
  }

  ls(path: string) {
    return parse<{ entries: FileInfo[] }>(this.raw.ls(path));
  }

  stat(path: string) {
    return parse<{ info: FileInfo }>(this.raw.stat(path));
  }

  delete(path: string) {
    return parse<{ deleted: number }>(this.raw.delete(path));
  }

  edit(options: EditOptions) {
    const payload = { replaceAll: false, ...options, modifiedAt: options.modifiedAt ?? Date.now() };
    return parse<EditResult>(this.raw.edit(JSON.stringify(payload)));
  }

  grep(options: GrepOptions) {
    const payload = {
      ...options,
      maxCount: toIndex(options.maxCount),
      context: toIndex(options.context),
    };
    return decodeGrep(this.raw.grep(JSON.stringify(payload)));
  }

  glob(options: GlobOptions) {
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
  route(path: string) {
    return parse<Route>(this.raw.route(path));
  }
}

/** @internal Wraps a loaded binding as a {@link Core}. */
export function wrapBinding(kind: CoreKind, raw: RawBinding): Core {
  return {
    kind,
    normalizePath: (path) => parse<{ path: string }>(raw.normalizePath(path)),
    formatNumbered: (content, firstLine) => raw.formatNumbered(content, toIndex(firstLine) ?? 1),
    errorData: (code, subject, detail = "") => (JSON.parse(raw.errorData(code, subject, detail)) as { error: ErrorData }).error,
    filterPaths: (kind, pattern, root, paths) =>
      parse<{ paths: string[] }>(raw.filterPaths(JSON.stringify({ kind, pattern, root, paths }))),
    rankBm25: (query, documents) => {
      const r = parse<{ scores: number[] }>(raw.rankBm25(query, JSON.stringify(documents)));
      if (r.error) throw new EngramError(r.error.code, r.error.message);
      return r.scores;
    },
    createRouter: (prefixes) => orThrow(() => new RouterHandle(new raw.Router(JSON.stringify(prefixes)))),
    createFileTable: () => new FileTableHandle(new raw.FileTable()),
    restoreFileTable: (snapshot) => orThrow(() => new FileTableHandle(raw.FileTable.fromSnapshot(snapshot))),
  };
}
