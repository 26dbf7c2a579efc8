/**
 * The middleware stack of one agent level, one module per slot, in DESIGN §2 order: memory,
 * skills, filesystem, subagents, summarization, tool-call repair, then user middleware and
 * human review — with tracing, when set, around all of them.
 * @module
 */
import type { Middleware } from "../middleware/types.js";
import type { RunScope } from "./runtime.js";
import { filesystemSlot } from "./slots/filesystem.js";
import { injectsLongTerm, memorySlot } from "./slots/memory.js";
import { pastThreadsSlot, recallOfRun } from "./slots/past-threads.js";
import { patchToolCallsSlot } from "./slots/patch-tool-calls.js";
import { skillsSlot } from "./slots/skills.js";
import { type RunChild, subagentsSlot } from "./slots/subagents.js";
import { summarizationSlot } from "./slots/summarization.js";
import { userSlot } from "./slots/user.js";

export function buildStack(scope: RunScope, runChild: RunChild): Middleware[] {
  const tracing = scope.level.options.tracing;
  // One recall per run: its block, and the long-term facts that its messages update left out.
  // With long-term facts, the memory slot places the block beside them (see slots/memory.ts).
  const recall = recallOfRun(scope);
  const placedWithFacts = injectsLongTerm(scope);
  const slots: (Middleware | Middleware[] | undefined)[] = [
    // Outermost: the chat and execute_tool spans time the whole stack.
    tracing?.middleware(scope.level.model.id),
    memorySlot(scope, recall),
    pastThreadsSlot(scope, placedWithFacts ? undefined : recall),
    skillsSlot(scope),
    filesystemSlot(scope),
    subagentsSlot(scope, runChild),
    summarizationSlot(scope),
    patchToolCallsSlot(),
    userSlot(scope),
  ];
  return slots.flat().filter((m): m is Middleware => m !== undefined);
}
