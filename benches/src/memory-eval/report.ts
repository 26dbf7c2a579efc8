/** The memory evaluation's results: per case, per category and configuration, and as Markdown. */
import type { Fact } from "../../../packages/engram/src/index.js";
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
  /** User turns in the case's sessions. */
  turns?: number;
  /** o200k tokens of what the model was sent (see `tokens.ts`): the question's requests (what
   * answering costs), the replayed sessions' turns, and the memory extraction after them. */
  promptTokens?: {
    question: number;
    questionCalls: number;
    sessions: number;
    extraction: number;
    extractionCalls: number;
  };
  /** `full-history` only: o200k tokens of the history pasted into the prompt. */
  historyTokens?: number;
  /** `engram` only: o200k tokens of the `<memory>` block injected for the question. */
  memoryBlockTokens?: number;
  /** `engram` only: o200k tokens of the `<past_threads>` block recalled for the question. */
  recallBlockTokens?: number;
  /** `engram` only: that block. */
  recalled?: string;
  /** `engram` only: the `<memory>` block the question was sent. */
  memoryBlock?: string;
  /** `engram` only: the facts stored before the question, with the day each was last confirmed. */
  facts?: string[];
  /** `engram` only: the same facts as stored (category, confidence, times), from which
   * `--replay` seeds a memory. */
  storedFacts?: StoredFact[];
  /** `engram` only: `superseded` patterns of the case found in the injected memory block. */
  supersededInjected?: string[];
  /** `engram` with recall injection only: `superseded` patterns found in the recalled block
   * (earlier messages, dated, newest first: an old value may be there beside the new one). */
  supersededRecalled?: string[];
  warnings?: string[];
}

/** One category in one configuration. */
export interface CategorySummary {
  category: Category | "all";
  config: Config;
  passed: number;
  total: number;
  /** Mean tokens of the question's requests: o200k (see {@link questionTokens}). */
  meanQuestionTokens: number;
}

/** Tokens of the question's requests: o200k when counted, else what the model reported
 * (results saved before the count existed). */
export function questionTokens(r: CaseResult): number {
  return r.promptTokens?.question ?? r.questionInputTokens;
}

/** Cases whose sessions hold at least this many user turns in all are "long": their history
 * costs more than a memory block's framing, so the token comparison means something. */
export const LONG_CASE_TURNS = 20;

/** A stored fact as `--replay` needs it. */
export type StoredFact = Pick<Fact, "content" | "category" | "confidence" | "createdAt"> & { confirmedAt?: string };

export interface EvalReport {
  date: string;
  model: string;
  subset: string;
  cases: number;
  results: CaseResult[];
  summary: CategorySummary[];
  /** Recall injection of the `engram` configuration (`threadRecall`), when it was on. */
  recall?: { inject: number; snippetChars: number; injectTokens: number };
  /** Whether llama.cpp read every prompt from its start (`--fresh-prompts`). */
  freshPrompts?: boolean;
  /** Sentences printed under the run's line (where results were taken from, …). */
  notes?: string[];
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
        meanQuestionTokens: Math.round(rows.reduce((s, r) => s + questionTokens(r), 0) / rows.length),
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
  const recalling = report.results.some((r) => r.recallBlockTokens !== undefined);
  const staleRecall = updates.filter((r) => (r.supersededRecalled ?? []).length > 0);
  const counted = report.results.length > 0 && report.results.every((r) => r.promptTokens);
  const unit = counted
    ? "the mean o200k tokens of what the question's model calls sent (system prompt, memory block or pasted history, question)"
    : "the mean input tokens of the question's model calls, as the model reported them";
  const lines = [
    `Model \`${report.model}\`, ${report.subset} set (${report.cases} cases), run ${report.date.slice(0, 16).replace("T", " ")} UTC. Each cell: cases passed, and ${unit}.`,
    "",
    ...(report.recall
      ? [
          `The engram configuration checkpoints each session as a thread of the user (in memory) and has recall injection on (\`threadRecall: { inject: ${report.recall.inject}, snippetChars: ${report.recall.snippetChars}, injectTokens: ${report.recall.injectTokens}, tool: false }\`): the question's first model call gets the best-matching things the user said in the earlier sessions, dated and newest first, after the long-term memory block; no tool call is needed.`,
          "",
        ]
      : []),
    ...(report.freshPrompts
      ? ["llama.cpp read every prompt from its start (`--fresh-prompts`): each answer depends on its request alone.", ""]
      : []),
    ...(report.notes?.length ? [report.notes.join(" "), ""] : []),
    `| category | engram (long-term memory${recalling ? " + recalled threads" : ""}) | no memory | full history in the prompt |`,
    "|---|---|---|---|",
    ...[...CATEGORIES, "all"]
      .filter((c) => summary.some((s) => s.category === c))
      .map((c) => `| ${c} | ${cell(find(c, "engram"))} | ${cell(find(c, "no-memory"))} | ${cell(find(c, "full-history"))} |`),
    "",
    ...(updates.length > 0
      ? [
          `Knowledge updates: superseded values still in the injected memory in ${stale.length} of ${updates.length} cases${stale.length > 0 ? ` (${stale.map((r) => `${r.id}: ${r.supersededInjected?.join(", ")}`).join("; ")})` : ""}.${recalling ? ` In the recalled earlier messages (dated, newest first), the old value was shown beside the new in ${staleRecall.length} of ${updates.length}.` : ""}`,
          "",
        ]
      : report.results.some((r) => r.category === "knowledge-update")
        ? ["Knowledge updates: not run with memory.", ""]
        : []),
    ...longCases(report.results),
    ...caseByCase(report.results),
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

/** Engram against each baseline on the cases both ran, per category: the answers only engram
 * got right (+), and those only the baseline got right (−, named). A one-case difference in a
 * category of ten is read better so than from two totals. Nothing without engram and a
 * baseline. */
function caseByCase(results: readonly CaseResult[]): string[] {
  const engram = new Map(results.filter((r) => r.config === "engram").map((r) => [r.id, r]));
  const baselines = (["no-memory", "full-history"] as const).filter((b) => results.some((r) => r.config === b && engram.has(r.id)));
  if (baselines.length === 0) return [];
  const against = (baseline: Config, category: string) => {
    const pairs = results
      .filter((r) => r.config === baseline && (category === "all" || r.category === category))
      .flatMap((b) => {
        const e = engram.get(b.id);
        return e ? [[e, b] as const] : [];
      });
    if (pairs.length === 0) return "—";
    const won = pairs.filter(([e, b]) => e.pass && !b.pass).length;
    const lost = pairs.filter(([e, b]) => !e.pass && b.pass).map(([e]) => e.id);
    const named = category !== "all" && lost.length > 0 ? ` (${lost.join(", ")})` : "";
    return `+${won} −${lost.length}${named}`;
  };
  const label: Record<string, string> = { "no-memory": "against no memory", "full-history": "against the full history" };
  const categories = [...CATEGORIES, "all"].filter((c) => c === "all" || results.some((r) => r.category === c));
  return [
    "Case by case, on the cases both configurations ran: the answers only engram got right (+) and those only the baseline got right (−, named).",
    "",
    `| category | ${baselines.map((b) => label[b]).join(" | ")} |`,
    `|---|${baselines.map(() => "---|").join("")}`,
    ...categories.map((c) => `| ${c} | ${baselines.map((b) => against(b, c)).join(" | ")} |`),
    "",
  ];
}

/** The long multi-session cases side by side (see {@link LONG_CASE_TURNS}): whether each
 * configuration answered, what the question cost with the memory block and with the pasted
 * history, and what extraction cost to build the memory. Nothing when none was run. */
function longCases(results: readonly CaseResult[]): string[] {
  const ids = [...new Set(results.filter((r) => (r.turns ?? 0) >= LONG_CASE_TURNS).map((r) => r.id))];
  if (ids.length === 0) return [];
  const of = (id: string, config: Config) => results.find((r) => r.id === id && r.config === config);
  const mark = (r: CaseResult | undefined) => (r ? (r.pass ? "pass" : "fail") : "—");
  const tok = (r: CaseResult | undefined) => (r ? String(questionTokens(r)) : "—");
  // The memory block, plus the recalled earlier threads when recall injection was on.
  const blocks = (e: CaseResult | undefined) =>
    e?.memoryBlockTokens === undefined
      ? "—"
      : e.recallBlockTokens === undefined
        ? String(e.memoryBlockTokens)
        : `${e.memoryBlockTokens} + ${e.recallBlockTokens}`;
  const rows = ids.map((id) => {
    const e = of(id, "engram");
    const h = of(id, "full-history");
    const ratio = e && h ? `${(questionTokens(e) / questionTokens(h)).toFixed(2)}×` : "—";
    const extraction = e?.promptTokens ? `${e.promptTokens.extraction} (${e.promptTokens.extractionCalls} calls)` : "—";
    return `| ${id} | ${e?.turns ?? h?.turns ?? "—"} | ${mark(e)} | ${mark(h)} | ${mark(of(id, "no-memory"))} | ${tok(e)} | ${tok(h)} | ${ratio} | ${blocks(e)} / ${h?.historyTokens ?? "—"} | ${extraction} | ${e?.facts?.length ?? "—"} |`;
  });
  const both = ids.map((id) => [of(id, "engram"), of(id, "full-history")]).filter(([e, h]) => e && h) as CaseResult[][];
  const sum = (i: number) => both.reduce((n, pair) => n + questionTokens(pair[i] as CaseResult), 0);
  const passed = (i: number) => both.filter((pair) => pair[i]?.pass).length;
  return [
    `Long multi-session cases (at least ${LONG_CASE_TURNS} user turns over their sessions): answers, o200k tokens of the question's requests, the memory block (plus the recalled earlier threads, when recall injection was on) against the pasted history, and what extraction sent to the model while the sessions were replayed (a cost the full history does not pay).`,
    "",
    "| case | turns | engram | full history | no memory | question tokens, engram | question tokens, full history | engram / full | memory (+ recall) block / history tokens | extraction tokens | facts stored |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
    ...rows,
    ...(both.length > 0
      ? [
          `| all (${both.length}) | | ${passed(0)}/${both.length} | ${passed(1)}/${both.length} | | ${sum(0)} | ${sum(1)} | ${(sum(0) / sum(1)).toFixed(2)}× | | | |`,
        ]
      : []),
    "",
  ];
}

function escapeCell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/\s+/g, " ").trim();
}

/** Several saved runs as one section: each under its own heading (its subset), in order. */
export function renderReports(reports: readonly EvalReport[]): string {
  if (reports.length === 1) return renderMarkdown(reports[0] as EvalReport);
  return reports.map((r) => `### ${r.subset} set (${r.cases} cases)\n\n${renderMarkdown(r).trim()}\n`).join("\n");
}

/** One saved run to merge: its results and what to call it in the merged report's notes. */
export interface MergePart {
  label: string;
  report: EvalReport;
}

/**
 * One report of several saved runs of the same model, for one table over all their cases: the
 * results side by side, and a note per part saying what it gave (so every row can be traced to
 * its run). A later part's result of a case in a configuration replaces an earlier part's (a
 * re-run after a change), and its note names what it replaced. The recall settings are those of
 * the parts that ran the engram configuration. `options.keep` keeps only some results (the smoke
 * subset's); `options.note` is added to the notes. Throws when the parts come from different
 * models or their recall settings differ.
 */
export function mergeReports(
  parts: readonly MergePart[],
  subset: string,
  options: { keep?: (r: CaseResult) => boolean; note?: string } = {},
): EvalReport {
  if (parts.length === 0) throw new Error("nothing to merge");
  const model = (parts[0] as MergePart).report.model;
  const byKey = new Map<string, { result: CaseResult; label: string }>();
  let recall: EvalReport["recall"];
  const notes: string[] = [];
  for (const { label, report } of parts) {
    if (report.model !== model) throw new Error(`${label}: model ${report.model}, not ${model}`);
    const replaced: string[] = [];
    for (const r of report.results) {
      const key = `${r.id} ${r.config}`;
      const earlier = byKey.get(key);
      if (earlier) replaced.push(`${r.id} ${r.config} of ${earlier.label}`);
      // Deleted first, so that the map's order is the order the results were given in.
      byKey.delete(key);
      byKey.set(key, { result: r, label });
    }
    if (report.recall && report.results.some((r) => r.config === "engram")) {
      if (recall && JSON.stringify(recall) !== JSON.stringify(report.recall))
        throw new Error(`${label}: recall settings differ from the other parts'`);
      recall = report.recall;
    }
    const counts = CONFIGS.map((c) => [c, report.results.filter((r) => r.config === c).length] as const).filter(([, n]) => n > 0);
    notes.push(
      `${label} (${report.subset}, run ${report.date.slice(0, 16).replace("T", " ")} UTC): ${counts.map(([c, n]) => `${c} ${n}`).join(", ")}${replaced.length > 0 ? `, replacing ${replaced.join(", ")}` : ""}.`,
    );
  }
  const results = [...byKey.values()].map((v) => v.result).filter((r) => options.keep?.(r) ?? true);
  const dates = parts.map((p) => p.report.date).sort();
  return {
    date: dates.at(-1) as string,
    model,
    subset,
    cases: new Set(results.map((r) => r.id)).size,
    results,
    summary: summarize(results),
    ...(recall && { recall }),
    // Only when every part was run so: one part that reused prompts makes the whole order-dependent.
    ...(parts.every((p) => p.report.freshPrompts) && { freshPrompts: true }),
    notes: [
      `Merged from ${parts.length} runs (results per configuration, before any left out):`,
      ...notes,
      ...(options.note ? [options.note] : []),
    ],
  };
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
