/**
 * The backend one thread runs on, and the thread-scoped part of it that is checkpointed with
 * the thread (see {@link DeepAgentOptions.backend} for the rules users see).
 * @module
 */
import type { Backend } from "../backends/protocol.js";
import { StateBackend } from "../backends/state.js";
import type { Core } from "../core/types.js";
import { ConfigError } from "../errors.js";
import type { BackendContext, ResolvedOptions } from "./options.js";

/** A backend whose files belong to one thread and are saved with it (a {@link StateBackend}). */
export interface ThreadScoped {
  snapshot(): Promise<Uint8Array>;
  loadSnapshot(snapshot: Uint8Array): Promise<void>;
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

// ---- resident thread state: a thread's StateBackend stays loaded between its runs ----

/** Most threads whose State files one agent keeps loaded between runs. */
const RESIDENT_THREADS = 16;

/** A thread's StateBackend after a run, and the files snapshot its checkpoint was saved with. */
interface Resident {
  state: StateBackend;
  files: Uint8Array;
}

/** Per agent (keyed by its `owners` map): the resident State backends by thread id, oldest first. */
const residents = new WeakMap<object, Map<string, Resident>>();

function residentsOf(agent: object): Map<string, Resident> {
  let map = residents.get(agent);
  if (!map) {
    map = new Map();
    residents.set(agent, map);
  }
  return map;
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
 * The thread's resident StateBackend when it is unchanged since its checkpoint was saved and the
 * checkpoint still holds exactly those files (then nothing is restored), taken out of the cache
 * while a run uses it (a concurrent run of the same thread restores its own copy). Otherwise
 * `undefined`, and a stale entry is dropped.
 */
async function takeResident(agent: object, threadId: string, files: Uint8Array | undefined): Promise<StateBackend | undefined> {
  const map = residentsOf(agent);
  const r = map.get(threadId);
  if (!r) return undefined;
  map.delete(threadId);
  if (!files || !sameBytes(r.files, files)) return undefined;
  // Unchanged since the save: its snapshot is still the very buffer that was saved.
  return (await r.state.snapshot()) === r.files ? r.state : undefined;
}

/** Keeps a thread's StateBackend loaded after its checkpoint was saved with `files` (the
 * agent's `owners` map names the agent); the least recently saved thread goes past the limit. */
export function keepResident(agent: object, threadId: string, state: ThreadScoped, files: Uint8Array | undefined): void {
  const map = residentsOf(agent);
  map.delete(threadId);
  if (!files || !(state instanceof StateBackend)) return;
  map.set(threadId, { state, files });
  if (map.size > RESIDENT_THREADS) map.delete(map.keys().next().value as string);
}

// ---- end resident thread state ----

/** The thread's backend, and the thread-scoped backend inside it to checkpoint (if any). */
export interface ThreadBackend {
  backend: Backend;
  state: ThreadScoped | undefined;
  /** `state` is the thread's own StateBackend, made here (not an instance the user passed or a
   * factory returned): it may stay loaded for the thread's next run ({@link keepResident}). */
  own?: boolean;
}

/**
 * Resolves the backend of one run of `threadId`, with the files of its checkpoint (`files`)
 * loaded into its thread-scoped part:
 * - no `backend` option: a fresh {@link StateBackend} per thread;
 * - a thread-scoped instance (a `StateBackend`): a template — each thread starts from a copy of
 *   its files, and the copy is the thread's;
 * - any other instance: shared by every thread as is (nothing to checkpoint);
 * - a factory: called once per run with the thread's own `state` backend; a thread-scoped
 *   backend it returns (or the `state` it used, e.g. as a composite's default route) is
 *   checkpointed. Returning one thread-scoped instance for two threads is a {@link ConfigError}.
 *
 * `owners` remembers which thread each thread-scoped instance from the factory belongs to.
 */
export async function resolveThreadBackend(
  option: ResolvedOptions["backend"],
  context: { threadId: string; userId?: string },
  files: Uint8Array | undefined,
  core: Core,
  owners: WeakMap<object, string>,
): Promise<ThreadBackend> {
  const resident = await takeResident(owners, context.threadId, files);
  if (option === undefined) {
    const state = resident ?? (await stateFrom(files, core));
    return { backend: state, state, own: true };
  }
  if (typeof option !== "function") {
    if (!threadScoped(option)) return { backend: option, state: undefined };
    const state = resident ?? (await stateFrom(files, core, option));
    return { backend: state, state, own: true };
  }
  let own: StateBackend | undefined;
  // A resident backend is the thread's `state` only if this run asks for it (the factory may
  // return a backend of its own instead).
  let restored = false;
  const ctx: BackendContext = {
    threadId: context.threadId,
    ...(context.userId !== undefined && { userId: context.userId }),
    get state() {
      if (!own) {
        own = resident ?? new StateBackend({ core });
        restored = resident !== undefined;
      }
      return own;
    },
  };
  const backend = option(ctx);
  if (threadScoped(backend) && backend !== own) {
    const owner = owners.get(backend);
    if (owner !== undefined && owner !== context.threadId) {
      throw new ConfigError(
        "backend",
        `the factory returned the same StateBackend for threads '${owner}' and '${context.threadId}': ` +
          "return a new one per thread (or context.state), or pass the instance itself as a template",
      );
    }
    owners.set(backend, context.threadId);
    if (files) await backend.loadSnapshot(files);
    return { backend, state: backend };
  }
  // The thread's own `state`, returned or built into the backend (a composite's default route).
  if (own && files && !restored) await own.loadSnapshot(files);
  return { backend, state: own, own: own !== undefined };
}

/** A thread's own StateBackend: the checkpoint's files, or `seed`'s, or none. */
async function stateFrom(files: Uint8Array | undefined, core: Core, seed?: ThreadScoped): Promise<StateBackend> {
  const from = files ?? (seed ? await seed.snapshot() : undefined);
  return from ? StateBackend.restore(from, { core }) : new StateBackend({ core });
}
