/**
 * The steps of runs under way, beside a thread's checkpoint (durable runs). A step is an entry
 * under the thread's current epoch — the value of its revision counter, which every save and
 * every delete of the thread moves on — so a save or a delete drops every step at once: later
 * reads look under the new epoch, and the old entries are deleted after. A save that keeps a
 * run's steps as history writes, in its commit, one index entry naming the run and the epoch
 * its steps are under; those steps stay where they are, and the history is read through the
 * index. A delete sets the thread's history floor: points kept before it are not read again.
 * @module
 */
import { EngramError, type HistoryStep, type RunStep, type StepKey, checkRunStep, historyOrder, stepConflict } from "engram/kit";
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

/** A kept run's index entry (key: the thread, the epoch of its steps, the run). */
interface KeptRun {
  baseRevision: number;
  keptAt: number;
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

  async #kept(threadId: string): Promise<KvKey> {
    return [...this.#prefix, "history", await threadPart(threadId)];
  }

  /** The key below which a thread's kept points are no longer its history (set by a delete). */
  floorKey(threadId: string): KvKey {
    return [...this.#prefix, "history-floor", threadId];
  }

  /** The index entry a save commits to keep `runId`'s steps under `epoch` that extend
   * `baseRevision` (the revision it replaces) as history, kept at `keptAt`. */
  async keepEntry(threadId: string, epoch: number, runId: string, baseRevision: number, keptAt: number): Promise<[KvKey, KeptRun]> {
    return [[...(await this.#kept(threadId)), epoch, runId], { baseRevision, keptAt }];
  }

  /** The kept runs of the thread (above its floor), with their steps' epoch. */
  async #keptRuns(threadId: string): Promise<{ key: KvKey; epoch: number; runId: string; run: KeptRun }[]> {
    const floor = (await guard(() => this.#kv.get<number>(this.floorKey(threadId)))).value ?? 0;
    return (await listAll<KeptRun>(this.#kv, { prefix: await this.#kept(threadId) }))
      .map((e) => ({ key: e.key as KvKey, epoch: e.key.at(-2) as number, runId: e.key.at(-1) as string, run: e.value }))
      .filter((k) => k.run.keptAt >= floor);
  }

  /** The thread's history points (see `Checkpointer.getHistory`). */
  async history(threadId: string): Promise<HistoryStep[]> {
    const base = await this.#steps(threadId);
    const out: HistoryStep[] = [];
    for (const kept of await this.#keptRuns(threadId)) {
      for (const { key, value } of await listAll<StepEntry>(this.#kv, { prefix: [...base, kept.epoch, kept.runId] })) {
        if (value.baseRevision !== kept.run.baseRevision) continue;
        const doc = await this.#blobs.readText(value.doc);
        const files = value.files && (await this.#blobs.read(value.files));
        if (doc === undefined || (value.files && !files)) continue;
        out.push({
          runId: kept.runId,
          seq: key.at(-1) as number,
          baseRevision: value.baseRevision,
          doc,
          ...(files && { files }),
          savedAt: value.savedAt,
          keptAt: kept.run.keptAt,
        });
      }
    }
    return out.sort(historyOrder);
  }

  /** Drops the listed points (and a kept run's index entry once it has none left). */
  async deleteHistory(threadId: string, points: readonly StepKey[]): Promise<void> {
    const base = await this.#steps(threadId);
    const byRun = new Map<string, Set<number>>();
    for (const p of points) byRun.set(p.runId, (byRun.get(p.runId) ?? new Set()).add(p.seq));
    for (const kept of await this.#keptRuns(threadId)) {
      const seqs = byRun.get(kept.runId);
      if (!seqs) continue;
      const entries = await listAll<StepEntry>(this.#kv, { prefix: [...base, kept.epoch, kept.runId] });
      const mine = entries.filter((e) => e.value.baseRevision === kept.run.baseRevision);
      await this.#drop(mine.filter((e) => seqs.has(e.key.at(-1) as number)));
      if (mine.every((e) => seqs.has(e.key.at(-1) as number))) await commit(this.#kv.atomic().delete(kept.key));
    }
  }

  /** After a delete: drops the thread's kept points and their index (best effort: the floor
   * already hides them). */
  async dropHistory(threadId: string): Promise<void> {
    try {
      const base = await this.#steps(threadId);
      for (const e of await listAll<KeptRun>(this.#kv, { prefix: await this.#kept(threadId) })) {
        await this.#drop(await listAll<StepEntry>(this.#kv, { prefix: [...base, e.key.at(-2) as number, e.key.at(-1) as string] }));
        await commit(this.#kv.atomic().delete(e.key as KvKey));
      }
    } catch {
      // Hidden by the floor; left behind, unread.
    }
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
      // Kept steps stay: those of a kept run that extend the revision it was kept from.
      const kept = new Map((await this.#keptRuns(threadId)).map((k) => [`${k.epoch}\u0000${k.runId}`, k.run.baseRevision]));
      const old = await listAll<StepEntry>(this.#kv, { start: [...base, 0], end: [...base, epoch] });
      await this.#drop(old.filter((e) => kept.get(`${e.key.at(-3) as number}\u0000${e.key.at(-2) as string}`) !== e.value.baseRevision));
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
