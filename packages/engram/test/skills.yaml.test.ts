/** SKILL.md frontmatter on runtimes whose bundle leaves the `yaml` package out (`#skills-yaml`
 * under the workerd/worker/browser conditions): skills are skipped with a warning that says
 * what to do, and work once the app hands over the parser. */
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { parse } from "yaml";
import { StateBackend } from "../src/index.js";

const SKILL = "---\nname: pdf\ndescription: Reads PDF files.\nlicense: 2.0\n---\n# PDF\n";

beforeEach(() => {
  vi.resetModules();
  vi.doMock("#skills-yaml", () => import("../src/skills/yaml.web.js"));
});

afterEach(() => {
  vi.doUnmock("#skills-yaml");
  // Files may share a worker's module registry: the next one must not import the mocked graph.
  vi.resetModules();
});

it("skips a skill with a warning naming setSkillsYamlParser, then loads it once the parser is given", async () => {
  const { SkillsLoader, parseSkillFile, setSkillsYamlParser } = await import("../src/skills/index.js");
  expect(parseSkillFile(SKILL, "pdf")).toEqual({ error: expect.stringContaining("setSkillsYamlParser(parse)") });

  const backend = new StateBackend();
  await backend.write("/skills/pdf/SKILL.md", SKILL);
  const warnings: string[] = [];
  const loader = new SkillsLoader({ backend, sources: ["/skills"] });
  expect(await loader.load((m) => warnings.push(m))).toEqual([]);
  expect(warnings).toEqual([expect.stringMatching(/^skill \/skills\/pdf\/SKILL\.md skipped: no YAML parser on this runtime/)]);

  setSkillsYamlParser(parse);
  // Failsafe schema as on Node: every scalar a string.
  expect(parseSkillFile(SKILL, "pdf").skill).toMatchObject({ name: "pdf", description: "Reads PDF files.", license: "2.0" });
  await backend.write("/skills/pdf/SKILL.md", `${SKILL}\nMore.\n`); // a new version is parsed again
  expect((await loader.load((m) => warnings.push(m))).map((s) => s.name)).toEqual(["pdf"]);
  expect(warnings.length).toBe(1);
});

it("ships the yaml parser on Node without any call", async () => {
  vi.doUnmock("#skills-yaml");
  vi.resetModules();
  const { parseSkillFile } = await import("../src/skills/index.js");
  expect(parseSkillFile(SKILL, "pdf").skill?.license).toBe("2.0");
});

it("names the Deno permission the yaml package needs when it is refused one", async () => {
  const { parseSkillFile, setSkillsYamlParser } = await import("../src/skills/index.js");
  // What Deno throws when `yaml` reads LOG_TOKENS without --allow-env.
  const refused = Object.assign(new Error('Requires env access to "LOG_TOKENS", run again with the --allow-env flag'), {
    name: "NotCapable",
  });
  setSkillsYamlParser(() => {
    throw refused;
  });
  expect(parseSkillFile(SKILL, "pdf")).toEqual({ error: expect.stringContaining("--allow-env=LOG_TOKENS,LOG_STREAM") });
});
