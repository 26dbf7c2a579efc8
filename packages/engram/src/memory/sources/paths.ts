/**
 * Which paths are an agent's memory sources (its AGENTS.md files), and whether a path names one
 * or a write reaches one.
 * @module
 */
import type { Backend } from "../../backends/protocol.js";
import type { Core } from "../../core/types.js";

/** An agent's memory sources: `memorySources` as given, else its one `memoryFile`. */
export function memorySourcePaths(memorySources: string[] | undefined, memoryFile: string): string[] {
  return memorySources ?? [memoryFile];
}

/** `path` normalised by the core (the rule the backends apply), or as given when it is not a
 * valid path (the backend then refuses it). */
export function normalOf(core: Core): (path: string) => string {
  return (path) => {
    const r = core.normalizePath(path);
    return r.error ? path : r.path;
  };
}

/** Whether a path names one of the memory `sources` (`AGENTS.md`, `/./AGENTS.md` and
 * `/AGENTS.md` are one file). */
export function memorySourceOf(sources: readonly string[], core: Core): (path: string) => boolean {
  const normal = normalOf(core);
  const paths = new Set(sources.map(normal));
  return (path) => paths.has(normal(path));
}

/** Which file a write reaches, when that is a memory source: the path the write is made by
 * (the source's own name), or `undefined` for any other file. */
export type MemoryTarget = (path: string) => Promise<string | undefined>;

/**
 * Decides what a write is on the file it reaches, not on the name it was given: through a
 * directory link (`same -> .`, then `/same/AGENTS.md`) a write reaches the source itself, and is
 * then made by the source's name, so the layers beneath (the history) see which file changed.
 * Backends without links ({@link Backend.realPath} absent) decide by name alone.
 */
export function memoryTarget(
  backend: Backend,
  core: () => Promise<Core>,
  memory: ((path: string) => boolean) | readonly string[],
): MemoryTarget {
  const reached = async (path: string) => {
    const r = backend.realPath ? await backend.realPath(path) : undefined;
    return r?.error ? undefined : r?.path;
  };
  if (typeof memory === "function") {
    return async (path) => {
      if (memory(path)) return path;
      const real = await reached(path);
      return real !== undefined && memory(real) ? real : undefined;
    };
  }
  const sources = [...memory];
  return async (path) => {
    const c = await core();
    const normal = (p: string) => c.normalizePath(p).path ?? p;
    const named = sources.find((s) => normal(s) === normal(path));
    if (named !== undefined || !backend.realPath) return named;
    const real = await reached(path);
    if (real === undefined) return undefined;
    for (const s of sources) if ((await reached(s)) === real) return s;
    return undefined;
  };
}
