/**
 * The skills section of the system prompt: an index (name, description, path) of the available
 * skills — progressive disclosure, the bodies stay in the files until the model reads them.
 * @module
 */
import { escapeTags } from "../prompt/escape.js";
import type { Skill } from "./parse.js";

/** Escapes text for the `<skills>` block so it cannot open or close tags; runs of whitespace
 * (newlines included) become one space, so each field stays on its line. */
export function escapeSkillText(text: string): string {
  return escapeTags(text).replace(/\s+/g, " ").trim();
}

/**
 * The skills section appended to the system prompt, or `""` when there are no skills.
 * @param skills - in the order they are listed
 */
export function formatSkillsSection(skills: readonly Skill[]): string {
  if (skills.length === 0) return "";
  const entries = skills.map(
    (s) =>
      `<skill>\n<name>${escapeSkillText(s.name)}</name>\n<description>${escapeSkillText(s.description)}</description>\n` +
      `<path>${escapeSkillText(s.path)}</path>\n</skill>`,
  );
  return [
    "## Skills",
    "",
    "Skills are folders of instructions, scripts and resources for specialised tasks; only their names and descriptions are listed below. " +
      "Before using a skill, call `read_file` on its SKILL.md and read it to the end (page with `offset`/`limit` if it is long), then follow it; paths it mentions are relative to its folder.",
    "",
    "<skills>",
    ...entries,
    "</skills>",
  ].join("\n");
}
