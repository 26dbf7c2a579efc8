/**
 * Slot 2: Agent Skills with progressive disclosure. Before every model call the skill sources
 * are re-checked (an `ls` per source, a `stat` per `SKILL.md`; only changed files are re-read;
 * nothing at all when the backend can tell none of its files changed — a plain `StateBackend`)
 * and an index of the skills — name, description, path — is put first in the request's
 * `systemContext` (the volatile part after the static system prompt), before the memory. The model reads a skill's
 * body with `read_file` when it needs it.
 * @module
 */
import type { Middleware } from "./types.js";
import type { Backend } from "../backends/protocol.js";
import type { Core } from "../core/types.js";
import { SkillsLoader } from "../skills/loader.js";
import type { Skill } from "../skills/parse.js";
import { formatSkillsSection } from "../skills/prompt.js";
import { withContext } from "./memory.js";

export { type Skill, parseSkillFile, type ParseSkillResult } from "../skills/parse.js";

/** Options of {@link skillsMiddleware}. */
export interface SkillsMiddlewareOptions {
  /** The backend the skills live on (the agent's backend). */
  backend: Backend;
  /**
   * Directories holding `<skill-name>/SKILL.md`, in priority order: a later source wins a name
   * clash. A missing directory is empty. (The agent's default is `["/skills"]`.)
   */
  sources: string[];
  /** The core that writes the index. Default: the loaded core (`loadedCore()`). */
  core?: Core;
}

/**
 * The skills middleware (name `"skills"`). Each instance has its own cache; create one per
 * thread or run. Invalid skills are skipped with a warning (`ctx.warn`) naming the file and the
 * reason, once per file version; with no valid skills the prompt is left unchanged.
 */
export function skillsMiddleware(options: SkillsMiddlewareOptions): Middleware {
  const loader = new SkillsLoader({ backend: options.backend, sources: [...options.sources] });
  /** The last index and the skills it lists (the loader hands out the same object for an
   * unchanged skill), so an unchanged set costs no core call. */
  let last: { skills: readonly Skill[]; section: string } | undefined;
  return {
    name: "skills",
    async beforeModel(request, ctx) {
      let section: string;
      try {
        const skills = await loader.load((message) => ctx.warn(message));
        if (!last || last.skills.length !== skills.length || last.skills.some((s, i) => s !== skills[i])) {
          last = { skills, section: formatSkillsSection(skills, options.core) };
        }
        section = last.section;
      } catch (e) {
        ctx.warn(`skills not loaded: ${e instanceof Error ? e.message : String(e)}`);
        return;
      }
      if (section === "") return;
      // First in the system context: skills change less often than the memory after them, so
      // a memory change leaves the skills index in a provider's cached prefix.
      const context = request.systemContext ?? "";
      return withContext(request, context === "" ? section : `${section}\n\n${context}`);
    },
  };
}
