/** The prompt rows' targets and their section of docs/benchmarks.md (no measuring here). */
import type { PromptRow } from "./scenario.js";
import type { WasmModuleFigures } from "./wasm-module.js";
import type { WorkerdFigures } from "./workerd.js";

export interface PromptReport {
  date: string;
  rows: PromptRow[];
  /** The WASM module as installed when the rows were measured. */
  wasm?: WasmModuleFigures;
  /** The module's cold start in workerd (miniflare). */
  workerd?: WorkerdFigures;
  /** The llama row (`benches/src/llama-tokens.ts`, its own results file), added when rendered. */
  llama?: LlamaRow;
}

interface SecondTurnFigures {
  promptTokens: number;
  cachedTokens: number;
  evaluatedTokens: number;
  newTokens: number;
}

/** What `benches/src/llama-tokens.ts` saves per row (the fields rendered here). */
export interface LlamaRow {
  id: string;
  title: string;
  model: string;
  ours: SecondTurnFigures;
  sharedSequence: SecondTurnFigures;
  evaluatedPerNewToken: number;
}

/** The llama row: the second turn's prompt with a sequence per purpose, and with one shared. */
function llamaLines(report: PromptReport): string[] {
  const r = report.llama;
  if (!r) return [];
  const line = (how: string, f: SecondTurnFigures) =>
    `| ${how} | ${f.promptTokens.toLocaleString("en-US")} | ${f.cachedTokens.toLocaleString("en-US")} | ${f.evaluatedTokens.toLocaleString("en-US")} | ${f.newTokens.toLocaleString("en-US")} |`;
  return [
    `\`${r.id}\` ${r.title} (\`${r.model}\`; goal: only the new tokens evaluated — ${r.evaluatedPerNewToken.toFixed(2)} evaluated per new token):`,
    "",
    "| context sequences | prompt tokens, second turn | served from the sequence's cache | evaluated | new since the model last read the thread |",
    "|---|---|---|---|---|",
    line("one per purpose (the agent's turns, the memory extraction)", r.ours),
    line("one for both (comparison)", r.sharedSequence),
    "",
  ];
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

/** The ten-step ratio against the peer: our OpenAI-compatible run's tokens over deepagents'. */
export function peerRatio(report: PromptReport, id = "prompt.openai-compatible"): number | undefined {
  const ours = report.rows.find((r) => r.id === id);
  const peer = report.rows.find((r) => r.id === "prompt.peer");
  const mine = ours?.defaults ?? ours;
  return mine && peer && peer.totalTokens > 0 ? mine.totalTokens / peer.totalTokens : undefined;
}

/** The targets the prompt rows decide: the ratio to the peer, and each event's first change. */
export function promptTargets(report: PromptReport): { goal: string; met: boolean | undefined; detail: string }[] {
  const out: { goal: string; met: boolean | undefined; detail: string }[] = [];
  const w = report.wasm;
  if (w) {
    out.push({
      goal: "WASM module ≤ 450 KB gzip",
      met: w.gzipBytes <= 450 * 1024,
      detail: `${(w.gzipBytes / 1024).toFixed(1)} KB gzip (${w.rawBytes.toLocaleString("en-US")} bytes raw); compile ${w.compileMs.toFixed(1)} ms`,
    });
    out.push({
      goal: `WASM cold start in Node ≤ 10 ms, median of ${w.coldStartRuns.length} fresh processes`,
      met: w.coldStartMs <= 10,
      detail: `${w.coldStartMs.toFixed(1)} ms (fastest ${Math.min(...w.coldStartRuns).toFixed(1)}, slowest ${Math.max(...w.coldStartRuns).toFixed(1)})`,
    });
  }
  for (const id of ["prompt.openai-compatible", "prompt.ai-sdk"]) {
    const v = peerRatio(report, id);
    const row = report.rows.find((r) => r.id === id);
    const tools = row?.defaults?.tools ?? row?.tools ?? [];
    out.push({
      goal: `${id}: ten-step prompt tokens ≤ 0.75× deepagents' (both with their defaults), \`execute\` offered`,
      met: v === undefined ? undefined : v <= 0.75 && tools.includes("execute"),
      detail: `ours / peer = ${v === undefined ? "—" : `${v.toFixed(2)}×`} (${tools.length} tools, execute ${tools.includes("execute") ? "in" : "not in"} the list)`,
    });
    const bad = row?.events.filter((e) => !e.ok) ?? [];
    out.push({
      goal: `${id}: each event invalidates only what it changes and what follows it`,
      met: row ? bad.length === 0 : undefined,
      detail: row
        ? bad.length === 0
          ? `${row.events.length} events, each first differs in its own part`
          : `not: ${bad.map((e) => e.event).join(", ")}`
        : "—",
    });
  }
  return out;
}

/** The WASM module's size and start-up, when measured. */
function wasmLines(report: PromptReport): string[] {
  const w = report.wasm;
  const k = report.workerd;
  if (!w) return [];
  return [
    "## The WASM module",
    "",
    `Measured ${report.date} with the prompt rows (the module as installed; zlib's default level, as the packaging test measures).`,
    "",
    "| measure | value |",
    "|---|---|",
    `| size | ${w.rawBytes.toLocaleString("en-US")} bytes raw, ${w.gzipBytes.toLocaleString("en-US")} gzip (${(w.gzipBytes / 1024).toFixed(1)} KB) |`,
    `| \`WebAssembly.compile\` in a warm Node process | ${w.compileMs.toFixed(1)} ms (median of ${w.coldStartRuns.length}) |`,
    `| Node cold start: a fresh process loads and instantiates the core, then greps | ${w.coldStartMs.toFixed(1)} ms median of ${w.coldStartRuns.length} (${Math.min(...w.coldStartRuns).toFixed(1)}–${Math.max(...w.coldStartRuns).toFixed(1)} ms) |`,
    ...(k
      ? [
          `| workerd (miniflare): runtime ready with the bundle and the compiled module | ${k.readyMs.toFixed(0)} ms (median of ${k.runs}) |`,
          `| workerd: first request (the core instantiated, a write and a grep) | ${k.firstRequestMs.toFixed(1)} ms |`,
          `| workerd: the same request again | ${k.warmRequestMs.toFixed(1)} ms |`,
        ]
      : []),
    "",
  ];
}

/** The markdown section. */
export function renderPromptSection(report: PromptReport): string[] {
  const lines = [
    "## What the framework sends to the model",
    "",
    `Measured ${report.date} by \`npm run bench -- --only prompt\`: a scripted ten-step task (write, read, edit, ls, glob, grep over`,
    "files, then the answer) against one local chat-completions server that answers every framework alike and keeps each request",
    "as it arrived. Ours runs with AGENTS.md, two skills, two long-term facts and a Filesystem backend that runs commands (so",
    "`execute` is offered); deepagents runs through LangChain's `ChatOpenAI` with its defaults. Tokens are o200k (`js-tiktoken`)",
    "of what the model reads: each tool's name, description and parameter schema as JSON, each message's content, each tool",
    "call's name and arguments. A request's *share* is the part of its bytes — tools first, then the messages, each as the JSON",
    "it went over the wire — that repeats the previous request from its start: what a provider's prefix cache can serve.",
    "",
    "| path | setup | turns | prompt tokens, ten-step run | per turn (first → last) | share of the previous turn, within the run (mean / min) | turns repeating the previous request whole | tools |",
    "|---|---|---|---|---|---|---|---|",
    ...report.rows.flatMap((r) => {
      const line = (setup: string, f: NonNullable<PromptRow["defaults"]>) =>
        `| ${r.label} | ${setup} | ${f.steps} | ${f.totalTokens.toLocaleString("en-US")} | ${f.tokensPerStep[0]?.toLocaleString("en-US")} → ${f.tokensPerStep.at(-1)?.toLocaleString("en-US")} | ${pct(f.withinRun.mean)} / ${pct(f.withinRun.min)} | ${f.withinRun.whole ?? "—"} of ${f.withinRun.pairs ?? "—"} | ${f.tools.length}${f.tools.includes("execute") ? " (execute)" : ""} |`;
      return r.defaults ? [line("defaults", r.defaults), line("AGENTS.md, 2 skills, 2 facts", r)] : [line("defaults", r)];
    }),
    "",
    "Across runs of one thread and the events that change the prompt — the first request after the event against the last one",
    "before it (a new run also brings a new user message, so the conversation part always changes at its end):",
    "",
    `| event | changes | ${report.rows
      .filter((r) => r.events.length > 0)
      .map((r) => `${r.label}: share, first difference`)
      .join(" | ")} |`,
    `|---|---|${report.rows
      .filter((r) => r.events.length > 0)
      .map(() => "---|")
      .join("")}`,
  ];
  const withEvents = report.rows.filter((r) => r.events.length > 0);
  for (const [i, e] of (withEvents[0]?.events ?? []).entries()) {
    const cells = withEvents.map((r) => {
      const x = r.events[i];
      if (!x) return "—";
      const where = x.firstChange ? `${x.firstChange.part} (${x.firstChange.section})` : "none (an append)";
      return `${pct(x.share)}, ${where}${x.ok ? "" : " **before its part**"}`;
    });
    lines.push(`| ${e.event} | ${e.changes} | ${cells.join(" | ")} |`);
  }
  lines.push(
    "",
    "Order of a request: tool schemas, the static instructions (`request.system`), then the context message — the skills",
    "index (`skills`), the AGENTS.md memory (`agent_memory`), the memory guidelines and the long-term facts (`memory`), each",
    "before what changes more often — then the conversation. A change invalidates its own part and what follows it; the share",
    "after a context event is low because the conversation, most of the bytes, follows the context. Which parts move and why:",
    "[the guide](guides/benchmarks.md).",
    "",
    ...llamaLines(report),
    ...wasmLines(report),
  );
  return lines;
}
