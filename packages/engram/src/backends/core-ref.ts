import { loadCore } from "../core/loader.js";
import type { Core, CoreFileTable, ErrorData } from "../core/types.js";

/** Where a backend gets the core: given, or loaded on first use. */
export type CoreSource = Core | Promise<Core> | undefined;

/** @internal Resolves a {@link CoreSource} once. */
export function coreRef(source: CoreSource): () => Promise<Core> {
  let pending: Promise<Core> | undefined;
  return () => (pending ??= Promise.resolve(source ?? loadCore()));
}

/** @internal The files of a backend that keeps them in a core file table (State; Store's
 * resident mirror): the table, brought up to date for the normalised directory `path`, and,
 * when the backend's file versions are not the table's, the backend's version of a file the
 * table holds at a given table version. A composite searches such tables in the core in one
 * fan-out (see `CompositeBackend`). */
export const residentFiles: unique symbol = Symbol("engram.residentFiles");

/** @internal What {@link residentFiles} gives; `error` when the backend refuses the path (the
 * fan-out then answers that error, as the backend's own search would). */
export interface ResidentFiles {
  table: CoreFileTable;
  version?: (tableVersion: string) => string;
  error?: ErrorData;
}
