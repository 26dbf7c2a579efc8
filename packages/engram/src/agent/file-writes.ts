/**
 * What a run's writes replaced in files kept outside the thread (a directory, a store: see
 * `BackendCapabilities.outsideThread`), recorded so that a rewind of the thread can put them
 * back — and can tell when someone changed a file since (its content is no longer the one the
 * write left: a SHA-256 of the bytes, which a restore of the same bytes gives again, where a
 * version would not). The records travel in the run's steps (`step-log.ts`); `history.ts` undoes
 * them.
 * @module
 */
import { capability } from "../backends/capabilities.js";
import type { Backend } from "../backends/protocol.js";
import { wrapBackend } from "../backends/wrap.js";
import { EngramError } from "../errors.js";

/** One write to a file outside the thread: the bytes it replaced (base64; `null`: there was no
 * file) and the SHA-256 (hex) of the bytes it left (`null`: it deleted the file). */
export interface FileWrite {
  path: string;
  before: string | null;
  after: string | null;
}

function toBase64(bytes: Uint8Array): string {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

async function sha256(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The hash of the file's bytes now (`null`: no file), or the error that kept them from being read. */
async function hashNow(backend: Backend, path: string): Promise<{ hash: string | null; version?: string } | { error: string }> {
  const r = await backend.readBytes(path);
  if (r.error) return r.error.code === "file_not_found" ? { hash: null } : { error: r.error.message };
  const info = await backend.stat(path);
  const version = !info.error && "version" in info.info ? String((info.info as { version: unknown }).version) : undefined;
  return { hash: await sha256(r.data), ...(version !== undefined && { version }) };
}

function fromBase64(text: string): Uint8Array {
  const s = atob(text);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

/** Records the writes a run makes through its backend to files outside the thread. */
export class WriteRecorder {
  #pending: FileWrite[] = [];

  /** The writes recorded since the last call. */
  take(): FileWrite[] {
    const out = this.#pending;
    this.#pending = [];
    return out;
  }

  /** `backend`, recording its writes, edits, appends and deletes outside the thread. */
  wrap(backend: Backend): Backend {
    const outside = capability(backend, "outsideThread");
    if (!outside) return backend;
    const before = async (path: string): Promise<string | null | undefined> => {
      if (!(await outside(path))) return undefined;
      const r = await backend.readBytes(path);
      if (!r.error) return toBase64(r.data);
      return r.error.code === "file_not_found" ? null : undefined;
    };
    const changed = async <T extends { error?: unknown }>(path: string, was: string | null | undefined, result: T) => {
      if (was === undefined || result.error) return result;
      const now = await hashNow(backend, path);
      if (!("error" in now)) this.#pending.push({ path, before: was, after: now.hash });
      return result;
    };
    return wrapBackend(backend, {
      write: async (path, content, options) => changed(path, await before(path), await backend.write(path, content, options)),
      edit: async (path, oldString, newString, options) =>
        changed(path, await before(path), await backend.edit(path, oldString, newString, options)),
      ...(backend.append && {
        append: async (path: string, content: string | Uint8Array) =>
          changed(path, await before(path), await (backend.append as NonNullable<Backend["append"]>)(path, content)),
      }),
      delete: async (path) => {
        // A directory is not recorded (its files are not read one by one): a file's delete is.
        const was = await before(path);
        const r = await backend.delete(path);
        if (was !== undefined && !r.error) this.#pending.push({ path, before: was, after: null });
        return r;
      },
    });
  }
}

/** Undoes `writes` (oldest first) through `backend`: every file must still be at the version the
 * last write left (else a `conflict` naming the file, and nothing is written); then each file
 * gets back what the first write replaced. */
export async function undoWrites(backend: Backend, writes: readonly FileWrite[]): Promise<string[]> {
  const first = new Map<string, FileWrite>();
  const last = new Map<string, FileWrite>();
  for (const w of writes) {
    if (!first.has(w.path)) first.set(w.path, w);
    last.set(w.path, w);
  }
  // Every file first: nothing is written unless all are as the run left them.
  const current = new Map<string, { hash: string | null; version?: string }>();
  for (const [path, w] of last) {
    const now = await hashNow(backend, path);
    if ("error" in now) throw new EngramError("conflict", `cannot rewind file '${path}': ${now.error}`);
    if (now.hash !== w.after)
      throw new EngramError(
        "conflict",
        `file '${path}' was changed after the run wrote it (it is not what the run left): nothing was rewound`,
      );
    current.set(path, now);
  }
  for (const [path, w] of first) {
    const now = current.get(path) ?? { hash: null };
    const ifVersion = now.hash === null ? "0" : now.version;
    const r: { error?: { message: string } } =
      w.before === null
        ? now.hash === null
          ? {}
          : await backend.delete(path)
        : await backend.write(path, fromBase64(w.before), ifVersion === undefined ? {} : { ifVersion });
    if (r.error) throw new EngramError("conflict", `file '${path}' could not be put back: ${r.error.message}`);
  }
  return [...first.keys()];
}
