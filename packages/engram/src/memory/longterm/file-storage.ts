/**
 * `FileMemoryStorage`: long-term memory as `memory.json` files on disk (Node only; import it
 * from the `memory/longterm/node` entry so edge bundles never see a `node:` import).
 *
 * Layout under `dir`: `users/<user>/memory.json`, or `users/<user>/agents/<agent>/memory.json`
 * per agent, where names are {@link safeId}s. Beside each file, transiently: `memory.json.lock`
 * (the writers' lock), `memory.json.<random>.tmp` (a write in progress), and durably
 * `memory.json.cleared` (time of the last clear) and `memory.json.corrupt-<ms>` (quarantined
 * documents).
 *
 * Concurrency: readers never lock (writes are atomic renames, so a reader sees an old or a new
 * file, never half of one). Writers take an exclusive lock file (`O_CREAT|O_EXCL`), compare the
 * file's revision — a SHA-256 of its bytes — with the one the caller loaded, and write only when
 * they match. The lock is held for one read and one write, never across a model call. A lock
 * whose process is gone (same host) or that is older than `staleLockMs` is broken, by one
 * process at a time, after checking it is still the same lock.
 * @module
 */
import { createHash, randomBytes } from "node:crypto";
import { type FileHandle, mkdir, open, readFile, rename, stat, unlink, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { dirname, join } from "node:path";
import { EngramError } from "../../errors.js";
import { type MemoryData, createEmptyMemory, nowIso, parseMemory } from "./schema.js";
import { type LoadedMemory, type MemoryStorage, NO_REVISION, type SaveMemoryResult, copyMemory, safeId } from "./storage.js";

/** Options of {@link FileMemoryStorage}. */
export interface FileMemoryStorageOptions {
  /** The base directory; created on the first save. Required. */
  dir: string;
  /** How long a save or clear waits for another writer's lock before throwing an
   * {@link EngramError} `conflict`. Default: `10_000` ms. */
  lockTimeoutMs?: number;
  /** A lock older than this is considered abandoned even when its owner cannot be checked
   * (another host). Writers hold the lock for milliseconds. Default: `30_000` ms. */
  staleLockMs?: number;
}

type Parsed = { ok: true; memory: MemoryData } | { ok: false; error: string };

interface CachedDoc {
  /** inode, size and mtime (ns) of the file the entry was read from. */
  key: string;
  revision: string;
  parsed: Parsed;
}

interface LockInfo {
  /** inode and mtime (ns): identifies one lock file. */
  id: string;
  ageMs: number;
  owner?: { pid: number; host: string; token: string };
}

const errno = (e: unknown): string | undefined => (e as NodeJS.ErrnoException | undefined)?.code;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const revisionOf = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex").slice(0, 32);

/**
 * Per-user `memory.json` files with atomic writes (temp file, fsync, rename), an mtime cache,
 * compare-and-swap across processes, and quarantine of corrupt files.
 */
export class FileMemoryStorage implements MemoryStorage {
  readonly dir: string;
  readonly #lockTimeoutMs: number;
  readonly #staleLockMs: number;
  readonly #cache = new Map<string, CachedDoc>();
  readonly #host = hostname();

  constructor(options: FileMemoryStorageOptions) {
    if (!options || typeof options.dir !== "string" || options.dir === "") {
      throw new EngramError("unsupported", "FileMemoryStorage needs a `dir`");
    }
    this.dir = options.dir;
    this.#lockTimeoutMs = options.lockTimeoutMs ?? 10_000;
    this.#staleLockMs = options.staleLockMs ?? 30_000;
  }

  /** The `memory.json` path of a user (and agent). Ids never escape `dir`: see {@link safeId}. */
  async pathFor(userId: string, agentName?: string): Promise<string> {
    const parts = [this.dir, "users", await safeId(userId)];
    if (agentName !== undefined) parts.push("agents", await safeId(agentName));
    return join(...parts, "memory.json");
  }

  async load(userId: string, agentName?: string): Promise<LoadedMemory> {
    const file = await this.pathFor(userId, agentName);
    for (;;) {
      // The document first, then the clear record (a clear writes them in the other order).
      const doc = await this.#read(file);
      const clearedAt = await this.#clearedAt(file);
      const cleared = clearedAt === undefined ? {} : { clearedAt };
      if (!doc) return { memory: createEmptyMemory(), revision: NO_REVISION, ...cleared };
      if (doc.parsed.ok) return { memory: copyMemory(doc.parsed.memory), revision: doc.revision, ...cleared };
      const aside = await this.#quarantine(file, doc.revision);
      if (aside === undefined) continue; // replaced meanwhile: read the new one
      return {
        memory: createEmptyMemory(),
        revision: NO_REVISION,
        ...cleared,
        warning: `long-term memory file ${file} was invalid (${doc.parsed.error}); moved to ${aside} and started afresh`,
      };
    }
  }

  async save(userId: string, agentName: string | undefined, memory: MemoryData, expectedRevision: string): Promise<SaveMemoryResult> {
    const checked = parseMemory({ ...copyMemory(memory), lastUpdated: nowIso() });
    if (!checked.ok) throw new EngramError("unsupported", `refusing to save an invalid memory document: ${checked.error}`);
    const file = await this.pathFor(userId, agentName);
    const bytes = new TextEncoder().encode(`${JSON.stringify(checked.memory, null, 2)}\n`);
    await mkdir(dirname(file), { recursive: true });
    const release = await this.#lock(file);
    try {
      const current = await this.#currentRevision(file);
      if (current !== expectedRevision) return { ok: false, conflict: true };
      await this.#atomicWrite(file, bytes);
      const revision = revisionOf(bytes);
      const st = await stat(file, { bigint: true });
      this.#cache.set(file, { key: `${st.ino}:${st.size}:${st.mtimeNs}`, revision, parsed: checked });
      return { ok: true, revision };
    } finally {
      await release();
    }
  }

  async clear(userId: string, agentName?: string): Promise<void> {
    const file = await this.pathFor(userId, agentName);
    await mkdir(dirname(file), { recursive: true });
    const release = await this.#lock(file);
    try {
      await this.#atomicWrite(`${file}.cleared`, new TextEncoder().encode(JSON.stringify({ at: Date.now() })));
      await unlink(file).catch((e: unknown) => {
        if (errno(e) !== "ENOENT") throw e;
      });
      this.#cache.delete(file);
    } finally {
      await release();
    }
  }

  /** The file's revision and parsed content, from the cache when inode, size and mtime match;
   * `undefined` when it does not exist. */
  async #read(file: string): Promise<CachedDoc | undefined> {
    let fh: FileHandle;
    try {
      fh = await open(file, "r");
    } catch (e) {
      if (errno(e) === "ENOENT") return undefined;
      throw e;
    }
    try {
      const st = await fh.stat({ bigint: true });
      const key = `${st.ino}:${st.size}:${st.mtimeNs}`;
      const cached = this.#cache.get(file);
      if (cached?.key === key) return cached;
      const bytes = await fh.readFile();
      const doc: CachedDoc = { key, revision: revisionOf(bytes), parsed: parseBytes(bytes) };
      this.#cache.set(file, doc);
      return doc;
    } finally {
      await fh.close();
    }
  }

  /** The revision of what is on disk now, read afresh. */
  async #currentRevision(file: string): Promise<string> {
    try {
      return revisionOf(await readFile(file));
    } catch (e) {
      if (errno(e) === "ENOENT") return NO_REVISION;
      throw e;
    }
  }

  async #clearedAt(file: string): Promise<number | undefined> {
    try {
      const at = (JSON.parse(await readFile(`${file}.cleared`, "utf8")) as { at?: unknown }).at;
      return typeof at === "number" ? at : undefined;
    } catch (e) {
      if (errno(e) === "ENOENT" || e instanceof SyntaxError) return undefined;
      throw e;
    }
  }

  /** Moves a corrupt file aside if it is still the one with `revision`; returns its new path,
   * or `undefined` when the file changed meanwhile. */
  async #quarantine(file: string, revision: string): Promise<string | undefined> {
    const release = await this.#lock(file);
    try {
      if ((await this.#currentRevision(file)) !== revision) return undefined;
      const aside = `${file}.corrupt-${Date.now()}`;
      await rename(file, aside);
      this.#cache.delete(file);
      return aside;
    } finally {
      await release();
    }
  }

  /** Temp file in the same directory, fsync, rename over `file`, fsync the directory. */
  async #atomicWrite(file: string, bytes: Uint8Array): Promise<void> {
    const temp = `${file}.${randomBytes(6).toString("hex")}.tmp`;
    const fh = await open(temp, "wx", 0o600);
    try {
      await fh.writeFile(bytes);
      await fh.sync();
    } catch (e) {
      await fh.close();
      await unlink(temp).catch(() => {});
      throw e;
    }
    await fh.close();
    try {
      await rename(temp, file);
    } catch (e) {
      await unlink(temp).catch(() => {});
      throw e;
    }
    try {
      const dirHandle = await open(dirname(file), "r");
      await dirHandle.sync().finally(() => dirHandle.close());
    } catch {
      // Directory fsync is not supported everywhere (Windows); the rename itself is atomic.
    }
  }

  /** Takes the writers' lock of `file`; resolves to its release. */
  async #lock(file: string): Promise<() => Promise<void>> {
    const lockPath = `${file}.lock`;
    const token = randomBytes(8).toString("hex");
    const body = JSON.stringify({ pid: process.pid, host: this.#host, token, at: Date.now() });
    const deadline = Date.now() + this.#lockTimeoutMs;
    for (let attempt = 0; ; attempt++) {
      try {
        await writeFile(lockPath, body, { flag: "wx", mode: 0o600 });
        return async () => {
          const info = await this.#inspectLock(lockPath);
          // Never remove a lock that is no longer ours (it was broken as stale and retaken).
          if (info?.owner?.token === token) await unlink(lockPath).catch(() => {});
        };
      } catch (e) {
        if (errno(e) !== "EEXIST") throw e;
      }
      if (await this.#breakIfStale(lockPath)) continue;
      if (Date.now() > deadline) {
        throw new EngramError("conflict", `timed out after ${this.#lockTimeoutMs} ms waiting for the lock ${lockPath}`);
      }
      await sleep(Math.min(50, 2 ** Math.min(attempt, 6)) * (0.5 + Math.random()));
    }
  }

  async #inspectLock(lockPath: string): Promise<LockInfo | undefined> {
    try {
      const st = await stat(lockPath, { bigint: true });
      const info: LockInfo = { id: `${st.ino}:${st.mtimeNs}`, ageMs: Date.now() - Number(st.mtimeMs) };
      try {
        const owner = JSON.parse(await readFile(lockPath, "utf8")) as LockInfo["owner"];
        if (owner && typeof owner.pid === "number" && typeof owner.token === "string") info.owner = owner;
      } catch {
        // Created but not yet written, or gone: judge by age alone.
      }
      return info;
    } catch (e) {
      if (errno(e) === "ENOENT") return undefined;
      throw e;
    }
  }

  /** Removes the lock when its owner is dead or it is too old; true when the lock is gone. */
  async #breakIfStale(lockPath: string): Promise<boolean> {
    const info = await this.#inspectLock(lockPath);
    if (!info) return true;
    const ownerDead = info.owner !== undefined && info.owner.host === this.#host && !processAlive(info.owner.pid);
    if (!ownerDead && info.ageMs <= this.#staleLockMs) return false;
    // One breaker at a time, and only the lock that was judged stale: another process may have
    // broken it already and taken a fresh one, which must survive.
    const breaker = `${lockPath}.break`;
    try {
      await writeFile(breaker, "", { flag: "wx" });
    } catch (e) {
      if (errno(e) !== "EEXIST") throw e;
      const st = await stat(breaker).catch(() => undefined);
      if (st && Date.now() - st.mtimeMs > this.#staleLockMs) await unlink(breaker).catch(() => {});
      return false;
    }
    try {
      const again = await this.#inspectLock(lockPath);
      if (again && again.id === info.id) await unlink(lockPath).catch(() => {});
    } finally {
      await unlink(breaker).catch(() => {});
    }
    return true;
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

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return errno(e) === "EPERM";
  }
}
