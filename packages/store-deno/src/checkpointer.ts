/**
 * `DenoKvCheckpointer`: thread checkpoints in Deno KV. A thread is a head entry (revision, files
 * chain, list fields) and its document, written together by one atomic operation that checks
 * the head and the thread's revision counter are as the save read them. The files are a chain:
 * the full snapshot and each delta saved after it are blobs, named by index entries the commit
 * writes; an append adds entries to the chain, a full snapshot starts a new one and retires the
 * old.
 * @module
 */
import {
  type Checkpoint,
  type Checkpointer,
  type Core,
  EngramError,
  type FilesRef,
  type GetCheckpointOptions,
  type HistoryStep,
  type ListThreadsOptions,
  type LoadedThread,
  type MessageSearchHit,
  type MessageSearchQuery,
  type PutCheckpointOptions,
  type StepKey,
  type ThreadInfo,
  assembleCheckpoint,
  checkMessageSearch,
  checkPutOptions,
  checkStepKeys,
  checkThreadId,
  checkThreadLimit,
  decodeCheckpoint,
  encodeCheckpoint,
  filesConflict,
  loadCore,
  ProcessClaims,
  rankLoadedThreads,
  type RunStep,
  revisionConflict,
  sameFiles,
  type ThreadClaim,
} from "engram/kit";
import { type BlobRef, Blobs, type StoredText, blobOf } from "./blobs.js";
import { LockFileClaims } from "./claims.js";
import { type DenoKv, KV_LIMITS, type KvKey } from "./deno-kv.js";
import { type KvStoreOptions, checkKv, commit, guard, keyPrefix, listAll } from "./kv.js";
import { RunSteps } from "./steps.js";

/** A thread's head entry: what `list` reports, whose thread it is and where its files are. */
interface Head {
  revision: number;
  savedAt: number;
  interrupted: boolean;
  userId?: string;
  files?: { ref: FilesRef; chain: string };
}

/** Options of {@link DenoKvCheckpointer}. */
export interface DenoKvCheckpointerOptions extends KvStoreOptions {
  /** The core whose BM25 ranks {@link DenoKvCheckpointer.searchMessages}. Default: {@link loadCore}'s. */
  core?: Core | Promise<Core>;
  /** A directory for the lock files of run claims (one per thread; Deno needs read and write
   * permission there), e.g. beside a local database: `"data/engram.runs"`. With it, claims hold
   * across processes and the checkpointer is `durable` (runs commit every step by default).
   * Default: none — claims hold within this process only, and runs commit when they end. */
  runLocks?: string;
}

/** A user id longer than this is keyed by its digest, so it and the longest thread id fit one key. */
const USER_INLINE_BYTES = 512;
const encoder = new TextEncoder();

/** The key part of a user id: `=` and the id, or `#` and the SHA-256 of a long one. */
async function userPart(userId: string): Promise<string> {
  if (encoder.encode(userId).length <= USER_INLINE_BYTES) return `=${userId}`;
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(userId)));
  return `#${Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** Reads retried when a save replaced the thread's parts in between. */
const READ_ATTEMPTS = 5;

/** A {@link Checkpointer} on Deno KV: `new DenoKvCheckpointer(await Deno.openKv(path))`. */
export class DenoKvCheckpointer implements Checkpointer {
  readonly #kv: DenoKv;
  readonly #prefix: KvKey;
  readonly #blobs: Blobs;
  readonly #core: Core | Promise<Core> | undefined;
  readonly #steps: RunSteps;
  readonly #claims: LockFileClaims | ProcessClaims;
  /** Saves append the changed files as a delta (see {@link Checkpointer.incremental}). */
  readonly incremental = true;
  /** Whether runs commit every step by default: with `runLocks`, whose claims hold across
   * processes (see {@link Checkpointer.durable}). */
  readonly durable: boolean;

  constructor(kv: DenoKv, options: DenoKvCheckpointerOptions = {}) {
    this.#kv = checkKv(kv);
    this.#prefix = keyPrefix(options);
    this.#blobs = new Blobs(this.#kv, this.#prefix);
    this.#core = options.core;
    this.#steps = new RunSteps(this.#kv, this.#prefix, this.#blobs, (threadId) => this.#counter(threadId));
    this.#claims = options.runLocks === undefined ? new ProcessClaims() : new LockFileClaims(options.runLocks);
    this.durable = options.runLocks !== undefined;
  }

  /** Claims the thread for one run (see {@link Checkpointer.claimThread}): with `runLocks`, a
   * kernel lock on its lock file, released when the run ends or its process dies. */
  async claimThread(threadId: string): Promise<ThreadClaim> {
    checkThreadId(threadId);
    return this.#claims.claim(threadId);
  }

  async putStep(threadId: string, step: RunStep): Promise<void> {
    checkThreadId(threadId);
    await this.#steps.put(threadId, step);
  }

  async getSteps(threadId: string): Promise<RunStep[]> {
    checkThreadId(threadId);
    return this.#steps.get(threadId);
  }

  async deleteSteps(threadId: string, runId: string): Promise<void> {
    checkThreadId(threadId);
    await this.#steps.delete(threadId, runId);
  }

  async getHistory(threadId: string): Promise<HistoryStep[]> {
    checkThreadId(threadId);
    return this.#steps.history(threadId);
  }

  async deleteHistory(threadId: string, points: readonly StepKey[]): Promise<void> {
    checkThreadId(threadId);
    await this.#steps.deleteHistory(threadId, checkStepKeys(points));
  }

  #head(threadId: string): KvKey {
    return [...this.#prefix, "thread", threadId];
  }
  #doc(threadId: string): KvKey {
    return [...this.#prefix, "thread-doc", threadId];
  }
  /** The thread's last revision: kept after a delete, so no revision is handed out twice. */
  #counter(threadId: string): KvKey {
    return [...this.#prefix, "thread-revision", threadId];
  }
  #chain(chain: string): KvKey {
    return [...this.#prefix, "files", chain];
  }
  #retiredChain(chain: string): KvKey {
    return [...this.#prefix, "files-retired", chain];
  }
  /** A user's threads (the index {@link searchMessages} reads), under the user's key part. */
  #userThreads(user: string): KvKey {
    return [...this.#prefix, "user-threads", user];
  }

  async get(threadId: string, options: GetCheckpointOptions = {}): Promise<Checkpoint | undefined> {
    checkThreadId(threadId);
    for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
      // The head and the document from one snapshot; the blobs they name never change.
      const [head, stored] = await guard(() => this.#kv.getMany<[Head, StoredText]>([this.#head(threadId), this.#doc(threadId)]));
      if (head.value === null) return undefined;
      const doc = stored.value && (await this.#blobs.readText(stored.value));
      if (doc === undefined || doc === null) continue;
      const files = head.value.files;
      if (!files || sameFiles(files.ref, options.knownFiles)) return { ...decodeCheckpoint(doc), revision: head.value.revision };
      const parts = await this.#readChain(files.chain, files.ref.deltas);
      if (parts) return { ...assembleCheckpoint(doc, parts), revision: head.value.revision };
    }
    throw new EngramError("store_error", `thread '${threadId}' kept changing while it was read (its parts were replaced)`);
  }

  /** The snapshot and deltas `0..deltas` of a chain; `undefined` when one is gone (retired meanwhile). */
  async #readChain(chain: string, deltas: number): Promise<{ seq: number; bytes: Uint8Array }[] | undefined> {
    const refs: BlobRef[] = [];
    for (const entry of await listAll<BlobRef>(this.#kv, { prefix: this.#chain(chain) }, { limit: deltas + 1 })) {
      if (entry.key.at(-1) !== refs.length) break;
      refs.push(entry.value);
    }
    if (refs.length !== deltas + 1) return undefined;
    const parts: { seq: number; bytes: Uint8Array }[] = [];
    for (const [seq, ref] of refs.entries()) {
      const bytes = await this.#blobs.read(ref);
      if (!bytes) return undefined;
      parts.push({ seq, bytes });
    }
    return parts;
  }

  async put(threadId: string, checkpoint: Checkpoint, options?: PutCheckpointOptions): Promise<number> {
    checkThreadId(threadId);
    const e = encodeCheckpoint(checkpoint);
    const keep = checkPutOptions(options);
    const staged: BlobRef[] = [];
    const stage = async (bytes: Uint8Array) => {
      const ref = await this.#blobs.stage(bytes);
      staged.push(ref);
      return ref;
    };
    let committed = false;
    try {
      const doc = await this.#blobs.stageText(e.doc);
      const ownDoc = blobOf(doc);
      if (ownDoc) staged.push(ownDoc);
      const snapshot = e.files && (await stage(e.files));
      const deltas: BlobRef[] = [];
      for (const d of e.deltas) deltas.push(await stage(d));
      const owner = e.userId === undefined ? undefined : await userPart(e.userId);
      for (;;) {
        const [head, counter, oldDoc] = await guard(() =>
          this.#kv.getMany<[Head, number, StoredText]>([this.#head(threadId), this.#counter(threadId), this.#doc(threadId)]),
        );
        const stored = head.value;
        const revision = stored?.revision ?? 0;
        if (e.expected !== undefined && e.expected !== revision) throw revisionConflict(threadId, e.expected, revision);
        if (e.base && !sameFiles(stored?.files?.ref, e.base)) throw filesConflict(threadId, e.base, stored?.files?.ref);
        const next = Math.max(counter.value ?? 0, revision) + 1;
        const op = this.#kv
          .atomic()
          .check({ key: this.#head(threadId), versionstamp: head.versionstamp })
          .check({ key: this.#counter(threadId), versionstamp: counter.versionstamp })
          .check({ key: this.#doc(threadId), versionstamp: oldDoc.versionstamp });
        let files: Head["files"];
        let retiredChain: string | undefined;
        if (e.base && stored?.files) {
          // An append: entries after the stored files' last one, on their chain.
          files = { ref: e.filesRef as FilesRef, chain: stored.files.chain };
          for (const [i, ref] of deltas.entries()) op.set([...this.#chain(files.chain), e.base.deltas + 1 + i], ref);
        } else {
          if (snapshot) {
            files = { ref: e.filesRef as FilesRef, chain: crypto.randomUUID() };
            for (const [seq, ref] of [snapshot, ...deltas].entries()) op.set([...this.#chain(files.chain), seq], ref);
          }
          retiredChain = stored?.files?.chain;
          if (retiredChain) op.set(this.#retiredChain(retiredChain), Date.now());
        }
        for (const ref of staged) this.#blobs.confirm(op, ref);
        const replacedDoc = blobOf(oldDoc.value);
        if (replacedDoc) this.#blobs.retire(op, replacedDoc);
        if (stored?.userId !== undefined && stored.userId !== e.userId) {
          op.delete([...this.#userThreads(await userPart(stored.userId)), threadId]);
        }
        if (owner !== undefined) op.set([...this.#userThreads(owner), threadId], e.savedAt);
        op.set(this.#head(threadId), {
          revision: next,
          savedAt: e.savedAt,
          interrupted: e.interrupted,
          ...(e.userId !== undefined && { userId: e.userId }),
          ...(files && { files }),
        } satisfies Head);
        op.set(this.#doc(threadId), doc);
        op.set(this.#counter(threadId), next);
        if (keep !== undefined) {
          // The run's steps under the current epoch that extend `revision` become history.
          const [key, value] = await this.#steps.keepEntry(threadId, counter.value ?? 0, keep, revision, next);
          op.set(key, value);
        }
        if (!(await commit(op)).ok) continue;
        committed = true;
        await this.#dropReplaced(replacedDoc, retiredChain);
        await this.#steps.dropBefore(threadId, next);
        return next;
      }
    } finally {
      if (!committed) await this.#blobs.drop(staged).catch(() => undefined);
    }
  }

  /** After a commit: drops the document and files it replaced. The commit stands whatever
   * happens here; what a failure leaves stays marked retired, for {@link sweep}. */
  async #dropReplaced(doc: BlobRef | undefined, chain: string | undefined): Promise<void> {
    try {
      if (doc) await this.#blobs.drop([doc]);
      if (chain) await this.#dropChain(chain);
    } catch {
      // Left for sweep().
    }
  }

  /** Drops a retired chain: its blobs, its index entries, then its record. */
  async #dropChain(chain: string): Promise<void> {
    const entries = (await listAll<BlobRef>(this.#kv, { prefix: this.#chain(chain) })).map((e) => ({ key: e.key as KvKey, ref: e.value }));
    await this.#blobs.drop(entries.map((x) => x.ref));
    const batch = Math.floor(KV_LIMITS.mutations / 2);
    for (let at = 0; at < entries.length; at += batch) {
      const op = this.#kv.atomic();
      for (const { key } of entries.slice(at, at + batch)) op.delete(key);
      await commit(op);
    }
    await commit(this.#kv.atomic().delete(this.#retiredChain(chain)));
  }

  /** Deletes the thread, and drops its steps: its revision counter moves on (and stays). */
  async delete(threadId: string): Promise<void> {
    checkThreadId(threadId);
    for (;;) {
      const [head, doc, counter] = await guard(() =>
        this.#kv.getMany<[Head, StoredText, number]>([this.#head(threadId), this.#doc(threadId), this.#counter(threadId)]),
      );
      const epoch = counter.value ?? 0;
      if (head.value === null && doc.value === null && !(await this.#steps.any(threadId, epoch))) return;
      const op = this.#kv
        .atomic()
        .check({ key: this.#head(threadId), versionstamp: head.versionstamp })
        .check({ key: this.#doc(threadId), versionstamp: doc.versionstamp })
        .check({ key: this.#counter(threadId), versionstamp: counter.versionstamp })
        .delete(this.#head(threadId))
        .delete(this.#doc(threadId))
        .set(this.#counter(threadId), epoch + 1)
        .set(this.#steps.floorKey(threadId), epoch + 2);
      const chain = head.value?.files?.chain;
      if (chain) op.set(this.#retiredChain(chain), Date.now());
      const owner = head.value?.userId;
      if (owner !== undefined) op.delete([...this.#userThreads(await userPart(owner)), threadId]);
      const docBlob = blobOf(doc.value);
      if (docBlob) this.#blobs.retire(op, docBlob);
      if (!(await commit(op)).ok) continue;
      await this.#dropReplaced(docBlob, chain);
      await this.#steps.dropBefore(threadId, epoch + 1);
      await this.#steps.dropHistory(threadId);
      return;
    }
  }

  async list(options: ListThreadsOptions = {}): Promise<{ threads: ThreadInfo[]; cursor?: string }> {
    const after = options.cursor === undefined ? undefined : checkThreadId(options.cursor);
    const limit = checkThreadLimit(options.limit);
    const prefix = [...this.#prefix, "thread"];
    // NUL sorts first, and no thread id holds one: `id + "\0"` is the first id after `id`.
    const selector = after === undefined ? { prefix } : { prefix, start: [...prefix, `${after}\u0000`] };
    const found = (await listAll<Head>(this.#kv, selector, Number.isFinite(limit) ? { limit: limit + 1 } : {})).map(
      (entry): ThreadInfo => ({ threadId: entry.key.at(-1) as string, savedAt: entry.value.savedAt, interrupted: entry.value.interrupted }),
    );
    const threads = found.slice(0, limit);
    return found.length > threads.length ? { threads, cursor: (threads.at(-1) as ThreadInfo).threadId } : { threads };
  }

  /** The user's threads ranked with the core's BM25 over their messages (see
   * {@link Checkpointer.searchMessages}): the user's index names them, and only their documents
   * are read, never their files. */
  async searchMessages(search: MessageSearchQuery): Promise<MessageSearchHit[]> {
    const checked = checkMessageSearch(search);
    const core = await (this.#core ?? loadCore());
    const ids = (await listAll(this.#kv, { prefix: this.#userThreads(await userPart(checked.userId)) }))
      .map((entry) => entry.key.at(-1) as string)
      .filter((id) => id !== checked.excludeThreadId);
    const threads: LoadedThread[] = [];
    for (let at = 0; at < ids.length; at += KV_LIMITS.readKeys) {
      const chunk = ids.slice(at, at + KV_LIMITS.readKeys);
      const docs = await guard(() => this.#kv.getMany<StoredText[]>(chunk.map((id) => this.#doc(id))));
      for (const [i, entry] of docs.entries()) {
        const threadId = chunk[i] as string;
        const text = entry.value && ((await this.#blobs.readText(entry.value)) ?? (await this.#docText(threadId)));
        if (!text) continue;
        const cp = decodeCheckpoint(text);
        // Saved by another user since the index was listed: not this user's any more.
        if (cp.userId === checked.userId) threads.push({ threadId, savedAt: cp.savedAt, messages: cp.messages });
      }
    }
    return rankLoadedThreads(core, checked, threads);
  }

  /** The thread's document, read again while a save replaces it; `undefined` when there is none. */
  async #docText(threadId: string): Promise<string | undefined> {
    for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
      const entry = await guard(() => this.#kv.get<StoredText>(this.#doc(threadId)));
      if (entry.value === null) return undefined;
      const text = await this.#blobs.readText(entry.value);
      if (text !== undefined) return text;
    }
    throw new EngramError("store_error", `thread '${threadId}' kept changing while it was read (its parts were replaced)`);
  }

  /** Drops what no thread names any more: files of replaced snapshots and documents a writer did
   * not get to drop, and parts staged more than `olderThanMs` (default: an hour) ago by a
   * writer that died before its commit. Returns how many chains and blobs were dropped. */
  async sweep(options: { olderThanMs?: number } = {}): Promise<number> {
    const chains = (await listAll(this.#kv, { prefix: [...this.#prefix, "files-retired"] })).map((entry) => entry.key.at(-1) as string);
    for (const chain of chains) await this.#dropChain(chain);
    return chains.length + (await this.#blobs.sweep(options.olderThanMs ?? 3_600_000));
  }
}
