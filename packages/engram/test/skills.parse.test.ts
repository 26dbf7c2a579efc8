/** `parseSkillFile` and the frontmatter splitter: Agent Skills validation, no I/O. */
import { describe, expect, it } from "vitest";
import { parseSkillFile, splitFrontmatter } from "../src/skills/index.js";

const md = (frontmatter: string, body = "# Body\n\nDo the thing.\n") => `---\n${frontmatter}\n---\n${body}`;

function error(text: string, dir = "pdf"): string {
  const r = parseSkillFile(text, dir);
  if (r.skill) throw new Error(`expected an error, got ${JSON.stringify(r.skill)}`);
  return r.error;
}

describe("splitFrontmatter", () => {
  it("splits at the first closing --- line, tolerating a BOM, CRLF and trailing spaces", () => {
    expect(splitFrontmatter("---\na: 1\n---\nbody\n---\nmore")).toEqual({ yaml: "a: 1\n", body: "body\n---\nmore" });
    expect(splitFrontmatter("\uFEFF--- \r\na: 1\r\n---  \r\nbody")).toEqual({ yaml: "a: 1\r\n", body: "body" });
    expect(splitFrontmatter("---\n---\n")).toEqual({ yaml: "", body: "" });
  });

  it("requires a leading --- line and a closing one", () => {
    expect(splitFrontmatter("# Title\n---\na: 1\n---\n")).toEqual({ error: expect.stringContaining("no YAML frontmatter") });
    expect(splitFrontmatter("\n---\na: 1\n---\n")).toEqual({ error: expect.stringContaining("no YAML frontmatter") });
    expect(splitFrontmatter("---\na: 1\n--- x\n")).toEqual({ error: expect.stringContaining("not closed") });
  });
});

describe("parseSkillFile", () => {
  it("reads every specified field, trimming and keeping scalars as strings", () => {
    const r = parseSkillFile(
      md(
        [
          "name: pdf",
          "description: >-",
          "  Extracts text and tables from PDF files.",
          "  Use when the user mentions PDFs.",
          "license: 2.0",
          "compatibility: needs python3 ",
          "metadata:",
          "  author: someone",
          "  version: 1.0",
          "allowed-tools: Bash(git:*)  read_file",
          "unknown-key: ignored",
        ].join("\n"),
      ),
      "pdf",
      "/skills/pdf/SKILL.md",
    );
    expect(r.error).toBeUndefined();
    expect(r.skill).toEqual({
      name: "pdf",
      description: "Extracts text and tables from PDF files. Use when the user mentions PDFs.",
      path: "/skills/pdf/SKILL.md",
      license: "2.0",
      compatibility: "needs python3",
      metadata: { author: "someone", version: "1.0" },
      allowedTools: ["Bash(git:*)", "read_file"],
    });
    expect(r.body).toBe("# Body\n\nDo the thing.\n");
  });

  it("accepts allowed-tools as a YAML list, and leaves empty optional fields out", () => {
    const r = parseSkillFile(md("name: a-1\ndescription: d\nallowed-tools: [ls, grep]\nlicense:\ncompatibility: ''"), "a-1");
    expect(r.skill).toEqual({ name: "a-1", description: "d", path: "a-1/SKILL.md", allowedTools: ["ls", "grep"] });
  });

  it("keeps a __proto__ metadata key as data", () => {
    const r = parseSkillFile(md("name: a\ndescription: d\nmetadata:\n  __proto__: x"), "a");
    expect(Object.getPrototypeOf(r.skill?.metadata)).toBe(Object.prototype);
    expect(Object.keys(r.skill?.metadata ?? {})).toEqual(["__proto__"]);
  });

  it("requires name and description", () => {
    expect(error(md("description: d"))).toBe("'name' is required");
    expect(error(md("name: pdf"))).toBe("'description' is required");
    expect(error(md("name: pdf\ndescription:   "))).toBe("'description' is required");
    expect(error(md("name: [pdf]\ndescription: d"))).toBe("'name' must be a string");
    expect(error(md("name: pdf\ndescription: {a: b}"))).toBe("'description' must be a string");
  });

  it("enforces the name rules and the directory match", () => {
    for (const bad of ["PDF", "pdf_x", "-pdf", "pdf-", "pd--f", "pdf x", "pdé"]) {
      expect(error(md(`name: "${bad}"\ndescription: d`), bad)).toContain("may only contain lowercase letters, digits and hyphens");
    }
    expect(error(md(`name: ${"a".repeat(65)}\ndescription: d`), "a".repeat(65))).toContain("at most 64 characters (it has 65)");
    expect(parseSkillFile(md(`name: ${"a".repeat(64)}\ndescription: d`), "a".repeat(64)).skill?.name).toHaveLength(64);
    expect(parseSkillFile(md("name: 123\ndescription: d"), "123").skill?.name).toBe("123");
    expect(error(md("name: pdf\ndescription: d"), "docx")).toBe(`'name' "pdf" differs from its directory name "docx"`);
  });

  it("limits description to 1024 and compatibility to 500 characters (code points)", () => {
    expect(parseSkillFile(md(`name: pdf\ndescription: ${"é".repeat(1024)}`), "pdf").skill).toBeDefined();
    expect(error(md(`name: pdf\ndescription: ${"d".repeat(1025)}`))).toBe("'description' must be at most 1024 characters (it has 1025)");
    expect(parseSkillFile(md(`name: pdf\ndescription: d\ncompatibility: ${"c".repeat(500)}`), "pdf").skill).toBeDefined();
    expect(error(md(`name: pdf\ndescription: d\ncompatibility: ${"c".repeat(501)}`))).toBe(
      "'compatibility' must be at most 500 characters (it has 501)",
    );
  });

  it("rejects malformed YAML, a non-mapping frontmatter and missing frontmatter", () => {
    expect(error(md("name: pdf\ndescription: [unclosed"))).toMatch(/^invalid YAML in the frontmatter: /);
    expect(error(md("name: pdf\nname: pdf\ndescription: d"))).toMatch(/^invalid YAML in the frontmatter: .*unique/);
    expect(error(md("- name: pdf"))).toBe("the frontmatter must be a YAML mapping of fields");
    expect(error(md(""))).toBe("the frontmatter must be a YAML mapping of fields");
    expect(error("# PDF\n\nname: pdf\n")).toContain("no YAML frontmatter");
    expect(error("---\nname: pdf\ndescription: d\n")).toContain("not closed");
  });

  it("rejects badly typed optional fields", () => {
    expect(error(md("name: pdf\ndescription: d\nmetadata: text"))).toBe("'metadata' must be a mapping of strings to strings");
    expect(error(md("name: pdf\ndescription: d\nmetadata:\n  a: [1]"))).toBe("'metadata.a' must be a string");
    expect(error(md("name: pdf\ndescription: d\nallowed-tools: {a: b}"))).toContain("'allowed-tools' must be");
    expect(error(md("name: pdf\ndescription: d\nallowed-tools: [[a]]"))).toContain("'allowed-tools' must be");
    expect(error(md("name: pdf\ndescription: d\nlicense: [MIT]"))).toBe("'license' must be a string");
  });
});
