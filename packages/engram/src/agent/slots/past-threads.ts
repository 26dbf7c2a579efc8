/** With slot 1, when `threadRecall` is on: the tool searching the user's earlier threads, and
 * with `inject` the block of their best snippets at a new user message. @module */
import { pastThreadsMiddleware, recallInjectionMiddleware } from "../../middleware/past-threads.js";
import type { Middleware } from "../../middleware/types.js";
import type { RunScope } from "../runtime.js";

export function pastThreadsSlot(scope: RunScope): Middleware[] | undefined {
  const recall = scope.level.options.threadRecall;
  // The top agent only: a subagent runs under an id of its own (`<thread>:task`), so the
  // conversation it serves would not be left out of its results.
  if (!recall || scope.level.depth > 0) return undefined;
  const source = scope.level.services.checkpointer;
  const out: Middleware[] = [];
  if (recall.tool)
    out.push(pastThreadsMiddleware({ source, core: scope.core, maxResults: recall.maxResults, snippetChars: recall.snippetChars }));
  if (recall.inject > 0)
    out.push(
      recallInjectionMiddleware({
        source,
        core: scope.core,
        snippets: recall.inject,
        snippetChars: recall.snippetChars,
        maxTokens: recall.injectTokens,
      }),
    );
  return out;
}
