import { loadCore } from "../core/loader.js";
import type { Core } from "../core/types.js";

/** Where a backend gets the core: given, or loaded on first use. */
export type CoreSource = Core | Promise<Core> | undefined;

/** @internal Resolves a {@link CoreSource} once. */
export function coreRef(source: CoreSource): () => Promise<Core> {
  let pending: Promise<Core> | undefined;
  return () => (pending ??= Promise.resolve(source ?? loadCore()));
}
