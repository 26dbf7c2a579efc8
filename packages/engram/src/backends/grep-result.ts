import type { GrepResult } from "../core/types.js";

/** @internal The same grep result with every path passed through `map` (re-prefixing for a
 * mount, host paths for a filesystem in host-path mode). */
export function mapGrepPaths(r: GrepResult, map: (path: string) => string): GrepResult {
  return {
    truncated: r.truncated,
    ...(r.matches && { matches: r.matches.map((m) => ({ ...m, path: map(m.path) })) }),
    ...(r.files && { files: r.files.map(map) }),
    ...(r.counts && { counts: Object.fromEntries(Object.entries(r.counts).map(([k, n]) => [map(k), n])) }),
  };
}
