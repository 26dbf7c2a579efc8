/**
 * Escaping for text placed inside the system prompt's tagged sections, one rule set for every
 * section (memory, skills, long-term facts, the memory-update prompt). The rules live in the
 * Rust core (`engram_core::prompt`), so native and edge builds escape exactly the same way; this
 * module is their synchronous TypeScript face.
 *
 * Section tags are found on a normalised view of the text, so near misses cannot open or close
 * a section either: Unicode compatibility forms (NFKC: full-width `＜／ｍｅｍｏｒｙ＞`,
 * mathematical letters), invisible format characters (zero-width space and joiners, soft
 * hyphen, bidi controls, variation selectors), any letter case, whitespace inside the tag
 * (`</ memory >`, `</MEMORY\t>`) and HTML character references for `<`, `/` and `>`
 * (`&#60;`, `&#x3C;`, `&LT`, `&sol;`). The opener of every such tag is replaced by the one
 * canonical escape `&lt;`.
 *
 * Both functions are synchronous: they use the core {@link loadCore} loaded (in Node they load
 * the native addon themselves when needed). They throw {@link EngramError} `core_unavailable`
 * on edge runtimes before `loadCore()` has resolved, and `invalid_argument` when `text` is not a
 * string. A lone surrogate (not well-formed UTF-16) comes back as U+FFFD.
 * @module
 */
import { requireString } from "../core/binding.js";
import { loadedCore } from "../core/loader.js";

/** Every tag Engram uses to delimit a section of the system prompt (the core's
 * `engram_core::prompt::SECTION_TAGS`). */
export const PROMPT_SECTION_TAGS = ["agent_memory", "memory_guidelines", "memory", "skills", "skill"] as const;

/**
 * Neutralises only the section tags, for long Markdown (AGENTS.md) where `<` is common and must
 * stay readable: nothing inside can open or close a section of the prompt, however the tag is
 * disguised (see the module notes). Idempotent.
 */
export function neutralizeSectionTags(text: string): string {
  return loadedCore().neutralizeSectionTags(requireString(text, "neutralizeSectionTags: text"));
}

/** Escapes `&`, `<` and `>` — and disguised section-tag openers (full-width, entity-encoded
 * after escaping is impossible, …) — for short fields (facts, skill names, descriptions, paths). */
export function escapeTags(text: string): string {
  return loadedCore().escapeTags(requireString(text, "escapeTags: text"));
}
