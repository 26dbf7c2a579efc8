/**
 * `StoreMemoryStorage`: long-term memory in a {@link Store} (in memory, SQLite, PostgreSQL),
 * using the store's revisions for compare-and-swap. Edge-safe.
 * @module
 */
import { isDamagedValue } from "../../stores/rules.js";
import type { Namespace, Store, StoreItem } from "../../stores/types.js";
import { type PendingWorkStore, StorePendingWork } from "./pending.js";
import { type MemoryData, createEmptyMemory, nowIso, parseMemory } from "./schema.js";
import { type LoadedMemory, type MemoryStorage, NO_REVISION, type SaveMemoryResult, copyMemory, safeId } from "./storage.js";

/** Options of {@link StoreMemoryStorage}. */
export interface StoreMemoryStorageOptions {
  store: Store;
  /** Namespace prefix; a user's memory lives under `[...namespace, "users", <safe user id>]`
   * (plus `"agents", <safe agent name>` per agent). Default: `["engram", "longterm"]`. */
  namespace?: Namespace;
}

/** The key of the memory document inside its namespace. */
const MEMORY_KEY = "memory";
/** The key of the `{ at }` record of the last clear. */
const CLEARED_KEY = "cleared";

/**
 * Memory documents in a {@link Store}: key `memory` holds the `memory.json` document, key
 * `cleared` the time of the last clear. A stored value that is not a valid document is moved
 * to `memory.corrupt-<ms>` and a fresh memory is started (reported as a warning).
 */
export class StoreMemoryStorage implements MemoryStorage {
  readonly #store: Store;
  readonly #namespace: Namespace;

  constructor(options: StoreMemoryStorageOptions) {
    this.#store = options.store;
    this.#namespace = options.namespace ?? ["engram", "longterm"];
  }

  async #ns(userId: string, agentName: string | undefined): Promise<Namespace> {
    const ns = [...this.#namespace, "users", await safeId(userId)];
    if (agentName !== undefined) ns.push("agents", await safeId(agentName));
    return ns;
  }

  async load(userId: string, agentName?: string): Promise<LoadedMemory> {
    const ns = await this.#ns(userId, agentName);
    for (;;) {
      // Memory first, then the clear record: a clear writes them in the opposite order, so a
      // revision read before a clear is always paired with that clear or an older one.
      // A stored text that is not even JSON is judged like an invalid document: its raw
      // text is kept aside.
      let item: StoreItem<unknown> | undefined;
      let parsed: ReturnType<typeof parseMemory>;
      try {
        item = await this.#store.get<unknown>(ns, MEMORY_KEY);
        parsed = item ? parseMemory(item.value) : { ok: false, error: "" };
      } catch (e) {
        if (!isDamagedValue(e)) throw e;
        item = { key: MEMORY_KEY, value: e.raw, revision: e.revision, updatedAt: 0 };
        parsed = { ok: false, error: e.message };
      }
      const cleared = await this.#cleared(ns);
      const at = cleared?.value?.at;
      const clearedAt = typeof at === "number" ? { clearedAt: at } : {};
      if (!item) return { memory: createEmptyMemory(), revision: NO_REVISION, ...clearedAt };
      if (parsed.ok) return { memory: parsed.memory, revision: item.revision, ...clearedAt };
      // Quarantine: keep the bad value aside, then replace it only if it is still the same one.
      const aside = `${MEMORY_KEY}.corrupt-${Date.now()}`;
      await this.#store.put(ns, aside, item.value);
      const fresh = await this.#store.put(ns, MEMORY_KEY, createEmptyMemory(), { ifRevision: item.revision });
      if (!fresh.ok) continue; // someone replaced it meanwhile: read again
      return {
        memory: createEmptyMemory(),
        revision: fresh.revision,
        ...clearedAt,
        warning: `long-term memory of user ${JSON.stringify(userId)} was invalid (${parsed.error}); kept as ${JSON.stringify(aside)} and started afresh`,
      };
    }
  }

  /** The clear record; a damaged one (not JSON) counts as none. */
  async #cleared(ns: Namespace): Promise<StoreItem<{ at?: unknown }> | undefined> {
    try {
      return await this.#store.get<{ at?: unknown }>(ns, CLEARED_KEY);
    } catch (e) {
      if (isDamagedValue(e)) return undefined;
      throw e;
    }
  }

  async save(userId: string, agentName: string | undefined, memory: MemoryData, expectedRevision: string): Promise<SaveMemoryResult> {
    const ns = await this.#ns(userId, agentName);
    const stamped = { ...copyMemory(memory), lastUpdated: nowIso() };
    return this.#store.put(ns, MEMORY_KEY, stamped, { ifRevision: expectedRevision === NO_REVISION ? null : expectedRevision });
  }

  /** The store's change token for this user's namespace, when the store has one. */
  async changeToken(userId: string, agentName?: string): Promise<string | undefined> {
    return this.#store.changeToken?.(await this.#ns(userId, agentName));
  }

  /** Pending extraction work, in the same store under `[...namespace, "pending"]`. */
  pendingWork(): PendingWorkStore {
    return new StorePendingWork({ store: this.#store, namespace: [...this.#namespace, "pending"] });
  }

  async clear(userId: string, agentName?: string): Promise<void> {
    const ns = await this.#ns(userId, agentName);
    const at = { at: Date.now() };
    if (this.#store.batch) {
      // One transaction where the store has them: no reader sees the clear half done.
      await this.#store.batch([
        { op: "put", namespace: ns, key: CLEARED_KEY, value: at },
        { op: "delete", namespace: ns, key: MEMORY_KEY },
      ]);
      return;
    }
    await this.#store.put(ns, CLEARED_KEY, at);
    await this.#store.delete(ns, [MEMORY_KEY]);
  }
}
