/**
 * Change notices between the tabs and workers of an origin: after a write commits, the store
 * posts the namespaces it changed on a `BroadcastChannel` named after the database; a store with
 * subscribers listens on it. The poster is a channel of its own, so the writing store's own
 * subscribers hear the write as well.
 * @module
 */
import { type Namespace, namespaceFromId, validateNamespace } from "engram/kit";

const channelName = (database: string) => `engram-store:${database}`;

/** Whether this runtime has `BroadcastChannel` (windows and workers do). */
const broadcasts = () => typeof globalThis.BroadcastChannel === "function";

/** Tells every subscriber of `database`, in any tab or worker of the origin, that these
 * namespaces (as `namespaceId` gives them) changed. */
export function announce(database: string, namespaces: Iterable<string>): void {
  if (!broadcasts()) return;
  const ids = [...namespaces];
  if (ids.length === 0) return;
  const channel = new BroadcastChannel(channelName(database));
  channel.postMessage(ids);
  // Messages posted before closing are still delivered.
  channel.close();
}

/** The subscribers of one store: one channel while there are any. */
export class Subscribers {
  readonly #database: string;
  readonly #listeners = new Set<(namespace: Namespace) => void>();
  #channel: BroadcastChannel | undefined;

  constructor(database: string) {
    this.#database = database;
  }

  add(listener: (namespace: Namespace) => void): () => void {
    this.#listeners.add(listener);
    if (!this.#channel && broadcasts()) {
      this.#channel = new BroadcastChannel(channelName(this.#database));
      this.#channel.onmessage = (event: MessageEvent) => this.#deliver(event.data);
    }
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size === 0) {
        this.#channel?.close();
        this.#channel = undefined;
      }
    };
  }

  /** Calls the listeners with each well-formed namespace of a notice (anything else another
   * page of the origin posted on the channel is ignored). */
  #deliver(data: unknown): void {
    if (!Array.isArray(data)) return;
    for (const id of data) {
      if (typeof id !== "string") continue;
      let namespace: Namespace;
      try {
        namespace = validateNamespace(namespaceFromId(id));
      } catch {
        continue;
      }
      for (const listener of this.#listeners) listener(namespace);
    }
  }
}
