/**
 * Slot 3: the filesystem tools over the thread's backend, and eviction of other tools' large
 * results to `/large_tool_results/` with a head/tail preview.
 * @module
 */
import type { Middleware } from "./types.js";
import type { Backend } from "../backends/protocol.js";
import type { Core } from "../core/types.js";
import { evictLargeResult } from "../tools/eviction.js";
import { FILESYSTEM_TOOL_NAMES, createFilesystemTools } from "../tools/filesystem.js";

export function filesystemMiddleware(backend: Backend, core: Core, evictionThresholdTokens: number): Middleware {
  const own = new Set<string>(FILESYSTEM_TOOL_NAMES);
  return {
    name: "filesystem",
    tools: createFilesystemTools({ backend, core }),
    async wrapToolCall(call, next) {
      const result = await next(call);
      // Filesystem tools paginate instead; everything else is evicted when too large.
      if (own.has(call.name)) return result;
      const content = await evictLargeResult(result.content, {
        backend,
        core,
        toolCallId: call.id,
        thresholdChars: evictionThresholdTokens * 4,
      });
      return { ...result, content };
    },
  };
}
