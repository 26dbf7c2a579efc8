/** Slot 6: tool-call repair. @module */
import { patchToolCallsMiddleware } from "../../middleware/patch-tool-calls.js";
import type { Middleware } from "../../middleware/types.js";

export function patchToolCallsSlot(): Middleware {
  return patchToolCallsMiddleware();
}
