/**
 * `#skills-yaml` on Cloudflare Workers and in browsers (the `workerd`, `worker` and `browser`
 * conditions): no YAML parser, so a bundle that uses no skills carries none (the `yaml` package
 * is a third of an agent's Worker bundle, and a bundler cannot leave out a lazily imported module
 * without code splitting, which wrangler does not do). An app with skills passes `parse` from
 * `yaml` to {@link setSkillsYamlParser} once.
 * @module
 */

/** The `parse` of the `yaml` package, as {@link parseSkillFile} calls it. */
export type YamlParse = (text: string, options: { schema: "failsafe" }) => unknown;

/** The parser the library ships with on this runtime: none. */
export const bundledYaml: YamlParse | undefined = undefined;
