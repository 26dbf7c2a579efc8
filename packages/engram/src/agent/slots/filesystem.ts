/** Slot 3 for an agent level: filesystem tools and eviction of large results. @module */
import { filesystemMiddleware } from "../../middleware/filesystem.js";
import type { Middleware } from "../../middleware/types.js";
import type { RunScope } from "../runtime.js";

export function filesystemSlot(scope: RunScope): Middleware | undefined {
  const o = scope.level.options;
  return o.enableFilesystem ? filesystemMiddleware(scope.backend, scope.core, o.evictionThreshold) : undefined;
}
