/**
 * The native sandboxed filesystem (`engram-fs`, Node only) as typed calls: the one place that
 * reads `@engram/native`'s `RootedFs` answers (listings in columns, grep columns, `{ error }`
 * objects) and makes them plain {@link Result}s. `FilesystemBackend` and the long-term memory's
 * file storage go through it; neither sees the binding.
 * @module
 */
import type * as Native from "@engram/native";
import { loadNativeBinding } from "#node-access";
import { EngramError } from "../errors.js";
import { type RawError, type RawGrep, type RawInfo, decodeGrep, errorOf, fileInfo, toIndex } from "./binding.js";
import { nativeCoreRequired } from "./loader.js";
import type { EditResult, ErrorData, FileInfo, GlobResult, GrepOptions, GrepResult, LsResult, ReadResult, Result } from "./types.js";

/** @internal Where and how {@link openRootedFs} opens the root. */
export interface RootedFsOptions {
  /** The host directory behind `/`. */
  rootDir: string;
  /** Default: `10`. */
  maxFileSizeMb?: number | undefined;
  /** Default: `true`. */
  respectGitignore?: boolean | undefined;
  /** Default: `10_000`. */
  maxResults?: number | undefined;
  /** Default: `"full"`. */
  durability?: "full" | "relaxed" | undefined;
  /** Default: `10_000` ms. */
  lockTimeoutMs?: number | undefined;
}

/** @internal What stops a search (it rejects with an {@link EngramError} `aborted`): any of
 * these signals firing. */
export type SearchSignals = readonly (AbortSignal | undefined)[];

/** @internal One root on the local disk; every call runs off the JavaScript thread and resolves
 * to its answer or `{ error }`. Paths are virtual (`/` is the root). */
export interface CoreRootedFs {
  /** The canonical host directory behind `/`. */
  root(): string;
  /** fsyncs made so far (zero with `durability: "relaxed"`). */
  syncs(): { files: number; dirs: number };
  ls(path: string): Promise<Result<LsResult>>;
  stat(path: string): Promise<Result<{ info: FileInfo }>>;
  read(path: string, offset: number, limit?: number): Promise<Result<ReadResult>>;
  readBytes(path: string): Promise<Result<{ data: Uint8Array }>>;
  /** Bytes and the version of exactly those bytes. */
  readVersioned(path: string): Promise<Result<{ data: Uint8Array; version: string }>>;
  write(path: string, data: Uint8Array, ifVersion?: string): Promise<Result<{ path: string; version: string }>>;
  edit(path: string, oldString: string, newString: string, replaceAll: boolean, ifVersion?: string): Promise<Result<EditResult>>;
  delete(path: string, ifVersion?: string): Promise<Result<{ deleted: number }>>;
  rename(from: string, to: string, ifVersion?: string): Promise<Result<{ path: string }>>;
  /** `options.path` is the directory searched. */
  grep(options: GrepOptions, signals: SearchSignals): Promise<Result<GrepResult>>;
  glob(pattern: string, path: string, maxResults: number | undefined, signals: SearchSignals): Promise<Result<GlobResult>>;
  // ---- the tools' text, made in `engram-fs` ----
  grepText(options: GrepOptions, maxChars: number, signals: SearchSignals): Promise<Result<{ text: string }>>;
  globText(pattern: string, path: string | undefined, maxChars: number, signals: SearchSignals): Promise<Result<{ text: string }>>;
  lsText(path: string, shown: string, maxChars: number): Promise<Result<{ text: string }>>;
  readText(path: string, shown: string, offset: number, limit: number, maxChars: number): Promise<Result<{ text: string }>>;
}

/** @internal Opens `options.rootDir`; throws an {@link EngramError} when it is missing or not a
 * directory, or an option is invalid, and `core_unavailable` without the native core. */
export function openRootedFs(options: RootedFsOptions): CoreRootedFs {
  let binding: RawFsBinding;
  try {
    binding = nativeFs();
  } catch (cause) {
    throw nativeCoreRequired("FilesystemBackend", cause);
  }
  const maxFileBytes = Math.round((options.maxFileSizeMb ?? 10) * 1024 * 1024);
  const fs = binding.RootedFs.open(
    options.rootDir,
    maxFileBytes,
    options.respectGitignore ?? true,
    toIndex(options.maxResults) ?? 10_000,
    options.durability ?? "full",
    toIndex(options.lockTimeoutMs) ?? 10_000,
  );
  const failed = fsError(fs);
  if (failed) throw EngramError.fromCore(failed.error);
  return new NativeRootedFs(fs as RawRootedFs, binding);
}

// ---- the binding's shapes (bindings/node/src/fs.rs) ----

/** A failed native call. */
interface RawFsFailure {
  readonly error: RawError;
}

/** What a search's walk could not look into: `skippedPaths[i]` for `skippedReasons[i]`. */
interface RawFsSkipped {
  readonly skippedPaths: string[];
  readonly skippedReasons: string[];
}

/** Entries in columns (`sizes[i]` is `-1` for a directory, `modifiedAt[i]` NaN and
 * `versions[i]` empty when absent); a glob's name what its walk skipped, an ls's the entries it
 * could not name. */
interface RawFsListing extends RawFsSkipped {
  readonly paths: string[];
  readonly sizes: ArrayLike<number>;
  readonly modifiedAt: ArrayLike<number>;
  readonly versions: string[];
  readonly truncated: boolean;
}

/** Grep columns (as a table's grep gives them) and what the search skipped. */
interface RawFsGrep extends RawFsSkipped {
  readonly grep: RawGrep;
}

type RawFsText = { text: string } | RawFsFailure;

interface RawFsCancel {
  cancel(): void;
}

/** `engram_fs::RootedFs` as the addon exports it (its generated `.d.ts` must stay assignable to
 * {@link RawFsBinding}: `tsc` checks it in {@link nativeFs}). */
interface RawRootedFs {
  root(): string;
  syncs(): { files: number; dirs: number };
  ls(path: string): Promise<RawFsListing | RawFsFailure>;
  stat(path: string): Promise<{ info: RawInfo } | RawFsFailure>;
  read(path: string, offset: number, limit?: number | null): Promise<ReadResult | RawFsFailure>;
  readBytes(path: string): Promise<Uint8Array | RawFsFailure>;
  readVersioned(path: string): Promise<{ data: Uint8Array; version: string } | RawFsFailure>;
  write(path: string, data: Uint8Array, ifVersion?: string | null): Promise<{ path: string; version: string } | RawFsFailure>;
  edit(
    path: string,
    oldString: string,
    newString: string,
    replaceAll: boolean,
    ifVersion?: string | null,
  ): Promise<{ path: string; occurrences: number; version: string } | RawFsFailure>;
  delete(path: string, ifVersion?: string | null): Promise<{ deleted: number } | RawFsFailure>;
  rename(from: string, to: string, ifVersion?: string | null): Promise<{ path: string } | RawFsFailure>;
  grep(args: object, cancel: RawFsCancel): Promise<RawFsGrep | RawFsFailure>;
  glob(
    pattern: string,
    path: string | null | undefined,
    maxResults: number | null | undefined,
    cancel: RawFsCancel,
  ): Promise<RawFsListing | RawFsFailure>;
  grepText(args: object, maxChars: number, cancel: RawFsCancel): Promise<RawFsText>;
  globText(pattern: string, path: string | null | undefined, maxChars: number, cancel: RawFsCancel): Promise<RawFsText>;
  lsText(path: string, shown: string, maxChars: number): Promise<RawFsText>;
  readText(path: string, shown: string, offset: number, limit: number, maxChars: number): Promise<RawFsText>;
}

interface RawFsBinding {
  RootedFs: {
    open(
      root: string,
      maxFileBytes: number,
      respectGitignore: boolean,
      maxResults: number,
      durability: string,
      lockTimeoutMs: number,
    ): RawRootedFs | RawFsFailure;
  };
  FsCancel: new () => RawFsCancel;
  GrepArgs: typeof Native.GrepArgs;
}

/** The native addon as {@link RawFsBinding}: `tsc` fails here when its generated `.d.ts` drifts. */
function nativeFs(): RawFsBinding {
  const native = loadNativeBinding() as unknown as typeof Native;
  return native;
}

/** The `{ error }` of a native call as plain {@link ErrorData}, or `undefined`. */
function fsError(r: object): { error: ErrorData } | undefined {
  return "error" in r ? { error: errorOf((r as RawFsFailure).error) } : undefined;
}

/** A native answer as a {@link Result}: its failure as plain data, or `ok` of its value. */
async function answer<R extends object, T>(call: Promise<R | RawFsFailure>, ok: (r: R) => T): Promise<Result<T>> {
  const r = await call;
  return (fsError(r) ?? ok(r as R)) as Result<T>;
}

/** `result` with what the walk skipped (see {@link RawFsSkipped}), when it skipped anything. */
function withSkipped<T extends object>(result: T, raw: RawFsSkipped): T & Pick<GrepResult, "skipped"> {
  const { skippedPaths, skippedReasons } = raw;
  if (skippedPaths.length === 0) return result;
  return { ...result, skipped: skippedPaths.map((path, i) => ({ path, reason: skippedReasons[i] as string })) };
}

/** Entries from columns (see {@link RawFsListing}). */
function entries(r: RawFsListing): FileInfo[] {
  const { paths, sizes, modifiedAt, versions } = r;
  const out: FileInfo[] = new Array(paths.length);
  for (let i = 0; i < paths.length; i++) {
    const size = sizes[i] as number;
    if (size < 0) {
      out[i] = { path: paths[i] as string, isDir: true };
      continue;
    }
    const info: FileInfo = { path: paths[i] as string, isDir: false, size };
    const at = modifiedAt[i] as number;
    if (!Number.isNaN(at)) info.modifiedAt = at;
    const version = versions[i] as string;
    if (version !== "") info.version = version;
    out[i] = info;
  }
  return out;
}

const text = (r: RawFsText): Result<{ text: string }> => fsError(r) ?? { text: (r as { text: string }).text };

class NativeRootedFs implements CoreRootedFs {
  readonly #fs: RawRootedFs;
  readonly #binding: RawFsBinding;

  constructor(fs: RawRootedFs, binding: RawFsBinding) {
    this.#fs = fs;
    this.#binding = binding;
  }

  root(): string {
    return this.#fs.root();
  }

  syncs(): { files: number; dirs: number } {
    return this.#fs.syncs();
  }

  ls(path: string): Promise<Result<LsResult>> {
    return answer(this.#fs.ls(path), (r) => withSkipped({ entries: entries(r) }, r));
  }

  stat(path: string): Promise<Result<{ info: FileInfo }>> {
    return answer(this.#fs.stat(path), (r) => ({ info: fileInfo(r.info) }));
  }

  read(path: string, offset: number, limit?: number): Promise<Result<ReadResult>> {
    return answer(
      this.#fs.read(path, offset, limit),
      (r): ReadResult => ({ content: r.content, totalLines: r.totalLines, offset: r.offset, lines: r.lines }),
    );
  }

  async readBytes(path: string): Promise<Result<{ data: Uint8Array }>> {
    const r = await this.#fs.readBytes(path);
    if (!(r instanceof Uint8Array)) return fsError(r) as { error: ErrorData };
    return { data: new Uint8Array(r.buffer, r.byteOffset, r.byteLength) };
  }

  readVersioned(path: string): Promise<Result<{ data: Uint8Array; version: string }>> {
    return answer(this.#fs.readVersioned(path), (r) => ({ data: r.data, version: r.version }));
  }

  write(path: string, data: Uint8Array, ifVersion?: string): Promise<Result<{ path: string; version: string }>> {
    return answer(this.#fs.write(path, data, ifVersion), (r) => ({ path: r.path, version: r.version }));
  }

  edit(path: string, oldString: string, newString: string, replaceAll: boolean, ifVersion?: string): Promise<Result<EditResult>> {
    return answer(this.#fs.edit(path, oldString, newString, replaceAll, ifVersion), (r) => ({
      path: r.path,
      occurrences: r.occurrences,
      version: r.version,
    }));
  }

  delete(path: string, ifVersion?: string): Promise<Result<{ deleted: number }>> {
    return answer(this.#fs.delete(path, ifVersion), (r) => ({ deleted: r.deleted }));
  }

  rename(from: string, to: string, ifVersion?: string): Promise<Result<{ path: string }>> {
    return answer(this.#fs.rename(from, to, ifVersion), (r) => ({ path: r.path }));
  }

  async grep(options: GrepOptions, signals: SearchSignals): Promise<Result<GrepResult>> {
    const r = await this.#search(signals, "grep", (c) => this.#fs.grep(this.#grepArgs(options), c));
    const failed = fsError(r);
    if (failed) return failed;
    const raw = r as RawFsGrep;
    const decoded = decodeGrep(raw.grep);
    return decoded.error ? decoded : withSkipped(decoded, raw);
  }

  async glob(pattern: string, path: string, maxResults: number | undefined, signals: SearchSignals): Promise<Result<GlobResult>> {
    const r = await this.#search(signals, "glob", (c) => this.#fs.glob(pattern, path, maxResults, c));
    const failed = fsError(r);
    if (failed) return failed;
    const raw = r as RawFsListing;
    return withSkipped({ files: entries(raw), truncated: raw.truncated }, raw);
  }

  async grepText(options: GrepOptions, maxChars: number, signals: SearchSignals): Promise<Result<{ text: string }>> {
    return text(await this.#search(signals, "grep", (c) => this.#fs.grepText(this.#grepArgs(options), maxChars, c)));
  }

  async globText(pattern: string, path: string | undefined, maxChars: number, signals: SearchSignals): Promise<Result<{ text: string }>> {
    return text(await this.#search(signals, "glob", (c) => this.#fs.globText(pattern, path, maxChars, c)));
  }

  async lsText(path: string, shown: string, maxChars: number): Promise<Result<{ text: string }>> {
    return text(await this.#fs.lsText(path, shown, maxChars));
  }

  async readText(path: string, shown: string, offset: number, limit: number, maxChars: number): Promise<Result<{ text: string }>> {
    return text(await this.#fs.readText(path, shown, offset, limit, maxChars));
  }

  /** The binding's options object for one grep call (`options.path`: the directory searched). */
  #grepArgs(o: GrepOptions): object {
    const GrepArgs = this.#binding.GrepArgs;
    return new GrepArgs(o.pattern, o.path, o.glob, o.regex, o.ignoreCase, toIndex(o.maxCount), o.outputMode, toIndex(o.context));
  }

  /** Runs a cancellable native search: rejects with `aborted` when any of `signals` fires. */
  async #search<T>(signals: SearchSignals, what: string, run: (c: RawFsCancel) => Promise<T>): Promise<T> {
    const live = signals.filter((s): s is AbortSignal => s !== undefined);
    const aborted = () => new EngramError("aborted", `${what} was cancelled`);
    if (live.some((s) => s.aborted)) throw aborted();
    const token = new this.#binding.FsCancel();
    const stop = () => token.cancel();
    for (const s of live) s.addEventListener("abort", stop, { once: true });
    try {
      const out = await run(token);
      if (live.some((s) => s.aborted)) throw aborted();
      return out;
    } finally {
      for (const s of live) s.removeEventListener("abort", stop);
    }
  }
}
