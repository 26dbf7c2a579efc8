/**
 * Slot 5 for an agent level: summarisation; what is summarised away goes to long-term memory
 * first (top level only), then to the user's `beforeSummarize`.
 * @module
 */
import { summarizationMiddleware } from "../../middleware/summarization.js";
import type { Middleware } from "../../middleware/types.js";
import { type RunScope, memoryIdentity } from "../runtime.js";

export function summarizationSlot(scope: RunScope): Middleware {
  const { level } = scope;
  const o = level.options;
  const longTerm = level.captureLongTerm ? level.services.longTerm : undefined;
  return summarizationMiddleware({
    model: level.model,
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
