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

/** The thread's backend, and the thread-scoped backend inside it to checkpoint (if any). */
export interface ThreadBackend {
  backend: Backend;
  state: ThreadScoped | undefined;
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
  if (option === undefined) {
    const state = await stateFrom(files, core);
    return { backend: state, state };
  }
  if (typeof option !== "function") {
    if (!threadScoped(option)) return { backend: option, state: undefined };
    const state = await stateFrom(files, core, option);
    return { backend: state, state };
  }
  let own: StateBackend | undefined;
  const ctx: BackendContext = {
    threadId: context.threadId,
    ...(context.userId !== undefined && { userId: context.userId }),
    get state() {
      own ??= new StateBackend({ core });
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
  if (own && files) await own.loadSnapshot(files);
  return { backend, state: own };
}

/** A thread's own StateBackend: the checkpoint's files, or `seed`'s, or none. */
async function stateFrom(files: Uint8Array | undefined, core: Core, seed?: ThreadScoped): Promise<StateBackend> {
  const from = files ?? (seed ? await seed.snapshot() : undefined);
  return from ? StateBackend.restore(from, { core }) : new StateBackend({ core });
}
