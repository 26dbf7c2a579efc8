/**
 * The steps of runs under way, beside a thread's checkpoint (durable runs). A step is an entry
 * under the thread's current epoch — the value of its revision counter, which every save and
 * every delete of the thread moves on — so a save or a delete drops every step at once: later
 * reads look under the new epoch, and the old entries are deleted after.
 * @module
 */
import { EngramError, type RunStep, checkRunStep, stepConflict } from "engram/kit";
import { type BlobRef, type Blobs, type StoredText, blobOf } from "./blobs.js";
import { type DenoKv, KV_LIMITS, type KvKey } from "./deno-kv.js";
import { commit, guard, listAll } from "./kv.js";

/** A step's entry: what `RunStep` holds besides its run and sequence number (in the key). */
interface StepEntry {
  baseRevision: number;
  savedAt: number;
  doc: StoredText;
  files?: BlobRef;
}

const encoder = new TextEncoder();

/** The thread's key part: the SHA-256 of its id, so a run id of up to 256 characters fits too. */
async function threadPart(threadId: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(threadId)));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Reads retried when a step's parts were dropped in between (its epoch ended). */
const READ_ATTEMPTS = 5;

/** The run steps under one key prefix. `counter(threadId)` is the key of the thread's revision
 * counter, whose value is the epoch. */
export class RunSteps {
  readonly #kv: DenoKv;
  readonly #prefix: KvKey;
  readonly #blobs: Blobs;
  readonly #counter: (threadId: string) => KvKey;

  constructor(kv: DenoKv, prefix: KvKey, blobs: Blobs, counter: (threadId: string) => KvKey) {
    this.#kv = kv;
    this.#prefix = prefix;
    this.#blobs = blobs;
    this.#counter = counter;
  }

  async #steps(threadId: string): Promise<KvKey> {
    return [...this.#prefix, "steps", await threadPart(threadId)];
  }

  async put(threadId: string, step: RunStep): Promise<void> {
    const s = checkRunStep(step);
    const base = await this.#steps(threadId);
    const staged: BlobRef[] = [];
    let committed = false;
    try {
      const doc = await this.#blobs.stageText(s.doc);
      const docBlob = blobOf(doc);
      if (docBlob) staged.push(docBlob);
      const files = s.files && (await this.#blobs.stage(s.files));
      if (files) staged.push(files);
      const entry: StepEntry = { baseRevision: s.baseRevision, savedAt: s.savedAt, doc, ...(files && { files }) };
      for (;;) {
        const counter = await guard(() => this.#kv.get<number>(this.#counter(threadId)));
        const key = [...base, counter.value ?? 0, s.runId, s.seq];
        if ((await guard(() => this.#kv.get(key))).versionstamp !== null) throw stepConflict(threadId, s.runId, s.seq);
        // Both checks: a save or delete of the thread meanwhile moves the step to the new epoch.
        const op = this.#kv
          .atomic()
          .check({ key: this.#counter(threadId), versionstamp: counter.versionstamp })
          .check({ key, versionstamp: null })
          .set(key, entry);
        for (const blob of staged) this.#blobs.confirm(op, blob);
        if ((await commit(op)).ok) {
          committed = true;
          return;
        }
      }
    } finally {
      if (!committed) await this.#blobs.drop(staged).catch(() => undefined);
    }
  }

  async get(threadId: string): Promise<RunStep[]> {
    const base = await this.#steps(threadId);
    for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
      const epoch = (await guard(() => this.#kv.get<number>(this.#counter(threadId)))).value ?? 0;
      const steps: RunStep[] = [];
      let gone = false;
      for (const { key, value } of await listAll<StepEntry>(this.#kv, { prefix: [...base, epoch] })) {
        const doc = await this.#blobs.readText(value.doc);
        const files = value.files && (await this.#blobs.read(value.files));
        if (doc === undefined || (value.files && !files)) {
          gone = true;
          break;
        }
        steps.push({
          runId: key.at(-2) as string,
          seq: key.at(-1) as number,
          baseRevision: value.baseRevision,
          doc,
          ...(files && { files }),
          savedAt: value.savedAt,
        });
      }
      if (!gone) return steps;
    }
    throw new EngramError("store_error", `the steps of thread '${threadId}' kept changing while they were read`);
  }

  /** Drops the steps `runId` stored under the thread's current epoch. */
  async delete(threadId: string, runId: string): Promise<void> {
    const base = await this.#steps(threadId);
    const epoch = (await guard(() => this.#kv.get<number>(this.#counter(threadId)))).value ?? 0;
    await this.#drop(await listAll<StepEntry>(this.#kv, { prefix: [...base, epoch, runId] }));
  }

  /** After a save or a delete of the thread moved its epoch to `epoch`: deletes the steps of
   * earlier epochs (best effort: a failure leaves entries no read looks at). */
  async dropBefore(threadId: string, epoch: number): Promise<void> {
    try {
      const base = await this.#steps(threadId);
      await this.#drop(await listAll<StepEntry>(this.#kv, { start: [...base, 0], end: [...base, epoch] }));
    } catch {
      // Left behind, unread.
    }
  }

  /** Whether the thread has steps under its current epoch. */
  async any(threadId: string, epoch: number): Promise<boolean> {
    return (await listAll(this.#kv, { prefix: [...(await this.#steps(threadId)), epoch] }, { limit: 1 })).length > 0;
  }

  async #drop(entries: { key: readonly unknown[]; value: StepEntry }[]): Promise<void> {
    const batch = Math.floor(KV_LIMITS.mutations / 4);
    for (let at = 0; at < entries.length; at += batch) {
      const chunk = entries.slice(at, at + batch);
      const op = this.#kv.atomic();
      const blobs: BlobRef[] = [];
      for (const { key, value } of chunk) {
        op.delete(key as KvKey);
        for (const blob of [blobOf(value.doc), value.files]) {
          if (blob) {
            this.#blobs.retire(op, blob);
            blobs.push(blob);
          }
        }
      }
      await commit(op);
      await this.#blobs.drop(blobs);
    }
  }
}
