/** With slot 1, when `threadRecall` is on: the tool searching the user's earlier threads, and
 * with `inject` the block of their best snippets at a new user message. @module */
import { type RunRecall, pastThreadsMiddleware, recallInjectionMiddleware, runRecall } from "../../middleware/past-threads.js";
import type { Middleware } from "../../middleware/types.js";
import type { RunScope } from "../runtime.js";

/** The run's recall injection (see `runRecall`), when `threadRecall.inject` is on at this level:
 * one search per run, shared by the recalled block and the long-term memory block. */
export function recallOfRun(scope: RunScope): RunRecall | undefined {
  const recall = scope.level.options.threadRecall;
  // The top agent only: a subagent runs under an id of its own (`<thread>:task`), so the
  // conversation it serves would not be left out of its results.
  if (!recall || scope.level.depth > 0 || recall.inject <= 0) return undefined;
  return runRecall({
    source: scope.level.services.checkpointer,
    core: scope.core,
    snippets: recall.inject,
    snippetChars: recall.snippetChars,
    maxTokens: recall.injectTokens,
  });
}

export function pastThreadsSlot(scope: RunScope, injected: RunRecall | undefined): Middleware[] | undefined {
  const recall = scope.level.options.threadRecall;
  if (!recall || scope.level.depth > 0) return undefined;
  const source = scope.level.services.checkpointer;
  const out: Middleware[] = [];
  if (recall.tool)
    out.push(pastThreadsMiddleware({ source, core: scope.core, maxResults: recall.maxResults, snippetChars: recall.snippetChars }));
  if (injected) out.push(recallInjectionMiddleware(injected));
  return out;
}
