/**
 * `CompositeBackend`: one virtual tree over several backends, routed by longest path prefix
 * (DESIGN §4 "Composite"). Routing itself is the core's router.
 * @module
 */
import type {
  Core,
  CoreFanOut,
  CoreRouter,
  ErrorData,
  FanAsk,
  FileInfo,
  GlobResult,
  GrepResult,
  LsResult,
  MountPart,
  ReadOptions,
  Result,
} from "../core/types.js";
import { type BackendCapabilities, type ChangeMark, capability, type ResidentMirror } from "./capabilities.js";
import { changeMark } from "./change-mark.js";
import { type CoreSource, coreRef } from "./core-ref.js";
import { appendTo } from "./append.js";
import { requireBackend } from "./arguments.js";
import { EngramError } from "../errors.js";
import type {
  Backend,
  BackendEditOptions,
  BackendGlobOptions,
  BackendGrepOptions,
  BackendWriteOptions,
  ToolTextRequest,
} from "./protocol.js";

/** Options of {@link CompositeBackend}. */
export interface CompositeBackendOptions {
  /** The core to use. Default: {@link loadCore}'s choice. */
  core?: Core | Promise<Core>;
}

interface Mount {
  prefix: string;
  backend: Backend;
  /** The route's index in the core's router. */
  index: number;
}

interface Setup {
  core: Core;
  router: CoreRouter;
  mounts: Mount[];
}

/** Per source of a fan-out (the default backend at 0, route `i` at `i + 1`), for a backend
 * whose versions are not its table's: its version of a file its table holds at a table version. */
type Versions = (((tableVersion: string) => string) | undefined)[];

/** How many routed paths a composite remembers; the map starts over when full. */
const TARGET_CACHE = 1024;

interface Target {
  backend: Backend;
  /** The path as the chosen backend sees it. */
  inner: string;
  /** The full (normalised) path. */
  outer: string;
  mount?: Mount;
}

/**
 * How a backend's files can be searched in a composite's one-call fan-out: a backend that
 * declares a resident table or mirror (see capabilities.ts) keeps them in a core file table;
 * anything else is asked through its own methods.
 */
function residentOf(backend: Backend): ((path: string) => Promise<ResidentMirror>) | undefined {
  const table = capability(backend, "residentTable");
  if (table) return async () => ({ table: await table() });
  return capability(backend, "residentMirror");
}

/** Routes `/memories/...` (and so on) to mounted backends and everything else to a default. */
export class CompositeBackend implements Backend, BackendCapabilities {
  readonly #default: Backend;
  readonly #routes: Record<string, Backend>;
  readonly #core: () => Promise<Core>;
  #state: Promise<Setup> | undefined;
  /** The settled {@link CompositeBackend.#setup}, for use after a call awaited it. */
  #ready: Setup | undefined;
  /** The router's answers by input path (see {@link CompositeBackend.#targetNow}). */
  readonly #targets = new Map<string, Result<Target>>();

  /** Every backend it routes to: the default first, then each mount. */
  get backends(): readonly Backend[] {
    return [this.#default, ...Object.values(this.#routes)];
  }

  /**
   * @param defaultBackend - serves every path no route claims
   * @param routes - mount prefix → backend, e.g. `{ "/memories/": new StoreBackend(...) }`;
   *   prefixes are normalised (`/memories` and `/memories/` are the same route). An invalid
   *   prefix makes every call reject with an `EngramError`.
   * @throws {EngramError} `invalid_argument` when the default backend or a route is not a backend.
   */
  constructor(defaultBackend: Backend, routes: Record<string, Backend>, options: CompositeBackendOptions = {}) {
    requireBackend(defaultBackend, "the default backend");
    if (typeof routes !== "object" || routes === null || Array.isArray(routes)) {
      throw new EngramError("invalid_argument", "routes must be an object of mount prefix → backend");
    }
    for (const [prefix, backend] of Object.entries(routes)) requireBackend(backend, `the route '${prefix}'`);
    this.#default = defaultBackend;
    this.#routes = { ...routes };
    this.#core = coreRef(options.core as CoreSource);
    const run = defaultBackend.execute;
    if (typeof run === "function") {
      Object.defineProperty(this, "execute", { configurable: true, value: run.bind(defaultBackend) });
      const confined = capability(defaultBackend, "commandsConfined");
      if (confined) Object.defineProperty(this, "commandsConfined", { configurable: true, value: confined });
    }
    const marks = this.backends.map(changeMark);
    if (marks.every((m) => m !== undefined)) {
      const mark = async (): Promise<ChangeMark> => (await Promise.all(marks.map((m) => m()))).flat();
      Object.defineProperty(this, "changeMark", { configurable: true, value: mark });
    }
  }

  /** Present when the default backend runs commands: they run there, and see its files only
   * (a mount's files are not on its disk). */
  declare readonly execute?: Backend["execute"];

  /** Present when the default backend's commands are sandboxed (see
   * {@link BackendCapabilities.commandsConfined}). */
  declare readonly commandsConfined?: () => boolean;

  /** Present when every backend can tell that its files have not changed (a capability: see
   * {@link BackendCapabilities.changeMark}): the marks of all of them. */
  declare readonly changeMark?: () => Promise<ChangeMark>;

  #setup() {
    return (this.#state ??= this.#core().then((core) => {
      const backends = Object.values(this.#routes);
      const router = core.createRouter(Object.keys(this.#routes));
      const mounts = router.prefixes.map((prefix, index) => ({ prefix, backend: backends[index] as Backend, index }));
      this.#ready = { core, router, mounts };
      return this.#ready;
    }));
  }

  /**
   * Where `path` goes, once the router exists (`undefined` before). The router's prefixes are
   * fixed at construction, so its answer for a given input string never changes: answers are
   * kept per input string (the core's own answer, never recomputed here), and a repeated call
   * (an agent reading the same files) skips the crossing and the allocations.
   */
  #targetNow(path: string): Result<Target> | undefined {
    const hit = this.#targets.get(path);
    if (hit !== undefined) return hit;
    const ready = this.#ready;
    if (ready === undefined) return undefined;
    const r = ready.router.route(path);
    if (r.error) return { error: r.error };
    const mount = r.route === null ? undefined : (ready.mounts[r.route] as Mount);
    const t: Target = mount
      ? { backend: mount.backend, inner: r.path, outer: r.outer, mount }
      : { backend: this.#default, inner: r.path, outer: r.outer };
    if (typeof path === "string") {
      if (this.#targets.size >= TARGET_CACHE) this.#targets.clear();
      this.#targets.set(path, t);
    }
    return t;
  }

  async #target(path: string): Promise<Result<Target>> {
    const t = this.#targetNow(path);
    if (t !== undefined) return t;
    await this.#setup();
    return this.#targetNow(path) as Result<Target>;
  }

  /**
   * Runs `call` on the routed target without an extra promise hop once the router exists; a
   * mount's error is rendered for the outer path and `rename` (when given) sets the outer path
   * on a success. What throws synchronously (a path that is not a string, a backend) rejects,
   * as an `async` method would.
   */
  #routed<T extends object>(path: string, call: (t: Target) => Promise<Result<T>>, rename?: boolean): Promise<Result<T>> {
    let t: Result<Target> | undefined;
    try {
      t = this.#targetNow(path);
    } catch (e) {
      return Promise.reject(e);
    }
    if (t === undefined) return this.#target(path).then((t) => this.#routedTo(t, call, rename));
    return this.#routedTo(t, call, rename);
  }

  #routedTo<T extends object>(t: Result<Target>, call: (t: Target) => Promise<Result<T>>, rename?: boolean): Promise<Result<T>> {
    if (t.error) return Promise.resolve({ error: t.error } as Result<T>);
    let answer: Promise<Result<T>>;
    try {
      answer = call(t);
    } catch (e) {
      return Promise.reject(e);
    }
    if (t.mount === undefined && !rename) return answer;
    return Promise.resolve(answer).then((r) => {
      if (r.error) return t.mount ? ({ error: this.#outerError(r.error, t) } as Result<T>) : r;
      return rename && (r as { path?: string }).path !== t.outer ? ({ ...r, path: t.outer } as Result<T>) : r;
    });
  }

  /** Mounts strictly below a normalised directory (call after {@link CompositeBackend.#target}). */
  #mountsUnder(dir: string): Mount[] {
    const { router, mounts } = this.#ready as Setup;
    return router.mountsUnder(dir).map((i) => mounts[i] as Mount);
  }

  /** A routed backend's error, rendered again by the core for the full path (see
   * {@link Core.mountError}: from the error's structure, never by editing its text). */
  #outerError(error: ErrorData, t: Target): ErrorData {
    return t.mount ? this.#mountError(error, t.mount, t.outer) : error;
  }

  #mountError(error: ErrorData, mount: Mount, request: string): ErrorData {
    return (this.#ready as Setup).core.mountError(error, mount.prefix, request);
  }

  /**
   * Gives a fan-out the tables of every source it asks, when all of them are resident (see
   * {@link residentOf}): then the core searches and merges them in one pass. `undefined` when
   * some source is not (or the core refused the options): the caller fans out per backend,
   * which gives the same answer. Errors are those of the per-backend path (a mount's names the
   * outer path).
   */
  async #gather<T>(
    made: Result<{ fan: CoreFanOut<T> }>,
    outer: string,
  ): Promise<{ fan: CoreFanOut<T>; versions: Versions } | { error: ErrorData } | undefined> {
    if (made.error) return undefined;
    const { fan } = made;
    const { mounts } = this.#ready as Setup;
    const sources = fan.asks.map((a) => residentOf(a.mount === null ? this.#default : (mounts[a.mount] as Mount).backend));
    if (!sources.every((s) => s !== undefined)) {
      fan.dispose();
      return undefined;
    }
    let files: ResidentMirror[];
    try {
      files = await Promise.all(fan.asks.map((a, i) => (sources[i] as (path: string) => Promise<ResidentMirror>)(a.path)));
    } catch (e) {
      fan.dispose();
      throw e;
    }
    const versions: Versions = [];
    for (const [i, a] of fan.asks.entries()) {
      const f = files[i] as ResidentMirror;
      const refused = f.error && (a.mount === null ? f.error : this.#mountError(f.error, mounts[a.mount] as Mount, outer));
      const error = refused || fan.add(a.mount, f.table);
      if (error) {
        fan.dispose();
        return { error };
      }
      if (f.version) versions[a.mount === null ? 0 : a.mount + 1] = f.version;
    }
    return { fan, versions };
  }

  async ls(path: string): Promise<Result<LsResult>> {
    const t = await this.#target(path);
    if (t.error) return { error: t.error };
    const { router } = this.#ready as Setup;
    // A backend with a resident table is listed from it: listed and merged in one core call.
    const table = capability(t.backend, "residentTable");
    if (table) return router.lsTable(t.outer, t.mount ? t.mount.index : null, t.inner, await table());
    if (t.mount) {
      const r = await t.backend.ls(t.inner);
      return r.error ? { error: this.#outerError(r.error, t) } : router.mergeLs(t.outer, t.mount.index, r);
    }
    const under = this.#mountsUnder(t.outer);
    const own = await this.#default.ls(t.outer);
    if (own.error && !(own.error.code === "file_not_found" && under.length > 0)) return { error: own.error };
    return router.mergeLs(t.outer, null, own.error ? { entries: [] } : own);
  }

  read(path: string, options?: ReadOptions): ReturnType<Backend["read"]> {
    return this.#routed(path, (t) => t.backend.read(t.inner, options));
  }

  readBytes(path: string): ReturnType<Backend["readBytes"]> {
    return this.#routed(path, (t) => t.backend.readBytes(t.inner));
  }

  write(path: string, content: string | Uint8Array, options?: BackendWriteOptions): ReturnType<Backend["write"]> {
    return this.#routed(path, (t) => t.backend.write(t.inner, content, options), true);
  }

  append(path: string, content: string | Uint8Array): Promise<Result<{ path: string; version: string }>> {
    return this.#routed(path, (t) => appendTo(t.backend, t.inner, content), true);
  }

  edit(path: string, oldString: string, newString: string, options?: BackendEditOptions): ReturnType<Backend["edit"]> {
    return this.#routed(path, (t) => t.backend.edit(t.inner, oldString, newString, options), true);
  }

  async stat(path: string): ReturnType<Backend["stat"]> {
    const t = await this.#target(path);
    if (t.error) return { error: t.error };
    const r = await t.backend.stat(t.inner);
    if (!r.error) {
      if (!t.mount) return r;
      const outer = (this.#ready as Setup).router.mergeLs(t.outer, t.mount.index, { entries: [r.info] });
      return outer.error ? { error: outer.error } : { info: outer.entries[0] as FileInfo };
    }
    if (!t.mount && r.error.code === "file_not_found" && this.#mountsUnder(t.outer).length > 0) {
      // A directory that exists only because a route is mounted below it.
      return { info: { path: `${t.outer}/`, isDir: true } };
    }
    return { error: this.#outerError(r.error, t) };
  }

  /** Whether a write to `path` changes files outside the thread: the routed backend's answer
   * (see {@link BackendCapabilities.outsideThread}). */
  async outsideThread(path: string): Promise<boolean> {
    const t = await this.#target(path);
    if (t.error) return false;
    return (await capability(t.backend, "outsideThread")?.(t.inner)) ?? false;
  }

  /** The path of the file a write to `path` reaches (see {@link Backend.realPath}), by the
   * routed backend's answer under its mount. A file the composite serves under no path (the
   * default backend's, shadowed by a route) keeps the path asked about. */
  async realPath(path: string): Promise<Result<{ path: string }>> {
    const t = await this.#target(path);
    if (t.error) return { error: t.error };
    const r = t.backend.realPath ? await t.backend.realPath(t.inner) : { path: t.inner };
    if (r.error) return { error: this.#outerError(r.error, t) };
    const outer = t.mount ? t.mount.prefix.slice(0, -1) + r.path : r.path;
    const back = await this.#target(outer);
    return { path: !back.error && back.backend === t.backend ? back.outer : t.outer };
  }

  async delete(path: string): ReturnType<Backend["delete"]> {
    const t = await this.#target(path);
    if (t.error) return { error: t.error };
    if (t.mount) {
      const r = await t.backend.delete(t.inner);
      return r.error ? { error: this.#outerError(r.error, t) } : r;
    }
    const under = this.#mountsUnder(t.outer);
    if (under.length > 0) {
      const { core } = this.#ready as Setup;
      // Mounted data (say, persistent memories) is never wiped by deleting a parent directory.
      return { error: core.errorData("permission_denied", t.outer, `contains the mounted route '${under[0]?.prefix}'`) };
    }
    return this.#default.delete(t.outer);
  }

  async grep(pattern: string, options: BackendGrepOptions = {}): Promise<Result<GrepResult>> {
    const t = await this.#target(options.path ?? "/");
    if (t.error) return { error: t.error };
    const { router, mounts } = this.#ready as Setup;
    const made = router.grepFanOut({ ...options, pattern }, t.outer);
    if (made.error) return { error: made.error };
    const { asks } = made.fan;
    const gathered = await this.#gather(made, t.outer);
    if (gathered) return "error" in gathered ? { error: gathered.error } : gathered.fan.finish();
    // Each backend is asked what the core's fan-out would ask its table (directory, whether
    // the file `glob` applies, the cap), and the core merges the answers the same way.
    const ask = (a: FanAsk, maxCount: number | undefined) => {
      const backend = a.mount === null ? this.#default : (mounts[a.mount] as Mount).backend;
      return backend.grep(pattern, { ...options, path: a.path, glob: a.globbed ? options.glob : undefined, maxCount });
    };
    const answers = await Promise.all(asks.map((a) => ask(a, a.maxCount)));
    const parts: MountPart<GrepResult>[] = [];
    for (const [i, a] of asks.entries()) {
      let r = answers[i] as Result<GrepResult>;
      // The default backend's files under a route are hidden; when they filled its cap, the
      // files shown after them were cut: asked again without the cap (the core's fan-out
      // leaves them out of its search instead).
      if (a.mount === null && !r.error && r.truncated && a.maxCount !== undefined && this.#showsHidden(r)) {
        r = await ask(a, undefined);
      }
      if (!r.error) parts.push({ mount: a.mount, result: r });
      else if (a.mount !== null) return { error: this.#mountError(r.error, mounts[a.mount] as Mount, t.outer) };
      // The default backend's missing directory holds no matches when routes are mounted below.
      else if (!(r.error.code === "file_not_found" && asks.length > 1)) return { error: r.error };
    }
    // grep's `glob` without `/` matches file names, which a route does not change; a glob with
    // `/` is relative to the search directory, so the core applies it on the full paths.
    const pathGlob = !t.mount && options.glob?.includes("/") ? options.glob : undefined;
    return router.mergeGrep(parts, {
      outputMode: options.outputMode,
      maxCount: options.maxCount,
      root: t.outer,
      ...(pathGlob !== undefined && { pathGlob }),
    });
  }

  /** Whether a default-backend grep answer names a file a route hides. */
  #showsHidden(r: GrepResult): boolean {
    const { router } = this.#ready as Setup;
    const hidden = (p: string) => {
      const routed = router.route(p);
      return !routed.error && routed.route !== null;
    };
    return (r.matches ?? []).some((m) => hidden(m.path)) || (r.files ?? []).some(hidden) || Object.keys(r.counts ?? {}).some(hidden);
  }

  async glob(pattern: string, options: BackendGlobOptions = {}): Promise<Result<GlobResult>> {
    const t = await this.#target(options.path ?? "/");
    if (t.error) return { error: t.error };
    const { router, mounts } = this.#ready as Setup;
    const gathered = await this.#gather(router.globFanOut(pattern, t.outer, options.maxResults), t.outer);
    if (gathered) {
      if ("error" in gathered) return { error: gathered.error };
      const r = gathered.fan.finish();
      if (r.error) return { error: r.error };
      const { files, sources } = r;
      // A Store's versions are its store revisions, not its mirror's.
      for (let i = 0; i < files.length; i++) {
        const version = gathered.versions[(sources[i] as number) + 1];
        const f = files[i] as FileInfo;
        if (version) f.version = version(f.version as string);
      }
      return { files, truncated: r.truncated };
    }
    if (t.mount && !pattern.startsWith("/")) {
      const r = await t.backend.glob(pattern, { ...options, path: t.inner });
      if (r.error) return { error: this.#outerError(r.error, t) };
      return router.mergeGlob([{ mount: t.mount.index, result: r }], { root: t.outer });
    }
    // Each mount is asked only for the part of it the pattern can reach (a Store-backed mount
    // lists that prefix, never its whole namespace); the core matches the answers on their
    // full paths, so a pattern means the same whether or not part of the tree is mounted.
    const asks = router.globAsks(pattern, t.outer);
    const [own, ...answers] = await Promise.all([
      t.mount ? undefined : this.#default.glob(pattern, { path: t.outer }),
      ...asks.map((a) => (mounts[a.mount] as Mount).backend.glob(a.pattern, { path: a.path })),
    ]);
    const parts: MountPart<GlobResult>[] = [];
    if (own?.error) return { error: own.error };
    if (own) parts.push({ mount: null, result: own });
    for (const [i, a] of asks.entries()) {
      const r = answers[i] as Result<GlobResult>;
      if (r.error) {
        // A narrowed directory the mount does not have holds no matches.
        if (a.path !== "/" && r.error.code === "file_not_found") continue;
        return { error: this.#mountError(r.error, mounts[a.mount] as Mount, t.outer) };
      }
      parts.push({ mount: a.mount, result: r });
    }
    return router.mergeGlob(parts, {
      pattern,
      root: t.outer,
      ...(options.maxResults !== undefined && { maxResults: options.maxResults }),
    });
  }

  /** The model's text for a `grep` or `glob` call when every backend it reaches keeps its files
   * in the core (a capability: see {@link BackendCapabilities.toolText}): searched, merged, capped and formatted in one
   * pass, so a large result never becomes JavaScript objects. `undefined` otherwise (and for
   * `ls` and `read_file`): the tools then format the structured answer by the same rules. */
  async toolText(request: ToolTextRequest, maxChars: number): Promise<Result<{ text: string }> | undefined> {
    if (request.op !== "grep" && request.op !== "glob") return undefined;
    const t = await this.#target(request.op === "grep" ? (request.options.path ?? "/") : request.path);
    if (t.error) return undefined;
    const { router } = this.#ready as Setup;
    const made =
      request.op === "grep"
        ? this.#gather(router.grepFanOut({ ...request.options, pattern: request.pattern }, t.outer, maxChars), t.outer)
        : this.#gather(router.globFanOut(request.pattern, t.outer), t.outer);
    const gathered = await made;
    if (!gathered) return undefined;
    return "error" in gathered ? { error: gathered.error } : gathered.fan.text(maxChars);
  }
}
