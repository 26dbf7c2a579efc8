/**
 * `engram skills list`: the skills the agent sees — the user's (`$ENGRAM_HOME/skills/<name>/SKILL.md`)
 * and the project's (`<root>/skills/<name>/SKILL.md`; it wins a name clash).
 * @module
 */
import { SkillsLoader } from "engram";
import type { Context } from "../context.js";
import { EXIT } from "../exit.js";
import { inert, jsonText } from "../render.js";
import { SKILLS_SOURCES } from "../runtime.js";
import { withStorage } from "./open.js";

/** Lists the skills, one per line (or one JSON object per line with `--json`). */
export async function skillsList(ctx: Context, options: { json?: boolean }): Promise<number> {
  return withStorage(ctx, async (storage) => {
    const loader = new SkillsLoader({ backend: storage.backend("engram-skills-list"), sources: SKILLS_SOURCES });
    const skills = await loader.load((m) => ctx.stderr.write(`warning: ${inert(m)}\n`));
    const c = ctx.colors(ctx.stdout);
    if (options.json) for (const s of skills) ctx.stdout.write(`${jsonText(s)}\n`);
    else if (skills.length === 0) {
      ctx.stdout.write(c.dim(`no skills (add <name>/SKILL.md under ${inert(ctx.loaded.home)}/skills or <root>/skills)\n`));
    } else for (const s of skills) ctx.stdout.write(`${c.bold(inert(s.name))}  ${inert(s.description)}  ${c.dim(inert(s.path))}\n`);
    return EXIT.ok;
  });
}
