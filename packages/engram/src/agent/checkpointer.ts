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
import { EngramError } from "../errors.js";
import type { Message } from "../models/types.js";
import { checkKeyText, compareKeys } from "../stores/rules.js";
import type { Interrupt } from "./types.js";

/** The format version {@link encodeCheckpoint} writes. */
export const CHECKPOINT_VERSION = 1;

/** The saved state of one thread. */
export interface Checkpoint {
  /** The format version it was stored with; set by checkpointers on load. Optional on put. */
  version?: number;
  messages: Message[];
  /** Middleware data (e.g. summarisation state). */
  data: Record<string, unknown>;
  /** Snapshot of the thread's State-backend files, when the thread has them. */
  files?: Uint8Array;
  /** Set while the thread waits for human decisions. */
  interrupt?: Interrupt;
  /** Milliseconds since the epoch. */
  savedAt: number;
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

/** Stores checkpoints by thread id (any non-empty string without NUL, at most 1024 UTF-8 bytes). */
export interface Checkpointer {
  get(threadId: string): Promise<Checkpoint | undefined>;
  put(threadId: string, checkpoint: Checkpoint): Promise<void>;
  delete(threadId: string): Promise<void>;
  /** Optional: the saved threads, sorted by id. */
  list?(options?: ListThreadsOptions): Promise<{ threads: ThreadInfo[]; cursor?: string }>;
}

/** A checkpoint in storage form: a JSON document and the files snapshot as raw bytes. */
export interface EncodedCheckpoint {
  version: number;
  /** JSON of everything but `files`. */
  doc: string;
  files: Uint8Array | undefined;
  savedAt: number;
  interrupted: boolean;
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
  const savedAt = typeof cp.savedAt === "number" && Number.isFinite(cp.savedAt) ? cp.savedAt : Date.now();
  const { files, ...rest } = cp;
  let doc: string;
  try {
    doc = JSON.stringify({ ...rest, savedAt, version: CHECKPOINT_VERSION });
  } catch (e) {
    throw new EngramError("invalid_argument", `a checkpoint must be JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
  return { version: CHECKPOINT_VERSION, doc, files: files && new Uint8Array(files), savedAt, interrupted: cp.interrupt !== undefined };
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
export function decodeCheckpoint(doc: string | Record<string, unknown>, files?: Uint8Array | null): Checkpoint {
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
  const bytes = files ?? (version === 0 && raw.files !== undefined && raw.files !== null ? bytesFrom(raw.files) : undefined);
  if (bytes) cp.files = new Uint8Array(bytes);
  return cp;
}

/** Checkpoints in process memory, in storage form (so callers cannot alias them and they
 * behave exactly as durable ones). */
export class InMemoryCheckpointer implements Checkpointer {
  readonly #threads = new Map<string, EncodedCheckpoint>();

  async get(threadId: string): Promise<Checkpoint | undefined> {
    const cp = this.#threads.get(checkThreadId(threadId));
    return cp && decodeCheckpoint(cp.doc, cp.files);
  }

  async put(threadId: string, checkpoint: Checkpoint): Promise<void> {
    this.#threads.set(checkThreadId(threadId), encodeCheckpoint(checkpoint));
  }

  async delete(threadId: string): Promise<void> {
    this.#threads.delete(checkThreadId(threadId));
  }

  async list(options: ListThreadsOptions = {}): Promise<{ threads: ThreadInfo[]; cursor?: string }> {
    const after = options.cursor === undefined ? undefined : checkThreadId(options.cursor);
    const limit = checkThreadLimit(options.limit);
    const ids = [...this.#threads.keys()].filter((id) => after === undefined || compareKeys(id, after) > 0).sort(compareKeys);
    const page = ids.slice(0, limit);
    const threads = page.map((threadId) => {
      const cp = this.#threads.get(threadId) as EncodedCheckpoint;
      return { threadId, savedAt: cp.savedAt, interrupted: cp.interrupted };
    });
    return ids.length > page.length ? { threads, cursor: page.at(-1) as string } : { threads };
  }
}
