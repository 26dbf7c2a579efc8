/**
 * `FilesystemBackend`: real files under one host directory, through the native `engram-fs`
 * crate (Node only): every operation resolves from an open handle of the root one component at
 * a time (race-safe containment, see SECURITY.md), atomic compare-and-swap writes across
 * processes, streamed paginated reads, bounded parallel grep and glob that honour `.gitignore`.
 * Every call runs off the JavaScript thread; searches can be cancelled with an `AbortSignal`.
 * @module
 */
import { loadNativeBinding } from "#node-access";
import { decodeGrepJson, toIndex } from "../core/binding.js";
import { nativeCoreRequired } from "../core/loader.js";
import { EngramError } from "../errors.js";
import type { Core, ErrorData, FileInfo, GlobResult, GrepSkip, ReadOptions, ReadResult, Result } from "../core/types.js";
import { type CoreSource, coreRef } from "./core-ref.js";
import { mapGrepPaths } from "./grep-result.js";
import type { Backend, BackendEditOptions, BackendGlobOptions, BackendGrepOptions, BackendWriteOptions } from "./protocol.js";

/** Options of {@link FilesystemBackend}. */
export interface FilesystemBackendOptions {
  /** The host directory the agent's `/` maps to. Required: there is no implicit default. */
  rootDir: string;
  /** `true`: the agent uses virtual paths (`/src/a.ts`). `false`: it uses host paths, which must
   * still lie inside `rootDir`. Either way containment is enforced. Default: `true`. */
  virtualMode?: boolean;
  /** Files larger than this are skipped by grep and refused (`too_large`) by whole-file
   * operations; paginated reads stream any size. Default: `10`. */
  maxFileSizeMb?: number;
  /** Honour `.gitignore`/`.ignore` in grep and glob; `.git/` is skipped regardless. Default: `true`. */
  respectGitignore?: boolean;
  /** Ceiling of a grep's `maxCount` and a glob's `maxResults` (whatever the model asks for), and
   * their value when absent; results beyond it set `truncated`. Default: `10_000`. */
  maxResults?: number;
  /** `"full"`: fsync each written file and its directory; `"relaxed"`: no fsync (a machine crash
   * may lose recent writes). Both are atomic. Default: `"full"`. */
  durability?: "full" | "relaxed";
  /** How long a write waits for another writer (any process) holding the same directory's lock
   * before returning `conflict`. Default: `10_000` ms. */
  lockTimeoutMs?: number;
  /** Cancels every grep and glob of this backend still running (and refuses new ones) once it
   * fires: they reject with an {@link EngramError} `aborted`. Default: none. */
  signal?: AbortSignal;
  /** The core used for canonical error texts. Default: {@link loadCore}'s choice. */
  core?: Core | Promise<Core>;
}

/** @internal The N-API handle of `engram_fs::RootedFs`; every call runs on the libuv pool. */
export interface RawRootedFs {
  root(): string;
  ls(path: string): Promise<string>;
  stat(path: string): Promise<string>;
  read(path: string, offset: number, limit?: number | null): Promise<string>;
  /** Bytes, or the JSON error text. */
  readBytes(path: string): Promise<Uint8Array | string>;
  /** Bytes and the version of exactly those bytes, or the JSON error text. */
  readVersioned(path: string): Promise<{ data: Uint8Array; version: string } | string>;
  write(path: string, data: Uint8Array, ifVersion?: string | null): Promise<string>;
  edit(optionsJson: string): Promise<string>;
  delete(path: string, ifVersion?: string | null): Promise<string>;
  rename(from: string, to: string, ifVersion?: string | null): Promise<string>;
  grep(optionsJson: string, cancel: RawFsCancel): Promise<string>;
  glob(optionsJson: string, cancel: RawFsCancel): Promise<string>;
}

/** @internal */
export interface RawFsCancel {
  cancel(): void;
}

/** @internal */
export interface RawFsBinding {
  RootedFs: { open(optionsJson: string): RawRootedFs };
  FsCancel: new () => RawFsCancel;
}

/** Per-call options of {@link FilesystemBackend.grep} and {@link FilesystemBackend.glob}. */
export interface FilesystemSearchOptions {
  /** Stops the search (it rejects with an {@link EngramError} `aborted`). Default: none. */
  signal?: AbortSignal;
}

/** @internal Opens the native handle for `root` (shared with the file memory storage). */
export function openRootedFs(options: {
  rootDir: string;
  maxFileSizeMb?: number | undefined;
  respectGitignore?: boolean | undefined;
  maxResults?: number | undefined;
  durability?: "full" | "relaxed" | undefined;
  lockTimeoutMs?: number | undefined;
}): { fs: RawRootedFs; binding: RawFsBinding } {
  let binding: RawFsBinding;
  try {
    binding = loadNativeBinding() as unknown as RawFsBinding;
  } catch (cause) {
    throw nativeCoreRequired("FilesystemBackend", cause);
  }
  const maxFileBytes = Math.round((options.maxFileSizeMb ?? 10) * 1024 * 1024);
  const json = {
    root: options.rootDir,
    maxFileBytes,
    respectGitignore: options.respectGitignore ?? true,
    maxResults: toIndex(options.maxResults) ?? 10_000,
    durability: options.durability ?? "full",
    lockTimeoutMs: toIndex(options.lockTimeoutMs) ?? 10_000,
  };
  try {
    return { fs: binding.RootedFs.open(JSON.stringify(json)), binding };
  } catch (e) {
    throw EngramError.fromCoreText(e instanceof Error ? e.message : String(e));
  }
}

/** Runs a cancellable native search: rejects with `aborted` when either signal fires. */
async function cancellable<T>(
  binding: RawFsBinding,
  signals: (AbortSignal | undefined)[],
  what: string,
  run: (c: RawFsCancel) => Promise<T>,
): Promise<T> {
  const live = signals.filter((s): s is AbortSignal => s !== undefined);
  const aborted = () => new EngramError("aborted", `${what} was cancelled`);
  if (live.some((s) => s.aborted)) throw aborted();
  const token = new binding.FsCancel();
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

const encoder = new TextEncoder();
const parse = <T>(json: string) => JSON.parse(json) as Result<T>;

/** Files on the local disk, confined to `rootDir`. */
export class FilesystemBackend implements Backend {
  readonly #options: FilesystemBackendOptions;
  readonly #core: () => Promise<Core>;
  #handle: RawRootedFs | undefined;
  #binding: RawFsBinding | undefined;

  /** Throws an {@link EngramError} when `rootDir` is missing or not a directory. */
  constructor(options: FilesystemBackendOptions) {
    if (!options?.rootDir) throw new EngramError("invalid_path", "FilesystemBackend needs a rootDir");
    this.#options = options;
    this.#core = coreRef(options.core as CoreSource);
    this.#fs();
  }

  /** The canonical host directory behind `/`. */
  get rootDir(): string {
    return this.#fs().root();
  }

  #fs(): RawRootedFs {
    if (!this.#handle) {
      const { fs, binding } = openRootedFs(this.#options);
      this.#handle = fs;
      this.#binding = binding;
    }
    return this.#handle;
  }

  get #virtual(): boolean {
    return this.#options.virtualMode ?? true;
  }

  /** The virtual path for an agent-supplied path (host paths when not in virtual mode). */
  async #in(path: string): Promise<Result<{ path: string }>> {
    if (this.#virtual || !path.startsWith("/")) return { path };
    const root = this.rootDir;
    if (path === root) return { path: "/" };
    if (path.startsWith(`${root}/`)) return { path: path.slice(root.length) };
    return { error: (await this.#core()).errorData("path_escape", path) };
  }

  /** The path to show the agent for a virtual path. */
  #out(path: string): string {
    if (this.#virtual) return path;
    return path === "/" ? this.rootDir : this.rootDir + path;
  }

  /** An error about a virtual path, rendered again by the core for the host path (as a
   * composite does for a mount: the root is the prefix), never by editing its text. */
  async #outError(e: ErrorData, inner: string): Promise<ErrorData> {
    return this.#virtual ? e : (await this.#core()).mountError(e, this.rootDir, this.#out(inner));
  }

  #outInfo = (f: FileInfo): FileInfo => (this.#virtual ? f : { ...f, path: this.#out(f.path) });

  /** Runs one path operation with host/virtual mapping of its input, output and error. */
  async #op<T>(path: string, run: (v: string) => Result<T> | Promise<Result<T>>, map: (r: T) => T = (r) => r): Promise<Result<T>> {
    const v = await this.#in(path);
    if (v.error) return { error: v.error };
    const r = await run(v.path);
    return r.error ? { error: await this.#outError(r.error, v.path) } : (map(r as T) as Result<T>);
  }

  async ls(path: string) {
    return this.#op(
      path,
      async (v) => parse<{ entries: FileInfo[] }>(await this.#fs().ls(v)),
      (r) => ({ entries: r.entries.map(this.#outInfo) }),
    );
  }

  async stat(path: string) {
    return this.#op(
      path,
      async (v) => parse<{ info: FileInfo }>(await this.#fs().stat(v)),
      (r) => ({ info: this.#outInfo(r.info) }),
    );
  }

  async read(path: string, options: ReadOptions = {}) {
    const offset = toIndex(options.offset) ?? 0;
    const limit = toIndex(options.limit);
    return this.#op(path, async (v) => parse<ReadResult>(await this.#fs().read(v, offset, limit)));
  }

  async readBytes(path: string) {
    return this.#op(path, async (v): Promise<Result<{ data: Uint8Array }>> => {
      const r = await this.#fs().readBytes(v);
      if (typeof r === "string") return parse<{ data: Uint8Array }>(r);
      return { data: new Uint8Array(r.buffer, r.byteOffset, r.byteLength) };
    });
  }

  async write(path: string, content: string | Uint8Array, options: BackendWriteOptions = {}) {
    const data = typeof content === "string" ? encoder.encode(content) : content;
    return this.#op(
      path,
      async (v) => parse<{ path: string; version: string }>(await this.#fs().write(v, data, options.ifVersion)),
      (r) => ({ ...r, path: this.#out(r.path) }),
    );
  }

  async edit(path: string, oldString: string, newString: string, options: BackendEditOptions = {}) {
    return this.#op(
      path,
      async (v) =>
        parse<{ path: string; occurrences: number; version: string }>(
          await this.#fs().edit(
            JSON.stringify({ path: v, oldString, newString, replaceAll: options.replaceAll ?? false, ifVersion: options.ifVersion }),
          ),
        ),
      (r) => ({ ...r, path: this.#out(r.path) }),
    );
  }

  async delete(path: string) {
    return this.#op(path, async (v) => parse<{ deleted: number }>(await this.#fs().delete(v)));
  }

  /** Searches file contents; `maxCount` is clamped to `maxResults`; files that could not be
   * searched are listed in `skipped`; `options.signal` (or the backend's) cancels the walk. */
  async grep(pattern: string, options: BackendGrepOptions & FilesystemSearchOptions = {}) {
    const { signal, ...rest } = options;
    const clean = { ...rest, maxCount: toIndex(rest.maxCount), context: toIndex(rest.context) };
    return this.#op(
      options.path ?? "/",
      async (v) => {
        const fs = this.#fs();
        const json = await cancellable(this.#binding as RawFsBinding, [signal, this.#options.signal], "grep", (c) =>
          fs.grep(JSON.stringify({ ...clean, pattern, path: v }), c),
        );
        const decoded = decodeGrepJson(json);
        const skipped = (JSON.parse(json) as { skipped?: GrepSkip[] }).skipped;
        return skipped && !decoded.error ? { ...decoded, skipped } : decoded;
      },
      (r) => {
        const out = this.#virtual ? r : mapGrepPaths(r, (p) => this.#out(p));
        return r.skipped && !this.#virtual ? { ...out, skipped: r.skipped.map((s) => ({ ...s, path: this.#out(s.path) })) } : out;
      },
    );
  }

  /** Files matching a glob; `maxResults` is clamped to the backend's `maxResults`;
   * `options.signal` (or the backend's) cancels the walk. */
  async glob(pattern: string, options: BackendGlobOptions & FilesystemSearchOptions = {}) {
    const maxResults = toIndex(options.maxResults);
    return this.#op(
      options.path ?? "/",
      async (v) => {
        const fs = this.#fs();
        const json = await cancellable(this.#binding as RawFsBinding, [options.signal, this.#options.signal], "glob", (c) =>
          fs.glob(JSON.stringify({ pattern, path: v, maxResults }), c),
        );
        return parse<GlobResult>(json);
      },
      (r) => ({ ...r, files: r.files.map(this.#outInfo) }),
    );
  }
}
