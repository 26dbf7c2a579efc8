/**
 * `CompositeBackend`: one virtual tree over several backends, routed by longest path prefix
 * (DESIGN §4 "Composite"). Routing itself is the core's router.
 * @module
 */
import type { Core, CoreRouter, ErrorData, FileInfo, GlobResult, GrepResult, MountPart, ReadOptions, Result } from "../core/types.js";
import { type CoreSource, coreRef } from "./core-ref.js";
import { appendTo } from "./append.js";
import type { Backend, BackendEditOptions, BackendGlobOptions, BackendGrepOptions, BackendWriteOptions } from "./protocol.js";

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

interface Target {
  backend: Backend;
  /** The path as the chosen backend sees it. */
  inner: string;
  /** The full (normalised) path. */
  outer: string;
  mount?: Mount;
}

/** Routes `/memories/...` (and so on) to mounted backends and everything else to a default. */
export class CompositeBackend implements Backend {
  readonly #default: Backend;
  readonly #routes: Record<string, Backend>;
  readonly #core: () => Promise<Core>;
  #state: Promise<Setup> | undefined;
  /** The settled {@link CompositeBackend.#setup}, for use after a call awaited it. */
  #ready: Setup | undefined;

  /** Every backend it routes to: the default first, then each mount. */
  get backends(): readonly Backend[] {
    return [this.#default, ...Object.values(this.#routes)];
  }

  /**
   * @param defaultBackend - serves every path no route claims
   * @param routes - mount prefix → backend, e.g. `{ "/memories/": new StoreBackend(...) }`;
   *   prefixes are normalised (`/memories` and `/memories/` are the same route). An invalid
   *   prefix makes every call reject with an `EngramError`.
   */
  constructor(defaultBackend: Backend, routes: Record<string, Backend>, options: CompositeBackendOptions = {}) {
    this.#default = defaultBackend;
    this.#routes = { ...routes };
    this.#core = coreRef(options.core as CoreSource);
  }

  #setup() {
    return (this.#state ??= this.#core().then((core) => {
      const backends = Object.values(this.#routes);
      const router = core.createRouter(Object.keys(this.#routes));
      const mounts = router.prefixes.map((prefix, index) => ({ prefix, backend: backends[index] as Backend, index }));
      this.#ready = { core, router, mounts };
      return this.#ready;
    }));
  }

  async #target(path: string): Promise<Result<Target>> {
    const { router, mounts } = this.#ready ?? (await this.#setup());
    const r = router.route(path);
    if (r.error) return { error: r.error };
    if (r.route === null) return { backend: this.#default, inner: r.path, outer: r.outer };
    const mount = mounts[r.route] as Mount;
    return { backend: mount.backend, inner: r.path, outer: r.outer, mount };
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

  async ls(path: string): Promise<Result<{ entries: FileInfo[] }>> {
    const t = await this.#target(path);
    if (t.error) return { error: t.error };
    const { router } = this.#ready as Setup;
    if (t.mount) {
      const r = await t.backend.ls(t.inner);
      return r.error ? { error: this.#outerError(r.error, t) } : router.mergeLs(t.outer, t.mount.index, r.entries);
    }
    const under = this.#mountsUnder(t.outer);
    const own = await this.#default.ls(t.outer);
    if (own.error && !(own.error.code === "file_not_found" && under.length > 0)) return { error: own.error };
    return router.mergeLs(t.outer, null, own.entries ?? []);
  }

  async read(path: string, options?: ReadOptions): ReturnType<Backend["read"]> {
    const t = await this.#target(path);
    if (t.error) return { error: t.error };
    const r = await t.backend.read(t.inner, options);
    return r.error ? { error: this.#outerError(r.error, t) } : r;
  }

  async readBytes(path: string): ReturnType<Backend["readBytes"]> {
    const t = await this.#target(path);
    if (t.error) return { error: t.error };
    const r = await t.backend.readBytes(t.inner);
    return r.error ? { error: this.#outerError(r.error, t) } : r;
  }

  async write(path: string, content: string | Uint8Array, options?: BackendWriteOptions): ReturnType<Backend["write"]> {
    const t = await this.#target(path);
    if (t.error) return { error: t.error };
    const r = await t.backend.write(t.inner, content, options);
    return r.error ? { error: this.#outerError(r.error, t) } : { ...r, path: t.outer };
  }

  async append(path: string, content: string | Uint8Array) {
    const t = await this.#target(path);
    if (t.error) return { error: t.error };
    const r = await appendTo(t.backend, t.inner, content);
    return r.error ? { error: this.#outerError(r.error, t) } : { ...r, path: t.outer };
  }

  async edit(path: string, oldString: string, newString: string, options?: BackendEditOptions): ReturnType<Backend["edit"]> {
    const t = await this.#target(path);
    if (t.error) return { error: t.error };
    const r = await t.backend.edit(t.inner, oldString, newString, options);
    return r.error ? { error: this.#outerError(r.error, t) } : { ...r, path: t.outer };
  }

  async stat(path: string): ReturnType<Backend["stat"]> {
    const t = await this.#target(path);
    if (t.error) return { error: t.error };
    const r = await t.backend.stat(t.inner);
    if (!r.error) {
      if (!t.mount) return r;
      const outer = (this.#ready as Setup).router.mergeLs(t.outer, t.mount.index, [r.info]);
      return outer.error ? { error: outer.error } : { info: outer.entries[0] as FileInfo };
    }
    if (!t.mount && r.error.code === "file_not_found" && this.#mountsUnder(t.outer).length > 0) {
      // A directory that exists only because a route is mounted below it.
      return { info: { path: `${t.outer}/`, isDir: true } };
    }
    return { error: this.#outerError(r.error, t) };
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
    const { router } = this.#ready as Setup;
    const merge = { outputMode: options.outputMode, maxCount: options.maxCount, root: t.outer };
    if (t.mount) {
      const r = await t.backend.grep(pattern, { ...options, path: t.inner });
      return r.error ? { error: this.#outerError(r.error, t) } : router.mergeGrep([{ mount: t.mount.index, result: r }], merge);
    }
    const under = this.#mountsUnder(t.outer);
    // grep's `glob` without `/` matches file names, which a route does not change; a glob with
    // `/` is relative to the search directory, so the core applies it on the full paths.
    const pathGlob = options.glob?.includes("/") ? options.glob : undefined;
    const [own, ...answers] = await Promise.all([
      this.#default.grep(pattern, { ...options, path: t.outer }),
      ...under.map((m) => m.backend.grep(pattern, { ...options, path: "/", glob: pathGlob ? undefined : options.glob })),
    ]);
    const parts: MountPart<GrepResult>[] = [];
    if (own?.error && !(own.error.code === "file_not_found" && under.length > 0)) return { error: own.error };
    if (own && !own.error) parts.push({ mount: null, result: own });
    for (const [i, m] of under.entries()) {
      const r = answers[i] as Result<GrepResult>;
      if (r.error) return { error: this.#mountError(r.error, m, t.outer) };
      parts.push({ mount: m.index, result: r });
    }
    return router.mergeGrep(parts, { ...merge, ...(pathGlob !== undefined && { pathGlob }) });
  }

  async glob(pattern: string, options: BackendGlobOptions = {}): Promise<Result<GlobResult>> {
    const t = await this.#target(options.path ?? "/");
    if (t.error) return { error: t.error };
    const { router, mounts } = this.#ready as Setup;
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
}
