/**
 * Slot 1 for an agent level: AGENTS.md memory re-read before every model call, plus the
 * long-term facts block and, at the top level, capture after the run. With the run's recall
 * injection, this slot places the recalled `<past_threads>` block too, right after the facts:
 * the two are chosen together (a fact a recalled message updates is left out of the facts, a
 * recalled message a shown fact already says is left out of the recalled lines).
 * @module
 */
import { memoryMiddleware } from "../../middleware/memory.js";
import type { RunRecall } from "../../middleware/past-threads.js";
import type { HookContext, Middleware } from "../../middleware/types.js";
import type { LongTermMemory } from "../../memory/longterm/longterm.js";
import { notRestatedBy } from "../../memory/longterm/restated.js";
import type { MemoryInjection } from "../../memory/longterm/inject.js";
import { type RecallBlock, fitRecallBlock } from "../../memory/recall/inject.js";
import { type RunScope, memoryIdentity } from "../runtime.js";

/** Whether this level's memory slot places long-term facts (and so the run's recalled block). */
export function injectsLongTerm(scope: RunScope): boolean {
  const { level } = scope;
  return level.options.enableMemory && level.services.longTerm !== undefined && level.injectLongTerm;
}

/** `recall`: the run's recall injection, placed with the facts (see the module). */
export function memorySlot(scope: RunScope, recall?: RunRecall): Middleware | undefined {
  const { level } = scope;
  if (!level.options.enableMemory) return undefined;
  const { services } = level;
  const longTerm = services.longTerm;
  const capture = longTerm && level.captureLongTerm;
  const placed: PlacedBlocks = {};
  return memoryMiddleware({
    backend: scope.backend,
    core: scope.core,
    sources: level.options.memorySources,
    // Subagents keep no cache across runs: each spawn is a fresh context.
    cache: level.depth === 0 ? services.memoryCache(scope.threadId) : new Map(),
    ...(longTerm && injectsLongTerm(scope) && { extra: (ctx, request) => factsAndRecall(scope, longTerm, recall, placed, ctx, request) }),
    ...(capture && {
      afterRun: (ctx) => {
        longTerm.capture(ctx.state.messages, memoryIdentity(services, ctx));
      },
    }),
  });
}

/** The last blocks placed in this run: a later model call with the same facts block and recalled
 * block (the usual case: both are per run unless memory changed) reuses the text. */
interface PlacedBlocks {
  last?: { facts: MemoryInjection; recalled: RecallBlock; text: string };
}

/** The `<memory>` block, then the run's `<past_threads>` block less the lines a shown fact says. */
async function factsAndRecall(
  scope: RunScope,
  longTerm: LongTermMemory,
  recall: RunRecall | undefined,
  placed: PlacedBlocks,
  ctx: HookContext,
  request: string,
): Promise<string> {
  const who = memoryIdentity(scope.level.services, ctx);
  const recalled = recall ? await recall(ctx) : undefined;
  const lines = recalled?.shown.map((h) => ({ text: h.snippet, at: h.savedAt })) ?? [];
  const facts = await longTerm.injection(who.userId, who.agentName, request, lines);
  if (!recalled || recalled.text === "") return facts.block;
  if (placed.last?.facts === facts && placed.last.recalled === recalled) return placed.last.text;
  const kept = notRestatedBy(recalled.shown, facts.shownFacts(), (h) => h.snippet);
  // What is left was fitted within the budget already.
  const shown = kept.length === recalled.shown.length ? recalled.text : fitRecallBlock(kept, Number.POSITIVE_INFINITY).text;
  const text = [facts.block, shown].filter((s) => s !== "").join("\n\n");
  placed.last = { facts, recalled, text };
  return text;
}
