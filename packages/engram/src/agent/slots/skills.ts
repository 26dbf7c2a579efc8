/** Slot 2 for an agent level: the skills index. @module */
import { skillsMiddleware } from "../../middleware/skills.js";
import type { Middleware } from "../../middleware/types.js";
import type { RunScope } from "../runtime.js";

export function skillsSlot(scope: RunScope): Middleware | undefined {
  const o = scope.level.options;
  return o.enableSkills ? skillsMiddleware({ backend: scope.backend, core: scope.core, sources: o.skillsSources }) : undefined;
}
