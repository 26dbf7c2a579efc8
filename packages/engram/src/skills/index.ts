/**
 * Agent Skills: parsing `SKILL.md` files, loading them from backends and the prompt index.
 * @module
 */
export { type Frontmatter, splitFrontmatter } from "./frontmatter.js";
export {
  MAX_SKILL_COMPATIBILITY_LENGTH,
  MAX_SKILL_DESCRIPTION_LENGTH,
  MAX_SKILL_NAME_LENGTH,
  type ParseSkillResult,
  type Skill,
  type YamlParse,
  parseSkillFile,
  setSkillsYamlParser,
} from "./parse.js";
export { MAX_SKILL_FILE_BYTES, SkillsLoader, type SkillsLoaderOptions } from "./loader.js";
export { escapeSkillText, formatSkillsSection } from "./prompt.js";
