/**
 * Telling cheaply that a backend's files have not changed, for callers that re-check the same
 * files before every model call (the skills index).
 * @module
 */
import { CompositeBackend } from "./composite.js";
import { residentFiles } from "./core-ref.js";
import type { Backend } from "./protocol.js";
import { StateBackend } from "./state.js";
import { readsThrough } from "./wrap.js";

/** @internal Where a backend's files stood; compare two with {@link sameMark}. */
export type ChangeMark = readonly unknown[];

/**
 * @internal A function giving a backend's {@link ChangeMark}, which differs after any change to
 * the files the backend shows, or `undefined` for a backend that cannot tell. Only a backend
 * whose files all live in core file tables that nothing but this process writes can tell: a
 * plain `StateBackend` (its table and the table's change counter, which every write, edit,
 * append and delete moves; loading a snapshot replaces the table), and a plain
 * `CompositeBackend` whose backends all can. A `StoreBackend` cannot (another process may
 * write its store), nor a `FilesystemBackend` (any process may write its directory), nor a
 * subclassed backend or a wrapper that replaces a reading method (its reads may answer from
 * elsewhere). A `wrapBackend` wrapper that only replaces writing methods tells what its
 * backend tells.
 */
export function changeMark(backend: Backend): (() => Promise<ChangeMark>) | undefined {
  // A wrapper that leaves reading to its backend (memory history, path normalising) shows that
  // backend's files; its writes reach them.
  const inner = readsThrough(backend);
  if (inner) return changeMark(inner);
  if (plain(backend, StateBackend.prototype) && (backend as StateBackend)[residentFiles] === StateBackend.prototype[residentFiles]) {
    const state = backend as StateBackend;
    return async () => {
      const { table } = await state[residentFiles]();
      return [table, table.changes];
    };
  }
  if (plain(backend, CompositeBackend.prototype)) {
    const marks = (backend as CompositeBackend).backends.map(changeMark);
    if (!marks.every((m) => m !== undefined)) return undefined;
    return async () => (await Promise.all(marks.map((m) => (m as () => Promise<ChangeMark>)()))).flat();
  }
  return undefined;
}

/** Whether two marks of the same backend say nothing changed between them. */
export function sameMark(a: ChangeMark, b: ChangeMark): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** An instance of exactly `proto`'s class whose reading methods are that class's own (a wrapper,
 * a Proxy, hands out bound or replaced methods instead). */
function plain(backend: Backend, proto: Backend): boolean {
  return (
    Object.getPrototypeOf(backend) === proto &&
    backend.ls === proto.ls &&
    backend.stat === proto.stat &&
    backend.read === proto.read &&
    backend.readBytes === proto.readBytes
  );
}
