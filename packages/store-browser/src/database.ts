/**
 * The IndexedDB database the store and the checkpointer keep their records in: its object
 * stores and their migrations, one connection per instance (given up when another tab upgrades
 * the schema, reopened by the next call), transactions as promises, and the error mapping.
 *
 * A readwrite transaction over an object store waits for every other readwrite transaction
 * over it, whichever tab, worker or connection of the origin opened it, and commits or aborts
 * whole: a compare-and-swap reads and writes in one.
 * @module
 */
import { EngramError } from "engram/kit";

/** Options of the store and the checkpointer. */
export interface IndexedDBOptions {
  /** The database's name; a store and a checkpointer may share one. Default: `"engram"`. */
  name?: string;
  /** The IndexedDB to open it in. Default: the global `indexedDB` (a window's or a worker's). */
  indexedDB?: IDBFactory;
}

/**
 * The schema, one entry per version: never edit a published entry, append a new one. Item and
 * thread keys are their UTF-8 bytes (binary keys compare byte by byte, so by code point as the
 * `Store` rules sort; strings would compare by UTF-16 code unit). Small records (heads) are kept
 * apart from values and documents, so walks over keys never read one.
 */
const MIGRATIONS: readonly ((db: IDBDatabase) => void)[] = [
  (db) => {
    // "revision" → the last revision handed out, to items and checkpoints alike (never reused).
    db.createObjectStore("meta");
    // [namespace, key bytes] → { key, revision, updatedAt }
    db.createObjectStore("items");
    // [namespace, key bytes] → the value's JSON text
    db.createObjectStore("values");
    // namespace → its change token (the revision of its last write)
    db.createObjectStore("namespaces");
    // thread bytes → { threadId, revision, savedAt, interrupted, filesId, filesDeltas }
    db.createObjectStore("checkpoints");
    // thread bytes → the checkpoint's document (JSON)
    db.createObjectStore("checkpoint_docs");
    // [thread bytes, seq] → files bytes (seq 0: the snapshot, then the deltas)
    db.createObjectStore("checkpoint_files");
    // thread bytes → { threadId, userId, savedAt, searchable }: threads saved with a user
    db.createObjectStore("thread_messages").createIndex("by_user", "userId");
  },
  (db) => {
    // [thread bytes, runId, seq] → a step of a durable run under way
    db.createObjectStore("run_steps");
  },
  (db) => {
    // [thread bytes, runId, seq] → a step a save kept as a point of the thread's history
    db.createObjectStore("history");
  },
];

/** The schema version this code writes (the database's IndexedDB version). */
export const SCHEMA_VERSION = MIGRATIONS.length;

const encoder = new TextEncoder();

/** A key or thread id as IndexedDB sorts it by code point: its UTF-8 bytes. */
export function sortable(text: string): IDBValidKey {
  return encoder.encode(text);
}

/** An IndexedDB or storage failure as a `store_error` {@link EngramError} (Engram errors pass through). */
export function storeError(e: unknown, name?: string): EngramError {
  if (e instanceof EngramError) return e;
  const kind = (e as { name?: unknown } | null)?.name;
  const message = e instanceof Error || e instanceof DOMException ? e.message : String(e);
  const where = name === undefined ? "indexeddb" : `indexeddb '${name}'`;
  if (kind === "QuotaExceededError") {
    return new EngramError(
      "store_error",
      `${where}: the origin's storage quota is used up (navigator.storage.estimate() tells how much is left); nothing of this write was stored`,
      { cause: e },
    );
  }
  if (kind === "VersionError") {
    return new EngramError(
      "store_error",
      `${where}: the database's schema is newer than this Engram understands (${SCHEMA_VERSION}): upgrade Engram`,
      { cause: e },
    );
  }
  return new EngramError("store_error", `${where}: ${typeof kind === "string" ? `${kind}: ` : ""}${message}`, { cause: e });
}

/** The result of `request`, once it succeeds. Awaiting it inside a transaction keeps the
 * transaction active: the continuation runs among the success event's microtasks. */
export function request<T>(r: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });
}

function checkOptions(options: unknown): { name: string; factory: IDBFactory } {
  const o = (options ?? {}) as IndexedDBOptions;
  if (typeof o !== "object") throw new EngramError("invalid_argument", "options must be an object");
  const name = o.name ?? "engram";
  if (typeof name !== "string" || name.length === 0) {
    throw new EngramError("invalid_argument", `the database name must be a non-empty string, got ${JSON.stringify(name)}`);
  }
  const factory = o.indexedDB ?? (globalThis as { indexedDB?: IDBFactory }).indexedDB;
  if (typeof factory?.open !== "function") {
    throw new EngramError("invalid_argument", "no IndexedDB here: run in a browser window or worker, or pass options.indexedDB");
  }
  return { name, factory };
}

/** One connection to the database, opened (and the schema created or migrated) on first use. */
export class Database {
  readonly name: string;
  readonly #factory: IDBFactory;
  #connection: Promise<IDBDatabase> | undefined;

  constructor(options: IndexedDBOptions | undefined) {
    const { name, factory } = checkOptions(options);
    this.name = name;
    this.#factory = factory;
  }

  #open(): Promise<IDBDatabase> {
    const opened = new Promise<IDBDatabase>((resolve, reject) => {
      const req = this.#factory.open(this.name, SCHEMA_VERSION);
      req.onupgradeneeded = (event) => {
        for (let v = event.oldVersion + 1; v <= SCHEMA_VERSION; v++) (MIGRATIONS[v - 1] as (db: IDBDatabase) => void)(req.result);
      };
      req.onsuccess = () => {
        const db = req.result;
        // Another tab opens a newer schema: let it upgrade; the next call here reopens (and
        // reports a schema it does not know).
        db.onversionchange = () => {
          db.close();
          this.#forget(opened);
        };
        // The browser closed it (the user cleared the site's data): the next call reopens.
        db.onclose = () => this.#forget(opened);
        resolve(db);
      };
      req.onerror = () => reject(storeError(req.error, this.name));
    });
    return opened;
  }

  #forget(connection: Promise<IDBDatabase>): void {
    if (this.#connection === connection) this.#connection = undefined;
  }

  connection(): Promise<IDBDatabase> {
    if (!this.#connection) {
      const opening = this.#open();
      this.#connection = opening;
      opening.catch(() => this.#forget(opening));
    }
    return this.#connection;
  }

  /**
   * Runs `work` in one transaction over `stores` and resolves to its result once the
   * transaction has committed. `work` may await only requests of the transaction (any other
   * wait lets it commit early). When `work` throws, the transaction is aborted — nothing it
   * wrote is kept — and the error passes through as thrown; storage failures become
   * `store_error`.
   */
  async run<T>(stores: readonly string[], mode: IDBTransactionMode, work: (tx: IDBTransaction) => Promise<T>): Promise<T> {
    let db: IDBDatabase;
    let tx: IDBTransaction;
    try {
      db = await this.connection();
      tx = db.transaction(stores as string[], mode);
    } catch (e) {
      throw storeError(e, this.name);
    }
    const done = new Promise<void>((resolve, reject) => {
      tx.oncomplete = () => resolve();
      tx.onabort = () => reject(tx.error ?? new DOMException("the transaction was aborted", "AbortError"));
    });
    let result: T;
    try {
      result = await work(tx);
    } catch (e) {
      done.catch(() => {});
      try {
        tx.abort();
      } catch {
        // It had finished already (a failed request aborts it).
      }
      throw e instanceof DOMException ? storeError(e, this.name) : e;
    }
    try {
      tx.commit();
    } catch {
      // Committing already: nothing was pending.
    }
    try {
      await done;
    } catch (e) {
      throw storeError(e, this.name);
    }
    return result;
  }

  /** Closes the connection (a later call opens a new one). */
  close(): void {
    const connection = this.#connection;
    this.#connection = undefined;
    connection?.then((db) => db.close()).catch(() => {});
  }
}
