/**
 * Values over Deno KV's 64 KiB, kept as parts under an id of their own (a blob). A blob is
 * written — staged — before the commit that names it, in as many atomic operations as its size
 * needs, and never changes after: a reader that finds a part missing knows the blob was replaced
 * meanwhile and reads again. Each blob has a record until the commit that names it clears it; a
 * commit that replaces one marks its record retired, and the writer drops it after. A process
 * that dies in between leaves the record, which {@link Blobs.sweep} finds.
 * @module
 */
import { type DenoKv, KV_LIMITS, type KvAtomicOperation, type KvKey } from "./deno-kv.js";
import { commit, listAll } from "./kv.js";

/** A stored blob: its id and length in bytes. */
export interface BlobRef {
  id: string;
  bytes: number;
}

/** Text as stored: inline when it fits one value, else a blob of its UTF-8 bytes. */
export type StoredText = { text: string } | { blob: BlobRef };

/** The bytes of one part (raw bytes are stored as they are: a part stays under the value limit). */
export const PART_BYTES = 61_440;
/** The longest text kept inline, in UTF-16 units (2 bytes each at most, as Deno KV stores it). */
export const INLINE_UNITS = 30_000;
/** Parts written by one atomic operation, within its total size. */
const PARTS_PER_COMMIT = Math.floor((KV_LIMITS.mutationBytes * 0.9) / PART_BYTES);

/** A blob's record: when it was staged (`0`: retired, to be dropped), and its parts. */
interface BlobRecord {
  at: number;
  parts: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The blobs under one key prefix. */
export class Blobs {
  readonly #kv: DenoKv;
  readonly #prefix: KvKey;

  constructor(kv: DenoKv, prefix: KvKey) {
    this.#kv = kv;
    this.#prefix = prefix;
  }

  #part(id: string, i: number): KvKey {
    return [...this.#prefix, "blob", id, i];
  }

  #record(id: string): KvKey {
    return [...this.#prefix, "blob-record", id];
  }

  /** Writes `bytes` as a new blob (its record says it is not committed yet). */
  async stage(bytes: Uint8Array): Promise<BlobRef> {
    const id = crypto.randomUUID();
    const parts = Math.ceil(bytes.length / PART_BYTES);
    let first = 0;
    do {
      const op = this.#kv.atomic();
      if (first === 0) op.set(this.#record(id), { at: Date.now(), parts } satisfies BlobRecord);
      const end = Math.min(parts, first + PARTS_PER_COMMIT);
      for (let i = first; i < end; i++) op.set(this.#part(id, i), bytes.slice(i * PART_BYTES, (i + 1) * PART_BYTES));
      await commit(op);
      first = end;
    } while (first < parts);
    return { id, bytes: bytes.length };
  }

  /** In the commit that names `ref`: the blob is kept. */
  confirm(op: KvAtomicOperation, ref: BlobRef): void {
    op.delete(this.#record(ref.id));
  }

  /** In the commit that stops naming `ref`: the blob is to be dropped. */
  retire(op: KvAtomicOperation, ref: BlobRef): void {
    op.set(this.#record(ref.id), { at: 0, parts: partsOf(ref) } satisfies BlobRecord);
  }

  /** The blob's bytes; `undefined` when a part is gone (the blob was dropped meanwhile). */
  async read(ref: BlobRef): Promise<Uint8Array | undefined> {
    const parts = partsOf(ref);
    if (parts === 0) return new Uint8Array(0);
    const out = new Uint8Array(ref.bytes);
    let at = 0;
    let count = 0;
    for (const entry of await listAll<Uint8Array>(this.#kv, { prefix: [...this.#prefix, "blob", ref.id] }, { limit: parts })) {
      if (entry.key.at(-1) !== count || at + entry.value.length > ref.bytes) break;
      out.set(entry.value, at);
      at += entry.value.length;
      count++;
    }
    return count === parts && at === ref.bytes ? out : undefined;
  }

  /** Deletes the blobs' parts, then their records. */
  async drop(refs: readonly BlobRef[]): Promise<void> {
    const batch = Math.floor(KV_LIMITS.mutations / 2);
    for (const ref of refs) {
      const parts = partsOf(ref);
      for (let first = 0; first < parts; first += batch) {
        const op = this.#kv.atomic();
        for (let i = first; i < Math.min(parts, first + batch); i++) op.delete(this.#part(ref.id, i));
        await commit(op);
      }
      await commit(this.#kv.atomic().delete(this.#record(ref.id)));
    }
  }

  /** Drops retired blobs, and blobs staged more than `olderThanMs` ago that no commit named (a
   * writer died between staging and committing). Returns how many were dropped. */
  async sweep(olderThanMs: number): Promise<number> {
    const cutoff = Date.now() - olderThanMs;
    const stale = (await listAll<BlobRecord>(this.#kv, { prefix: [...this.#prefix, "blob-record"] }))
      .filter((entry) => entry.value.at <= cutoff)
      .map((entry): BlobRef => ({ id: String(entry.key.at(-1)), bytes: entry.value.parts * PART_BYTES }));
    await this.drop(stale);
    return stale.length;
  }

  /** `text` as stored: inline, or staged as a blob. */
  async stageText(text: string): Promise<StoredText> {
    return text.length <= INLINE_UNITS ? { text } : { blob: await this.stage(encoder.encode(text)) };
  }

  /** Stored text read back; `undefined` when its blob was dropped meanwhile. */
  async readText(stored: StoredText): Promise<string | undefined> {
    if ("text" in stored) return stored.text;
    const bytes = await this.read(stored.blob);
    return bytes && decoder.decode(bytes);
  }
}

/** The blob of stored text, if it has one. */
export function blobOf(stored: StoredText | undefined | null): BlobRef | undefined {
  return stored && "blob" in stored ? stored.blob : undefined;
}

function partsOf(ref: BlobRef): number {
  return Math.ceil(ref.bytes / PART_BYTES);
}
