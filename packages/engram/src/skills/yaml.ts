/**
 * `#skills-yaml` on Node, Deno, Bun and any runtime without an edge condition: the `yaml`
 * package, loaded with the library, parses `SKILL.md` frontmatter.
 * @module
 */
import { parse } from "yaml";

/** The `parse` of the `yaml` package, as {@link parseSkillFile} calls it. */
export type YamlParse = (text: string, options: { schema: "failsafe" }) => unknown;

/** The parser the library ships with on this runtime. */
export const bundledYaml: YamlParse | undefined = parse;
