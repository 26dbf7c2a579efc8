/**
 * `IndexedDBCheckpointer`: thread checkpoints in a browser's IndexedDB (the store's database,
 * or another). The files are a full snapshot plus the deltas saved after it; a save writes only
 * the files that changed. A save checks the stored revision and files and writes in one
 * readwrite transaction, so two tabs saving one thread never both win.
 * @module
 */
import {
  type Checkpoint,
  type Checkpointer,
  type Core,
  type FilesRef,
  type GetCheckpointOptions,
  type HistoryStep,
  type ListThreadsOptions,
  type PutCheckpointOptions,
  type StepKey,
  type MessageSearchHit,
  type MessageSearchQuery,
  type RunStep,
  type SearchableMessage,
  type ThreadClaim,
  type ThreadInfo,
  assembleCheckpoint,
  checkMessageSearch,
  checkPutOptions,
  checkRunStep,
  checkStepKeys,
  checkThreadId,
  checkThreadLimit,
  decodeCheckpoint,
  encodeCheckpoint,
  filesConflict,
  historyOrder,
  loadCore,
  rankLoadedThreads,
  revisionConflict,
  sameFiles,
  searchableMessages,
  stepConflict,
} from "engram/kit";
import { ThreadClaims } from "./claims.js";
import { Database, type IndexedDBOptions, request, sortable, storeError } from "./database.js";

/** A thread's record in `checkpoints` (its document is in `checkpoint_docs`). */
interface Head {
  threadId: string;
  revision: number;
  savedAt: number;
  interrupted: boolean;
  filesId?: string;
  filesDeltas?: number;
}

/** A thread's record in `thread_messages`: what its user's searches rank. */
interface Searchable {
  threadId: string;
  userId: string;
  savedAt: number;
  searchable: SearchableMessage[];
}

const STORES = ["meta", "checkpoints", "checkpoint_docs", "checkpoint_files", "thread_messages", "run_steps", "history"];

const refOf = (head: Head | undefined): FilesRef | undefined =>
  head?.filesId !== undefined && head.filesDeltas !== undefined ? { id: head.filesId, deltas: head.filesDeltas } : undefined;

/** The files parts of a thread, `seq` from `first` to `last`. */
const filesRange = (thread: IDBValidKey, first: number, last: number) => IDBKeyRange.bound([thread, first], [thread, last]);

/** The steps of a thread's runs: all of them, or one run's. */
const stepsRange = (thread: IDBValidKey, runId?: string) =>
  runId === undefined ? IDBKeyRange.bound([thread], [thread, []]) : IDBKeyRange.bound([thread, runId], [thread, runId, []]);

/** Options of {@link IndexedDBCheckpointer}. */
export interface IndexedDBCheckpointerOptions extends IndexedDBOptions {
  /** The core whose BM25 ranks {@link IndexedDBCheckpointer.searchMessages}. Default: `loadCore()`'s. */
  core?: Core | Promise<Core>;
}

/**
 * A {@link Checkpointer} in IndexedDB: `new IndexedDBCheckpointer()` (database `"engram"` of the
 * page's origin, shared with an {@link IndexedDBStore} of the same name).
 */
export class IndexedDBCheckpointer implements Checkpointer {
  readonly #db: Database;
  readonly #core: Core | Promise<Core> | undefined;
  readonly #claims: ThreadClaims;
  /** Saves append the changed files as a delta (see {@link Checkpointer.incremental}). */
  readonly incremental = true;
  /** Saves outlive the page: runs commit every step by default (see {@link Checkpointer.durable}). */
  readonly durable = true;

  constructor(options: IndexedDBCheckpointerOptions = {}) {
    this.#db = new Database(options);
    this.#core = options?.core;
    this.#claims = new ThreadClaims(this.#db.name);
  }

  async get(threadId: string, options: GetCheckpointOptions = {}): Promise<Checkpoint | undefined> {
    const thread = sortable(checkThreadId(threadId));
    return this.#db
      .run(["checkpoints", "checkpoint_docs", "checkpoint_files"], "readonly", async (tx) => {
        const [head, doc] = await Promise.all([
          request<Head | undefined>(tx.objectStore("checkpoints").get(thread)),
          request<string | undefined>(tx.objectStore("checkpoint_docs").get(thread)),
        ]);
        if (!head) return undefined;
        const ref = refOf(head);
        if (!ref || sameFiles(ref, options.knownFiles)) return { ...decodeCheckpoint(doc as string), revision: head.revision };
        const files = tx.objectStore("checkpoint_files");
        const range = filesRange(thread, 0, ref.deltas);
        const [keys, bytes] = await Promise.all([
          request(files.getAllKeys(range)) as Promise<[ArrayBuffer, number][]>,
          request<Uint8Array[]>(files.getAll(range)),
        ]);
        const parts = keys.map(([, seq], i) => ({ seq, bytes: bytes[i] as Uint8Array }));
        return { ...assembleCheckpoint(doc as string, parts), revision: head.revision };
      })
      .catch((e: unknown) => {
        throw storeError(e, this.#db.name);
      });
  }

  async put(threadId: string, checkpoint: Checkpoint, options?: PutCheckpointOptions): Promise<number> {
    const id = checkThreadId(threadId);
    const thread = sortable(id);
    const e = encodeCheckpoint(checkpoint);
    const keep = checkPutOptions(options);
    const owned =
      e.userId === undefined
        ? undefined
        : ({
            threadId: id,
            userId: e.userId,
            savedAt: e.savedAt,
            searchable: searchableMessages(checkpoint.messages),
          } satisfies Searchable);
    return this.#db
      .run(STORES, "readwrite", async (tx) => {
        const heads = tx.objectStore("checkpoints");
        const files = tx.objectStore("checkpoint_files");
        const meta = tx.objectStore("meta");
        const [stored, last] = await Promise.all([
          request<Head | undefined>(heads.get(thread)),
          request<number | undefined>(meta.get("revision")),
        ]);
        const revision = stored?.revision ?? 0;
        if (e.expected !== undefined && e.expected !== revision) throw revisionConflict(id, e.expected, revision);
        if (e.base && !sameFiles(refOf(stored), e.base)) throw filesConflict(id, e.base, refOf(stored));
        const next = (last ?? 0) + 1;
        meta.put(next, "revision");
        heads.put(
          {
            threadId: id,
            revision: next,
            savedAt: e.savedAt,
            interrupted: e.interrupted,
            ...(e.filesRef && { filesId: e.filesRef.id, filesDeltas: e.filesRef.deltas }),
          } satisfies Head,
          thread,
        );
        tx.objectStore("checkpoint_docs").put(e.doc, thread);
        if (e.base) {
          // An append: only onto the files the caller saved.
          for (const [i, d] of e.deltas.entries()) files.put(d, [thread, e.base.deltas + 1 + i]);
        } else {
          files.delete(filesRange(thread, 0, Number.POSITIVE_INFINITY));
          if (e.files) {
            files.put(e.files, [thread, 0]);
            for (const [i, d] of e.deltas.entries()) files.put(d, [thread, 1 + i]);
          }
        }
        const messages = tx.objectStore("thread_messages");
        if (owned) messages.put(owned, thread);
        else messages.delete(thread);
        if (keep !== undefined) {
          // The run's steps extending the replaced revision become history points.
          const kept = await request<RunStep[]>(tx.objectStore("run_steps").getAll(stepsRange(thread, keep)));
          const history = tx.objectStore("history");
          for (const s of kept)
            if (s.baseRevision === revision) history.put({ ...s, keptAt: next } satisfies HistoryStep, [thread, s.runId, s.seq]);
        }
        tx.objectStore("run_steps").delete(stepsRange(thread));
        return next;
      })
      .catch((err: unknown) => {
        throw storeError(err, this.#db.name);
      });
  }

  async delete(threadId: string): Promise<void> {
    const thread = sortable(checkThreadId(threadId));
    await this.#db
      .run(STORES, "readwrite", async (tx) => {
        tx.objectStore("checkpoints").delete(thread);
        tx.objectStore("checkpoint_docs").delete(thread);
        tx.objectStore("checkpoint_files").delete(filesRange(thread, 0, Number.POSITIVE_INFINITY));
        tx.objectStore("thread_messages").delete(thread);
        tx.objectStore("run_steps").delete(stepsRange(thread));
        tx.objectStore("history").delete(stepsRange(thread));
      })
      .catch((e: unknown) => {
        throw storeError(e, this.#db.name);
      });
  }

  /** Claims the thread for one run with a Web Lock, shared by the origin's tabs and workers and
   * released by the browser when the claiming tab or worker is gone (see
   * {@link Checkpointer.claimThread}). */
  async claimThread(threadId: string): Promise<ThreadClaim> {
    return this.#claims.claim(checkThreadId(threadId));
  }

  async putStep(threadId: string, step: RunStep): Promise<void> {
    const thread = sortable(checkThreadId(threadId));
    const s = checkRunStep(step);
    const key = [thread, s.runId, s.seq];
    await this.#db
      .run(["run_steps"], "readwrite", async (tx) => {
        const steps = tx.objectStore("run_steps");
        if ((await request(steps.count(key))) > 0) throw stepConflict(threadId, s.runId, s.seq);
        steps.put(s, key);
      })
      .catch((e: unknown) => {
        throw storeError(e, this.#db.name);
      });
  }

  async getSteps(threadId: string): Promise<RunStep[]> {
    const thread = sortable(checkThreadId(threadId));
    return this.#db
      .run(["run_steps"], "readonly", (tx) => request<RunStep[]>(tx.objectStore("run_steps").getAll(stepsRange(thread))))
      .catch((e: unknown) => {
        throw storeError(e, this.#db.name);
      });
  }

  async deleteSteps(threadId: string, runId: string): Promise<void> {
    const thread = sortable(checkThreadId(threadId));
    if (typeof runId !== "string") return;
    await this.#db
      .run(["run_steps"], "readwrite", async (tx) => {
        tx.objectStore("run_steps").delete(stepsRange(thread, runId));
      })
      .catch((e: unknown) => {
        throw storeError(e, this.#db.name);
      });
  }

  async getHistory(threadId: string): Promise<HistoryStep[]> {
    const thread = sortable(checkThreadId(threadId));
    const points = await this.#db
      .run(["history"], "readonly", (tx) => request<HistoryStep[]>(tx.objectStore("history").getAll(stepsRange(thread))))
      .catch((e: unknown) => {
        throw storeError(e, this.#db.name);
      });
    return points.sort(historyOrder);
  }

  async deleteHistory(threadId: string, points: readonly StepKey[]): Promise<void> {
    const thread = sortable(checkThreadId(threadId));
    const keys = checkStepKeys(points);
    await this.#db
      .run(["history"], "readwrite", async (tx) => {
        const history = tx.objectStore("history");
        for (const k of keys) history.delete([thread, k.runId, k.seq]);
      })
      .catch((e: unknown) => {
        throw storeError(e, this.#db.name);
      });
  }

  async list(options: ListThreadsOptions = {}): Promise<{ threads: ThreadInfo[]; cursor?: string }> {
    const after = options.cursor === undefined ? undefined : checkThreadId(options.cursor);
    const limit = checkThreadLimit(options.limit);
    const found = await this.#db
      .run(["checkpoints"], "readonly", (tx) =>
        request<Head[]>(
          tx
            .objectStore("checkpoints")
            .getAll(
              after === undefined ? null : IDBKeyRange.lowerBound(sortable(after), true),
              Number.isFinite(limit) ? limit + 1 : undefined,
            ),
        ),
      )
      .catch((e: unknown) => {
        throw storeError(e, this.#db.name);
      });
    const page = found.slice(0, limit);
    const threads = page.map((h) => ({ threadId: h.threadId, savedAt: h.savedAt, interrupted: h.interrupted }));
    return found.length > page.length ? { threads, cursor: (page.at(-1) as Head).threadId } : { threads };
  }

  /** The user's threads ranked with the core's BM25 over their user and assistant messages,
   * kept apart at each save (see {@link Checkpointer.searchMessages}). */
  async searchMessages(search: MessageSearchQuery): Promise<MessageSearchHit[]> {
    const checked = checkMessageSearch(search);
    const core = await (this.#core ?? loadCore());
    const threads = await this.#db
      .run(["thread_messages"], "readonly", (tx) =>
        request<Searchable[]>(tx.objectStore("thread_messages").index("by_user").getAll(checked.userId)),
      )
      .catch((e: unknown) => {
        throw storeError(e, this.#db.name);
      });
    return rankLoadedThreads(
      core,
      checked,
      threads.filter((t) => t.threadId !== checked.excludeThreadId),
    );
  }

  /** Closes the checkpointer's connection to the database (the next call opens a new one). */
  close(): void {
    this.#db.close();
  }
}
