/**
 * `FilesystemBackend`: real files under one host directory, through the native `engram-fs`
 * crate (Node only): every operation resolves from an open handle of the root one component at
 * a time (race-safe containment, see SECURITY.md), atomic compare-and-swap writes across
 * processes, streamed paginated reads, bounded parallel grep and glob that honour `.gitignore`.
 * Every call runs off the JavaScript thread; searches can be cancelled with an `AbortSignal`.
 * @module
 */
import type * as Native from "@engram/native";
import { loadNativeBinding, realHostPath } from "#node-access";
import {
  checkGrep,
  checkPath,
  checkSearch,
  decodeGrep,
  errorOf,
  fileInfo,
  type RawError,
  requireString,
  type RawGrep,
  type RawGrepArgs,
  type RawGrepArgsClass,
  type RawInfo,
  toIndex,
} from "../core/binding.js";
import { nativeCoreRequired } from "../core/loader.js";
import type { Core, ErrorData, FileInfo, GlobResult, GrepOptions, GrepResult, ReadOptions, ReadResult, Result } from "../core/types.js";
import { EngramError } from "../errors.js";
import type { BackendCapabilities } from "./capabilities.js";
import { type CoreSource, coreRef } from "./core-ref.js";
import { requireContent } from "./arguments.js";
import { mapGrepPaths } from "./grep-result.js";
import type {
  Backend,
  BackendEditOptions,
  BackendGlobOptions,
  BackendGrepOptions,
  BackendWriteOptions,
  ExecuteOptions,
  ExecuteResult,
  ToolTextRequest,
} from "./protocol.js";
import { type SandboxDefaults, runSandboxed, unconfinedWarning } from "./sandbox.js";

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
  /** Gives the backend an `execute` method, and so the agent an `execute` tool: shell commands
   * run confined to `rootDir` by the native sandbox (Linux: Landlock lets them write only
   * beneath the root, no network, no process or `/proc` entry outside is visible, rlimits, a
   * timeout that kills every process of the command, an environment without the agent's
   * variables). Where the kernel lacks a part, `execute` answers `unsupported` naming it: there
   * is no unconfined fallback; only an explicit `sandbox: "none"` runs commands unconfined, and
   * says so on stderr. `true` for the defaults. Default: absent (no commands). */
  execute?: boolean | SandboxDefaults;
}

/** @internal A failed native call. */
export interface RawFsFailure {
  readonly error: RawError;
}

/** @internal What a search's walk could not look into: `skippedPaths[i]` for `skippedReasons[i]`. */
export interface RawFsSkipped {
  readonly skippedPaths: string[];
  readonly skippedReasons: string[];
}

/** @internal Entries in columns (`sizes[i]` is `-1` for a directory, `modifiedAt[i]` NaN and
 * `versions[i]` empty when absent); a glob's name what its walk skipped, an ls's the entries it could not name. */
export interface RawFsListing extends RawFsSkipped {
  readonly paths: string[];
  readonly sizes: ArrayLike<number>;
  readonly modifiedAt: ArrayLike<number>;
  readonly versions: string[];
  readonly truncated: boolean;
}

/** @internal Grep columns (as a table's grep gives them) and what the search skipped. */
export interface RawFsGrep extends RawFsSkipped {
  readonly grep: RawGrep;
}

/** @internal The N-API handle of `engram_fs::RootedFs`; every call runs on the libuv pool and
 * resolves to its typed answer or `{ error }`. The generated `.d.ts` of `@engram/native` must
 * stay assignable to {@link RawFsBinding} (`tsc` checks it in {@link nativeFs}). */
export interface RawRootedFs {
  root(): string;
  /** fsyncs made so far (zero with `durability: "relaxed"`). */
  syncs(): { files: number; dirs: number };
  ls(path: string): Promise<RawFsListing | RawFsFailure>;
  stat(path: string): Promise<{ info: RawInfo } | RawFsFailure>;
  read(path: string, offset: number, limit?: number | null): Promise<ReadResult | RawFsFailure>;
  readBytes(path: string): Promise<Uint8Array | RawFsFailure>;
  /** Bytes and the version of exactly those bytes. */
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
  grep(args: RawGrepArgs, cancel: RawFsCancel): Promise<RawFsGrep | RawFsFailure>;
  glob(
    pattern: string,
    path: string | null | undefined,
    maxResults: number | null | undefined,
    cancel: RawFsCancel,
  ): Promise<RawFsListing | RawFsFailure>;
  grepText(args: RawGrepArgs, maxChars: number, cancel: RawFsCancel): Promise<RawFsText>;
  globText(pattern: string, path: string | null | undefined, maxChars: number, cancel: RawFsCancel): Promise<RawFsText>;
  lsText(path: string, shown: string, maxChars: number): Promise<RawFsText>;
  readText(path: string, shown: string, offset: number, limit: number, maxChars: number): Promise<RawFsText>;
}

type RawFsText = { text: string } | RawFsFailure;

/** @internal */
export interface RawFsCancel {
  cancel(): void;
}

/** @internal */
export interface RawFsBinding {
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
  GrepArgs: RawGrepArgsClass;
}

/** The native addon as {@link RawFsBinding}: `tsc` fails here when its generated `.d.ts` drifts. */
function nativeFs(): RawFsBinding {
  const native = loadNativeBinding() as unknown as typeof Native;
  return native;
}

/** @internal The `{ error }` of a native call as plain {@link ErrorData}, or `undefined`. */
export function fsError(r: object): { error: ErrorData } | undefined {
  return "error" in r ? { error: errorOf((r as RawFsFailure).error) } : undefined;
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
  return { fs: fs as RawRootedFs, binding };
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

/** A native answer as a {@link Result}: its failure as plain data, or `ok` of its value. */
async function answer<R extends object, T>(call: Promise<R | RawFsFailure>, ok: (r: R) => T): Promise<Result<T>> {
  const r = await call;
  return (fsError(r) ?? ok(r as R)) as Result<T>;
}

/** Files on the local disk, confined to `rootDir`. */
export class FilesystemBackend implements Backend, BackendCapabilities {
  readonly #options: FilesystemBackendOptions;
  readonly #core: () => Promise<Core>;
  #handle: RawRootedFs | undefined;
  #binding: RawFsBinding | undefined;

  /** Present when the backend was made with the `execute` option (see {@link Backend.execute}). */
  declare readonly execute?: (command: string, options?: ExecuteOptions) => Promise<Result<ExecuteResult>>;

  /** Throws an {@link EngramError} when `rootDir` is missing or not a directory. */
  constructor(options: FilesystemBackendOptions) {
    if (!options?.rootDir) throw new EngramError("invalid_path", "FilesystemBackend needs a rootDir");
    this.#options = options;
    this.#core = coreRef(options.core as CoreSource);
    this.#fs();
    const sandbox = options.execute;
    if (sandbox) {
      const defaults = sandbox === true ? {} : sandbox;
      if (defaults.sandbox === "none") console.warn(unconfinedWarning(this.rootDir));
      // Configurable, so a Proxy over the backend (a wrapper) may hand out a bound copy.
      Object.defineProperty(this, "execute", {
        configurable: true,
        value: (command: string, o: ExecuteOptions = {}) => this.#execute(command, { ...defaults, ...o }),
      });
    }
  }

  async #execute(command: string, options: ExecuteOptions & SandboxDefaults): Promise<Result<ExecuteResult>> {
    requireString(command, "command");
    const cwd = await this.#in(options.cwd ?? "/");
    if (cwd.error) return cwd;
    const normal = (await this.#core()).normalizePath(cwd.path);
    if (normal.error) return normal;
    return runSandboxed(this.rootDir, normal.path === "/" ? this.rootDir : this.rootDir + normal.path, command, options);
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

  /** The virtual path for an agent-supplied path (host paths when not in virtual mode); a path
   * with a lone surrogate is `invalid_path`, as in every backend. */
  async #in(path: string): Promise<Result<{ path: string }>> {
    const bad = checkPath(path);
    if (bad) return { error: bad };
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

  /** `r` with its skipped entries' paths as the caller sees paths. */
  #outSkipped<T extends Pick<GrepResult, "skipped">>(r: T): T {
    return r.skipped && !this.#virtual ? { ...r, skipped: r.skipped.map((s) => ({ ...s, path: this.#out(s.path) })) } : r;
  }

  /** Runs one path operation with host/virtual mapping of its input, output and error. */
  async #op<T>(path: string, run: (v: string) => Result<T> | Promise<Result<T>>, map: (r: T) => T = (r) => r): Promise<Result<T>> {
    const v = await this.#in(path);
    if (v.error) return { error: v.error };
    const r = await run(v.path);
    return r.error ? { error: await this.#outError(r.error, v.path) } : (map(r as T) as Result<T>);
  }

  /** A cancellable search with this backend's signal and the call's. */
  #search<T>(signal: AbortSignal | undefined, what: string, run: (c: RawFsCancel) => Promise<T>): Promise<T> {
    return cancellable(this.#binding as RawFsBinding, [signal, this.#options.signal], what, run);
  }

  /** The binding's options object for one grep call. */
  #grepArgs(pattern: string, o: BackendGrepOptions, path: string): RawGrepArgs {
    const GrepArgs = (this.#binding as RawFsBinding).GrepArgs;
    return new GrepArgs(pattern, path, o.glob, o.regex, o.ignoreCase, toIndex(o.maxCount), o.outputMode, toIndex(o.context));
  }

  async ls(path: string) {
    return this.#op(
      path,
      (v) => answer(this.#fs().ls(v), (r) => withSkipped({ entries: entries(r) }, r)),
      (r) => this.#outSkipped({ ...r, entries: r.entries.map(this.#outInfo) }),
    );
  }

  /** Its files are a directory's, outside any thread's checkpoint (see
   * {@link BackendCapabilities.outsideThread}). */
  async outsideThread(_path: string): Promise<boolean> {
    return true;
  }

  async stat(path: string) {
    return this.#op(
      path,
      (v) => answer(this.#fs().stat(v), (r) => ({ info: fileInfo(r.info) })),
      (r) => ({ info: this.#outInfo(r.info) }),
    );
  }

  async read(path: string, options: ReadOptions = {}) {
    const offset = toIndex(options.offset) ?? 0;
    const limit = toIndex(options.limit);
    return this.#op(path, (v) =>
      answer(
        this.#fs().read(v, offset, limit),
        (r): ReadResult => ({ content: r.content, totalLines: r.totalLines, offset: r.offset, lines: r.lines }),
      ),
    );
  }

  async readBytes(path: string) {
    return this.#op(path, async (v): Promise<Result<{ data: Uint8Array }>> => {
      const r = await this.#fs().readBytes(v);
      if (!(r instanceof Uint8Array)) return fsError(r) as { error: ErrorData };
      return { data: new Uint8Array(r.buffer, r.byteOffset, r.byteLength) };
    });
  }

  async write(path: string, content: string | Uint8Array, options: BackendWriteOptions = {}) {
    requireContent(content);
    const data = typeof content === "string" ? encoder.encode(content) : content;
    return this.#op(
      path,
      (v) => answer(this.#fs().write(v, data, options.ifVersion), (r) => ({ path: r.path, version: r.version })),
      (r) => ({ ...r, path: this.#out(r.path) }),
    );
  }

  async edit(path: string, oldString: string, newString: string, options: BackendEditOptions = {}) {
    requireString(oldString, "oldString");
    requireString(newString, "newString");
    return this.#op(
      path,
      (v) =>
        answer(this.#fs().edit(v, oldString, newString, options.replaceAll ?? false, options.ifVersion), (r) => ({
          path: r.path,
          occurrences: r.occurrences,
          version: r.version,
        })),
      (r) => ({ ...r, path: this.#out(r.path) }),
    );
  }

  async delete(path: string) {
    return this.#op(path, (v) => answer(this.#fs().delete(v), (r) => ({ deleted: r.deleted })));
  }

  /** The path a write to `path` reaches: symbolic links among its parent directories resolved
   * (as the write resolves them, inside the root), its last component as named, since a link
   * there is refused rather than followed (see {@link Backend.realPath}). Parents that do not
   * exist yet are kept as named (a write creates them); a path whose parents lead outside the
   * root is `path_escape`; one the write would refuse for another reason is returned as given,
   * the write then reporting it. */
  async realPath(path: string): Promise<Result<{ path: string }>> {
    return this.#op(
      path,
      async (v): Promise<Result<{ path: string }>> => {
        const normal = (await this.#core()).normalizePath(v);
        if (normal.error || normal.path === "/") return normal;
        const root = this.rootDir;
        const cut = normal.path.lastIndexOf("/");
        let [dir, rest] = [normal.path.slice(0, cut), normal.path.slice(cut)];
        for (;;) {
          let real: string;
          try {
            real = await realHostPath(root + dir);
          } catch (e) {
            if ((e as { code?: unknown }).code !== "ENOENT" || dir === "") return normal;
            const up = dir.lastIndexOf("/");
            [dir, rest] = [dir.slice(0, up), dir.slice(up) + rest];
            continue;
          }
          if (real === root) return { path: rest };
          if (real.startsWith(`${root}/`)) return { path: real.slice(root.length) + rest };
          return { error: (await this.#core()).errorData("path_escape", normal.path) };
        }
      },
      (r) => ({ path: this.#out(r.path) }),
    );
  }

  /** Searches file contents; `maxCount` is clamped to `maxResults`; files that could not be
   * searched are listed in `skipped`; `options.signal` (or the backend's) cancels the walk. */
  async grep(pattern: string, options: BackendGrepOptions & FilesystemSearchOptions = {}): Promise<Result<GrepResult>> {
    const { signal, ...rest } = options;
    const bad = checkGrep({ ...rest, pattern } as GrepOptions);
    if (bad) return { error: bad };
    return this.#op(
      options.path ?? "/",
      async (v) => {
        const fs = this.#fs();
        const r = await this.#search(signal, "grep", (c) => fs.grep(this.#grepArgs(pattern, rest, v), c));
        const failed = fsError(r);
        if (failed) return failed;
        const raw = r as RawFsGrep;
        const decoded = decodeGrep(raw.grep);
        return decoded.error ? decoded : withSkipped(decoded, raw);
      },
      (r) => this.#outSkipped(this.#virtual ? r : mapGrepPaths(r, (p) => this.#out(p))),
    );
  }

  /** Files matching a glob; `maxResults` is clamped to the backend's `maxResults`;
   * `options.signal` (or the backend's) cancels the walk. */
  async glob(pattern: string, options: BackendGlobOptions & FilesystemSearchOptions = {}): Promise<Result<GlobResult>> {
    const bad = checkSearch({ pattern });
    if (bad) return { error: bad };
    const maxResults = toIndex(options.maxResults);
    return this.#op(
      options.path ?? "/",
      async (v): Promise<Result<GlobResult>> => {
        const fs = this.#fs();
        const r = await this.#search(options.signal, "glob", (c) => fs.glob(pattern, v, maxResults, c));
        const failed = fsError(r);
        if (failed) return failed;
        const raw = r as RawFsListing;
        return withSkipped({ files: entries(raw), truncated: raw.truncated }, raw);
      },
      (r) => this.#outSkipped({ ...r, files: r.files.map(this.#outInfo) }),
    );
  }

  // ---- tool text (tools/format.ts) ----
  /** The model's text for a filesystem tool call, searched or read and formatted off the
   * JavaScript thread in one native call (a capability: see {@link BackendCapabilities.toolText}). With host paths
   * (`virtualMode: false`) the text is left to the tools, which format the structured answer. */
  async toolText(request: ToolTextRequest, maxChars: number): Promise<Result<{ text: string }> | undefined> {
    if (!this.#virtual) return undefined;
    const fs = this.#fs();
    const cap = toIndex(maxChars) ?? 0;
    const text = (r: RawFsText): Result<{ text: string }> => fsError(r) ?? { text: (r as { text: string }).text };
    switch (request.op) {
      case "ls": {
        const bad = checkPath(request.path);
        return bad ? { error: bad } : text(await fs.lsText(request.path, request.path, cap));
      }
      case "read": {
        const bad = checkPath(request.path);
        if (bad) return { error: bad };
        const offset = toIndex(request.offset) ?? 0;
        return text(await fs.readText(request.path, request.path, offset, toIndex(request.limit) ?? 0, cap));
      }
      case "glob": {
        const bad = checkSearch({ pattern: request.pattern, path: request.path });
        if (bad) return { error: bad };
        return text(await this.#search(undefined, "glob", (c) => fs.globText(request.pattern, request.path, cap, c)));
      }
      case "grep": {
        const o = request.options;
        const bad = checkGrep({ ...o, pattern: request.pattern });
        if (bad) return { error: bad };
        const path = o.path ?? "/";
        return text(await this.#search(undefined, "grep", (c) => fs.grepText(this.#grepArgs(request.pattern, o, path), cap, c)));
      }
    }
  }
  // ---- end tool text ----
}
