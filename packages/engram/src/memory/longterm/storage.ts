/**
 * Where long-term memory lives: one {@link MemoryData} document per user, or per user and
 * agent, saved only by compare-and-swap on a revision, so concurrent writers — threads,
 * processes, machines — never lose an update.
 * @module
 */
import type { PendingWorkStore } from "./pending.js";
import type { MemoryData } from "./schema.js";

/** The revision of a memory that does not exist yet; `save` with it succeeds only when there is
 * still no document. */
export const NO_REVISION = "0";

/** What {@link MemoryStorage.load} returns. */
export interface LoadedMemory {
  /** The document (a private copy: mutating it changes nothing stored). An empty memory when
   * none exists. */
  memory: MemoryData;
  /** Pass to {@link MemoryStorage.save}; {@link NO_REVISION} when no document exists. */
  revision: string;
  /** When memory was last cleared (ms since the epoch), if ever. Work captured before this must
   * not be saved: it would bring cleared facts back. */
  clearedAt?: number;
  /** Something was wrong and repaired, e.g. a corrupt document moved aside and a fresh one
   * started. The caller reports it. */
  warning?: string;
}

/** Outcome of {@link MemoryStorage.save}: the new revision, or a lost compare-and-swap. */
export type SaveMemoryResult = { ok: true; revision: string } | { ok: false; conflict: true };

/**
 * Storage of long-term memory documents. `agentName` `undefined` addresses the memory a user
 * shares across agents; a name gives that agent its own. Ids may be any string: storages map
 * them to safe names themselves.
 */
export interface MemoryStorage {
  load(userId: string, agentName?: string): Promise<LoadedMemory>;
  /** Saves `memory` (stamping `lastUpdated`) unless the stored revision differs from
   * `expectedRevision`. Never mutates `memory`. */
  save(userId: string, agentName: string | undefined, memory: MemoryData, expectedRevision: string): Promise<SaveMemoryResult>;
  /** Deletes the document and records the time of the clear (see {@link LoadedMemory.clearedAt}). */
  clear(userId: string, agentName?: string): Promise<void>;
  /** Optional: a token that changes whenever this user's (and agent's) memory may have changed,
   * cheaper than {@link MemoryStorage.load}; lets injection reuse its last block. */
  changeToken?(userId: string, agentName?: string): Promise<string | undefined>;
  /** Optional: where extraction work that kept failing is kept until it succeeds (see
   * `PendingWorkStore`). Without it, and without a `store` option, pending work lives in the
   * process only. */
  pendingWork?(): PendingWorkStore;
}

const PLAIN_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const RESERVED = /^(con|prn|aux|nul|com\d|lpt\d)$/;

/**
 * A file and namespace safe name for a user or agent id. Lower-case ids of letters, digits,
 * `_` and `-` (at most 64, not starting with `_` or `-`, not a Windows device name) are kept;
 * anything else becomes `_` + 32 hex digits of its SHA-256. Both sets are disjoint (only hashed
 * names start with `_`) and distinct on case-insensitive file systems, so two ids never share a
 * name and no id can climb out of its directory.
 */
export async function safeId(id: string): Promise<string> {
  if (PLAIN_ID.test(id) && !RESERVED.test(id)) return id;
  const digest = await globalThis.crypto.subtle.digest("SHA-256", new TextEncoder().encode(id));
  let hex = "";
  for (const b of new Uint8Array(digest).subarray(0, 16)) hex += b.toString(16).padStart(2, "0");
  return `_${hex}`;
}

/** Deep copy of a memory document (documents are plain JSON). */
export function copyMemory(memory: MemoryData): MemoryData {
  return structuredClone(memory);
}
