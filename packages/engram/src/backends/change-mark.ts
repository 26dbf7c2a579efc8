/**
 * Telling cheaply that a backend's files have not changed, for callers that re-check the same
 * files before every model call (the skills index).
 * @module
 */
import { type ChangeMark, capability } from "./capabilities.js";
import type { Backend } from "./protocol.js";

export type { ChangeMark } from "./capabilities.js";

/**
 * @internal A function giving a backend's {@link ChangeMark}, which differs after any change to
 * the files the backend shows, or `undefined` for a backend that cannot tell. A backend can
 * when it declares a `residentTable` (the table and the table's change counter, which every
 * write, edit, append and delete moves; loading a snapshot replaces the table) or its own
 * `changeMark` (a `CompositeBackend` whose backends all can). A store (another process may
 * write it) or a directory on disk (any process may) cannot.
 */
export function changeMark(backend: Backend): (() => Promise<ChangeMark>) | undefined {
  const table = capability(backend, "residentTable");
  if (table) {
    return async () => {
      const t = await table();
      return [t, t.changes];
    };
  }
  return capability(backend, "changeMark");
}

/** Whether two marks of the same backend say nothing changed between them. */
export function sameMark(a: ChangeMark, b: ChangeMark): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
