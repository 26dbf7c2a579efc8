/**
 * Memory history: every change to AGENTS.md memory and to long-term facts, recorded in a
 * {@link Store} with who made it (user, thread, run, actor), when, and the text before and after
 * — redacted, like everything memory keeps. Changes can be listed, shown as a diff and reverted.
 * @module
 */
import { createTwoFilesPatch } from "diff";
import { ConfigError, EngramError } from "../../errors.js";
import { listReadable } from "../../stores/rules.js";
import { type Namespace, type Store, validateNamespace } from "../../stores/types.js";
import { redactSecrets } from "../longterm/redact.js";

/** What kind of memory changed. */
export type MemoryKind = "agents_md" | "facts";

/** Who made a change. */
export type MemoryActor = "agent" | "api" | "cli" | "revert";

/** One recorded change. */
export interface MemoryChange {
  /** Sortable by time: later changes have greater ids. */
  id: string;
  /** Milliseconds since the epoch. */
  at: number;
  userId: string;
  kind: MemoryKind;
  /** The file path (`agents_md`) or the long-term memory document (`facts`, e.g. `"facts"` or `"facts:<agent>"`). */
  target: string;
  actor: MemoryActor;
  threadId?: string;
  runId?: string;
  /** The id of the change this one reverted (actor `"revert"`). */
  reverts?: string;
  /** The text before the change; `null` when the target did not exist. Redacted. */
  before: string | null;
  /** The text after the change; `null` when the target was deleted. Redacted. */
  after: string | null;
}

/** Whether a stored value has the shape of a {@link MemoryChange} (what a diff and a listing read). */
function isChange(value: unknown): value is MemoryChange {
  const c = value as MemoryChange | null;
  const text = (t: unknown) => t === null || typeof t === "string";
  return (
    typeof c === "object" &&
    c !== null &&
    typeof c.id === "string" &&
    typeof c.at === "number" &&
    typeof c.target === "string" &&
    typeof c.actor === "string" &&
    text(c.before) &&
    text(c.after)
  );
}

/** What a caller records; the history adds `id` and `at`. */
export type NewMemoryChange = Omit<MemoryChange, "id" | "at">;

/** How long history is kept. */
export interface MemoryRetention {
  /** Changes kept per user; the oldest go first. Default: 1,000. */
  maxChanges?: number;
  /** Changes older than this many days are dropped. Default: 365. */
  maxAgeDays?: number;
}

/** Options of {@link MemoryHistory}. */
export interface MemoryHistoryOptions {
  /** Where changes are kept (e.g. a `SqliteStore`). */
  store: Store;
  /** Namespace prefix; the user id is appended. Default: `["memory-history"]`. */
  namespace?: Namespace;
  /** Default: 1,000 changes and 365 days per user. */
  retention?: MemoryRetention;
  /** The clock, for tests. Default: `Date.now`. */
  now?: () => number;
}

/** Options of {@link MemoryHistory.list}. */
export interface ListChangesOptions {
  /** Only changes of this target. Default: all. */
  target?: string;
  kind?: MemoryKind;
  /** At most this many, newest first. Default: 50. */
  limit?: number;
  /** Called with the id of each change whose stored record is damaged (not JSON): it is left
   * out of the list, the others are listed. */
  onDamaged?: (id: string) => void;
}

/** Writes `content` back to `target` for {@link MemoryHistory.revert}; `expected` is what the
 * target must still hold (compare-and-swap), `null` meaning it must not exist. Returns `false` on
 * a lost race. */
export type RestoreFn = (target: string, content: string | null, expected: string | null) => Promise<boolean>;

const DEFAULT_RETENTION: Required<MemoryRetention> = { maxChanges: 1000, maxAgeDays: 365 };
const DAY_MS = 86_400_000;
const TIME_DIGITS = 10;

/** The time an id was made at (its first {@link TIME_DIGITS} base-36 digits). */
const timeOf = (id: string) => Number.parseInt(id.slice(0, TIME_DIGITS), 36);

/** The recorded history of memory changes, per user. */
export class MemoryHistory {
  readonly #store: Store;
  readonly #namespace: Namespace;
  readonly #retention: Required<MemoryRetention>;
  readonly #now: () => number;
  #sequence = 0;

  constructor(options: MemoryHistoryOptions) {
    if (!options || typeof options.store?.put !== "function") throw new ConfigError("history.store", "must be a Store");
    this.#store = options.store;
    this.#namespace = validateNamespace(options.namespace ?? ["memory-history"]);
    const retention = { ...DEFAULT_RETENTION, ...options.retention };
    for (const [key, value] of Object.entries(retention)) {
      if (!Number.isInteger(value) || value < 1)
        throw new ConfigError(`history.retention.${key}`, `must be an integer ≥ 1, got ${String(value)}`);
    }
    this.#retention = retention;
    this.#now = options.now ?? Date.now;
  }

  #ns(userId: string): Namespace {
    return validateNamespace([...this.#namespace, userId]);
  }

  /** Records a change (redacted). A change whose redacted before and after are equal is not
   * recorded and `undefined` is returned. */
  async record(change: NewMemoryChange): Promise<MemoryChange | undefined> {
    const before = change.before === null ? null : redactSecrets(change.before);
    const after = change.after === null ? null : redactSecrets(change.after);
    if (before === after) return undefined;
    const at = this.#now();
    // Time first (fixed width, base 36) so keys sort by time; a counter and randomness keep
    // changes recorded in the same millisecond, by several processes, distinct and ordered here.
    const id = `${at.toString(36).padStart(TIME_DIGITS, "0")}-${(this.#sequence++ % 1_296).toString(36).padStart(2, "0")}${crypto.randomUUID().slice(0, 8)}`;
    const recorded: MemoryChange = { ...change, target: change.target, id, at, before, after };
    const put = await this.#store.put(this.#ns(change.userId), id, recorded, { ifRevision: null });
    if (!put.ok) throw new EngramError("conflict", `memory history id ${id} already exists`);
    await this.#prune(change.userId, at);
    return recorded;
  }

  async #prune(userId: string, now: number): Promise<void> {
    const { items } = await this.#store.list<MemoryChange>(this.#ns(userId), { values: false });
    const cutoff = now - this.#retention.maxAgeDays * DAY_MS;
    // Ids start with the change's time, so age needs no values.
    const old = items.filter((item, i) => i < items.length - this.#retention.maxChanges || timeOf(item.key) < cutoff);
    if (old.length > 0)
      await this.#store.delete(
        this.#ns(userId),
        old.map((i) => i.key),
      );
  }

  /** A user's changes, newest first. A damaged record costs only itself (see
   * {@link ListChangesOptions.onDamaged}). */
  async list(userId: string, options: ListChangesOptions = {}): Promise<MemoryChange[]> {
    const limit = options.limit ?? 50;
    const { items, damaged } = await listReadable<MemoryChange>(this.#store, this.#ns(userId));
    for (const id of damaged) options.onDamaged?.(id);
    const out: MemoryChange[] = [];
    for (let i = items.length - 1; i >= 0 && out.length < limit; i--) {
      const item = items[i];
      if (!item) continue;
      const change = item.value;
      if (!isChange(change)) {
        options.onDamaged?.(item.key);
        continue;
      }
      if (options.target !== undefined && change.target !== options.target) continue;
      if (options.kind !== undefined && change.kind !== options.kind) continue;
      out.push(change);
    }
    return out;
  }

  /** One change, or `undefined`. */
  async get(userId: string, id: string): Promise<MemoryChange | undefined> {
    return (await this.#store.get<MemoryChange>(this.#ns(userId), id))?.value;
  }

  /** A unified diff of one change. */
  diff(change: MemoryChange): string {
    return createTwoFilesPatch(
      `a${change.target.startsWith("/") ? "" : "/"}${change.target}`,
      `b${change.target.startsWith("/") ? "" : "/"}${change.target}`,
      change.before ?? "",
      change.after ?? "",
      change.before === null ? "(created)" : new Date(change.at).toISOString(),
      change.after === null ? "(deleted)" : "",
    );
  }

  /**
   * Reverts one change: its target gets back the text it had before, provided it still holds
   * what the change left (otherwise a later change would be lost: `conflict`). The revert is
   * itself recorded. Redacted secrets stay redacted: a revert never brings a secret back.
   */
  async revert(userId: string, id: string, restore: RestoreFn, context: { threadId?: string; runId?: string } = {}): Promise<MemoryChange> {
    const change = await this.get(userId, id);
    if (!change) throw new EngramError("file_not_found", `no memory change ${id} for user ${userId}`);
    const ok = await restore(change.target, change.before, change.after);
    if (!ok) throw new EngramError("conflict", `${change.target} changed after ${id}; revert the later changes first, or edit it by hand`);
    const recorded = await this.record({
      userId,
      kind: change.kind,
      target: change.target,
      actor: "revert",
      reverts: change.id,
      ...context,
      before: change.after,
      after: change.before,
    });
    if (!recorded) throw new EngramError("conflict", `reverting ${id} changed nothing`);
    return recorded;
  }
}
