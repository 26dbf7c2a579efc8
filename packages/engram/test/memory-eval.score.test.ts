/** The memory evaluation's data and scoring rules (benches/memory-eval): the case file is valid,
 * large enough and its smoke subset covers every category; every expected answer passes its own
 * check; the rules (all of, any of, none of, refusal) decide as documented; a malformed file is
 * refused naming the case; the report counts per category and configuration. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type CaseResult, renderMarkdown, summarize, withSection } from "../../../benches/src/memory-eval/report.js";
import {
  CATEGORIES,
  EvalSetError,
  interleave,
  isRefusal,
  parseEvalSet,
  scoreAnswer,
  supersededIn,
} from "../../../benches/src/memory-eval/score.js";

const FILE = join(import.meta.dirname, "../../../benches/memory-eval/cases.json");
const raw = () => JSON.parse(readFileSync(FILE, "utf8")) as { askedAt: string; cases: Record<string, unknown>[] };
const set = parseEvalSet(raw());

describe("the evaluation set", () => {
  it("has at least 60 cases, every category at least 8, and a 20-case smoke subset covering every category", () => {
    expect(set.cases.length).toBeGreaterThanOrEqual(60);
    for (const c of CATEGORIES) expect(set.cases.filter((x) => x.category === c).length, c).toBeGreaterThanOrEqual(8);
    const smoke = set.cases.filter((c) => c.smoke);
    expect(smoke).toHaveLength(20);
    for (const c of CATEGORIES) expect(smoke.filter((x) => x.category === c).length, c).toBeGreaterThanOrEqual(2);
  });

  it("has a few sessions for the categories that need them, each dated before the question", () => {
    for (const c of set.cases) {
      if (["knowledge-update", "multi-session"].includes(c.category)) expect(c.sessions.length, c.id).toBeGreaterThanOrEqual(2);
      for (const s of c.sessions) expect(Date.parse(s.at)).toBeLessThan(Date.parse(set.askedAt));
    }
  });

  it("passes every expected answer with its own check, and fails it with the superseded value", () => {
    for (const c of set.cases) {
      const answer = c.check.abstain ? "I don't know, you haven't told me that." : `It is ${c.expected}.`;
      expect(scoreAnswer(answer, c.check), c.id).toEqual({ pass: true, reason: "" });
      expect(scoreAnswer("", c.check).pass, c.id).toBe(false);
      expect(supersededIn(c.expected, c.superseded), c.id).toEqual([]);
    }
    for (const c of set.cases.filter((x) => x.category === "knowledge-update")) expect(c.superseded.length, c.id).toBeGreaterThan(0);
  });

  it("fails the stale answer of a knowledge update and a made-up answer to an abstention case", () => {
    const byId = (id: string) => set.cases.find((c) => c.id === id) ?? expect.fail(id);
    expect(scoreAnswer("You live in Berlin.", byId("update-01").check).pass).toBe(false);
    expect(scoreAnswer("You live in Lisbon now (you moved from Berlin).", byId("update-01").check).pass).toBe(true);
    expect(scoreAnswer("Your favourite colour is blue.", byId("abstain-01").check).pass).toBe(false);
    expect(scoreAnswer("Your dog's name is Tofu.", byId("abstain-04").check).pass).toBe(false);
    expect(supersededIn("- [context | 0.95] Lives in Berlin (as of 2026-10-20)", byId("update-01").superseded)).toEqual(["Berlin"]);
    // Named only as what the user moved away from, the old value is not injected as current.
    const sublime = byId("update-03").superseded;
    expect(supersededIn("- [preference | 0.90] Switched editors from Sublime Text to Zed (as of 2026-11-14)", sublime)).toEqual([]);
    expect(supersededIn("- Moved from Sublime to Zed\n- Favourite editor is Sublime Text", sublime)).toEqual(["Sublime"]);
    expect(supersededIn("- Lives in Lisbon, no longer in Berlin", byId("update-01").superseded)).toEqual([]);
    // "from" without a change is not a move away from it.
    expect(supersededIn("- Works from Berlin on Fridays", byId("update-01").superseded)).toEqual(["Berlin"]);
  });
});

describe("scoring rules", () => {
  it("all of, any of and none of, case-insensitive", () => {
    const check = { allOf: ["\\bMiso\\b", "kiwi"], anyOf: ["pets?", "animals"], noneOf: ["\\bdog\\b"] };
    expect(scoreAnswer("Your pets are miso and KIWI.", check)).toEqual({ pass: true, reason: "" });
    expect(scoreAnswer("Your pets are Miso.", check)).toEqual({ pass: false, reason: "misses /kiwi/" });
    expect(scoreAnswer("Miso and Kiwi.", check).reason).toBe("none of /pets?/ /animals/");
    expect(scoreAnswer("Your pets are Miso, Kiwi and a dog.", check)).toEqual({ pass: false, reason: "says /\\bdog\\b/" });
    expect(scoreAnswer("   ", { anyOf: ["x"] })).toEqual({ pass: false, reason: "empty answer" });
  });

  it.each([
    "I don't know your favourite colour.",
    "I do not have that information.",
    "You haven't told me your blood type.",
    "You have not mentioned a brother.",
    "That was never mentioned in our conversations.",
    "I'm not sure; I have no information about your car.",
    "I cannot find that in my memory.",
    "Your wife's name is not something you have shared.",
    "You never told me about your car.",
    // The 1.5B model's pronouns turned round (no-memory, abstain-09): still no claim.
    "I did not tell you about your car.",
  ])("refuses: %s", (answer) => {
    expect(isRefusal(answer)).toBe(true);
    expect(scoreAnswer(answer, { abstain: true }).pass).toBe(true);
  });

  it.each([
    "Your favourite colour is blue.",
    "You were born in Porto.",
    "I know: it is Tofu.",
    "Your cloud provider is AWS.",
    "I told you that you like Thai food.",
  ])("does not refuse: %s", (answer) => {
    expect(isRefusal(answer)).toBe(false);
    expect(scoreAnswer(answer, { abstain: true })).toEqual({ pass: false, reason: "does not say it does not know" });
  });

  it("an abstention that names a forbidden guess fails", () => {
    expect(scoreAnswer("I don't know; maybe your dog's name is Tofu?", { abstain: true, noneOf: ["dog(?:'s name)? is Tofu"] }).pass).toBe(
      false,
    );
  });
});

describe("a malformed evaluation file", () => {
  const withCase = (patch: Record<string, unknown>) => {
    const data = raw();
    data.cases = [{ ...data.cases[0], ...patch }];
    return data;
  };
  it.each([
    [{ category: "trivia" }, /case "single-01": `category` must be one of/],
    [{ check: { anyOf: ["(unclosed"] } }, /case "single-01": `check.anyOf`: "\(unclosed" is not a valid regular expression/],
    [{ check: {} }, /needs `allOf`, `anyOf` or `abstain`/],
    [{ sessions: [{ at: "2026-12-01T00:00:00Z", turns: ["hi"] }] }, /session 0 is not before askedAt/],
    [{ sessions: [{ at: "yesterday", turns: ["hi"] }] }, /session 0: `at` must be an ISO-8601 time/],
    [{ sessions: [{ at: "2026-11-01T00:00:00Z", turns: [""] }] }, /`turns` must be non-empty strings/],
    [{ check: { abstain: true } }, /abstention cases, and only they/],
    [{ id: "Bad Id" }, /`id` must be lowercase/],
  ])("%j is refused", (patch, message) => {
    expect(() => parseEvalSet(withCase(patch))).toThrow(EvalSetError);
    expect(() => parseEvalSet(withCase(patch))).toThrow(message);
  });

  it("a duplicate id and a missing case list are refused", () => {
    const data = raw();
    data.cases = [data.cases[0] as Record<string, unknown>, data.cases[0] as Record<string, unknown>];
    expect(() => parseEvalSet(data)).toThrow(/duplicate id/);
    expect(() => parseEvalSet({ askedAt: "2026-11-20T10:00:00Z" })).toThrow(/`cases` array/);
  });
});

describe("the report", () => {
  const result = (
    id: string,
    category: CaseResult["category"],
    config: CaseResult["config"],
    pass: boolean,
    tokens: number,
  ): CaseResult => ({
    id,
    category,
    config,
    answer: pass ? "right | answer" : "wrong",
    pass,
    reason: pass ? "" : "misses /x/",
    questionInputTokens: tokens,
    totalInputTokens: tokens,
    seconds: 1,
    ...(config === "engram" && category === "knowledge-update" && { supersededInjected: pass ? [] : ["Berlin"] }),
  });
  const results = [
    result("update-01", "knowledge-update", "engram", true, 300),
    result("update-02", "knowledge-update", "engram", false, 320),
    result("update-01", "knowledge-update", "full-history", false, 500),
    result("single-01", "single-session", "no-memory", true, 100),
  ];

  it("counts passes and mean question tokens per category and configuration", () => {
    const s = summarize(results);
    expect(s.find((x) => x.category === "knowledge-update" && x.config === "engram")).toEqual({
      category: "knowledge-update",
      config: "engram",
      passed: 1,
      total: 2,
      meanQuestionTokens: 310,
    });
    expect(s.find((x) => x.category === "all" && x.config === "full-history")?.passed).toBe(0);
  });

  it("renders the table, the superseded count and the failures", () => {
    const md = renderMarkdown({ date: "2026-11-29T04:00:00Z", model: "m", subset: "smoke", cases: 2, results, summary: [] });
    expect(md).toContain("| knowledge-update | 1/2 (50%) · 310 tok | — | 0/1 (0%) · 500 tok |");
    expect(md).toContain("superseded values still in the injected memory in 1 of 2 cases (update-02: Berlin)");
    expect(md).toContain("| update-02 | engram | misses /x/ | wrong |");
  });

  it("compares engram with each baseline case by case, naming the cases engram lost", () => {
    const paired = [
      result("update-01", "knowledge-update", "engram", true, 300),
      result("update-02", "knowledge-update", "engram", false, 320),
      result("update-01", "knowledge-update", "no-memory", false, 50),
      result("update-02", "knowledge-update", "no-memory", true, 50),
      result("single-01", "single-session", "engram", true, 100),
      result("single-01", "single-session", "no-memory", true, 50),
      result("update-01", "knowledge-update", "full-history", false, 500),
    ];
    const md = renderMarkdown({ date: "2026-11-29T04:00:00Z", model: "m", subset: "smoke", cases: 3, results: paired, summary: [] });
    expect(md).toContain("| category | against no memory | against the full history |");
    expect(md).toContain("| single-session | +0 −0 | — |");
    expect(md).toContain("| knowledge-update | +1 −1 (update-02) | +1 −0 |");
    expect(md).toContain("| all | +1 −1 | +1 −0 |");
    // One baseline that ran engram's cases: its column alone. Engram alone: no table.
    const withHistory = renderMarkdown({ date: "2026-11-29T04:00:00Z", model: "m", subset: "smoke", cases: 2, results, summary: [] });
    expect(withHistory).toContain("| category | against the full history |");
    expect(withHistory).toContain("| knowledge-update | +1 −0 |");
    const alone = results.filter((r) => r.config === "engram");
    expect(
      renderMarkdown({ date: "2026-11-29T04:00:00Z", model: "m", subset: "smoke", cases: 2, results: alone, summary: [] }),
    ).not.toContain("Case by case");
  });
});

describe("the runner's order and page section", () => {
  it("takes the cases round-robin over the categories, so any prefix of a run covers them", async () => {
    const order = interleave(set.cases.filter((c) => c.smoke));
    expect(order).toHaveLength(20);
    expect(new Set(order.slice(0, CATEGORIES.length).map((c) => c.category)).size).toBe(CATEGORIES.length);
    expect(order[0]?.category).toBe("knowledge-update");
  });

  it("writes its own section of the bench page, replacing the previous one", async () => {
    const once = withSection("# Benchmarks\n\nrows\n", "| a |\n");
    expect(once).toBe(
      "# Benchmarks\n\nrows\n\n<!-- memory-eval:start -->\n## Long-term memory evaluation\n\n| a |\n<!-- memory-eval:end -->\n",
    );
    const twice = withSection(`${once}\nafter\n`, "| b |");
    expect(twice).toContain("| b |");
    expect(twice).not.toContain("| a |");
    expect(twice.endsWith("<!-- memory-eval:end -->\n\nafter\n")).toBe(true);
  });
});
