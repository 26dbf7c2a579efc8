/**
 * What a backend can do beyond the {@link Backend} contract, declared by the methods it has.
 * Callers that can go faster with a capability ask for the method, never for a class: a
 * subclass inherits a capability, a Proxy that forwards methods forwards it, and a wrapper made
 * by `wrapBackend` forwards it only when it leaves every reading method to its backend (a
 * wrapper that answers reads itself would otherwise be bypassed). A subclass or wrapper that
 * changes what the reading methods answer must not declare them.
 * @module
 */
import type { CoreFileTable, ErrorData, Result } from "../core/types.js";
import type { Backend, ToolTextRequest } from "./protocol.js";

/** Where a backend's files stood; compare two with `sameMark`. */
export type ChangeMark = readonly unknown[];

/** What {@link BackendCapabilities.residentMirror} gives: a core file table synced for a
 * directory, how to turn its file versions into the backend's, or why the path is refused. */
export interface ResidentMirror {
  table: CoreFileTable;
  /** The backend's version of a file the table holds at `tableVersion`. */
  version?: (tableVersion: string) => string;
  /** The backend refuses the path: a fan-out answers this error, as the backend's search would. */
  error?: ErrorData;
}

/** Optional methods a backend declares when it has them (see the module's rules). */
export interface BackendCapabilities {
  /**
   * The core file table that holds every file of this backend, with the backend's own versions,
   * and that only this backend writes: its reads answer from it, its writes land in it and
   * answer with its (normalised) paths. A composite then lists and searches it in the core, and
   * a caller can tell cheaply that nothing changed (`changeMark`). `StateBackend` has it.
   */
  residentTable?(): Promise<CoreFileTable>;
  /**
   * A core file table mirroring the backend's files under the normalised directory `path`,
   * brought up to date now, for a composite's one-pass search. `StoreBackend` has it.
   */
  residentMirror?(path: string): Promise<ResidentMirror>;
  /** Where the backend's files stand: differs after any change to them. Declared only by a
   * backend that can tell (see `changeMark` in change-mark.ts). */
  changeMark?(): Promise<ChangeMark>;
  /**
   * The text the model reads for an `ls`, `read_file`, `glob` or `grep` call, made by the core in
   * one call with the output cap (`maxChars`, UTF-16 units) applied there, so a large result
   * never becomes JavaScript objects. Resolves to `undefined` for a call the backend leaves to
   * the tools, which then format its structured result with the same core rules.
   */
  toolText?(request: ToolTextRequest, maxChars: number): Promise<Result<{ text: string }> | undefined>;
  /**
   * Whether a write to `path` changes files kept outside the thread's checkpoint (a directory,
   * a store), which a rewind of the thread cannot restore from its checkpoints: runs that keep
   * history record what such a write replaced. `FilesystemBackend` and `StoreBackend` have it;
   * a composite answers for the route `path` takes. Absent: the thread's own files.
   */
  outsideThread?(path: string): Promise<boolean>;
  /**
   * Declared (answering `true`) by a backend whose `execute` runs commands confined by a sandbox:
   * writes only inside its root, no network, killed at the timeout. The `execute` tool tells the
   * model so only then. A wrapper that forwards `execute` forwards this with it; unlike the
   * reading capabilities above, a wrapper's own reads do not change it.
   */
  commandsConfined?(): boolean;
}

/** The capability methods, which wrappers forward on purpose only. */
export const CAPABILITIES = [
  "residentTable",
  "residentMirror",
  "changeMark",
  "toolText",
] as const satisfies readonly (keyof BackendCapabilities)[];

/** `backend`'s capability `name`, called on the backend, or `undefined` when it lacks it. */
export function capability<K extends keyof BackendCapabilities>(
  backend: Backend,
  name: K,
): NonNullable<BackendCapabilities[K]> | undefined {
  const method = (backend as Backend & BackendCapabilities)[name];
  if (typeof method !== "function") return undefined;
  return ((...args: never[]) => (method as (...a: never[]) => unknown).apply(backend, args)) as NonNullable<BackendCapabilities[K]>;
}
