/** The memory evaluation's results: per case, per category and configuration, and as Markdown. */
import { CATEGORIES, type Category } from "./score.js";

/** The configurations compared (see `run.ts`). */
export const CONFIGS = ["engram", "no-memory", "full-history"] as const;
export type Config = (typeof CONFIGS)[number];

/** One case answered in one configuration. */
export interface CaseResult {
  id: string;
  category: Category;
  config: Config;
  answer: string;
  pass: boolean;
  reason: string;
  /** Input tokens of the question's model calls (what answering costs). */
  questionInputTokens: number;
  /** Input tokens of every model call of the case, the sessions' turns included (extraction is
   * not counted here: it runs outside the agent's turns). */
  totalInputTokens: number;
  seconds: number;
  /** `engram` only: the facts stored before the question, with the day each was last confirmed. */
  facts?: string[];
  /** `engram` only: `superseded` patterns of the case found in the injected memory block. */
  supersededInjected?: string[];
  warnings?: string[];
}

/** One category in one configuration. */
export interface CategorySummary {
  category: Category | "all";
  config: Config;
  passed: number;
  total: number;
  /** Mean input tokens of the question. */
  meanQuestionTokens: number;
}

export interface EvalReport {
  date: string;
  model: string;
  subset: string;
  cases: number;
  results: CaseResult[];
  summary: CategorySummary[];
}

/** Per category (and all together) and configuration: passed, total and mean question tokens. */
export function summarize(results: readonly CaseResult[]): CategorySummary[] {
  const out: CategorySummary[] = [];
  for (const category of [...CATEGORIES, "all"] as const) {
    for (const config of CONFIGS) {
      const rows = results.filter((r) => r.config === config && (category === "all" || r.category === category));
      if (rows.length === 0) continue;
      out.push({
        category,
        config,
        passed: rows.filter((r) => r.pass).length,
        total: rows.length,
        meanQuestionTokens: Math.round(rows.reduce((s, r) => s + r.questionInputTokens, 0) / rows.length),
      });
    }
  }
  return out;
}

const cell = (s: CategorySummary | undefined) =>
  s ? `${s.passed}/${s.total} (${Math.round((100 * s.passed) / s.total)}%) · ${s.meanQuestionTokens} tok` : "—";

/** The results as a Markdown section: the per-category table, the superseded-facts count, and
 * every failed case with its answer. */
export function renderMarkdown(report: EvalReport): string {
  const summary = summarize(report.results);
  const find = (category: string, config: Config) => summary.find((s) => s.category === category && s.config === config);
  const updates = report.results.filter((r) => r.config === "engram" && r.category === "knowledge-update");
  const stale = updates.filter((r) => (r.supersededInjected ?? []).length > 0);
  const lines = [
    `Model \`${report.model}\`, ${report.subset} set (${report.cases} cases), run ${report.date.slice(0, 16).replace("T", " ")} UTC. Each cell: cases passed, and the mean input tokens of the question's model calls.`,
    "",
    "| category | engram (long-term memory) | no memory | full history in the prompt |",
    "|---|---|---|---|",
    ...[...CATEGORIES, "all"].map(
      (c) => `| ${c} | ${cell(find(c, "engram"))} | ${cell(find(c, "no-memory"))} | ${cell(find(c, "full-history"))} |`,
    ),
    "",
    updates.length > 0
      ? `Knowledge updates: superseded values still in the injected memory in ${stale.length} of ${updates.length} cases${stale.length > 0 ? ` (${stale.map((r) => `${r.id}: ${r.supersededInjected?.join(", ")}`).join("; ")})` : ""}.`
      : "Knowledge updates: not run with memory.",
    "",
    "<details><summary>Failed cases</summary>",
    "",
    "| case | configuration | why | answer |",
    "|---|---|---|---|",
    ...report.results
      .filter((r) => !r.pass)
      .map((r) => `| ${r.id} | ${r.config} | ${escapeCell(r.reason)} | ${escapeCell(r.answer.slice(0, 200))} |`),
    "",
    "</details>",
    "",
  ];
  return lines.join("\n");
}

function escapeCell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/\s+/g, " ").trim();
}

/** The markers of the evaluation's own section of docs/benchmarks.md. */
const SECTION_START = "<!-- memory-eval:start -->";
const SECTION_END = "<!-- memory-eval:end -->";

/** `page` with the memory evaluation's section (between its markers) replaced by `markdown`, or
 * appended when the page has none. */
export function withSection(page: string, markdown: string): string {
  const section = `${SECTION_START}\n## Long-term memory evaluation\n\n${markdown.trim()}\n${SECTION_END}`;
  const start = page.indexOf(SECTION_START);
  const end = page.indexOf(SECTION_END);
  if (start >= 0 && end > start) return page.slice(0, start) + section + page.slice(end + SECTION_END.length);
  return `${page.trimEnd()}\n\n${section}\n`;
}
