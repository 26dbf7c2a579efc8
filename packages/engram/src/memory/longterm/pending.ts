/**
 * Pending extraction work: a captured conversation whose extraction kept failing (unusable
 * replies, model errors, timeouts, lost compare-and-swaps) is kept here instead of being
 * dropped, and retried on the next run or `flush()`. Edge-safe: {@link StorePendingWork} keeps it
 * in a {@link Store}, {@link InMemoryPendingWork} in the process (the fallback when there is
 * nowhere durable). `FilePendingWork` (Node) lives in `./pending-file.js`.
 * @module
 */
import type { Message } from "../../models/types.js";
import type { Namespace, Store } from "../../stores/types.js";
import { listReadable } from "../../stores/rules.js";
import type { CapturedConversation } from "./capture.js";
import { redactSecrets } from "./redact.js";

/** One queued update: a conversation and who it belongs to, fixed when it was captured. */
export interface UpdateJob {
  conversation: CapturedConversation;
  threadId: string;
  userId: string;
  agentName?: string;
  /** When it was captured (ms since the epoch); a clear after this cancels the job. */
  capturedAt: number;
  /** Set when the job was resumed from pending work: the id of that entry. */
  pendingId?: string;
  /** Failed attempts in earlier runs (pending work). Default: 0. */
  failures?: number;
}

/** One piece of pending work. */
export interface PendingEntry {
  /** Unique per entry; a retry that fails again overwrites it. */
  id: string;
  job: UpdateJob;
  /** Why the last attempt failed. */
  reason: string;
  /** Failed attempts so far, over every run. */
  attempts: number;
  /** When it was last put (ms since the epoch). */
  updatedAt: number;
}

/** Where pending work is kept. Implementations never throw for a missing entry. */
export interface PendingWorkStore {
  /** Saves (or replaces) an entry. */
  put(entry: PendingEntry): Promise<void>;
  /** Every entry, oldest first. Entries that cannot be read are skipped. */
  list(): Promise<PendingEntry[]>;
  /** Removes an entry; nothing when it does not exist. */
  delete(id: string): Promise<void>;
}

/** A fresh pending-entry id (time-ordered, random suffix). */
export function newPendingId(now = Date.now()): string {
  const bytes = new Uint8Array(6);
  globalThis.crypto.getRandomValues(bytes);
  return `p${now.toString(36).padStart(9, "0")}-${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** `entry` as it may be stored: secrets redacted from the conversation and from the failure
 * reason (a provider's error can echo a key). Pending work can outlive many failed runs, so it
 * obeys the rule of everything else memory keeps. Extraction redacts what it sends the model
 * anyway, so nothing of use is lost. Needs the core loaded (see {@link redactSecrets}). */
export function redactPendingEntry(entry: PendingEntry): PendingEntry {
  const { conversation } = entry.job;
  return {
    ...entry,
    job: {
      ...entry.job,
      conversation: { ...conversation, messages: conversation.messages.map((m) => ({ ...m, content: redactSecrets(m.content) })) },
    },
    reason: redactSecrets(entry.reason),
  };
}

const isMessage = (m: unknown): m is Message =>
  !!m &&
  typeof m === "object" &&
  ((m as Message).role === "user" || (m as Message).role === "assistant") &&
  typeof (m as Message).content === "string";

/** Validates a stored entry (stored data is untrusted): the entry, or `undefined`. */
export function parsePendingEntry(value: unknown): PendingEntry | undefined {
  if (!value || typeof value !== "object") return undefined;
  const e = value as Partial<PendingEntry>;
  const job = e.job as Partial<UpdateJob> | undefined;
  if (
    typeof e.id !== "string" ||
    typeof e.reason !== "string" ||
    typeof e.attempts !== "number" ||
    typeof e.updatedAt !== "number" ||
    !job ||
    typeof job.threadId !== "string" ||
    typeof job.userId !== "string" ||
    (job.agentName !== undefined && typeof job.agentName !== "string") ||
    typeof job.capturedAt !== "number" ||
    !job.conversation ||
    !Array.isArray(job.conversation.messages) ||
    !job.conversation.messages.every(isMessage)
  ) {
    return undefined;
  }
  const conversation = {
    messages: job.conversation.messages.map((m) => ({ role: m.role, content: m.content })),
    correction: job.conversation.correction === true,
    reinforcement: job.conversation.reinforcement === true,
    forget: job.conversation.forget === true,
  };
  const clean: UpdateJob = { conversation, threadId: job.threadId, userId: job.userId, capturedAt: job.capturedAt };
  if (job.agentName !== undefined) clean.agentName = job.agentName;
  return { id: e.id, job: clean, reason: e.reason, attempts: e.attempts, updatedAt: e.updatedAt };
}

/** Pending work in this process only: lost with it. The fallback when the storage offers nothing
 * durable; a warning says so when work is kept here. */
export class InMemoryPendingWork implements PendingWorkStore {
  readonly durable = false;
  readonly #entries = new Map<string, PendingEntry>();

  async put(entry: PendingEntry): Promise<void> {
    this.#entries.set(entry.id, structuredClone(entry));
  }

  async list(): Promise<PendingEntry[]> {
    return [...this.#entries.values()].map((e) => structuredClone(e)).sort((a, b) => a.id.localeCompare(b.id));
  }

  async delete(id: string): Promise<void> {
    this.#entries.delete(id);
  }
}

/** Options of {@link StorePendingWork}. */
export interface StorePendingWorkOptions {
  store: Store;
  /** Namespace of the entries (one key per entry). Default: `["engram", "longterm", "pending"]`. */
  namespace?: Namespace;
}

/** Pending work in a {@link Store} (in memory, SQLite, PostgreSQL): one item per entry, so
 * processes sharing the store see each other's pending work. */
export class StorePendingWork implements PendingWorkStore {
  readonly durable = true;
  readonly #store: Store;
  readonly #namespace: Namespace;

  constructor(options: StorePendingWorkOptions) {
    this.#store = options.store;
    this.#namespace = options.namespace ?? ["engram", "longterm", "pending"];
  }

  async put(entry: PendingEntry): Promise<void> {
    await this.#store.put(this.#namespace, entry.id, entry);
  }

  async list(): Promise<PendingEntry[]> {
    // A damaged entry (not JSON) is skipped like any invalid one; the others still run.
    const { items } = await listReadable<unknown>(this.#store, this.#namespace);
    const out: PendingEntry[] = [];
    for (const item of items) {
      const entry = parsePendingEntry(item.value);
      if (entry && entry.id === item.key) out.push(entry);
    }
    return out.sort((a, b) => a.id.localeCompare(b.id));
  }

  async delete(id: string): Promise<void> {
    await this.#store.delete(this.#namespace, [id]);
  }
}
