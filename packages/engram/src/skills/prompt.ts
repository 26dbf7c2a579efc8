/**
 * The skills section of the system prompt: an index (name, description, path) of the available
 * skills — progressive disclosure, the bodies stay in the files until the model reads them. The
 * section is written by the Rust core (`engram_core::prompt::skills_section`), with the same
 * escaping as every other prompt section.
 * @module
 */
import { requireString } from "../core/binding.js";
import { loadedCore } from "../core/loader.js";
import type { Core } from "../core/types.js";
import type { Skill } from "./parse.js";

/** Escapes text for the `<skills>` block so it cannot open or close tags; runs of whitespace
 * (newlines included) become one space, so each field stays on its line. Synchronous: uses the
 * loaded core (see {@link escapeTags}). */
export function escapeSkillText(text: string): string {
  return loadedCore().escapeField(requireString(text, "escapeSkillText: text"));
}

/**
 * The skills section appended to the system prompt, or `""` when there are no skills.
 * @param skills - in the order they are listed
 * @param core - the core that writes it. Default: the loaded core.
 */
export function formatSkillsSection(skills: readonly Skill[], core: Core = loadedCore()): string {
  return skills.length === 0 ? "" : core.skillsSection(skills);
}
