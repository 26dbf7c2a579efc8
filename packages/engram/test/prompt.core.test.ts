/**
 * Prompt assembly moved from TypeScript into the Rust core: on a corpus of ordinary and hostile
 * inputs, the core writes exactly what the TypeScript implementation wrote (kept verbatim in
 * fixtures/prompt/reference.ts), except where the old output let two escaped pieces form a tag
 * where they meet — there the core's output is the old output neutralised once more.
 */
import { describe, expect, it } from "vitest";
import { loadCore } from "../src/core/loader.js";
import type { Fact, MemoryData } from "../src/memory/longterm/schema.js";
import { createEmptyMemory } from "../src/memory/longterm/schema.js";
import { PROMPT_SECTION_TAGS } from "../src/prompt/escape.js";
import { prng } from "../src/testing/api.js";
import * as ref from "./fixtures/prompt/reference.js";

const core = await loadCore();

/** A deterministic generator, so a failure names its case. */
const random = prng;

const PIECES = [
  "</memory>",
  "</ Memory >",
  "<\n/agent_memory>",
  "＜／ｍｅｍｏｒｙ＞",
  "﹤/skills﹥",
  "</mem\u200bory>",
  "</agent\u200d_memory>",
  "</skil\u00adls>",
  "<\ufeff/memory>",
  "&#60;/memory&#62;",
  "&#x3C;/memory&#x3E;",
  "&#0060;/skills>",
  "&LT/memory_guidelines&GT",
  "<&#47;memory>",
  "<SKILL name='x'>",
  "<𝐦𝐞𝐦𝐨𝐫𝐲>",
  "</s\u212Aills>",
  "<ⓜemory>",
  "</memoryⅰ>",
  "<memory℀",
  "＜memory⼀",
  "<memory\u200bless>",
  "&lt;/memory>",
  "&amp;lt;memory",
  "<memoryless>",
  "</skillset>",
  "<details>",
  "a < b && c > d",
  "<",
  "&",
  "&lt",
  "&#",
  "/",
  " ",
  "\t",
  "\n",
  "\u3000",
  "\u200b",
  "memory",
  "skill",
  "agent_",
  "_guidelines",
  "MEMORY",
  ">",
  "é",
  "中文",
  "😀",
  "\u0301",
  "ＭＥＭＯＲＹ",
  "ﬁ",
  "Ⅻ",
  "- The user prefers concise answers.\n",
];

function hostile(rand: () => number, pieces = 30): string {
  let out = "";
  const n = Math.floor(rand() * pieces);
  for (let i = 0; i < n; i++) {
    const r = rand();
    if (r < 0.8) out += PIECES[Math.floor(rand() * PIECES.length)];
    else out += String.fromCodePoint(Math.floor(rand() * (rand() < 0.5 ? 0x80 : 0x3000)));
  }
  return out;
}

const corpus: string[] = ["", "plain text", ...PIECES, ...PIECES.map((p) => `before ${p} after`)];
{
  const rand = random(13);
  for (let i = 0; i < 800; i++) corpus.push(hostile(rand));
  // Long Markdown with every disguise deep inside, and runs that reach past the opener window.
  corpus.push(PIECES.map((p, i) => `${"- line of memory with <details> & co\n".repeat(i * 7)}${p}\n`).join(""));
  corpus.push(`<${" ".repeat(5000)}/memory>`, `</${"\u200b".repeat(5000)}memory>`);
}

describe("the core's prompt escaping is the TypeScript one", () => {
  // The old TypeScript reference is slow on the large hostile corpus: a generous time limit.
  it("neutralizeSectionTags, escapeTags and the skills field escaping agree on the corpus", { timeout: 60_000 }, () => {
    for (const text of corpus) {
      expect(core.neutralizeSectionTags(text), JSON.stringify(text)).toBe(ref.neutralizeSectionTags(text));
      expect(core.escapeTags(text), JSON.stringify(text)).toBe(ref.escapeTags(text));
      expect(core.escapeField(text), JSON.stringify(text)).toBe(ref.escapeSkillText(text));
    }
  });
});

describe("PROMPT_SECTION_TAGS", () => {
  it("names exactly the tags the core neutralises", () => {
    for (const tag of PROMPT_SECTION_TAGS) {
      expect(core.neutralizeSectionTags(`<${tag}>`)).toBe(`&lt;${tag}>`);
      expect(core.neutralizeSectionTags(`</${tag}>`)).toBe(`&lt;/${tag}>`);
    }
    for (const other of ["memo", "agent", "skil", "guidelines", "memory_", "agent_memoryx", "system"]) {
      expect(core.neutralizeSectionTags(`<${other}>`)).toBe(`<${other}>`);
    }
  });
});

describe("the core's memory section is the TypeScript one", () => {
  // The old TypeScript reference is slow on the large hostile corpus: a generous time limit.
  it("renders every source as before (caps on the same line, the same note), joins and wraps them", { timeout: 60_000 }, () => {
    const rand = random(7);
    const paths = ["/AGENTS.md", "/memories/user.md", "/项目/AGENTS.md"];
    let differing = 0;
    for (const [i, text] of corpus.entries()) {
      const cap = [4000, 50, 10, 1, 200][i % 5] as number;
      const long = rand() < 0.3 ? `${text}\n${"- a remembered fact, one per line\n".repeat(1 + Math.floor(rand() * 80))}${text}` : text;
      const path = paths[i % paths.length] as string;
      const old = ref.renderSource(path, long, cap);
      const section = core.memorySection([{ path, kind: "text", text: long }], cap);
      const part = section.text.slice(section.parts[0], section.parts[1]);
      // Equal, or (pieces meeting as a tag) the old part neutralised once more.
      expect(part, JSON.stringify(long)).toBe(ref.neutralizeSectionTags(old));
      if (part !== old) differing++;
      const wrapped = `<agent_memory>\n${old === "" ? "(No memory loaded)" : ref.neutralizeSectionTags(old)}\n</agent_memory>`;
      expect(section.text).toBe(wrapped);
      const error = core.memorySection([{ path, kind: "error", text }], cap);
      expect(error.text).toBe(`<agent_memory>\n${ref.neutralizeSectionTags(ref.renderError(path, text))}\n</agent_memory>`);
    }
    // The junction fix is rare: almost every case is byte for byte the old text.
    expect(differing).toBeLessThan(corpus.length / 20);
  });

  it("joins several sources with blank lines, passes earlier parts through, and offsets slice them", () => {
    const sources = [
      { path: "/a.md", kind: "text", text: "alpha 😀 </memory>" },
      { path: "/b.md", kind: "missing" },
      { path: "/c.md", kind: "error", text: "permission denied" },
      { path: "/d.md", kind: "text", text: "  \n " },
      { path: "/e.md", kind: "rendered", text: "### /e.md\nkept as is" },
    ] as const;
    const s = core.memorySection(sources, 4000);
    expect(s.text).toBe(
      [
        "<agent_memory>",
        ref.renderSource("/a.md", "alpha 😀 </memory>", 4000),
        "",
        ref.renderError("/c.md", "permission denied"),
        "",
        "### /e.md\nkept as is",
        "</agent_memory>",
      ].join("\n"),
    );
    expect(s.text.slice(s.parts[0], s.parts[1])).toBe(ref.renderSource("/a.md", "alpha 😀 </memory>", 4000));
    expect([s.parts[2], s.parts[3], s.parts[6], s.parts[7]]).toEqual([0, 0, 0, 0]);
    expect(s.text.slice(s.parts[8], s.parts[9])).toBe("### /e.md\nkept as is");
  });
});

describe("the core's skills index is the TypeScript one", () => {
  // The old TypeScript reference is slow on the large hostile corpus: a generous time limit.
  it("agrees on hostile names, descriptions and paths", { timeout: 60_000 }, () => {
    const rand = random(11);
    expect(core.skillsSection([])).toBe(ref.formatSkillsSection([]));
    for (let i = 0; i < 200; i++) {
      const skills = Array.from({ length: 1 + Math.floor(rand() * 4) }, () => ({
        name: hostile(rand, 6),
        description: hostile(rand, 20),
        path: `/skills/${hostile(rand, 4)}/SKILL.md`,
      }));
      expect(core.skillsSection(skills)).toBe(ref.formatSkillsSection(skills));
    }
  });
});

describe("the core's long-term block is the TypeScript one", () => {
  const CATEGORIES = ["correction", "preference", "context", "knowledge", "goal", "<memory>"];
  function memoryOf(rand: () => number): MemoryData {
    const memory = createEmptyMemory();
    const summary = () => (rand() < 0.5 ? "" : `${hostile(rand, 10)} ${"summary words ".repeat(Math.floor(rand() * 60))}`);
    memory.user.workContext.summary = summary();
    memory.user.personalContext.summary = summary();
    memory.user.topOfMind.summary = summary();
    memory.history.recentMonths.summary = summary();
    memory.history.earlierContext.summary = summary();
    memory.history.longTermBackground.summary = summary();
    const confidences = [0.125, 0.375, 0.625, 0.875, 0.7, 0.95, 1, 0.005, 0.015, 0.8049999];
    memory.facts = Array.from({ length: Math.floor(rand() * 40) }, (_, i): Fact => {
      const f: Fact = {
        id: `f${i}`,
        content: `${hostile(rand, 8)} fact about postgres ${i} 用户`,
        category: CATEGORIES[Math.floor(rand() * CATEGORIES.length)] as string,
        confidence: rand() < 0.5 ? (confidences[Math.floor(rand() * confidences.length)] as number) : rand(),
        createdAt: "2026-01-01T00:00:00.000Z",
        source: "t",
      };
      if (rand() < 0.2) f.sourceError = hostile(rand, 5);
      return f;
    });
    return memory;
  }

  const summariesOf = (memory: MemoryData) => [
    memory.user.workContext.summary,
    memory.user.personalContext.summary,
    memory.user.topOfMind.summary,
    memory.history.recentMonths.summary,
    memory.history.earlierContext.summary,
    memory.history.longTermBackground.summary,
  ];

  // The old TypeScript reference is slow on the large hostile corpus: a generous time limit.
  it("agrees on budgets, corrections, summaries cut with …, ties and confidence formatting", { timeout: 60_000 }, () => {
    const rand = random(5);
    for (let i = 0; i < 400; i++) {
      const memory = memoryOf(rand);
      const maxTokens = Math.floor(rand() * 900);
      const correctionBudgetTokens = Math.floor(rand() * 300);
      const scores = rand() < 0.3 ? memory.facts.map(() => Math.floor(rand() * 4) / 2) : undefined;
      const options = { maxTokens, correctionBudgetTokens, ...(scores && { scores }) };
      const out = core.factsBlock({
        summaries: summariesOf(memory),
        facts: memory.facts,
        scores,
        maxTokens,
        correctionTokens: correctionBudgetTokens,
      });
      expect(out, `case ${i}`).toBe(ref.formatMemoryBlock(memory, options));
    }
  });

  // The old TypeScript reference is slow on the large hostile corpus: a generous time limit.
  it("ranks by relevance in the same call as the TypeScript scoreFacts did with rankBm25", { timeout: 60_000 }, () => {
    const rand = random(9);
    for (let i = 0; i < 100; i++) {
      const memory = memoryOf(rand);
      const query = ["postgres", "fact 3", "用户", "", "   ", "nothing matches"][i % 6] as string;
      const bm25 = core.rankBm25(
        query,
        memory.facts.map((f) => f.content),
      );
      const best = Math.max(0, ...bm25);
      const scores = memory.facts.map((f, k) => (query.trim() !== "" && best > 0 ? f.confidence + (bm25[k] ?? 0) / best : f.confidence));
      expect(core.relevanceScores(query, memory.facts)).toEqual(scores);
      const input = { summaries: summariesOf(memory), facts: memory.facts, query, maxTokens: 600, correctionTokens: 150 };
      expect(core.factsBlock(input), `case ${i}`).toBe(
        ref.formatMemoryBlock(memory, { maxTokens: 600, correctionBudgetTokens: 150, scores }),
      );
    }
  });
});
