/**
 * `InMemoryStore`: the Store for tests and edge runtimes. Keys are kept sorted per namespace so
 * prefix and delimiter listings are range scans, never full scans.
 * @module
 */
import type { ListOptions, ListResult, Namespace, PutOptions, PutResult, Store, StoreItem } from "./types.js";
import { validateNamespace } from "./types.js";

interface Space {
  keys: string[];
  items: Map<string, StoreItem>;
  /** Bumped on every put and delete. */
  changes: number;
}

/** First index in sorted `keys` whose key is >= `key`. */
function lowerBound(keys: readonly string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((keys[mid] as string) < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The smallest string greater than every string that starts with `prefix`. */
function successor(prefix: string): string {
  const last = prefix.charCodeAt(prefix.length - 1);
  return prefix.slice(0, -1) + String.fromCharCode(last + 1);
}

/** Values are deep-copied in and out (structuredClone), as a real store would serialise them. */
export class InMemoryStore implements Store {
  readonly #spaces = new Map<string, Space>();
  #revision = 0;

  #space(namespace: Namespace, create: true): Space;
  #space(namespace: Namespace, create: false): Space | undefined;
  #space(namespace: Namespace, create: boolean): Space | undefined {
    const id = JSON.stringify(validateNamespace(namespace));
    let space = this.#spaces.get(id);
    if (!space && create) {
      space = { keys: [], items: new Map(), changes: 0 };
      this.#spaces.set(id, space);
    }
    return space;
  }

  async get<V>(namespace: Namespace, key: string): Promise<StoreItem<V> | undefined> {
    const item = this.#space(namespace, false)?.items.get(key);
    return item && ({ ...item, value: structuredClone(item.value) } as StoreItem<V>);
  }

  async put<V>(namespace: Namespace, key: string, value: V, options: PutOptions = {}): Promise<PutResult> {
    const space = this.#space(namespace, true);
    const current = space.items.get(key);
    if (options.ifRevision !== undefined && (current?.revision ?? null) !== options.ifRevision) {
      return { ok: false, conflict: true };
    }
    const revision = String(++this.#revision);
    if (!current) space.keys.splice(lowerBound(space.keys, key), 0, key);
    space.changes++;
    space.items.set(key, { key, value: structuredClone(value), revision, updatedAt: Date.now() });
    return { ok: true, revision };
  }

  async delete(namespace: Namespace, keys: readonly string[]): Promise<number> {
    const space = this.#space(namespace, false);
    if (!space) return 0;
    let removed = 0;
    for (const key of keys) {
      if (!space.items.delete(key)) continue;
      space.keys.splice(lowerBound(space.keys, key), 1);
      space.changes++;
      removed++;
    }
    return removed;
  }

  async changeToken(namespace: Namespace): Promise<string> {
    return String(this.#space(namespace, false)?.changes ?? 0);
  }

  async list<V>(namespace: Namespace, options: ListOptions = {}): Promise<ListResult<V>> {
    const space = this.#space(namespace, false);
    const result: ListResult<V> = { items: [], prefixes: [] };
    if (!space) return result;
    const { prefix = "", delimiter, values = true } = options;
    let i = lowerBound(space.keys, prefix);
    while (i < space.keys.length) {
      const key = space.keys[i] as string;
      if (!key.startsWith(prefix)) break;
      const cut = delimiter ? key.indexOf(delimiter, prefix.length) : -1;
      if (cut >= 0) {
        // Report the group once, then jump past every key inside it.
        const group = key.slice(0, cut + (delimiter as string).length);
        result.prefixes.push(group);
        i = lowerBound(space.keys, successor(group));
        continue;
      }
      const item = space.items.get(key) as StoreItem;
      result.items.push({ ...item, value: values ? structuredClone(item.value) : undefined } as StoreItem<V>);
      i++;
    }
    return result;
  }
}
