/**
 * `FilesystemBackend`: real files under one host directory, through the native `engram-fs`
 * crate (Node only): every operation resolves from an open handle of the root one component at
 * a time (race-safe containment, see SECURITY.md), atomic compare-and-swap writes across
 * processes, streamed paginated reads, bounded parallel grep and glob that honour `.gitignore`.
 * Every call runs off the JavaScript thread; searches can be cancelled with an `AbortSignal`.
 * @module
 */
import { realHostPath } from "#node-access";
import { checkGrep, checkPath, checkSearch, requireString, toIndex } from "../core/binding.js";
import { type CoreRootedFs, openRootedFs } from "../core/rooted-fs.js";
import type { Core, ErrorData, FileInfo, GlobResult, GrepOptions, GrepResult, ReadOptions, Result } from "../core/types.js";
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

/** Per-call options of {@link FilesystemBackend.grep} and {@link FilesystemBackend.glob}. */
export interface FilesystemSearchOptions {
  /** Stops the search (it rejects with an {@link EngramError} `aborted`). Default: none. */
  signal?: AbortSignal;
}

const encoder = new TextEncoder();

/** Files on the local disk, confined to `rootDir`. */
export class FilesystemBackend implements Backend, BackendCapabilities {
  readonly #options: FilesystemBackendOptions;
  readonly #core: () => Promise<Core>;
  #handle: CoreRootedFs | undefined;

  /** Present when the backend was made with the `execute` option (see {@link Backend.execute}). */
  declare readonly execute?: (command: string, options?: ExecuteOptions) => Promise<Result<ExecuteResult>>;
  /** Present, answering `true`, when `execute` runs commands in the sandbox (not `sandbox: "none"`). */
  declare readonly commandsConfined?: () => boolean;

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
      if (defaults.sandbox !== "none") Object.defineProperty(this, "commandsConfined", { configurable: true, value: () => true });
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

  #fs(): CoreRootedFs {
    this.#handle ??= openRootedFs(this.#options);
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

  /** What stops a search: the call's signal and this backend's. */
  #signals(signal: AbortSignal | undefined): (AbortSignal | undefined)[] {
    return [signal, this.#options.signal];
  }

  async ls(path: string) {
    return this.#op(
      path,
      (v) => this.#fs().ls(v),
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
      (v) => this.#fs().stat(v),
      (r) => ({ info: this.#outInfo(r.info) }),
    );
  }

  async read(path: string, options: ReadOptions = {}) {
    const offset = toIndex(options.offset) ?? 0;
    const limit = toIndex(options.limit);
    return this.#op(path, (v) => this.#fs().read(v, offset, limit));
  }

  async readBytes(path: string) {
    return this.#op(path, (v) => this.#fs().readBytes(v));
  }

  async write(path: string, content: string | Uint8Array, options: BackendWriteOptions = {}) {
    requireContent(content);
    const data = typeof content === "string" ? encoder.encode(content) : content;
    return this.#op(
      path,
      (v) => this.#fs().write(v, data, options.ifVersion),
      (r) => ({ ...r, path: this.#out(r.path) }),
    );
  }

  async edit(path: string, oldString: string, newString: string, options: BackendEditOptions = {}) {
    requireString(oldString, "oldString");
    requireString(newString, "newString");
    return this.#op(
      path,
      (v) => this.#fs().edit(v, oldString, newString, options.replaceAll ?? false, options.ifVersion),
      (r) => ({ ...r, path: this.#out(r.path) }),
    );
  }

  async delete(path: string) {
    return this.#op(path, (v) => this.#fs().delete(v));
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
      (v) => this.#fs().grep({ ...rest, pattern, path: v }, this.#signals(signal)),
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
      (v) => this.#fs().glob(pattern, v, maxResults, this.#signals(options.signal)),
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
    switch (request.op) {
      case "ls": {
        const bad = checkPath(request.path);
        return bad ? { error: bad } : fs.lsText(request.path, request.path, cap);
      }
      case "read": {
        const bad = checkPath(request.path);
        if (bad) return { error: bad };
        const offset = toIndex(request.offset) ?? 0;
        return fs.readText(request.path, request.path, offset, toIndex(request.limit) ?? 0, cap);
      }
      case "glob": {
        const bad = checkSearch({ pattern: request.pattern, path: request.path });
        if (bad) return { error: bad };
        return fs.globText(request.pattern, request.path, cap, this.#signals(undefined));
      }
      case "grep": {
        const o = request.options;
        const bad = checkGrep({ ...o, pattern: request.pattern });
        if (bad) return { error: bad };
        const path = o.path ?? "/";
        return fs.grepText({ ...o, pattern: request.pattern, path }, cap, this.#signals(undefined));
      }
    }
  }
  // ---- end tool text ----
}
