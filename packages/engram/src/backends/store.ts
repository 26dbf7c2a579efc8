/**
 * `StoreBackend`: files as items of a {@link Store} namespace, shared across threads. Listings
 * push the path prefix down to the store; the work on file contents (line reads, edits, grep)
 * runs in the core, on the items the store returned.
 * @module
 */
import type { Core, CoreFileTable, EditOptions, ErrorCode, FileInfo, ReadOptions, Result } from "../core/types.js";
import { EngramError } from "../errors.js";
import { isDamagedValue, listReadable } from "../stores/rules.js";
import type { Namespace, PutResult, Store, StoreItem } from "../stores/types.js";
import { MAX_KEY_BYTES, validateNamespace } from "../stores/types.js";
import { requireContent } from "./arguments.js";
import { requireString } from "../core/binding.js";
import type { BackendCapabilities, ResidentMirror } from "./capabilities.js";
import { type CoreSource, coreRef } from "./core-ref.js";
import type {
  Backend,
  BackendEditOptions,
  BackendGlobOptions,
  BackendGrepOptions,
  BackendReadResult,
  BackendWriteOptions,
  ToolTextRequest,
} from "./protocol.js";

/** Who a namespace is for; a namespace factory receives it. */
export interface NamespaceContext {
  userId?: string;
  assistantId?: string;
  threadId?: string;
}

/** Options of {@link StoreBackend}. */
export interface StoreBackendOptions {
  store: Store;
  /** The namespace, or a factory that derives it from the context. Default: `["filesystem"]`. */
  namespace?: Namespace | ((context: NamespaceContext) => Namespace);
  /** The context a namespace factory receives. Default: `{}`. */
  context?: NamespaceContext;
  /** The core to use. Default: {@link loadCore}'s choice. */
  core?: Core | Promise<Core>;
}

/** How a file is kept in the store. Text stays readable; other bytes are base64. */
export interface StoredFile {
  content: string;
  encoding: "utf8" | "base64";
  size: number;
  modifiedAt: number;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });
const encoder = new TextEncoder();

function encode(bytes: Uint8Array, modifiedAt: number): StoredFile {
  try {
    return { content: utf8.decode(bytes), encoding: "utf8", size: bytes.length, modifiedAt };
  } catch {
    let binary = "";
    for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    return { content: btoa(binary), encoding: "base64", size: bytes.length, modifiedAt };
  }
}

/** A stored file's content as the mirror takes it: text as is (the core converts it once, as
 * `TextEncoder` would: a lone surrogate becomes U+FFFD), base64 as its bytes. */
function decode(file: StoredFile): string | Uint8Array {
  if (file.encoding === "utf8") return file.content;
  const binary = atob(file.content);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

/** A stored file's modification time; 0 when another program stored something else there. */
function storedTime(file: StoredFile): number {
  return typeof file.modifiedAt === "number" && Number.isFinite(file.modifiedAt) ? file.modifiedAt : 0;
}

function isStoredFile(value: unknown): value is StoredFile {
  const v = value as StoredFile | null;
  return typeof v === "object" && v !== null && typeof v.content === "string" && (v.encoding === "utf8" || v.encoding === "base64");
}

function dirPrefix(path: string): string {
  return path === "/" ? "/" : `${path}/`;
}

/** The files the mirror holds at or below `path`: it holds exactly the keys of `#revisions`, so
 * this finds the ones under a scope in O(scope) rather than by walking every mirrored key (which
 * made each edit after a whole-namespace search cost O(namespace): 70 µs at 10,000 files). */
function mirroredUnder(mirror: CoreFileTable, path: string): string[] {
  const at = mirror.stat(path);
  if (at.error) return [];
  if (!at.info.isDir) return [path];
  return mirror.glob({ pattern: "**", path }).files?.map((f) => f.path) ?? [];
}

/** Files in a {@link Store} namespace; the store item's revision is the file's version. Reads,
 * edits and searches work on a resident mirror of the namespace kept current by revision. */
export class StoreBackend implements Backend, BackendCapabilities {
  readonly #options: StoreBackendOptions;
  readonly #core: () => Promise<Core>;
  readonly #namespace: Namespace;
  /** Resident copy of the files this backend has searched, kept current by store revision. */
  #mirror: Promise<CoreFileTable> | undefined;
  /** Each mirrored file's store revision, and the mirror's version of the content it holds. */
  readonly #revisions = new Map<string, { revision: string; version: number }>();
  /** The store revision behind each mirror version in use (the mirror never reuses a version).
   * A glob's files come with their mirror versions, and a number finds its revision several
   * times faster than a path does (5,000 files: ~0.1 ms against ~0.5 ms). */
  readonly #revisionAt = new Map<number, string>();
  /** The store revision behind a mirror version (`""` for none). */
  readonly #revisionOf = (mirrorVersion: number): string => this.#revisionAt.get(mirrorVersion) ?? "";
  /** The edit of each file under way through this backend (see {@link StoreBackend.edit}). */
  readonly #editing = new Map<string, Promise<void>>();
  /** Scopes the mirror holds completely as of the store's change token `#token`. */
  #current: { token: string; scopes: Set<string> } | undefined;
  /** Files whose store revision (`null`: no file) a `stat` or `ls` reported while the mirror
   * held another and would have answered a read from it: a store whose change notices arrive
   * late (PostgreSQL's NOTIFY) keeps its old change token meanwhile. The next read of such a
   * file fetches it first, so a read is never older than what this backend reported. */
  readonly #reported = new Map<string, string | null>();

  constructor(options: StoreBackendOptions) {
    this.#options = options;
    this.#core = coreRef(options.core as CoreSource);
    const ns = options.namespace ?? ["filesystem"];
    this.#namespace = validateNamespace(typeof ns === "function" ? ns(options.context ?? {}) : ns);
  }

  /** The namespace this backend reads and writes. */
  get namespace(): Namespace {
    return this.#namespace;
  }

  /** The same store and factory, bound to another context (e.g. another user). */
  withContext(context: NamespaceContext): StoreBackend {
    return new StoreBackend({ ...this.#options, context });
  }

  async #fail(code: ErrorCode, subject: string, detail?: string): Promise<{ error: ReturnType<Core["errorData"]> }> {
    return { error: (await this.#core()).errorData(code, subject, detail) };
  }

  /** Normalises a path with the core's rules; a path longer than a store key may be is
   * `invalid_path`, for every operation alike. */
  async #path(path: string): Promise<Result<{ path: string }>> {
    const p = (await this.#core()).normalizePath(path);
    if (p.error || p.path.length <= MAX_KEY_BYTES / 3 || encoder.encode(p.path).length <= MAX_KEY_BYTES) return p;
    return this.#fail("invalid_path", p.path, `longer than ${MAX_KEY_BYTES} UTF-8 bytes, the longest store key`);
  }

  /** The stored item at `key`; a damaged one (its value is not JSON, see
   * {@link isDamagedValue}) is, like any item that is not a file, not served. */
  async #get(key: string): Promise<StoreItem<unknown> | undefined> {
    try {
      return await this.#options.store.get<unknown>(this.#namespace, key);
    } catch (e) {
      if (isDamagedValue(e)) return undefined;
      throw e;
    }
  }

  async #file(path: string): Promise<StoreItem<StoredFile> | undefined> {
    const item = await this.#get(path);
    return item && isStoredFile(item.value) ? (item as StoreItem<StoredFile>) : undefined;
  }

  async #isDir(path: string): Promise<boolean> {
    if (path === "/") return true;
    const { items, prefixes } = await this.#options.store.list(this.#namespace, { prefix: `${path}/`, delimiter: "/", values: false });
    return items.length > 0 || prefixes.length > 0;
  }

  /** Files at or below a normalised path, pushed down to the store as a prefix. */
  async #filesUnder(path: string): Promise<StoreItem<StoredFile>[]> {
    const single = await this.#file(path);
    if (single) return [single];
    const { items } = await listReadable<StoredFile>(this.#options.store, this.#namespace, { prefix: dirPrefix(path) });
    return items.filter((i) => isStoredFile(i.value));
  }

  /** The resident mirror, made on first use (assigned before any await, so concurrent first
   * calls share one). */
  #table(): Promise<CoreFileTable> {
    this.#mirror ??= this.#core().then((core) => core.createFileTable());
    return this.#mirror;
  }

  /**
   * Brings the resident mirror of `path` (a file or a directory prefix) up to date with the
   * store: keys and revisions are listed without content, and only new or changed files are
   * fetched. Searches then run in the core without copying the corpus again.
   */
  async #sync(path: string): Promise<CoreFileTable> {
    const mirror = await this.#table();
    const store = this.#options.store;
    // Nothing in the namespace changed since a sync that covered `path`: the mirror is current.
    const token = await store.changeToken?.(this.#namespace);
    if (token !== undefined && this.#current?.token === token && this.#covers(path)) return mirror;
    // A file the mirror holds: one get brings its revision and, when it changed, its content (a
    // listing and then a get would be two round trips to a database). A file that is no longer
    // one goes the long way.
    if (this.#revisions.has(path)) {
      const item = await this.#file(path);
      if (item) {
        if (this.#revisions.get(path)?.revision !== item.revision) this.#rememberAll(mirror, [item]);
        this.#covered(token, path);
        return mirror;
      }
    }
    const scope = dirPrefix(path);
    // One range listing covers both a file and a directory named `path`.
    const listed = (await store.list(this.#namespace, { prefix: path, values: false })).items.filter(
      (i) => i.key === path || i.key.startsWith(scope),
    );
    const seen = new Set<string>();
    const stale: string[] = [];
    for (const item of listed) {
      seen.add(item.key);
      if (this.#revisions.get(item.key)?.revision !== item.revision) stale.push(item.key);
    }
    for (const key of mirroredUnder(mirror, path)) if (!seen.has(key)) this.#forget(mirror, key);
    // A file the mirror still holds where a new file now has a parent directory (another writer
    // replaced the file with a directory) would refuse it: each mirrored ancestor is checked.
    if (stale.length > 0) {
      for (let dir = path.slice(0, path.lastIndexOf("/")); dir; dir = dir.slice(0, dir.lastIndexOf("/"))) {
        if (this.#revisions.has(dir) && !(await this.#file(dir))) this.#forget(mirror, dir);
      }
    }
    // Many changes: one listing with content beats one round trip per file.
    const wanted = new Set(stale);
    // A damaged item (not JSON) is not served: the mirror forgets whatever it held there.
    const fresh =
      stale.length > 16
        ? (await listReadable<StoredFile>(store, this.#namespace, { prefix: scope })).items.filter((i) => wanted.has(i.key))
        : (await Promise.all(stale.map((k) => this.#get(k)))).filter((i) => i !== undefined);
    const got = new Set(fresh.map((i) => i.key));
    for (const key of stale) if (!got.has(key) && this.#revisions.has(key)) this.#forget(mirror, key);
    this.#rememberAll(mirror, fresh);
    this.#covered(token, path);
    return mirror;
  }

  /** Records that the mirror holds `path` completely as of the store's change token `token`. */
  #covered(token: string | undefined, path: string): void {
    if (token === undefined) return;
    if (this.#current?.token !== token) this.#current = { token, scopes: new Set() };
    this.#current.scopes.add(path);
  }

  /** Writes items into the mirror in one batch: their files then lie together in the core and
   * each text is converted once. When the batch is refused (an item whose key is not a valid
   * path), each item is written alone, so a bad item costs only itself. A damaged item (say,
   * invalid base64 written by another program) is left in the store untouched and simply not
   * served; everything else keeps working. */
  #rememberAll(mirror: CoreFileTable, items: StoreItem<unknown>[]): void {
    const batch: [key: string, content: string | Uint8Array, modifiedAt: number][] = [];
    const kept: StoreItem<unknown>[] = [];
    for (const item of items) {
      if (!isStoredFile(item.value)) {
        // No longer a file (another program wrote something else there): no longer served.
        this.#forget(mirror, item.key);
        continue;
      }
      try {
        batch.push([item.key, decode(item.value), storedTime(item.value)]);
        kept.push(item);
      } catch {
        this.#forget(mirror, item.key);
      }
    }
    // A batch's files take the versions after the mirror's last, in order.
    const first = mirror.mark().lastVersion + 1;
    const together = batch.length > 1 && !mirror.writeMany(batch).error;
    kept.forEach((item, i) => {
      const [key, content, modifiedAt] = batch[i] as (typeof batch)[number];
      const version = together ? first + i : Number(mirror.write(key, content, { modifiedAt }).version ?? Number.NaN);
      if (Number.isNaN(version)) this.#forget(mirror, key);
      else this.#mirrored(key, item.revision, version);
    });
  }

  /** Records that the mirror holds `key` at `version`, as of store revision `revision`. */
  #mirrored(key: string, revision: string, version: number): void {
    const before = this.#revisions.get(key);
    if (before) this.#revisionAt.delete(before.version);
    this.#revisions.set(key, { revision, version });
    this.#revisionAt.set(version, revision);
  }

  #forget(mirror: CoreFileTable, key: string): void {
    mirror.delete(key);
    const before = this.#revisions.get(key);
    if (before) this.#revisionAt.delete(before.version);
    this.#revisions.delete(key);
  }

  /** Notes the store revision a `stat` or `ls` reported for `path` (see {@link StoreBackend.#reported}). */
  #report(path: string, revision: string | null): void {
    const held = this.#revisions.get(path)?.revision ?? null;
    if (held !== revision && (held !== null || this.#covers(path))) this.#reported.set(path, revision);
    else this.#reported.delete(path);
  }

  /** Whether a sync under the change token last seen answered for `path` from the mirror. */
  #covers(path: string): boolean {
    for (const s of this.#current?.scopes ?? []) if (s === "/" || path === s || path.startsWith(`${s}/`)) return true;
    return false;
  }

  /** The mirror synced for the file `path`, brought up to the revision this backend last
   * reported for it when that is not the one the mirror holds. */
  #readable(path: string): Promise<CoreFileTable> {
    // Not an async function of its own: reads are the hot path, and nearly always nothing was
    // reported (a reported revision is noted before the read starts, or races with it).
    return this.#reported.has(path) ? this.#refetchReported(path) : this.#sync(path);
  }

  async #refetchReported(path: string): Promise<CoreFileTable> {
    const mirror = await this.#sync(path);
    if (!this.#reported.has(path)) return mirror;
    const reported = this.#reported.get(path);
    this.#reported.delete(path);
    if ((this.#revisions.get(path)?.revision ?? null) === reported) return mirror;
    const item = await this.#get(path);
    if (item) {
      if (this.#revisions.get(path)?.revision !== item.revision) this.#rememberAll(mirror, [item]);
    } else if (this.#revisions.has(path)) this.#forget(mirror, path);
    return mirror;
  }

  #info(item: StoreItem<StoredFile>): FileInfo & { version: string } {
    return { path: item.key, isDir: false, size: item.value.size, modifiedAt: item.value.modifiedAt, version: item.revision };
  }

  /** The error for a path that holds no file: a directory, or nothing. */
  async #notAFile(path: string) {
    return (await this.#isDir(path)) ? this.#fail("is_directory", path) : this.#fail("file_not_found", path);
  }

  async ls(path: string) {
    const p = await this.#path(path);
    if (p.error) return { error: p.error };
    const file = await this.#file(p.path);
    if (file) return { entries: [this.#info(file)] };
    const { items, prefixes } = await listReadable<StoredFile>(this.#options.store, this.#namespace, {
      prefix: dirPrefix(p.path),
      delimiter: "/",
    });
    if (p.path !== "/" && items.length === 0 && prefixes.length === 0) return this.#fail("file_not_found", p.path);
    const files = items.filter((i) => isStoredFile(i.value));
    for (const f of files) this.#report(f.key, f.revision);
    const entries: FileInfo[] = files.map((f) => this.#info(f));
    for (const dir of prefixes) entries.push({ path: dir, isDir: true });
    entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    return { entries };
  }

  async read(path: string, options?: ReadOptions): Promise<Result<BackendReadResult>> {
    const p = await this.#path(path);
    if (p.error) return { error: p.error };
    const r = (await this.#readable(p.path)).read(p.path, options);
    if (r.error) return r;
    // The revision of the lines read, taken with them (no await in between).
    const revision = this.#revisions.get(p.path)?.revision;
    return revision === undefined ? r : { ...r, version: revision };
  }

  async readBytes(path: string): Promise<Result<{ data: Uint8Array }>> {
    const p = await this.#path(path);
    if (p.error) return { error: p.error };
    const data = (await this.#readable(p.path)).readBytes(p.path);
    return data ? { data } : this.#notAFile(p.path);
  }

  /** Writes a file. Rejects with an `invalid_argument` {@link EngramError} when `content` is
   * neither a string nor a `Uint8Array` (a caller's bug: nothing is written). */
  async write(
    path: string,
    content: string | Uint8Array,
    options: BackendWriteOptions = {},
  ): Promise<Result<{ path: string; version: string }>> {
    requireContent(content);
    const p = await this.#path(path);
    if (p.error) return { error: p.error };
    if (p.path === "/") return this.#fail("is_directory", p.path);
    // The checks go to the store together (one round trip's wait on a database, not one per
    // parent), and are answered in the order they would be asked one by one.
    const parents: string[] = [];
    for (let dir = p.path.slice(0, p.path.lastIndexOf("/")); dir; dir = dir.slice(0, dir.lastIndexOf("/"))) parents.push(dir);
    const [isDir, ...parentFiles] = await Promise.all([this.#isDir(p.path), ...parents.map((dir) => this.#file(dir))]);
    if (isDir) return this.#fail("is_directory", p.path);
    const file = parentFiles.findIndex((f) => f !== undefined);
    if (file >= 0) return this.#fail("invalid_path", p.path, `'${parents[file]}' is a file`);
    const bytes = typeof content === "string" ? encoder.encode(content) : content;
    const ifRevision = options.ifVersion === undefined ? undefined : options.ifVersion === "0" ? null : options.ifVersion;
    let put: PutResult;
    try {
      put = await this.#options.store.put(this.#namespace, p.path, encode(bytes, Date.now()), { ifRevision });
    } catch (e) {
      // A path the store cannot hold as a key (too long) is a path error, reported as data.
      if (EngramError.hasCode(e, "invalid_argument")) return this.#fail("invalid_path", p.path, e.message);
      throw e;
    }
    return put.ok ? { path: p.path, version: put.revision } : this.#fail("conflict", p.path);
  }

  async edit(path: string, oldString: string, newString: string, options: BackendEditOptions = {}): ReturnType<Backend["edit"]> {
    requireString(oldString, "oldString");
    requireString(newString, "newString");
    const p = await this.#path(path);
    if (p.error) return { error: p.error };
    const change = { path: p.path, oldString, newString, replaceAll: options.replaceAll ?? false };
    // Edits of one file through this backend take turns (parallel tool calls, say): each edits
    // the mirror's copy before its write lands, so the second would otherwise edit a copy
    // holding the first's change, and could land first and make the first look refused.
    const before = this.#editing.get(p.path);
    const turn = before ? before.then(() => this.#edit(change, options.ifVersion)) : this.#edit(change, options.ifVersion);
    const done = turn.then(
      () => undefined,
      () => undefined,
    );
    this.#editing.set(p.path, done);
    try {
      return await turn;
    } finally {
      if (this.#editing.get(p.path) === done) this.#editing.delete(p.path);
    }
  }

  async #edit(change: EditOptions, ifVersion: string | undefined): ReturnType<Backend["edit"]> {
    // Optimistic first: a file the mirror holds is edited there and written back under the
    // revision the mirror has. A store that moved on refuses that write (compare-and-swap), and
    // the edit is made again on what the store holds now. Without another writer an edit is
    // then one round trip (the store's put) instead of a check before it.
    if (this.#revisions.has(change.path) && ifVersion === undefined) {
      const fast = await this.#editMirrored(await (this.#mirror as Promise<CoreFileTable>), change, { optimistic: true });
      if (fast !== "stale") return fast;
    }
    const answer = await this.#editMirrored(await this.#sync(change.path), change, { optimistic: false, ifVersion });
    return answer === "stale" ? this.#fail("conflict", change.path) : answer;
  }

  /** The edit on the mirror's copy, written back under the mirror's revision; `"stale"` when the
   * store refused it, or (`optimistic`: the copy may be old) the copy lacked what it needs. */
  async #editMirrored(
    mirror: CoreFileTable,
    change: EditOptions,
    { optimistic, ifVersion }: { optimistic: boolean; ifVersion?: string },
  ): Promise<Awaited<ReturnType<Backend["edit"]>> | "stale"> {
    const revision = this.#revisions.get(change.path)?.revision;
    if (revision === undefined) return this.#notAFile(change.path);
    if (ifVersion !== undefined && ifVersion !== revision) return this.#fail("conflict", change.path);
    const edited = mirror.edit(change);
    if (edited.error) return optimistic ? "stale" : { error: edited.error };
    const bytes = mirror.readBytes(change.path) as Uint8Array;
    // The revision the edit started from guards the write: a concurrent writer makes this a
    // conflict instead of a silently lost update.
    const put = await this.#options.store.put(this.#namespace, change.path, encode(bytes, Date.now()), { ifRevision: revision });
    if (!put.ok) {
      this.#forget(mirror, change.path); // the mirror holds an edit the store refused
      return "stale";
    }
    this.#mirrored(change.path, put.revision, Number(edited.version));
    return { path: change.path, occurrences: edited.occurrences, version: put.revision };
  }

  async grep(pattern: string, options: BackendGrepOptions = {}) {
    const p = await this.#path(options.path ?? "/");
    if (p.error) return { error: p.error };
    const mirror = await this.#sync(p.path);
    return mirror.grep({ ...options, pattern, path: p.path });
  }

  async glob(pattern: string, options: BackendGlobOptions = {}) {
    requireString(pattern, "pattern");
    const p = await this.#path(options.path ?? "/");
    if (p.error) return { error: p.error };
    // Anchored patterns may reach outside `path`; the mirror's glob keeps only what matches.
    const mirror = await this.#sync(pattern.startsWith("/") ? "/" : p.path);
    const globbed = { pattern, path: p.path, ...(options.maxResults !== undefined && { maxResults: options.maxResults }) };
    // The mirror's versions are named by the store revisions they hold.
    const r = mirror.glob(globbed, this.#revisionOf);
    if (r.error) return { error: r.error };
    return { files: r.files, truncated: r.truncated };
  }

  async delete(path: string) {
    const p = await this.#path(path);
    if (p.error) return { error: p.error };
    if (p.path === "/") return this.#fail("permission_denied", p.path);
    const keys = (await this.#filesUnder(p.path)).map((f) => f.key);
    if (keys.length === 0) return this.#fail("file_not_found", p.path);
    return { deleted: await this.#options.store.delete(this.#namespace, keys) };
  }

  /** Its files are the store's, outside any thread's checkpoint (see
   * {@link BackendCapabilities.outsideThread}). */
  async outsideThread(_path: string): Promise<boolean> {
    return true;
  }

  async stat(path: string): ReturnType<Backend["stat"]> {
    const p = await this.#path(path);
    if (p.error) return { error: p.error };
    const file = await this.#file(p.path);
    this.#report(p.path, file ? file.revision : null);
    if (file) return { info: this.#info(file) };
    if (await this.#isDir(p.path)) return { info: { path: dirPrefix(p.path), isDir: true } };
    return this.#fail("file_not_found", p.path);
  }

  /** The resident mirror synced for the normalised directory `path`, and the store revision
   * behind each mirror version (a capability: see {@link BackendCapabilities.residentMirror}). */
  async residentMirror(path: string): Promise<ResidentMirror> {
    const p = await this.#path(path);
    if (p.error) return { table: await this.#table(), error: p.error };
    return { table: await this.#sync(p.path), version: (mirrorVersion) => this.#revisionOf(Number(mirrorVersion)) };
  }

  // ---- tool text (tools/format.ts) ----
  /** The model's text for `read_file`, `glob` and `grep`, made in one core call on the resident
   * mirror (a capability: see {@link BackendCapabilities.toolText}); `ls` is answered by the store's listing, so its text
   * is left to the tools. */
  async toolText(request: ToolTextRequest, maxChars: number): Promise<Result<{ text: string }> | undefined> {
    if (request.op === "ls") return undefined;
    const p = await this.#path(request.op === "grep" ? (request.options.path ?? "/") : request.path);
    if (p.error) return { error: p.error };
    switch (request.op) {
      case "read":
        return (await this.#readable(p.path)).readText(p.path, request.path, request, maxChars);
      case "glob": {
        // As in glob(): an anchored pattern may reach outside `path`.
        const mirror = await this.#sync(request.pattern.startsWith("/") ? "/" : p.path);
        return mirror.globText({ pattern: request.pattern, path: p.path }, maxChars);
      }
      case "grep":
        return (await this.#sync(p.path)).grepText({ ...request.options, pattern: request.pattern, path: p.path }, maxChars);
    }
  }
  // ---- end tool text ----
}
