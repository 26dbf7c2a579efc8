/**
 * `FilesystemBackend`: real files under one host directory, through the native `engram-fs`
 * crate (Node only): containment on the real path, no symlink following, atomic writes,
 * streamed paginated reads, parallel grep and glob that honour `.gitignore`.
 * @module
 */
import { loadNativeBinding } from "#node-access";
import { decodeGrep, toIndex } from "../core/binding.js";
import { EngramError } from "../errors.js";
import type { Core, ErrorData, FileInfo, GlobResult, ReadOptions, ReadResult, Result } from "../core/types.js";
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
  /** The core used for canonical error texts. Default: {@link loadCore}'s choice. */
  core?: Core | Promise<Core>;
}

/** @internal The N-API handle of `engram_fs::RootedFs`. */
export interface RawRootedFs {
  root(): string;
  ls(path: string): string;
  stat(path: string): string;
  read(path: string, offset: number, limit?: number | null): string;
  /** Bytes, or the JSON error text. */
  readBytes(path: string): Uint8Array | string;
  write(path: string, data: Uint8Array, ifVersion?: string | null): string;
  edit(optionsJson: string): string;
  delete(path: string): string;
  grep(optionsJson: string): Promise<string>;
  glob(optionsJson: string): Promise<string>;
}

interface RawFsBinding {
  RootedFs: { open(optionsJson: string): RawRootedFs };
}

const encoder = new TextEncoder();
const parse = <T>(json: string) => JSON.parse(json) as Result<T>;

/** Files on the local disk, confined to `rootDir`. */
export class FilesystemBackend implements Backend {
  readonly #options: FilesystemBackendOptions;
  readonly #core: () => Promise<Core>;
  #handle: RawRootedFs | undefined;

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
      const binding = loadNativeBinding() as unknown as RawFsBinding;
      const maxFileBytes = Math.round((this.#options.maxFileSizeMb ?? 10) * 1024 * 1024);
      const options = { root: this.#options.rootDir, maxFileBytes, respectGitignore: this.#options.respectGitignore ?? true };
      try {
        this.#handle = binding.RootedFs.open(JSON.stringify(options));
      } catch (e) {
        throw EngramError.fromCoreText(e instanceof Error ? e.message : String(e));
      }
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

  #outError(e: ErrorData, inner: string, outer: string): ErrorData {
    return this.#virtual || inner === outer ? e : { ...e, message: e.message.replace(`'${inner}'`, `'${outer}'`) };
  }

  #outInfo = (f: FileInfo): FileInfo => (this.#virtual ? f : { ...f, path: this.#out(f.path) });

  /** Runs one path operation with host/virtual mapping of its input, output and error. */
  async #op<T>(path: string, run: (v: string) => Result<T> | Promise<Result<T>>, map: (r: T) => T = (r) => r): Promise<Result<T>> {
    const v = await this.#in(path);
    if (v.error) return { error: v.error };
    const r = await run(v.path);
    return r.error ? { error: this.#outError(r.error, v.path, path) } : (map(r as T) as Result<T>);
  }

  async ls(path: string) {
    return this.#op(
      path,
      (v) => parse<{ entries: FileInfo[] }>(this.#fs().ls(v)),
      (r) => ({ entries: r.entries.map(this.#outInfo) }),
    );
  }

  async stat(path: string) {
    return this.#op(
      path,
      (v) => parse<{ info: FileInfo }>(this.#fs().stat(v)),
      (r) => ({ info: this.#outInfo(r.info) }),
    );
  }

  async read(path: string, options: ReadOptions = {}) {
    const offset = toIndex(options.offset) ?? 0;
    const limit = toIndex(options.limit);
    return this.#op(path, (v) => parse<ReadResult>(this.#fs().read(v, offset, limit)));
  }

  async readBytes(path: string) {
    return this.#op(path, (v): Result<{ data: Uint8Array }> => {
      const r = this.#fs().readBytes(v);
      if (typeof r === "string") return parse<{ data: Uint8Array }>(r);
      return { data: new Uint8Array(r.buffer, r.byteOffset, r.byteLength) };
    });
  }

  async write(path: string, content: string | Uint8Array, options: BackendWriteOptions = {}) {
    const data = typeof content === "string" ? encoder.encode(content) : content;
    return this.#op(
      path,
      (v) => parse<{ path: string; version: string }>(this.#fs().write(v, data, options.ifVersion)),
      (r) => ({ ...r, path: this.#out(r.path) }),
    );
  }

  async edit(path: string, oldString: string, newString: string, options: BackendEditOptions = {}) {
    return this.#op(
      path,
      (v) =>
        parse<{ path: string; occurrences: number; version: string }>(
          this.#fs().edit(
            JSON.stringify({ path: v, oldString, newString, replaceAll: options.replaceAll ?? false, ifVersion: options.ifVersion }),
          ),
        ),
      (r) => ({ ...r, path: this.#out(r.path) }),
    );
  }

  async delete(path: string) {
    return this.#op(path, (v) => parse<{ deleted: number }>(this.#fs().delete(v)));
  }

  async grep(pattern: string, options: BackendGrepOptions = {}) {
    const clean = { ...options, maxCount: toIndex(options.maxCount), context: toIndex(options.context) };
    return this.#op(
      options.path ?? "/",
      async (v) => decodeGrep(await this.#fs().grep(JSON.stringify({ ...clean, pattern, path: v }))),
      (r) => (this.#virtual ? r : mapGrepPaths(r, (p) => this.#out(p))),
    );
  }

  async glob(pattern: string, options: BackendGlobOptions = {}) {
    const maxResults = toIndex(options.maxResults);
    return this.#op(
      options.path ?? "/",
      async (v) => parse<GlobResult>(await this.#fs().glob(JSON.stringify({ pattern, path: v, maxResults }))),
      (r) => ({ ...r, files: r.files.map(this.#outInfo) }),
    );
  }
}
