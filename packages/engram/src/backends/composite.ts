/**
 * `CompositeBackend`: one virtual tree over several backends, routed by longest path prefix
 * (DESIGN §4 "Composite"). Routing itself is the core's router.
 * @module
 */
import type { Core, CoreRouter, ErrorData, FileInfo, GlobResult, GrepMatch, GrepResult, ReadOptions, Result } from "../core/types.js";
import { type CoreSource, coreRef } from "./core-ref.js";
import { appendTo } from "./append.js";
import { mapGrepPaths } from "./grep-result.js";
import type { Backend, BackendEditOptions, BackendGlobOptions, BackendGrepOptions, BackendWriteOptions } from "./protocol.js";

/** Options of {@link CompositeBackend}. */
export interface CompositeBackendOptions {
  /** The core to use. Default: {@link loadCore}'s choice. */
  core?: Core | Promise<Core>;
}

interface Mount {
  prefix: string;
  backend: Backend;
}

interface Target {
  backend: Backend;
  /** The path as the chosen backend sees it. */
  inner: string;
  /** The full (normalised) path. */
  outer: string;
  mount?: Mount;
}

/** `/memories/` + `/a.md` → `/memories/a.md`; `/` → `/memories/`. */
function outerPath(mount: Mount, inner: string): string {
  return mount.prefix.slice(0, -1) + inner;
}

const GLOB_SPECIAL = /[*?[\]{}\\]/;

/**
 * What a mount is asked for when a composite glob fans out to it: a superset of the mount's
 * files that `pattern` (relative to `outer`, or anchored) can match, pushed down so a
 * Store-backed mount lists only that prefix. The literal leading directories of the pattern
 * narrow the mount's `path` (`undefined`: the mount cannot hold a match); a `**` / `**\/<name>`
 * rest, which matches on the last path component only, is passed on as the pattern. The caller
 * still filters the answer with the core's glob rules, so this only ever narrows the work.
 */
function pushDown(pattern: string, outer: string, prefix: string): { pattern: string; path: string } | undefined {
  const everything = { pattern: "**", path: "/" };
  const segments = pattern.split("/").filter((s) => s !== "");
  if (segments.some((s) => s === "." || s === "..")) return everything;
  let dir = pattern.startsWith("/") ? "" : outer === "/" ? "" : outer;
  let i = 0;
  for (; i < segments.length - 1 && !GLOB_SPECIAL.test(segments[i] as string); i++) dir += `/${segments[i]}`;
  const rest = segments.slice(i).join("/");
  const lastOnly = rest === "**" || (rest.startsWith("**/") && !rest.slice(3).includes("/") && !rest.slice(3).includes("**"));
  const dirSlash = `${dir}/`;
  if (dirSlash.startsWith(prefix)) {
    // The literal directory is inside the mount: list only below it.
    const inner = dir.slice(prefix.length - 1) || "/";
    return { pattern: lastOnly ? rest : "**", path: inner };
  }
  if (prefix.startsWith(dirSlash)) return lastOnly ? { pattern: rest, path: "/" } : everything;
  return undefined;
}

function byPath(a: { path: string }, b: { path: string }): number {
  return a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
}

/** Routes `/memories/...` (and so on) to mounted backends and everything else to a default. */
export class CompositeBackend implements Backend {
  readonly #default: Backend;
  readonly #routes: Record<string, Backend>;
  readonly #core: () => Promise<Core>;
  #state: Promise<{ core: Core; router: CoreRouter; mounts: Mount[] }> | undefined;

  /**
   * @param defaultBackend - serves every path no route claims
   * @param routes - mount prefix → backend, e.g. `{ "/memories/": new StoreBackend(...) }`;
   *   prefixes are normalised (`/memories` and `/memories/` are the same route). An invalid
   *   prefix makes every call reject with an `EngramError`.
   */
  /** Every backend it routes to: the default first, then each mount. */
  get backends(): readonly Backend[] {
    return [this.#default, ...Object.values(this.#routes)];
  }

  constructor(defaultBackend: Backend, routes: Record<string, Backend>, options: CompositeBackendOptions = {}) {
    this.#default = defaultBackend;
    this.#routes = { ...routes };
    this.#core = coreRef(options.core as CoreSource);
  }

  #setup() {
    return (this.#state ??= this.#core().then((core) => {
      const backends = Object.values(this.#routes);
      const router = core.createRouter(Object.keys(this.#routes));
      const mounts = router.prefixes.map((prefix, i) => ({ prefix, backend: backends[i] as Backend }));
      return { core, router, mounts };
    }));
  }

  async #target(path: string): Promise<Result<Target>> {
    const { router, mounts } = await this.#setup();
    const r = router.route(path);
    if (r.error) return { error: r.error };
    if (r.route === null) return { backend: this.#default, inner: r.path, outer: r.path };
    const mount = mounts[r.route] as Mount;
    return { backend: mount.backend, inner: r.path, outer: outerPath(mount, r.path), mount };
  }

  /** Mounts strictly below a normalised directory. */
  async #mountsUnder(dir: string): Promise<Mount[]> {
    const { mounts } = await this.#setup();
    const prefix = dir === "/" ? "/" : `${dir}/`;
    return mounts.filter((m) => m.prefix.length > prefix.length && m.prefix.startsWith(prefix));
  }

  /** Whether a path of the default backend is hidden behind a route. */
  async #shadowed(path: string): Promise<boolean> {
    const { mounts } = await this.#setup();
    return mounts.some((m) => path === m.prefix.slice(0, -1) || path.startsWith(m.prefix));
  }

  /** A routed backend's error, naming the full path instead of the inner one. */
  #outerError(error: ErrorData, t: Target): ErrorData {
    if (!t.mount || t.inner === t.outer) return error;
    return { ...error, message: error.message.replace(`'${t.inner}'`, `'${t.outer}'`) };
  }

  #outerInfo(info: FileInfo, t: Target): FileInfo {
    return t.mount ? { ...info, path: outerPath(t.mount, info.path) } : info;
  }

  async ls(path: string): Promise<Result<{ entries: FileInfo[] }>> {
    const t = await this.#target(path);
    if (t.error) return { error: t.error };
    if (t.mount) {
      const r = await t.backend.ls(t.inner);
      return r.error ? { error: this.#outerError(r.error, t) } : { entries: r.entries.map((e) => this.#outerInfo(e, t)) };
    }
    const under = await this.#mountsUnder(t.outer);
    const own = await this.#default.ls(t.outer);
    if (own.error && !(own.error.code === "file_not_found" && under.length > 0)) return { error: own.error };
    const merged = new Map<string, FileInfo>();
    for (const e of own.entries ?? []) {
      if (!(await this.#shadowed(e.path.replace(/\/$/, "")))) merged.set(e.path, e);
    }
    const base = t.outer === "/" ? "/" : `${t.outer}/`;
    for (const m of under) {
      const child = base + (m.prefix.slice(base.length).split("/")[0] as string);
      merged.set(`${child}/`, { path: `${child}/`, isDir: true });
    }
    return { entries: [...merged.values()].sort(byPath) };
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
    if (!r.error) return { info: this.#outerInfo(r.info, t) };
    if (!t.mount && r.error.code === "file_not_found" && (await this.#mountsUnder(t.outer)).length > 0) {
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
    const under = await this.#mountsUnder(t.outer);
    if (under.length > 0) {
      const { core } = await this.#setup();
      // Mounted data (say, persistent memories) is never wiped by deleting a parent directory.
      return { error: core.errorData("permission_denied", t.outer, `contains the mounted route '${under[0]?.prefix}'`) };
    }
    return this.#default.delete(t.outer);
  }

  async grep(pattern: string, options: BackendGrepOptions = {}): Promise<Result<GrepResult>> {
    const t = await this.#target(options.path ?? "/");
    if (t.error) return { error: t.error };
    if (t.mount) {
      const r = await t.backend.grep(pattern, { ...options, path: t.inner });
      return r.error ? { error: this.#outerError(r.error, t) } : this.#outerGrep(r, t.mount);
    }
    const { core } = await this.#setup();
    const under = await this.#mountsUnder(t.outer);
    const parts: GrepResult[] = [];
    const own = await this.#default.grep(pattern, { ...options, path: t.outer });
    if (own.error && !(own.error.code === "file_not_found" && under.length > 0)) return { error: own.error };
    if (!own.error) parts.push(await this.#dropShadowed(own));
    // grep's `glob` without `/` matches file names, which a route does not change; a glob with
    // `/` is relative to the search directory, so it is applied here on the full paths.
    const pathGlob = options.glob?.includes("/") ? options.glob : undefined;
    for (const m of under) {
      const r = await m.backend.grep(pattern, { ...options, path: "/", glob: pathGlob ? undefined : options.glob });
      if (r.error) return { error: r.error };
      let part = this.#outerGrep(r, m);
      if (pathGlob) {
        const kept = core.filterPaths("grep", pathGlob, t.outer, grepPaths(part));
        if (kept.error) return { error: kept.error };
        part = keepPaths(part, new Set(kept.paths));
      }
      parts.push(part);
    }
    return mergeGrep(parts, options.maxCount);
  }

  async glob(pattern: string, options: BackendGlobOptions = {}): Promise<Result<GlobResult>> {
    const t = await this.#target(options.path ?? "/");
    if (t.error) return { error: t.error };
    const { core } = await this.#setup();
    const sources: { mount: Mount; files: FileInfo[] }[] = [];
    const found: FileInfo[] = [];
    let truncated = false;
    if (t.mount && !pattern.startsWith("/")) {
      const r = await t.backend.glob(pattern, { ...options, path: t.inner });
      if (r.error) return { error: this.#outerError(r.error, t) };
      return { files: r.files.map((f) => this.#outerInfo(f, t)), truncated: r.truncated };
    }
    if (!t.mount) {
      const own = await this.#default.glob(pattern, { path: t.outer });
      if (own.error) return { error: own.error };
      for (const f of own.files) if (!(await this.#shadowed(f.path))) found.push(f);
      truncated ||= own.truncated;
    }
    // Routed files are matched here, on their full paths, so a pattern means the same thing
    // whether or not part of the tree is mounted elsewhere.
    const { mounts } = await this.#setup();
    const candidates = t.mount ? [t.mount] : pattern.startsWith("/") ? mounts : await this.#mountsUnder(t.outer);
    for (const m of candidates) {
      const ask = pushDown(pattern, t.outer, m.prefix);
      if (!ask) continue;
      const all = await m.backend.glob(ask.pattern, { path: ask.path });
      if (all.error) {
        // A narrowed directory the mount does not have holds no matches.
        if (ask.path !== "/" && all.error.code === "file_not_found") continue;
        return { error: all.error };
      }
      sources.push({ mount: m, files: all.files.map((f) => ({ ...f, path: outerPath(m, f.path) })) });
    }
    for (const { files } of sources) {
      const kept = core.filterPaths(
        "glob",
        pattern,
        t.outer,
        files.map((f) => f.path),
      );
      if (kept.error) return { error: kept.error };
      const keep = new Set(kept.paths);
      for (const f of files) if (keep.has(f.path)) found.push(f);
    }
    found.sort(byPath);
    const max = options.maxResults ?? Number.POSITIVE_INFINITY;
    return { files: found.slice(0, max), truncated: truncated || found.length > max };
  }

  #outerGrep(r: GrepResult, m: Mount): GrepResult {
    return mapGrepPaths(r, (p) => outerPath(m, p));
  }

  async #dropShadowed(r: GrepResult): Promise<GrepResult> {
    const keep = new Set<string>();
    for (const p of grepPaths(r)) if (!(await this.#shadowed(p))) keep.add(p);
    return keepPaths(r, keep);
  }
}

function grepPaths(r: GrepResult): string[] {
  if (r.matches) return [...new Set(r.matches.map((m) => m.path))];
  return r.files ?? Object.keys(r.counts ?? {});
}

function keepPaths(r: GrepResult, keep: Set<string>): GrepResult {
  return {
    truncated: r.truncated,
    ...(r.matches && { matches: r.matches.filter((m) => keep.has(m.path)) }),
    ...(r.files && { files: r.files.filter((f) => keep.has(f)) }),
    ...(r.counts && { counts: Object.fromEntries(Object.entries(r.counts).filter(([k]) => keep.has(k))) }),
  };
}

/** Merges per-backend results in path order under one `maxCount`, as if one tree was searched. */
function mergeGrep(parts: GrepResult[], maxCount: number | undefined): GrepResult {
  const cap = maxCount ?? Number.POSITIVE_INFINITY;
  let truncated = parts.some((p) => p.truncated);
  const first = parts[0];
  if (!first || first.matches) {
    const all: GrepMatch[] = [];
    for (const p of parts) for (const m of p.matches ?? []) all.push(m);
    // Stable sort: lines of one file keep their order.
    all.sort(byPath);
    const out: GrepMatch[] = [];
    let taken = 0;
    for (const m of all) {
      if (!m.context) {
        if (taken === cap) {
          truncated = true;
          break;
        }
        taken++;
      }
      out.push(m);
    }
    return { matches: out, truncated };
  }
  if (first.files) {
    const files = parts.flatMap((p) => p.files ?? []).sort();
    return { files: files.slice(0, cap), truncated: truncated || files.length > cap };
  }
  const entries = parts.flatMap((p) => Object.entries(p.counts ?? {})).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return { counts: Object.fromEntries(entries.slice(0, cap)), truncated: truncated || entries.length > cap };
}
