/**
 * `FileMemoryStorage`: long-term memory as `memory.json` files on disk (Node only; import it
 * from the `memory/longterm/node` entry so edge bundles never see a `node:` import).
 *
 * Layout under `dir`: `users/<user>/memory.json`, or `users/<user>/agents/<agent>/memory.json`
 * per agent, where names are {@link safeId}s. Beside each file, durably: `memory.json.cleared`
 * (time of the last clear) and `memory.json.corrupt-<ms>` (quarantined documents).
 *
 * Every disk access goes through the native `engram-fs` crate (the same code as
 * `FilesystemBackend`), so the rules live once, in Rust: the revision of a document is its
 * file version, a save is a compare-and-swap on it, checked under the kernel's `flock` of the
 * user's directory (released by the kernel when a writer dies, so a killed process never
 * blocks the next save), and written atomically (temp file, fsync, rename, fsync of the
 * directory). Readers never lock: they see an old or a new file, never half of one.
 * @module
 */
import { mkdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { type CoreRootedFs, openRootedFs } from "../../core/rooted-fs.js";
import { EngramError } from "../../errors.js";
import { type MemoryData, createEmptyMemory, nowIso, parseMemory } from "./schema.js";
import type { PendingWorkStore } from "./pending.js";
import { FilePendingWork } from "./pending-file.js";
import { type LoadedMemory, type MemoryStorage, NO_REVISION, type SaveMemoryResult, copyMemory, safeId } from "./storage.js";

/** Options of {@link FileMemoryStorage}. */
export interface FileMemoryStorageOptions {
  /** The base directory; created on the first save. Required. */
  dir: string;
  /** How long a save or clear waits for another writer's lock (held for one write, by a live
   * process) before throwing an {@link EngramError} `conflict`. Default: `10_000` ms. */
  lockTimeoutMs?: number;
  /** Ignored: locks are kernel locks, released when their holder dies, so none is ever stale.
   * Kept so existing configurations still type-check. */
  staleLockMs?: number;
}

type Parsed = { ok: true; memory: MemoryData } | { ok: false; error: string };

/** The largest memory document handled: 64 MiB. */
const MAX_FILE_MB = 64;

/**
 * Per-user `memory.json` files with atomic writes, a version cache, compare-and-swap across
 * processes, and quarantine of corrupt files.
 */
export class FileMemoryStorage implements MemoryStorage {
  readonly dir: string;
  readonly #lockTimeoutMs: number;
  /** Parsed documents by virtual path, valid while the version is unchanged. */
  readonly #cache = new Map<string, { revision: string; parsed: Parsed }>();
  #fs: CoreRootedFs | undefined;

  constructor(options: FileMemoryStorageOptions) {
    if (!options || typeof options.dir !== "string" || options.dir === "") {
      throw new EngramError("unsupported", "FileMemoryStorage needs a `dir`");
    }
    this.dir = options.dir;
    this.#lockTimeoutMs = options.lockTimeoutMs ?? 10_000;
  }

  /** The `memory.json` path of a user (and agent). Ids never escape `dir`: see {@link safeId}. */
  async pathFor(userId: string, agentName?: string): Promise<string> {
    return join(this.dir, ...(await this.#parts(userId, agentName)));
  }

  #pending: FilePendingWork | undefined;

  /** Extraction work that kept failing, kept in `dir/pending/` until it succeeds. */
  pendingWork(): PendingWorkStore {
    this.#pending ??= new FilePendingWork({ dir: join(this.dir, "pending") });
    return this.#pending;
  }

  async #parts(userId: string, agentName?: string): Promise<string[]> {
    const parts = ["users", await safeId(userId)];
    if (agentName !== undefined) parts.push("agents", await safeId(agentName));
    parts.push("memory.json");
    return parts;
  }

  async #vpath(userId: string, agentName?: string): Promise<string> {
    return `/${(await this.#parts(userId, agentName)).join("/")}`;
  }

  /** The native handle on `dir`; `undefined` when `dir` does not exist and `create` is false. */
  async #handle(create: boolean): Promise<CoreRootedFs | undefined> {
    if (!this.#fs) {
      if (create) await mkdir(this.dir, { recursive: true });
      try {
        this.#fs = openRootedFs({
          rootDir: this.dir,
          lockTimeoutMs: this.#lockTimeoutMs,
          maxFileSizeMb: MAX_FILE_MB,
          respectGitignore: false,
        });
      } catch (e) {
        if (!create && e instanceof EngramError && e.code === "file_not_found") return undefined;
        throw e;
      }
    }
    return this.#fs;
  }

  async load(userId: string, agentName?: string): Promise<LoadedMemory> {
    const fs = await this.#handle(false);
    if (!fs) return { memory: createEmptyMemory(), revision: NO_REVISION };
    const v = await this.#vpath(userId, agentName);
    for (;;) {
      // The document first, then the clear record (a clear writes them in the other order).
      const doc = await this.#read(fs, v);
      const clearedAt = await this.#clearedAt(fs, v);
      const cleared = clearedAt === undefined ? {} : { clearedAt };
      if (!doc) return { memory: createEmptyMemory(), revision: NO_REVISION, ...cleared };
      if (doc.parsed.ok) return { memory: copyMemory(doc.parsed.memory), revision: doc.revision, ...cleared };
      // Moved aside only if it is still the document that was judged invalid.
      const aside = `${v}.corrupt-${Date.now()}`;
      const moved = await fs.rename(v, aside, doc.revision);
      if (moved.error) {
        if (moved.error.code === "conflict" || moved.error.code === "file_not_found") continue; // replaced meanwhile
        throw EngramError.fromCore(moved.error);
      }
      this.#cache.delete(v);
      const file = await this.pathFor(userId, agentName);
      return {
        memory: createEmptyMemory(),
        revision: NO_REVISION,
        ...cleared,
        warning: `long-term memory file ${file} was invalid (${doc.parsed.error}); moved to ${join(dirname(file), aside.slice(aside.lastIndexOf("/") + 1))} and started afresh`,
      };
    }
  }

  async save(userId: string, agentName: string | undefined, memory: MemoryData, expectedRevision: string): Promise<SaveMemoryResult> {
    const checked = parseMemory({ ...copyMemory(memory), lastUpdated: nowIso() });
    if (!checked.ok) throw new EngramError("unsupported", `refusing to save an invalid memory document: ${checked.error}`);
    const fs = (await this.#handle(true)) as CoreRootedFs;
    const v = await this.#vpath(userId, agentName);
    const bytes = new TextEncoder().encode(`${JSON.stringify(checked.memory, null, 2)}\n`);
    const r = await fs.write(v, bytes, expectedRevision);
    if (r.error) {
      if (r.error.code === "conflict") return { ok: false, conflict: true };
      throw EngramError.fromCore(r.error);
    }
    const revision = r.version;
    this.#cache.set(v, { revision, parsed: checked });
    return { ok: true, revision };
  }

  async clear(userId: string, agentName?: string): Promise<void> {
    const fs = (await this.#handle(true)) as CoreRootedFs;
    const v = await this.#vpath(userId, agentName);
    const record = new TextEncoder().encode(JSON.stringify({ at: Date.now() }));
    const w = await fs.write(`${v}.cleared`, record);
    if (w.error) throw EngramError.fromCore(w.error);
    const d = await fs.delete(v);
    if (d.error && d.error.code !== "file_not_found") throw EngramError.fromCore(d.error);
    this.#cache.delete(v);
  }

  /** The document's revision and parsed content (parsed again only when the version changed);
   * `undefined` when it does not exist. */
  async #read(fs: CoreRootedFs, v: string): Promise<{ revision: string; parsed: Parsed } | undefined> {
    const r = await fs.readVersioned(v);
    if (r.error) {
      if (r.error.code === "file_not_found") return undefined;
      throw EngramError.fromCore(r.error);
    }
    const { data, version } = r;
    const cached = this.#cache.get(v);
    if (cached?.revision === version) return cached;
    const doc = { revision: version, parsed: parseBytes(data) };
    this.#cache.set(v, doc);
    return doc;
  }

  async #clearedAt(fs: CoreRootedFs, v: string): Promise<number | undefined> {
    const r = await fs.readVersioned(`${v}.cleared`);
    if (r.error) {
      if (r.error.code === "file_not_found") return undefined;
      throw EngramError.fromCore(r.error);
    }
    try {
      const at = (JSON.parse(new TextDecoder().decode(r.data)) as { at?: unknown }).at;
      return typeof at === "number" ? at : undefined;
    } catch {
      return undefined;
    }
  }
}

function parseBytes(bytes: Uint8Array): Parsed {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (e) {
    return { ok: false, error: `not JSON: ${e instanceof Error ? e.message : String(e)}` };
  }
  return parseMemory(value);
}
