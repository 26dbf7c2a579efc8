/** With slot 1, when `threadRecall` is on: the tool searching the user's earlier threads. @module */
import { pastThreadsMiddleware } from "../../middleware/past-threads.js";
import type { Middleware } from "../../middleware/types.js";
import type { RunScope } from "../runtime.js";

export function pastThreadsSlot(scope: RunScope): Middleware | undefined {
  const recall = scope.level.options.threadRecall;
  // The top agent only: a subagent runs under an id of its own (`<thread>:task`), so the
  // conversation it serves would not be left out of its results.
  if (!recall || scope.level.depth > 0) return undefined;
  return pastThreadsMiddleware({ source: scope.level.services.checkpointer, core: scope.core, ...recall });
}
