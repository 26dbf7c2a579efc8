/**
 * Escaping for text placed inside the system prompt's tagged sections, one rule set for every
 * section (memory, skills, long-term facts, the memory-update prompt).
 * @module
 */

/** Escapes `&`, `<` and `>`: for short fields (facts, skill names, descriptions, paths). */
export function escapeTags(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** Every tag Engram uses to delimit a section of the system prompt. */
export const PROMPT_SECTION_TAGS = ["agent_memory", "memory_guidelines", "memory", "skills", "skill"] as const;

const SECTION_TAG = new RegExp(`<(/?)(${PROMPT_SECTION_TAGS.join("|")})\\b`, "gi");

/**
 * Neutralises only the section tags, for long Markdown (AGENTS.md) where `<` is common and must
 * stay readable: nothing inside can open or close a section of the prompt.
 */
export function neutralizeSectionTags(text: string): string {
  return text.replace(SECTION_TAG, "&lt;$1$2");
}
