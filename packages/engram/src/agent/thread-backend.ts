/**
 * The backend one thread runs on, and the thread-scoped part of it that is checkpointed with
 * the thread (see {@link DeepAgentOptions.backend} for the rules users see).
 * @module
 */
import type { Backend } from "../backends/protocol.js";
import { StateBackend, type StateMark } from "../backends/state.js";
import type { Core } from "../core/types.js";
import { ConfigError, EngramError, ResumeError } from "../errors.js";
import { type Checkpoint, type Checkpointer, type FilesRef, checkpointFiles, sameFiles } from "./checkpointer.js";
import type { PutCheckpointOptions } from "./run-steps.js";
import type { BackendContext, ResolvedOptions } from "./options.js";
import type { ThreadTurns } from "./turns.js";

/** A backend whose files belong to one thread and are saved with it (a {@link StateBackend}). */
export interface ThreadScoped {
  snapshot(): Promise<Uint8Array>;
  loadSnapshot(snapshot: Uint8Array): Promise<void>;
}

/** A thread-scoped backend that tells what changed since a mark: saves and steps then write a
 * delta of its files instead of a snapshot. The delta is the core's format (the one
 * `StateBackend` makes), applied onto the thread's snapshot: a wrapper forwards the method to a
 * `StateBackend`, it does not invent one. */
export interface ChangeTracking {
  changesSince(since: StateMark | undefined): Promise<{ mark: StateMark; unchanged: boolean; delta?: Uint8Array }>;
}

/** Whether `s` tells what changed (a method, never a class: a subclass or Proxy keeps it). */
export function tracksChanges<T>(s: T): s is T & ChangeTracking {
  return typeof (s as Partial<ChangeTracking> | undefined)?.changesSince === "function";
}

/** Whether `b` holds thread-scoped files (it can be snapshotted and restored). */
export function threadScoped(b: unknown): b is ThreadScoped {
  const s = b as Partial<ThreadScoped> | undefined;
  return typeof s?.snapshot === "function" && typeof s.loadSnapshot === "function";
}

/** Whether `b` is, or routes to, a thread-scoped backend (through composites, at any depth). */
function holdsThreadState(b: unknown): boolean {
  if (threadScoped(b)) return true;
  const routes = (b as { backends?: unknown } | undefined)?.backends;
  return Array.isArray(routes) && routes.some(holdsThreadState);
}

/**
 * Refuses a backend instance that would share thread-scoped files between threads: a composite
 * (or other router) *instance* holding a `StateBackend` route. Such a setup needs a factory,
 * whose `context.state` is the thread's own State backend.
 */
export function checkBackendOption(option: ResolvedOptions["backend"]): void {
  if (option === undefined || typeof option === "function" || threadScoped(option)) return;
  if (holdsThreadState(option)) {
    throw new ConfigError(
      "backend",
      "this instance routes to a StateBackend, whose files would be shared by every thread: pass a factory instead, " +
        "e.g. ({ state }) => new CompositeBackend(state, { ... })",
    );
  }
}

// ---- thread files: resident between runs, saved incrementally ----

/** Most threads whose State files one agent keeps loaded between runs. */
const RESIDENT_THREADS = 16;
/** Most deltas saved after a full snapshot before the next save is a full snapshot again (so
 * a restore applies a bounded chain). */
export const MAX_DELTAS = 32;

/**
 * Where a thread's files stand against its checkpoint: the files stored (`ref`, or the full
 * `bytes` for a checkpointer that keeps no refs) and the state's mark when they were saved or
 * loaded, so the next save writes only what changed since.
 */
export interface ThreadFiles {
  state: ThreadScoped;
  ref: FilesRef | undefined;
  bytes: Uint8Array | undefined;
  mark: StateMark | undefined;
  /** Size of the stored full snapshot, and of the deltas stored after it. */
  fullBytes: number;
  deltaBytes: number;
}

/** Per agent (keyed by its `owners` map): the resident thread files by thread id, oldest first. */
const residents = new WeakMap<object, Map<string, ThreadFiles>>();

function residentsOf(agent: object): Map<string, ThreadFiles> {
  let map = residents.get(agent);
  if (!map) {
    map = new Map();
    residents.set(agent, map);
  }
  return map;
}

/** The stored files a resident copy of the thread holds, for {@link Checkpointer.get}'s
 * `knownFiles` (the checkpoint then comes back without its files). */
export function residentRef(agent: object, threadId: string): FilesRef | undefined {
  return residents.get(agent)?.get(threadId)?.ref;
}

/** Equal bytes (a word at a time where both views allow it). */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a === b) return true;
  if (a.byteLength !== b.byteLength) return false;
  let i = 0;
  if (a.byteOffset % 4 === 0 && b.byteOffset % 4 === 0) {
    const words = a.byteLength >>> 2;
    const x = new Uint32Array(a.buffer, a.byteOffset, words);
    const y = new Uint32Array(b.buffer, b.byteOffset, words);
    for (; i < words; i++) if (x[i] !== y[i]) return false;
    i = words << 2;
  }
  for (; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The thread's resident files when they are unchanged since their save and the checkpoint
 * still holds exactly those files (same ref; or, for a checkpointer without refs, same bytes):
 * then nothing is restored. Taken out of the cache while a run uses them (runs of one thread
 * take turns, see {@link ThreadTurns}). Otherwise `undefined`, and a stale entry is dropped.
 */
async function takeResident(agent: object, threadId: string, saved: Checkpoint | undefined): Promise<ThreadFiles | undefined> {
  const map = residentsOf(agent);
  const r = map.get(threadId);
  if (!r) return undefined;
  map.delete(threadId);
  if (!saved || !tracksChanges(r.state)) {
    release(r);
    return undefined;
  }
  const same = r.ref && saved.filesRef ? sameFiles(r.ref, saved.filesRef) : !!(r.bytes && saved.files && sameBytes(r.bytes, saved.files));
  if (same && (await r.state.changesSince(r.mark)).unchanged) return r;
  release(r);
  return undefined;
}

/** Keeps a thread's files loaded after its checkpoint was saved (the agent's `owners` map names
 * the agent); the least recently saved thread goes past the limit. */
export function keepResident(agent: object, threadId: string, files: ThreadFiles): void {
  const map = residentsOf(agent);
  const earlier = map.get(threadId);
  map.delete(threadId);
  // A copy of the thread's files that is no longer kept is released now, not at the next
  // garbage collection (WASM memory only a collection gives back).
  if (earlier && earlier.state !== files.state) release(earlier);
  if (!tracksChanges(files.state) || (!files.ref && !files.bytes)) return;
  map.set(threadId, files);
  if (map.size > RESIDENT_THREADS) {
    const oldest = map.keys().next().value as string;
    release(map.get(oldest) as ThreadFiles);
    map.delete(oldest);
  }
}

/** Frees a resident copy the agent made (only those are kept: `own` states). */
function release(files: ThreadFiles): void {
  (files.state as { dispose?(): void }).dispose?.();
}

/** The full snapshot a checkpoint's files come to; a missing or damaged part is a
 * {@link ResumeError} (nothing is changed or saved). */
function filesFor(saved: Checkpoint, threadId: string, core: Core): Uint8Array | undefined {
  try {
    return checkpointFiles(saved, core);
  } catch (e) {
    throw new ResumeError(`cannot resume thread '${threadId}': ${e instanceof Error ? e.message : String(e)}`);
  }
}

/**
 * Adds the thread's files to `cp` as the cheapest correct record (a checkpointer that appends
 * deltas gets only the files written since the last save; others, and every
 * {@link MAX_DELTAS}th save, a full snapshot) and saves it. A save refused because another
 * writer saved the thread meanwhile is a `conflict` when `cp` has a revision; without one, an
 * append onto stale files is saved again as a full snapshot. Updates `files`; resolves to the
 * revision stored.
 */
export async function saveWithFiles(
  checkpointer: Checkpointer,
  threadId: string,
  cp: Checkpoint,
  files: ThreadFiles | undefined,
  options?: PutCheckpointOptions,
): Promise<number | undefined> {
  if (!files) return revisionOf(await checkpointer.put(threadId, cp, options));
  const state = files.state;
  const tracked = tracksChanges(state) ? await state.changesSince(files.mark) : undefined;
  const ref = files.ref;
  if (tracked && ref && (tracked.unchanged || tracked.delta)) {
    const delta = tracked.delta;
    const grown = files.deltaBytes + (delta?.byteLength ?? 0);
    if (checkpointer.incremental && (!delta || (ref.deltas < MAX_DELTAS && grown <= Math.max(files.fullBytes, 1 << 16)))) {
      const next = delta ? { id: ref.id, deltas: ref.deltas + 1 } : ref;
      try {
        const revision = await checkpointer.put(threadId, { ...cp, filesRef: next, ...(delta && { filesDeltas: [delta] }) }, options);
        Object.assign(files, { ref: next, mark: tracked.mark, deltaBytes: grown });
        return revisionOf(revision);
      } catch (e) {
        // Refused by revision: another writer saved the thread, and this save must not replace
        // it. Without one, only the delta's base was stale: the full snapshot below replaces it.
        if (!EngramError.hasCode(e, "conflict") || cp.revision !== undefined) throw e;
      }
    } else if (tracked.unchanged && files.bytes) {
      // A checkpointer without deltas: the same full snapshot again.
      return revisionOf(await checkpointer.put(threadId, { ...cp, files: files.bytes, filesRef: ref }, options));
    }
  }
  const bytes = await state.snapshot();
  const mark = tracksChanges(state) ? (await state.changesSince(undefined)).mark : undefined;
  const next = { id: crypto.randomUUID(), deltas: 0 };
  const revision = await checkpointer.put(threadId, { ...cp, files: bytes, filesRef: next }, options);
  Object.assign(files, {
    ref: next,
    mark,
    fullBytes: bytes.byteLength,
    deltaBytes: 0,
    bytes: checkpointer.incremental ? undefined : bytes,
  });
  return revisionOf(revision);
}

/** The revision a put resolved to; `undefined` from a checkpointer that keeps none. */
function revisionOf(put: number | void): number | undefined {
  return typeof put === "number" ? put : undefined;
}

/** Thread files loaded from `bytes` (the checkpoint `saved`'s), or fresh (`saved` undefined). */
async function loaded(state: ThreadScoped, saved: Checkpoint | undefined, bytes: Uint8Array | undefined): Promise<ThreadFiles> {
  const mark = tracksChanges(state) ? (await state.changesSince(undefined)).mark : undefined;
  const deltaBytes = (saved?.filesDeltas ?? []).reduce((n, d) => n + d.byteLength, 0);
  return {
    state,
    ref: bytes ? saved?.filesRef : undefined,
    bytes: bytes && !saved?.filesRef ? bytes : undefined,
    mark,
    fullBytes: saved?.files?.byteLength ?? 0,
    deltaBytes,
  };
}

// ---- end thread files ----

/** The thread's backend, and the thread-scoped backend inside it to checkpoint (if any). */
export interface ThreadBackend {
  backend: Backend;
  /** The thread-scoped backend's files, to save with the thread. */
  files: ThreadFiles | undefined;
  /** `files` are the thread's own StateBackend, made here (not an instance the user passed or a
   * factory returned): they may stay loaded for the thread's next run ({@link keepResident}). */
  own?: boolean;
}

/**
 * Resolves the backend of one run of `threadId`, with the files of its checkpoint (`saved`)
 * loaded into its thread-scoped part:
 * - no `backend` option: a fresh {@link StateBackend} per thread;
 * - a thread-scoped instance (a `StateBackend`): a template — each thread starts from a copy of
 *   its files, and the copy is the thread's;
 * - any other instance: shared by every thread as is (nothing to checkpoint);
 * - a factory: called once per run with the thread's own `state` backend; a thread-scoped
 *   backend it returns (or the `state` it used, e.g. as a composite's default route) is
 *   checkpointed. Returning one thread-scoped instance for two threads is a {@link ConfigError}.
 *
 * `saved` may lack its files when they are the resident copy's (`knownFiles`); `reload` then
 * fetches them whole if that copy cannot be used after all. Saved files that are missing a part
 * or damaged are a {@link ResumeError}. `owners` remembers which thread each thread-scoped
 * instance from the factory belongs to.
 */
export async function resolveThreadBackend(
  option: ResolvedOptions["backend"],
  context: { threadId: string; userId?: string },
  saved: Checkpoint | undefined,
  core: Core,
  owners: WeakMap<object, string>,
  reload: () => Promise<Checkpoint | undefined>,
): Promise<ThreadBackend> {
  const { threadId } = context;
  const resident = await takeResident(owners, threadId, saved);
  let checkpoint = saved;
  if (!resident && saved && !saved.files && saved.filesRef) checkpoint = await reload();
  let bytes: Uint8Array | undefined;
  let parsed = false;
  const filesOf = () => {
    if (!parsed) bytes = checkpoint && filesFor(checkpoint, threadId, core);
    parsed = true;
    return bytes;
  };
  if (option === undefined) {
    if (resident) return { backend: resident.state as StateBackend, files: resident, own: true };
    const state = await stateFrom(filesOf(), core);
    return { backend: state, files: await loaded(state, checkpoint, bytes), own: true };
  }
  if (typeof option !== "function") {
    if (!threadScoped(option)) return { backend: option, files: undefined };
    if (resident) return { backend: resident.state as StateBackend, files: resident, own: true };
    const from = filesOf();
    const state = await stateFrom(from, core, option);
    return { backend: state, files: await loaded(state, checkpoint, from), own: true };
  }
  let own: StateBackend | undefined;
  // A resident backend is the thread's `state` only if this run asks for it (the factory may
  // return a backend of its own instead).
  const ctx: BackendContext = {
    threadId,
    ...(context.userId !== undefined && { userId: context.userId }),
    get state() {
      own ??= resident ? (resident.state as StateBackend) : new StateBackend({ core });
      return own;
    },
  };
  const backend = option(ctx);
  if (threadScoped(backend) && backend !== own) {
    const owner = owners.get(backend);
    if (owner !== undefined && owner !== threadId) {
      throw new ConfigError(
        "backend",
        `the factory returned the same StateBackend for threads '${owner}' and '${threadId}': ` +
          "return a new one per thread (or context.state), or pass the instance itself as a template",
      );
    }
    owners.set(backend, threadId);
    if (!checkpoint?.files && checkpoint?.filesRef) checkpoint = await reload();
    parsed = false;
    const from = filesOf();
    if (from) await backend.loadSnapshot(from);
    return { backend, files: await loaded(backend, checkpoint, from) };
  }
  // The thread's own `state`, returned or built into the backend (a composite's default route).
  if (!own) return { backend, files: undefined };
  if (resident && own === resident.state) return { backend, files: resident, own: true };
  const from = filesOf();
  if (from) await own.loadSnapshot(from);
  return { backend, files: await loaded(own, checkpoint, from), own: true };
}

/** A thread's own StateBackend: the checkpoint's files, or `seed`'s, or none. */
async function stateFrom(files: Uint8Array | undefined, core: Core, seed?: ThreadScoped): Promise<StateBackend> {
  const from = files ?? (seed ? await seed.snapshot() : undefined);
  return from ? StateBackend.restore(from, { core }) : new StateBackend({ core });
}
