/**
 * Slot 5 for an agent level: summarisation; what is summarised away goes to long-term memory
 * first (top level only), then to the user's `beforeSummarize`. A summary is a model call like
 * any other: it runs in a slot of the run's concurrency limit.
 * @module
 */
import { summarizationMiddleware } from "../../middleware/summarization.js";
import type { Middleware } from "../../middleware/types.js";
import type { ChatModel } from "../../models/types.js";
import type { ConcurrencyLimit } from "../run-limits.js";
import { type RunScope, memoryIdentity } from "../runtime.js";

/** `model` with each `invoke` (what summarisation calls) in a slot of `limit`. */
function invokingWithin(model: ChatModel, limit: ConcurrencyLimit): ChatModel {
  return {
    id: model.id,
    invoke: (request) => limit.run(() => model.invoke(request)),
    stream: (request) => model.stream(request),
    ...(model.maxInputTokens && { maxInputTokens: () => model.maxInputTokens?.() }),
  };
}

export function summarizationSlot(scope: RunScope): Middleware {
  const { level } = scope;
  const o = level.options;
  const longTerm = level.captureLongTerm ? level.services.longTerm : undefined;
  return summarizationMiddleware({
    model: invokingWithin(level.model, scope.run.limit),
    backend: scope.backend,
    maxInputTokens: o.maxInputTokens,
    threshold: o.summarizationThreshold,
    keepMessages: o.summarizationKeepMessages,
    beforeSummarize: async (dropped, ctx) => {
      // Without delay: these messages are about to leave the thread.
      longTerm?.capture(dropped, memoryIdentity(level.services, ctx), { immediate: true });
      await o.beforeSummarize?.(dropped, ctx);
    },
  });
}
