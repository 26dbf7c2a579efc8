/**
 * `tsx benches/src/prompt/main.ts [--out <dir>]`: the prompt rows alone (what `npm run bench --
 * --only prompt` measures), saved as `<out>/<date>-prompt.json`; docs/benchmarks.md is then
 * rendered from the newest results of size medium in `<out>` with these rows.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadCore } from "engram";
import { renderDocs } from "../report.js";
import type { BenchReport } from "../results.js";
import type { LlamaRow } from "./render.js";
import { type PromptReport, measurePromptRows } from "./rows.js";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

/** The newest file of `dir` whose name ends with `suffix`, parsed. */
export function newest<T>(dir: string, suffix: string): T | undefined {
  const name = readdirSync(dir)
    .filter((f) => f.endsWith(suffix))
    .sort()
    .at(-1);
  return name ? (JSON.parse(readFileSync(join(dir, name), "utf8")) as T) : undefined;
}

/** Measures the prompt rows and saves them in `out` (`quick`: see {@link measurePromptRows}). */
export async function measureAndSave(out: string, log: (m: string) => void, quick = false): Promise<PromptReport> {
  const report = await measurePromptRows(await loadCore({ core: "native" }), repo, log, quick);
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, `${report.date.slice(0, 10)}-prompt.json`), `${JSON.stringify(report, null, 2)}\n`);
  return report;
}

/** The sections other tools keep in the page between `<!-- name:start -->` and
 * `<!-- name:end -->` (the memory evaluation's table, …), to carry over when it is rendered. */
function keptSections(page: string): string[] {
  return [...page.matchAll(/<!-- ([\w-]+):start -->[\s\S]*?<!-- \1:end -->/g)].map((m) => m[0]);
}

/** docs/benchmarks.md and its charts from `report` and the newest prompt rows in `out`; the
 * sections other tools wrote into the page stay, at its end. */
export function writeDocs(report: BenchReport, out: string): void {
  const prompt = newest<PromptReport>(out, "-prompt.json");
  const llama = newest<{ rows: LlamaRow[] }>(out, "-llama-tokens.json")?.rows[0];
  const { markdown, charts } = renderDocs(report, prompt && llama ? { ...prompt, llama } : prompt);
  const page = join(repo, "docs", "benchmarks.md");
  const kept = existsSync(page) ? keptSections(readFileSync(page, "utf8")) : [];
  writeFileSync(page, kept.length > 0 ? `${markdown.trimEnd()}\n\n${kept.join("\n\n")}\n` : markdown);
  for (const [name, svg] of Object.entries(charts)) writeFileSync(join(repo, "docs", name), svg);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2);
  const i = argv.indexOf("--out");
  const out = i >= 0 ? (argv[i + 1] as string) : join(repo, "benches", "results");
  const log = (m: string) => process.stderr.write(`[bench] ${m}\n`);
  await measureAndSave(out, log);
  const earlier = newest<BenchReport>(out, "-medium.json");
  if (earlier && !argv.includes("--no-docs")) {
    writeDocs(earlier, out);
    log("docs/benchmarks.md rendered");
  }
}
