/**
 * Parsing and validation of a `SKILL.md` against the Agent Skills specification: YAML
 * frontmatter with `name` and `description` (required), `license`, `compatibility`, `metadata`
 * and `allowed-tools` (optional), then a Markdown body.
 * @module
 */
import { type YamlParse, bundledYaml } from "#skills-yaml";
import { splitFrontmatter } from "./frontmatter.js";

export type { YamlParse } from "#skills-yaml";

let yamlParser: YamlParse | undefined = bundledYaml;

/**
 * Gives skills their YAML parser on Cloudflare Workers and in browsers, where the library leaves
 * the `yaml` package out of the bundle until an app uses skills (Node, Deno and Bun load it
 * themselves; calling this there changes nothing but the parser). Call it once, before agents
 * run:
 *
 * ```ts
 * import { parse } from "yaml";
 * import { setSkillsYamlParser } from "engram";
 * setSkillsYamlParser(parse);
 * ```
 *
 * Without it, every `SKILL.md` found there is skipped with a warning that says so.
 * @param parse - the `parse` function of the `yaml` package (2.x)
 */
export function setSkillsYamlParser(parse: YamlParse): void {
  yamlParser = parse;
}

/** Longest skill name, in characters. */
export const MAX_SKILL_NAME_LENGTH = 64;
/** Longest `description`, in characters. */
export const MAX_SKILL_DESCRIPTION_LENGTH = 1024;
/** Longest `compatibility`, in characters. */
export const MAX_SKILL_COMPATIBILITY_LENGTH = 500;

/** Lowercase ASCII letters and digits in hyphen-separated runs: no leading, trailing or double hyphen. */
const NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/** A skill's metadata, from the frontmatter of its `SKILL.md` (the body is not kept). */
export interface Skill {
  /** 1–64 lowercase letters, digits and single inner hyphens; equal to the skill's directory name. */
  name: string;
  /** What the skill does and when to use it; 1–1024 characters, trimmed. */
  description: string;
  /** Path of the `SKILL.md` the skill came from. */
  path: string;
  license?: string;
  /** Environment requirements; at most 500 characters. */
  compatibility?: string;
  /** Free-form string → string map. */
  metadata?: Record<string, string>;
  /** Tools the skill is pre-approved to use, from the space-separated `allowed-tools` (or a YAML list). */
  allowedTools?: string[];
}

/** What {@link parseSkillFile} returns: the skill and its Markdown body, or why the file is invalid. */
export type ParseSkillResult = { skill: Skill; body: string; error?: undefined } | { error: string; skill?: undefined; body?: undefined };

/** Length in Unicode code points, which is what the specification's limits count. */
function length(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** An optional string field: absent or empty → `undefined`. */
function optionalString(fm: Record<string, unknown>, key: string): { value?: string; error?: string } {
  const v = fm[key];
  if (v === undefined || v === null) return {};
  if (typeof v !== "string") return { error: `'${key}' must be a string` };
  const t = v.trim();
  return t === "" ? {} : { value: t };
}

/**
 * Parses and validates the text of a `SKILL.md`. Pure: no I/O. All YAML scalars are read as
 * strings (the YAML failsafe schema), so `license: 2.0` is `"2.0"` and `name: 123` is `"123"`;
 * keys outside the specification are ignored.
 * @param text - the whole file
 * @param dirName - name of the directory holding the file; `name` must equal it
 * @param path - recorded as {@link Skill.path}. Default: `<dirName>/SKILL.md`
 * @returns `{ skill, body }`, or `{ error }` with a one-line reason (malformed or missing
 *   frontmatter, a missing or invalid field, a name that differs from `dirName`)
 */
export function parseSkillFile(text: string, dirName: string, path = `${dirName}/SKILL.md`): ParseSkillResult {
  const split = splitFrontmatter(text);
  if ("error" in split) return { error: split.error };
  if (yamlParser === undefined) {
    return {
      error:
        'no YAML parser on this runtime: call setSkillsYamlParser(parse) with parse from the "yaml" package (Workers and browser bundles leave it out until skills are used)',
    };
  }
  let fm: unknown;
  try {
    fm = yamlParser(split.yaml, { schema: "failsafe" });
  } catch (e) {
    // Deno refuses the `yaml` package's reads of LOG_TOKENS / LOG_STREAM without --allow-env.
    if (e instanceof Error && (e.name === "NotCapable" || e.name === "PermissionDenied")) {
      return {
        error: `the yaml package was refused a permission (${e.message.split("\n")[0]}): in Deno, skills need --allow-env=LOG_TOKENS,LOG_STREAM (the yaml package reads them)`,
      };
    }
    const reason = (e instanceof Error ? e.message : String(e)).split("\n")[0];
    return { error: `invalid YAML in the frontmatter: ${reason}` };
  }
  if (!isRecord(fm)) return { error: "the frontmatter must be a YAML mapping of fields" };

  const name = fm.name;
  if (name === undefined || name === null || name === "") return { error: "'name' is required" };
  if (typeof name !== "string") return { error: "'name' must be a string" };
  if (length(name) > MAX_SKILL_NAME_LENGTH) {
    return { error: `'name' must be at most ${MAX_SKILL_NAME_LENGTH} characters (it has ${length(name)})` };
  }
  if (!NAME.test(name)) {
    return {
      error: `'name' ${JSON.stringify(name)} may only contain lowercase letters, digits and hyphens, and must not start or end with a hyphen or contain '--'`,
    };
  }
  if (name !== dirName) return { error: `'name' ${JSON.stringify(name)} differs from its directory name ${JSON.stringify(dirName)}` };

  const rawDescription = fm.description;
  if (rawDescription === undefined || rawDescription === null) return { error: "'description' is required" };
  if (typeof rawDescription !== "string") return { error: "'description' must be a string" };
  const description = rawDescription.trim();
  if (description === "") return { error: "'description' is required" };
  if (length(description) > MAX_SKILL_DESCRIPTION_LENGTH) {
    return { error: `'description' must be at most ${MAX_SKILL_DESCRIPTION_LENGTH} characters (it has ${length(description)})` };
  }

  const skill: Skill = { name, description, path };

  const license = optionalString(fm, "license");
  if (license.error) return { error: license.error };
  if (license.value !== undefined) skill.license = license.value;

  const compatibility = optionalString(fm, "compatibility");
  if (compatibility.error) return { error: compatibility.error };
  if (compatibility.value !== undefined) {
    if (length(compatibility.value) > MAX_SKILL_COMPATIBILITY_LENGTH) {
      return {
        error: `'compatibility' must be at most ${MAX_SKILL_COMPATIBILITY_LENGTH} characters (it has ${length(compatibility.value)})`,
      };
    }
    skill.compatibility = compatibility.value;
  }

  const metadata = fm.metadata;
  if (metadata !== undefined && metadata !== null && metadata !== "") {
    if (!isRecord(metadata)) return { error: "'metadata' must be a mapping of strings to strings" };
    const entries = Object.entries(metadata);
    for (const [k, v] of entries) if (typeof v !== "string") return { error: `'metadata.${k}' must be a string` };
    // fromEntries defines own properties, so a `__proto__` key stays data.
    skill.metadata = Object.fromEntries(entries) as Record<string, string>;
  }

  const tools = fm["allowed-tools"];
  if (tools !== undefined && tools !== null) {
    let list: string[];
    if (typeof tools === "string") list = tools.split(/\s+/);
    else if (Array.isArray(tools) && tools.every((t) => typeof t === "string")) list = tools.map((t) => t.trim());
    else return { error: "'allowed-tools' must be a space-separated string or a list of strings" };
    list = list.filter((t) => t !== "");
    if (list.length > 0) skill.allowedTools = list;
  }

  return { skill, body: split.body };
}
