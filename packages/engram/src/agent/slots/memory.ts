/**
 * Slot 1 for an agent level: AGENTS.md memory re-read before every model call, plus the
 * long-term facts block and, at the top level, capture after the run.
 * @module
 */
import { memoryMiddleware } from "../../middleware/memory.js";
import type { RunRecall } from "../../middleware/past-threads.js";
import type { Middleware } from "../../middleware/types.js";
import { type RunScope, memoryIdentity } from "../runtime.js";

/** `recall`: the run's recall injection, whose shown messages leave out the facts they update. */
export function memorySlot(scope: RunScope, recall?: RunRecall): Middleware | undefined {
  const { level } = scope;
  if (!level.options.enableMemory) return undefined;
  const { services } = level;
  const longTerm = services.longTerm;
  const inject = longTerm && level.injectLongTerm;
  const capture = longTerm && level.captureLongTerm;
  return memoryMiddleware({
    backend: scope.backend,
    core: scope.core,
    sources: level.options.memorySources,
    // Subagents keep no cache across runs: each spawn is a fresh context.
    cache: level.depth === 0 ? services.memoryCache(scope.threadId) : new Map(),
    ...(inject && {
      extra: async (ctx, request) => {
        const who = memoryIdentity(services, ctx);
        const shown = recall ? (await recall(ctx)).shown : [];
        return longTerm.inject(
          who.userId,
          who.agentName,
          request,
          shown.map((h) => ({ text: h.snippet, at: h.savedAt })),
        );
      },
    }),
    ...(capture && {
      afterRun: (ctx) => {
        longTerm.capture(ctx.state.messages, memoryIdentity(services, ctx));
      },
    }),
  });
}
