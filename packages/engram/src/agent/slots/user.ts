/** Slot 7: the user's middleware in order, then human review when `interruptOn` names tools. @module */
import { hitlMiddleware } from "../../middleware/hitl.js";
import type { Middleware } from "../../middleware/types.js";
import type { RunScope } from "../runtime.js";

export function userSlot(scope: RunScope): Middleware[] {
  const o = scope.level.options;
  const review = Object.values(o.interruptOn).some((cfg) => cfg !== false);
  return [...o.middleware, ...(review ? [hitlMiddleware(o.interruptOn)] : [])];
}
