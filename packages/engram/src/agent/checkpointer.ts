/**
 * Thread persistence. A checkpoint is the whole state of one thread after a run (or at an
 * interrupt); the SQLite (`@engram/sqlite`) and PostgreSQL (`@engram/postgres`) checkpointers
 * implement the same interface and pass the same conformance suite (`engram/testing`).
 *
 * Stored checkpoints carry a format {@link CHECKPOINT_VERSION}; {@link decodeCheckpoint} upgrades
 * every older format (including the version-less shape of the first releases), so a thread saved
 * by an older Engram resumes in a newer one.
 * @module
 */
import { loadCore } from "../core/loader.js";
import type { Core } from "../core/types.js";
import { EngramError } from "../errors.js";
import { rankLoadedThreads } from "../memory/recall/rank.js";
import { type SearchableMessage, searchableMessages } from "../memory/recall/text.js";
import { type MessageSearchHit, type MessageSearchQuery, checkMessageSearch } from "../memory/recall/types.js";
import type { Message } from "../models/types.js";
import { checkKeyText, compareKeys } from "../stores/rules.js";
import {
  type HistoryStep,
  type PutCheckpointOptions,
  ProcessClaims,
  type RunStep,
  type StepKey,
  type ThreadClaim,
  checkPutOptions,
  checkRunStep,
  checkStepKeys,
  historyOrder,
  stepConflict,
} from "./run-steps.js";
import type { Interrupt } from "./types.js";

export type { HistoryStep, PutCheckpointOptions, RunStep, StepKey, ThreadClaim } from "./run-steps.js";

/** The history point a checkpoint equals (messages, data and files): the last step the run
 * that saved it committed. Set by runs that commit steps; the next run's steps follow it. */
export interface HistoryHead {
  runId: string;
  seq: number;
  /** How many steps lie between it and the nearest full step (a base) it follows, itself included. */
  depth: number;
}

/** The format version {@link encodeCheckpoint} writes. */
export const CHECKPOINT_VERSION = 1;

/**
 * Names the files a checkpoint holds: a full snapshot (`id`, chosen when it was saved) and how
 * many deltas were saved after it. Equal refs mean equal files.
 */
export interface FilesRef {
  id: string;
  deltas: number;
}

/** The saved state of one thread. */
export interface Checkpoint {
  /** The format version it was stored with; set by checkpointers on load. Optional on put. */
  version?: number;
  messages: Message[];
  /** Middleware data (e.g. summarisation state). */
  data: Record<string, unknown>;
  /** Snapshot of the thread's State-backend files, when the thread has them: on `get`, the
   * stored full snapshot (the files are it with {@link Checkpoint.filesDeltas} applied). On
   * `put`, a full snapshot replacing the stored files. */
  files?: Uint8Array;
  /**
   * Changes to `files` (`Core.applyFileDeltas` records), oldest first. On `get`: every delta
   * stored after the snapshot. On `put` with `files`: the deltas stored after it; without
   * `files` (only {@link Checkpointer.incremental} checkpointers): deltas appended to the
   * stored files, which must be those `filesRef` names minus these deltas — else the put fails
   * with a `conflict` {@link EngramError} and changes nothing.
   */
  filesDeltas?: Uint8Array[];
  /** Which files these are (see {@link FilesRef}); after a put, the stored files' ref. Set on
   * `get` when the files were saved with one. Default on a put with `files`: a new id. */
  filesRef?: FilesRef;
  /** Set while the thread waits for human decisions. */
  interrupt?: Interrupt;
  /** Milliseconds since the epoch. */
  savedAt: number;
  /** Whose thread this is (the run's `userId`): only that user's searches
   * ({@link Checkpointer.searchMessages}) see it. A checkpoint saved without one is nobody's. */
  userId?: string;
  /**
   * Which save of the thread this is: set on `get` (a positive integer that grows with every
   * put and is never used again for the thread, not even after a delete). On `put`, when set,
   * the revision the writer started from: the put happens only if it is still the stored one
   * (`0`: only if the thread has no checkpoint), else it fails with a `conflict`
   * {@link EngramError} and changes nothing — so a writer never saves over a save it has not
   * seen. Unset on a put: saved whatever is stored.
   */
  revision?: number;
  /** The history point this checkpoint equals (see {@link HistoryHead}); stored as given. A put
   * of other messages, data or files must leave it unset: the next run's steps would follow a
   * point the thread no longer is. */
  history?: HistoryHead;
}

/** A saved thread, as {@link Checkpointer.list} reports it. */
export interface ThreadInfo {
  threadId: string;
  savedAt: number;
  /** Whether the thread waits for human decisions. */
  interrupted: boolean;
}

/** Options of {@link Checkpointer.list}. */
export interface ListThreadsOptions {
  /** At most this many threads per page. Default: no limit. */
  limit?: number;
  /** Continue after the page that returned this cursor. */
  cursor?: string;
}

/** Options of {@link Checkpointer.get}. */
export interface GetCheckpointOptions {
  /** Files the caller holds already: when the stored files are these, the checkpoint comes back
   * with its `filesRef` but without `files` and `filesDeltas` (nothing is read or copied). */
  knownFiles?: FilesRef;
}

/** Stores checkpoints by thread id (any non-empty string without NUL, at most 1024 UTF-8 bytes). */
export interface Checkpointer {
  get(threadId: string, options?: GetCheckpointOptions): Promise<Checkpoint | undefined>;
  /** Saves `checkpoint` (see {@link Checkpoint.revision}); resolves to the revision stored
   * (nothing, for a checkpointer that keeps no revisions: saves are then unconditional). */
  put(threadId: string, checkpoint: Checkpoint, options?: PutCheckpointOptions): Promise<number | void>;
  /** Whether `put` appends {@link Checkpoint.filesDeltas} to the stored files (a save writes
   * only the files that changed) and `get` honours {@link GetCheckpointOptions.knownFiles}.
   * Default: false — every save stores the full snapshot. */
  readonly incremental?: boolean;
  delete(threadId: string): Promise<void>;
  /** Optional: the saved threads, sorted by id. */
  list?(options?: ListThreadsOptions): Promise<{ threads: ThreadInfo[]; cursor?: string }>;
  /**
   * Whether saves outlive the process (a database, a file): runs then commit every step by
   * default (`durability: "step"`, see {@link DeepAgentOptions.durability}). Default: false.
   */
  readonly durable?: boolean;
  /**
   * Optional, with {@link putStep}, {@link getSteps} and {@link deleteSteps} (all four or none):
   * claims `threadId` for one run until `release()` — or until the claiming process dies, which
   * the system itself tells (a kernel file lock, a database session lock), never a timeout.
   * While a live claim holds the thread, another claim of it throws a `conflict` {@link
   * EngramError}. Claims of different threads never exclude each other.
   */
  claimThread?(threadId: string): Promise<ThreadClaim>;
  /**
   * Stores one step of a run under way, beside the thread's checkpoint (never changing it: `get`
   * returns the last checkpoint put). A step with the `runId` and `seq` of a stored one is a
   * `conflict`. Every successful `put` and every `delete` of the thread drops all its steps.
   */
  putStep?(threadId: string, step: RunStep): Promise<void>;
  /** The thread's stored steps, each run's in `seq` order (runs in any order). */
  getSteps?(threadId: string): Promise<RunStep[]>;
  /** Drops the steps `runId` stored for the thread (none: nothing happens); never history. */
  deleteSteps?(threadId: string, runId: string): Promise<void>;
  /**
   * Optional, with {@link deleteHistory} and the step operations: the thread's history points,
   * in order (`keptAt`, run, `seq`). A successful put with `keepSteps: runId` keeps that run's
   * steps extending the revision it replaces as history points (`keptAt`: the new revision), in
   * the same transaction that drops the thread's other steps; `getSteps` no longer returns them.
   * A `delete` of the thread drops its history too.
   */
  getHistory?(threadId: string): Promise<HistoryStep[]>;
  /** Drops the listed history points (missing ones are skipped). */
  deleteHistory?(threadId: string, points: readonly StepKey[]): Promise<void>;
  /**
   * Optional: the threads saved with `search.userId` (never another user's, never one saved
   * without a user) whose user or assistant messages share words with `search.query`, best
   * first, one hit per thread (its best message), at most `search.limit`, each snippet at most
   * `search.snippetChars` long; `search.excludeThreadId` is left out. A checkpointer without it
   * is searched by listing and loading its threads (`searchPastThreads`).
   */
  searchMessages?(search: MessageSearchQuery): Promise<MessageSearchHit[]>;
}

/** A checkpoint in storage form: a JSON document and the files as raw bytes. */
export interface EncodedCheckpoint {
  version: number;
  /** JSON of everything but the files bytes (`filesRef` included). */
  doc: string;
  /** A full snapshot: the stored files are replaced by it and `deltas`. Undefined: `deltas` are
   * appended to the stored files, which must be `base` (or, without `filesRef`, there are no
   * files). */
  files: Uint8Array | undefined;
  deltas: Uint8Array[];
  /** The stored files after the put; undefined when the thread has none. */
  filesRef: FilesRef | undefined;
  /** For an append: the files that must be stored (else `conflict`). */
  base?: FilesRef;
  /** The revision that must be stored (0: none), else `conflict`; undefined: any. */
  expected: number | undefined;
  savedAt: number;
  interrupted: boolean;
  /** {@link Checkpoint.userId}, checked. */
  userId: string | undefined;
}

/** Validates a thread id; throws an `invalid_argument` {@link EngramError}. */
export function checkThreadId(threadId: unknown): string {
  return checkKeyText(threadId, "a thread id", false);
}

/** Validates {@link ListThreadsOptions.limit}; `Infinity` when absent. */
export function checkThreadLimit(limit: unknown): number {
  if (limit === undefined) return Number.POSITIVE_INFINITY;
  if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1)
    throw new EngramError("invalid_argument", `limit must be a positive integer, got ${String(limit)}`);
  return limit;
}

/** The storage form of a checkpoint (validated: throws `invalid_argument` for a malformed one). */
export function encodeCheckpoint(cp: Checkpoint): EncodedCheckpoint {
  if (typeof cp !== "object" || cp === null || !Array.isArray(cp.messages) || typeof cp.data !== "object" || cp.data === null) {
    throw new EngramError("invalid_argument", "a checkpoint needs messages (array) and data (object)");
  }
  if (cp.files !== undefined && !(cp.files instanceof Uint8Array))
    throw new EngramError("invalid_argument", "checkpoint files must be a Uint8Array");
  const given = cp.filesDeltas ?? [];
  if (!Array.isArray(given) || !given.every((d) => d instanceof Uint8Array))
    throw new EngramError("invalid_argument", "checkpoint filesDeltas must be an array of Uint8Array");
  if (cp.filesRef !== undefined && !isFilesRef(cp.filesRef))
    throw new EngramError("invalid_argument", "checkpoint filesRef must be { id: non-empty string, deltas: integer ≥ 0 }");
  const expected = cp.revision;
  if (expected !== undefined && !(Number.isSafeInteger(expected) && expected >= 0))
    throw new EngramError("invalid_argument", `checkpoint revision must be an integer ≥ 0, got ${String(expected)}`);
  const savedAt = typeof cp.savedAt === "number" && Number.isFinite(cp.savedAt) ? cp.savedAt : Date.now();
  const userId = cp.userId === undefined ? undefined : checkKeyText(cp.userId, "a checkpoint's userId", false);
  if (cp.history !== undefined && !isHistoryHead(cp.history))
    throw new EngramError("invalid_argument", "checkpoint history must be { runId, seq: integer ≥ 1, depth: integer ≥ 1 }");
  const { files, filesDeltas: _, filesRef: __, revision: ___, version: ____, ...rest } = cp;
  let filesRef: FilesRef | undefined;
  let base: FilesRef | undefined;
  if (files) {
    filesRef = cp.filesRef ?? { id: crypto.randomUUID(), deltas: given.length };
    if (filesRef.deltas !== given.length)
      throw new EngramError("invalid_argument", `filesRef counts ${filesRef.deltas} deltas, the checkpoint has ${given.length}`);
  } else if (cp.filesRef) {
    filesRef = cp.filesRef;
    base = { id: filesRef.id, deltas: filesRef.deltas - given.length };
    if (base.deltas < 0)
      throw new EngramError("invalid_argument", `filesRef counts ${filesRef.deltas} deltas, fewer than the ${given.length} appended`);
  } else if (given.length > 0) {
    throw new EngramError("invalid_argument", "filesDeltas need files or a filesRef naming the stored files they extend");
  }
  let doc: string;
  try {
    doc = JSON.stringify({ ...rest, ...(filesRef && { filesRef }), savedAt, version: CHECKPOINT_VERSION });
  } catch (e) {
    throw new EngramError("invalid_argument", `a checkpoint must be JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
  return {
    version: CHECKPOINT_VERSION,
    doc,
    files: files && new Uint8Array(files),
    deltas: given.map((d) => new Uint8Array(d)),
    filesRef,
    ...(base && { base }),
    expected,
    savedAt,
    interrupted: cp.interrupt !== undefined,
    userId,
  };
}

function isFilesRef(v: unknown): v is FilesRef {
  const r = v as Partial<FilesRef> | null;
  return (
    typeof r === "object" &&
    r !== null &&
    typeof r.id === "string" &&
    r.id.length > 0 &&
    typeof r.deltas === "number" &&
    Number.isInteger(r.deltas) &&
    r.deltas >= 0
  );
}

function isHistoryHead(v: unknown): v is HistoryHead {
  const h = v as Partial<HistoryHead> | null;
  return (
    typeof h === "object" &&
    h !== null &&
    typeof h.runId === "string" &&
    Number.isSafeInteger(h.seq) &&
    (h.seq as number) >= 1 &&
    Number.isSafeInteger(h.depth) &&
    (h.depth as number) >= 1
  );
}

/** Whether two refs name the same files. */
export function sameFiles(a: FilesRef | undefined, b: FilesRef | undefined): boolean {
  return a !== undefined && b !== undefined && a.id === b.id && a.deltas === b.deltas;
}

/** The `conflict` error of a put whose revision is not the stored one (`stored` 0: none;
 * undefined: a checkpoint saved meanwhile). */
export function revisionConflict(threadId: string, expected: number, stored: number | undefined): EngramError {
  const was = (n: number | undefined) => (n === undefined ? "a checkpoint" : n === 0 ? "no checkpoint" : `revision ${n}`);
  return new EngramError(
    "conflict",
    `thread '${threadId}': the save starts from ${was(expected)}, but ${was(stored)} is stored (another writer saved the thread)`,
  );
}

/** The `conflict` error of an append whose base is not what is stored. */
export function filesConflict(threadId: string, base: FilesRef, stored: FilesRef | undefined): EngramError {
  const now = stored ? `${stored.id}+${stored.deltas}` : "none";
  return new EngramError(
    "conflict",
    `thread '${threadId}': the deltas extend files ${base.id}+${base.deltas}, but the stored files are ${now} (another writer saved the thread)`,
  );
}

function damaged(detail: string): EngramError {
  return new EngramError("store_error", `damaged checkpoint: ${detail}`);
}

/** Bytes from the forms older documents used: base64 text, an array, or `{ "0": b, ... }`. */
function bytesFrom(value: unknown): Uint8Array {
  if (value instanceof Uint8Array) return value;
  if (typeof value === "string") {
    const binary = atob(value);
    const out = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
    return out;
  }
  if (Array.isArray(value)) return Uint8Array.from(value as number[]);
  if (typeof value === "object" && value !== null) {
    const o = value as Record<string, number>;
    const out = new Uint8Array(Object.keys(o).length);
    for (let i = 0; i < out.length; i++) out[i] = o[String(i)] ?? 0;
    return out;
  }
  throw damaged("files are neither bytes nor base64");
}

/**
 * A checkpoint from its storage form, upgrading older formats:
 * - version 0 (no `version` field: the shape of the first releases, all in one JSON document,
 *   `files` as base64 text or a JSON-serialised byte array) → version 1;
 * - version 1: the document plus the files bytes kept beside it.
 * Throws a `store_error` {@link EngramError} for a damaged document or a newer format.
 */
export function decodeCheckpoint(
  doc: string | Record<string, unknown>,
  files?: Uint8Array | null,
  filesDeltas?: readonly Uint8Array[],
): Checkpoint {
  let raw: Record<string, unknown>;
  try {
    raw = typeof doc === "string" ? (JSON.parse(doc) as Record<string, unknown>) : doc;
  } catch (e) {
    throw damaged(e instanceof Error ? e.message : String(e));
  }
  if (typeof raw !== "object" || raw === null) throw damaged("not an object");
  const version = raw.version === undefined ? 0 : raw.version;
  if (typeof version !== "number" || !Number.isInteger(version) || version < 0) throw damaged(`version ${String(raw.version)}`);
  if (version > CHECKPOINT_VERSION) {
    throw new EngramError(
      "store_error",
      `checkpoint format ${version} is newer than this Engram understands (${CHECKPOINT_VERSION}): upgrade Engram`,
    );
  }
  if (!Array.isArray(raw.messages)) throw damaged("messages are missing");
  const data = raw.data === undefined ? {} : raw.data;
  if (typeof data !== "object" || data === null || Array.isArray(data)) throw damaged("data is not an object");
  const cp: Checkpoint = {
    version: CHECKPOINT_VERSION,
    messages: raw.messages as Message[],
    data: data as Record<string, unknown>,
    savedAt: typeof raw.savedAt === "number" ? raw.savedAt : 0,
  };
  if (raw.interrupt !== undefined && raw.interrupt !== null) cp.interrupt = raw.interrupt as Interrupt;
  if (typeof raw.userId === "string") cp.userId = raw.userId;
  if (isHistoryHead(raw.history)) cp.history = { runId: raw.history.runId, seq: raw.history.seq, depth: raw.history.depth };
  const bytes = files ?? (version === 0 && raw.files !== undefined && raw.files !== null ? bytesFrom(raw.files) : undefined);
  if (bytes) cp.files = new Uint8Array(bytes);
  if (raw.filesRef !== undefined) {
    if (!isFilesRef(raw.filesRef)) throw damaged("filesRef");
    cp.filesRef = { id: raw.filesRef.id, deltas: raw.filesRef.deltas };
  }
  if (filesDeltas?.length) cp.filesDeltas = filesDeltas.map((d) => new Uint8Array(d));
  return cp;
}

/**
 * A checkpoint from its document and its stored files parts (`seq` 0: the full snapshot, then
 * the deltas in order) — for checkpointers that keep the parts apart. Parts are taken up to
 * the first gap: a missing part leaves the checkpoint short, which a resume reports as a
 * {@link ResumeError} (nothing is lost or overwritten by reading).
 */
export function assembleCheckpoint(doc: string, parts: readonly { seq: number | string; bytes: Uint8Array }[]): Checkpoint {
  const sorted = [...parts].sort((a, b) => Number(a.seq) - Number(b.seq));
  const base = sorted[0] && Number(sorted[0].seq) === 0 ? sorted[0].bytes : undefined;
  const deltas: Uint8Array[] = [];
  if (base) for (let i = 1; i < sorted.length && Number(sorted[i]?.seq) === i; i++) deltas.push((sorted[i] as { bytes: Uint8Array }).bytes);
  return decodeCheckpoint(doc, base, deltas);
}

/**
 * The full files snapshot a checkpoint holds ({@link Checkpoint.files} with its
 * {@link Checkpoint.filesDeltas} applied), for `StateBackend.restore`; `undefined` when it has
 * no files. Throws a `store_error` {@link EngramError} when a part is missing or damaged.
 */
export function checkpointFiles(checkpoint: Checkpoint, core: Pick<Core, "applyFileDeltas">): Uint8Array | undefined {
  const deltas = checkpoint.filesDeltas ?? [];
  const expected = checkpoint.filesRef?.deltas ?? deltas.length;
  if (!checkpoint.files) {
    if (checkpoint.filesRef || deltas.length > 0) throw damaged("the files lack their base snapshot");
    return undefined;
  }
  if (deltas.length !== expected) throw damaged(`the files have ${deltas.length} of ${expected} deltas (a part is missing)`);
  if (deltas.length === 0) return checkpoint.files;
  try {
    return core.applyFileDeltas(checkpoint.files, deltas);
  } catch (e) {
    throw damaged(`the files are damaged (${e instanceof Error ? e.message : String(e)})`);
  }
}

/** Options of {@link InMemoryCheckpointer}. */
export interface InMemoryCheckpointerOptions {
  /** The core whose BM25 ranks {@link InMemoryCheckpointer.searchMessages}. Default: {@link loadCore}'s. */
  core?: Core | Promise<Core>;
}

/** Checkpoints in process memory, in storage form (so callers cannot alias them and they
 * behave exactly as durable ones). */
export class InMemoryCheckpointer implements Checkpointer {
  readonly #threads = new Map<string, { e: EncodedCheckpoint; revision: number }>();
  /** The searchable messages of each thread saved with a user, taken out at its save. */
  readonly #searchable = new Map<string, SearchableMessage[]>();
  /** The last revision handed out, across threads (so none is reused after a delete). */
  #revisions = 0;
  /** Steps of runs under way, by thread. */
  readonly #steps = new Map<string, RunStep[]>();
  /** History points, by thread, in order. */
  readonly #history = new Map<string, HistoryStep[]>();
  /** The process is the owner of every claim: a run holds its thread until it releases it. */
  readonly #claims = new ProcessClaims();
  readonly incremental = true;
  readonly #core: Core | Promise<Core> | undefined;

  constructor(options: InMemoryCheckpointerOptions = {}) {
    this.#core = options.core;
  }

  async get(threadId: string, options: GetCheckpointOptions = {}): Promise<Checkpoint | undefined> {
    const stored = this.#threads.get(checkThreadId(threadId));
    if (!stored) return undefined;
    const { e: cp, revision } = stored;
    const known = sameFiles(cp.filesRef, options.knownFiles);
    return { ...(known ? decodeCheckpoint(cp.doc) : decodeCheckpoint(cp.doc, cp.files, cp.deltas)), revision };
  }

  async put(threadId: string, checkpoint: Checkpoint, options?: PutCheckpointOptions): Promise<number> {
    const id = checkThreadId(threadId);
    const e = encodeCheckpoint(checkpoint);
    const keep = checkPutOptions(options);
    const stored = this.#threads.get(id);
    const revision = stored?.revision ?? 0;
    if (e.expected !== undefined && e.expected !== revision) throw revisionConflict(id, e.expected, revision);
    if (e.base) {
      if (!stored || !sameFiles(stored.e.filesRef, e.base)) throw filesConflict(id, e.base, stored?.e.filesRef);
      e.files = stored.e.files;
      e.deltas = [...stored.e.deltas, ...e.deltas];
      delete e.base;
    }
    const next = ++this.#revisions;
    this.#threads.set(id, { e, revision: next });
    const kept = (this.#steps.get(id) ?? []).filter((s) => s.runId === keep && s.baseRevision === revision);
    if (kept.length > 0) this.#history.set(id, [...(this.#history.get(id) ?? []), ...kept.map((s) => ({ ...s, keptAt: next }))]);
    this.#steps.delete(id);
    if (e.userId === undefined) this.#searchable.delete(id);
    else this.#searchable.set(id, searchableMessages(checkpoint.messages));
    return next;
  }

  async delete(threadId: string): Promise<void> {
    this.#threads.delete(checkThreadId(threadId));
    this.#searchable.delete(threadId);
    this.#steps.delete(threadId);
    this.#history.delete(threadId);
  }

  async getHistory(threadId: string): Promise<HistoryStep[]> {
    const points = this.#history.get(checkThreadId(threadId)) ?? [];
    return points.map((s) => ({ ...s, ...(s.files && { files: new Uint8Array(s.files) }) })).sort(historyOrder);
  }

  async deleteHistory(threadId: string, points: readonly StepKey[]): Promise<void> {
    const id = checkThreadId(threadId);
    const gone = new Set(checkStepKeys(points).map((p) => `${p.seq}:${p.runId}`));
    const left = (this.#history.get(id) ?? []).filter((s) => !gone.has(`${s.seq}:${s.runId}`));
    if (left.length > 0) this.#history.set(id, left);
    else this.#history.delete(id);
  }

  async claimThread(threadId: string): Promise<ThreadClaim> {
    return this.#claims.claim(checkThreadId(threadId));
  }

  async putStep(threadId: string, step: RunStep): Promise<void> {
    const id = checkThreadId(threadId);
    const s = checkRunStep(step);
    const steps = this.#steps.get(id) ?? [];
    if (steps.some((x) => x.runId === s.runId && x.seq === s.seq)) throw stepConflict(id, s.runId, s.seq);
    steps.push(s);
    this.#steps.set(id, steps);
  }

  async getSteps(threadId: string): Promise<RunStep[]> {
    const steps = this.#steps.get(checkThreadId(threadId)) ?? [];
    return steps
      .map((s) => ({ ...s, ...(s.files && { files: new Uint8Array(s.files) }) }))
      .sort((a, b) => (a.runId === b.runId ? a.seq - b.seq : a.runId < b.runId ? -1 : 1));
  }

  async deleteSteps(threadId: string, runId: string): Promise<void> {
    const id = checkThreadId(threadId);
    const left = (this.#steps.get(id) ?? []).filter((s) => s.runId !== runId);
    if (left.length > 0) this.#steps.set(id, left);
    else this.#steps.delete(id);
  }

  async list(options: ListThreadsOptions = {}): Promise<{ threads: ThreadInfo[]; cursor?: string }> {
    const after = options.cursor === undefined ? undefined : checkThreadId(options.cursor);
    const limit = checkThreadLimit(options.limit);
    const ids = [...this.#threads.keys()].filter((id) => after === undefined || compareKeys(id, after) > 0).sort(compareKeys);
    const page = ids.slice(0, limit);
    const threads = page.map((threadId) => {
      const { e: cp } = this.#threads.get(threadId) as { e: EncodedCheckpoint };
      return { threadId, savedAt: cp.savedAt, interrupted: cp.interrupted };
    });
    return ids.length > page.length ? { threads, cursor: page.at(-1) as string } : { threads };
  }

  /** The user's threads ranked with the core's BM25 over their messages (see
   * {@link Checkpointer.searchMessages}). */
  async searchMessages(search: MessageSearchQuery): Promise<MessageSearchHit[]> {
    const checked = checkMessageSearch(search);
    const core = await (this.#core ?? loadCore());
    const threads = [];
    for (const [threadId, { e }] of this.#threads) {
      if (e.userId !== checked.userId || threadId === checked.excludeThreadId) continue;
      threads.push({ threadId, savedAt: e.savedAt, searchable: this.#searchable.get(threadId) ?? [] });
    }
    return rankLoadedThreads(core, checked, threads);
  }
}
