/** Token usage arithmetic, shared by the loop and the subagent slot. @module */
import type { Usage } from "../models/types.js";

/** Adds `add` into `total` (cached input tokens only when reported). */
export function addUsage(total: Usage, add: Usage | undefined): void {
  if (!add) return;
  total.inputTokens = (total.inputTokens ?? 0) + (add.inputTokens ?? 0);
  total.outputTokens = (total.outputTokens ?? 0) + (add.outputTokens ?? 0);
  if (add.cachedInputTokens !== undefined) total.cachedInputTokens = (total.cachedInputTokens ?? 0) + add.cachedInputTokens;
}
