/**
 * `StateBackend`: thread-scoped files held resident in the core's file table. Checkpoints take
 * a compact binary snapshot of the table (`snapshot()` / `StateBackend.restore`).
 * @module
 */
import type { Core, CoreFileTable, FileTableMark, Result } from "../core/types.js";
import type { BackendCapabilities } from "./capabilities.js";
import { type CoreSource, coreRef } from "./core-ref.js";
import type {
  Backend,
  BackendEditOptions,
  BackendGlobOptions,
  BackendGrepOptions,
  BackendWriteOptions,
  ToolTextRequest,
} from "./protocol.js";

/** Options of {@link StateBackend}. */
export interface StateBackendOptions {
  /** The core to use. Default: {@link loadCore}'s choice. */
  core?: Core | Promise<Core>;
}

/** Where a {@link StateBackend}'s files stood (see {@link StateBackend.changesSince}); opaque. */
export interface StateMark extends FileTableMark {
  readonly table: object;
}

/** Files that live with the thread: in memory, inside the core, checkpointed as a snapshot. */
export class StateBackend implements Backend, BackendCapabilities {
  readonly #core: () => Promise<Core>;
  #table: Promise<CoreFileTable> | undefined;
  /** The table once it exists: the per-call methods then skip awaiting `#table`. */
  #ready: CoreFileTable | undefined;
  /** The last snapshot and the table state it was taken at. */
  #saved: { table: CoreFileTable; changes: number; bytes: Uint8Array } | undefined;

  constructor(options: StateBackendOptions = {}) {
    this.#core = coreRef(options.core as CoreSource);
  }

  /** A backend holding the files of a {@link StateBackend.snapshot}. Rejects (with an
   * `EngramError`) on a corrupt snapshot. */
  static async restore(snapshot: Uint8Array, options: StateBackendOptions = {}): Promise<StateBackend> {
    const backend = new StateBackend(options);
    const core = await backend.#core();
    const table = core.restoreFileTable(snapshot);
    backend.#table = Promise.resolve(table);
    backend.#ready = table;
    backend.#saved = { table, changes: table.changes, bytes: snapshot.slice() };
    return backend;
  }

  /** Releases the files now: they leave the core at once and their memory is freed, rather
   * than when this backend is garbage collected (on WASM, memory only a collection gives
   * back). The backend stays usable, empty. */
  dispose(): void {
    this.#ready?.clear();
    this.#saved = undefined;
  }

  /** Every file with its metadata in one compact buffer. While the files are unchanged
   * (a run that only read them, or nothing since {@link StateBackend.loadSnapshot}) the previous
   * buffer is returned again without touching the core: treat it as read-only. */
  async snapshot(): Promise<Uint8Array> {
    const table = await this.#files();
    const saved = this.#saved;
    if (saved && saved.table === table && saved.changes === table.changes) return saved.bytes;
    const bytes = table.snapshot();
    this.#saved = { table, changes: table.changes, bytes };
    return bytes;
  }

  /**
   * What changed since `since` (a mark an earlier call returned), for an incremental
   * checkpoint: `unchanged`, or a `delta` record of the files written since (for
   * `Core.applyFileDeltas`), or neither — only a full {@link StateBackend.snapshot} describes the
   * change (no `since`, a file deleted since, or another snapshot loaded since). `mark` is
   * where the files stand now: pass it next time.
   */
  async changesSince(since: StateMark | undefined): Promise<{ mark: StateMark; unchanged: boolean; delta?: Uint8Array }> {
    const table = this.#ready ?? (await this.#files());
    const mark: StateMark = { table, ...table.mark() };
    if (!since || since.table !== table) return { mark, unchanged: false };
    if (since.changes === mark.changes && since.lastVersion === mark.lastVersion) return { mark, unchanged: true };
    const delta = table.deltaSince(since);
    return delta ? { mark, unchanged: false, delta } : { mark, unchanged: false };
  }

  #files(): Promise<CoreFileTable> {
    return (this.#table ??= this.#core().then((core) => {
      const table = core.createFileTable();
      // Only the first table: a snapshot loaded meanwhile has replaced `#table` already.
      this.#ready ??= table;
      return table;
    }));
  }

  async ls(path: string) {
    return (this.#ready ?? (await this.#files())).ls(path);
  }

  async read(path: string, options?: { offset?: number; limit?: number }) {
    return (this.#ready ?? (await this.#files())).read(path, options);
  }

  async readBytes(path: string): Promise<Result<{ data: Uint8Array }>> {
    const table = await this.#files();
    const data = table.readBytes(path);
    if (data) return { data };
    // No bytes: say why, with the same error a read would give.
    const why = table.read(path, { limit: 0 });
    return { error: why.error ?? (await this.#core()).errorData("unsupported", path, "no bytes") };
  }

  async write(path: string, content: string | Uint8Array, options: BackendWriteOptions = {}) {
    return (this.#ready ?? (await this.#files())).write(path, content, options);
  }

  /** Seeds many files in one core call (see {@link CoreFileTable.writeMany}): far cheaper than
   * one `write` per file when a thread starts with thousands of files. */
  async writeMany(
    files: Iterable<readonly [path: string, content: string | Uint8Array, modifiedAt?: number]>,
    options: { modifiedAt?: number } = {},
  ) {
    return (await this.#files()).writeMany(files, options);
  }

  async append(path: string, content: string | Uint8Array) {
    return (await this.#files()).append(path, content);
  }

  /** Replaces every file with those of a {@link StateBackend.snapshot} (a thread being resumed).
   * Rejects with an `EngramError` on a corrupt snapshot, leaving the files as they were. */
  async loadSnapshot(snapshot: Uint8Array): Promise<void> {
    const table = (await this.#core()).restoreFileTable(snapshot);
    this.#table = Promise.resolve(table);
    this.#ready = table;
    // Kept (as a private copy) so an unchanged thread's next checkpoint costs nothing.
    this.#saved = { table, changes: table.changes, bytes: snapshot.slice() };
  }

  async edit(path: string, oldString: string, newString: string, options: BackendEditOptions = {}) {
    return (this.#ready ?? (await this.#files())).edit({ path, oldString, newString, ...options });
  }

  async grep(pattern: string, options: BackendGrepOptions = {}) {
    return (await this.#files()).grep({ ...options, pattern });
  }

  async glob(pattern: string, options: BackendGlobOptions = {}) {
    return (await this.#files()).glob({ ...options, pattern });
  }

  async delete(path: string) {
    return (await this.#files()).delete(path);
  }

  async stat(path: string) {
    return (this.#ready ?? (await this.#files())).stat(path);
  }

  /** The core file table holding every file of this backend (a capability: see
   * {@link BackendCapabilities.residentTable}); composites list and search it in the core. */
  async residentTable(): Promise<CoreFileTable> {
    return this.#ready ?? (await this.#files());
  }

  // ---- tool text (tools/format.ts) ----
  /** The model's text for a filesystem tool call, made in one core call (a capability: see
   * {@link BackendCapabilities.toolText}). */
  async toolText(request: ToolTextRequest, maxChars: number) {
    const table = await this.#files();
    switch (request.op) {
      case "ls":
        return table.lsText(request.path, request.path, maxChars);
      case "read":
        return table.readText(request.path, request.path, request, maxChars);
      case "glob":
        return table.globText({ pattern: request.pattern, path: request.path }, maxChars);
      case "grep":
        return table.grepText({ ...request.options, pattern: request.pattern }, maxChars);
    }
  }
  // ---- end tool text ----
}
