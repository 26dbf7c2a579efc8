/** docs/benchmarks.md and its SVG charts, from one run's report. */
import type { Role } from "./subjects.js";
import type { BenchReport, WorkloadResult } from "./results.js";
import { type PromptReport, promptTargets, renderPromptSection } from "./prompt/render.js";

const ms = (r: WorkloadResult, role: Role) => {
  const o = r.outcomes[role];
  return o?.ok && o.timing ? o.timing.medianMs : undefined;
};

function fmt(v: number | undefined): string {
  if (v === undefined) return "—";
  if (v < 0.01) return `${(v * 1000).toFixed(2)} µs`;
  if (v < 1) return `${(v * 1000).toFixed(0)} µs`;
  return `${v.toFixed(v < 10 ? 2 : 1)} ms`;
}

/** `a / b` when both exist. */
function ratio(a: number | undefined, b: number | undefined): number | undefined {
  return a !== undefined && b !== undefined && b > 0 ? a / b : undefined;
}

function fmtRatio(x: number | undefined): string {
  if (x === undefined) return "—";
  if (x < 0.1) return `1/${Math.round(1 / x)}×`;
  return x >= 10 ? `${x.toFixed(0)}×` : `${x.toFixed(2)}×`;
}

function cell(r: WorkloadResult, role: Role): string {
  const o = r.outcomes[role];
  if (!o) return "—";
  if (!o.ok) return o.note === "not offered" ? "n/a" : o.note?.startsWith("skipped") ? o.note : `**failed** (${o.note})`;
  const t = o.timing;
  return t ? `${fmt(t.medianMs)} <sub>${fmt(t.minMs)}–${fmt(t.maxMs)}</sub>` : "ok";
}

export interface Target {
  goal: string;
  value: number | undefined;
  met: boolean | undefined;
  detail: string;
}

/** The speed targets of the benchmarks issue, evaluated on this run. */
export function targets(report: BenchReport): Target[] {
  const by = (id: string) => report.workloads.find((w) => w.id === id);
  const out: Target[] = [];
  const floorRatio = (id: string, limit: number, goal: string) => {
    const w = by(id);
    const v = w && ratio(ms(w, "ours-native"), ms(w, "floor"));
    out.push({
      goal,
      value: v,
      met: v === undefined ? undefined : v <= limit,
      detail: `native / floor = ${fmtRatio(v)} (goal ≤ ${limit}×)`,
    });
  };
  const peerSpeedup = (id: string, limit: number, goal: string) => {
    const w = by(id);
    const v = w && ratio(ms(w, "peer"), ms(w, "ours-native"));
    out.push({
      goal,
      value: v,
      met: v === undefined ? undefined : v >= limit,
      detail: `peer / native = ${fmtRatio(v)} (goal ≥ ${limit}×)`,
    });
  };
  for (const k of ["state", "store"]) {
    floorRatio(`${k}.grep-rare`, 1.5, `${k} grep (rare) within 1.5× of the JS floor`);
    floorRatio(`${k}.grep-common`, 1.5, `${k} grep (common) within 1.5× of the JS floor`);
    floorRatio(`${k}.glob-ts`, 1.5, `${k} glob within 1.5× of the JS floor`);
    peerSpeedup(`${k}.grep-rare`, 20, `${k} grep ≥ 20× faster than deepagents`);
  }
  peerSpeedup("state.ls", 50, "state ls ≥ 50× faster than deepagents");
  for (const k of ["store-sqlite", "store-postgres"]) {
    peerSpeedup(`${k}.grep-rare`, 20, `${k} grep ≥ 20× faster than deepagents on LangGraph's PostgresStore`);
    // O(result): ls of / lists as many entries as ls of one directory over ten times the files.
    const root = by(`${k}.ls-root`);
    const dir = by(`${k}.ls`);
    const v = root && dir && ratio(ms(root, "ours-native"), ms(dir, "ours-native"));
    out.push({
      goal: `${k} listing in O(result): ls / no dearer than ls of a directory with as many entries and a tenth of the files`,
      value: v,
      met: v === undefined ? undefined : v <= 1.5,
      detail: `native ls-root / ls = ${fmtRatio(v)} (goal ≤ 1.5×; O(files below) would be ~10×)`,
    });
  }
  floorRatio("filesystem.grep-rare", 1, "filesystem grep no slower than ripgrep");
  floorRatio("filesystem.glob-ts", 1.5, "filesystem glob within 1.5× of find");
  const memoryKinds = report.workloads.filter((w) => w.kind === "state" || w.kind === "store" || w.kind === "composite");
  const wasmRatios = memoryKinds.map((w) => ratio(ms(w, "ours-wasm"), ms(w, "ours-native"))).filter((v): v is number => v !== undefined);
  const worst = wasmRatios.length ? Math.max(...wasmRatios) : undefined;
  out.push({
    goal: "WASM within 2× of native on every in-memory workload",
    value: worst,
    met: worst === undefined ? undefined : worst <= 2,
    detail: `worst wasm / native = ${fmtRatio(worst)}`,
  });
  out.push(...boundaryTargets(report));
  // A step writes what changed: its cost must not grow with the thread's length.
  for (const [store, name] of [
    ["sqlite", "SQLite"],
    ["postgres", "PostgreSQL"],
  ] as const) {
    const long = by(`durable.step-commit-${store}-1000`);
    const short = by(`durable.step-commit-${store}-10`);
    const v = long && short && ratio(ms(long, "ours-native"), ms(short, "ours-native"));
    out.push({
      goal: `durable run on ${name}: committing a step costs the same on a thread of 1,000 messages as of 10`,
      value: v,
      met: v === undefined ? undefined : v <= 1.5,
      detail: `1,000 / 10 messages = ${fmtRatio(v)} (goal ≤ 1.5×; a step rewriting the thread would be ~100×)`,
    });
  }
  return out;
}

/** The in-process targets (every call cheaper than the pure-JS peer), evaluated on this run. */
function boundaryTargets(report: BenchReport): Target[] {
  const by = (id: string) => report.workloads.find((w) => w.id === id);
  const out: Target[] = [];
  const check = (goal: string, v: number | undefined, limit: number, detail: string, atLeast = false) =>
    out.push({ goal, value: v, met: v === undefined ? undefined : atLeast ? v >= limit : v <= limit, detail });
  for (const id of ["state.read-small", "state.write", "state.edit", "composite.routed-read"]) {
    const w = by(id);
    const n = w && ratio(ms(w, "ours-native"), ms(w, "peer"));
    // A write copies the caller's 2 KB into memory the core owns; the peer keeps a reference.
    const limit = id === "state.write" ? 1.2 : 1;
    check(
      `${id}: native ${limit === 1 ? "at or below" : `within ${limit}× of`} deepagents`,
      n,
      limit,
      `native / peer = ${fmtRatio(n)} (goal ≤ ${limit}×)`,
    );
    const x = w && ratio(ms(w, "ours-wasm"), ms(w, "ours-native"));
    check(`${id}: WASM within 1.5× of native`, x, 1.5, `wasm / native = ${fmtRatio(x)} (goal ≤ 1.5×)`);
  }
  // Against the floor that copies the same bytes into memory the callee owns, as the core must;
  // the peer keeps references to the caller's strings (its column stays for comparison).
  const load = by("state.load");
  const ln = load && ratio(ms(load, "ours-native"), ms(load, "floor"));
  const lp = load && ratio(ms(load, "ours-native"), ms(load, "peer"));
  check(
    "state.load (10k files): native within 1.5× of the copying floor",
    ln,
    1.5,
    `native / floor = ${fmtRatio(ln)} (goal ≤ 1.5×; native / peer = ${fmtRatio(lp)})`,
  );
  const lw = load && ratio(ms(load, "ours-wasm"), ms(load, "floor"));
  check("state.load (10k files): WASM within 2× of the copying floor", lw, 2, `wasm / floor = ${fmtRatio(lw)} (goal ≤ 2×)`);
  for (const [id, goal] of [
    ["tool.grep-common", "grep tool, common token (the capped text): ≥ 3× faster than deepagents"],
    ["composite.glob-ts", "composite glob fan-out ≥ 3× faster than deepagents"],
    ["agent.loop", "agent loop with a 10k-file thread state: ≥ 20× lower per step than deepagents"],
  ] as const) {
    const w = by(id);
    const v = w && ratio(ms(w, "peer"), ms(w, "ours-native"));
    check(goal, v, id === "agent.loop" ? 20 : 3, `peer / native = ${fmtRatio(v)} (goal ≥ ${id === "agent.loop" ? 20 : 3}×)`, true);
  }
  const loop = by("agent.loop");
  const step = loop && ms(loop, "ours-native");
  check("agent loop: framework overhead per step ≤ 0.1 ms", step, 0.1, `native = ${fmt(step)}`);
  for (const size of ["1kb", "64kb", "1mb"]) {
    const w = by(`memory.refresh-${size}-unchanged`);
    const v = w && ms(w, "ours-native");
    const x = w && ms(w, "ours-wasm");
    check(`memory refresh per model call, unchanged ${size} AGENTS.md: ≤ 5 µs`, v, 0.005, `native = ${fmt(v)} (WASM ${fmt(x)})`);
  }
  const cold = by("core.cold-start");
  const c = cold && ms(cold, "ours-wasm");
  check("WASM cold start in Node ≤ 10 ms (the core.cold-start row)", c, 10, `wasm = ${fmt(c)}`);
  return out;
}

/** A horizontal bar chart of ratios on a log scale, 1× in the middle. */
function chart(title: string, rows: { label: string; value: number | undefined }[], better: "low" | "high"): string {
  const width = 760;
  const rowH = 22;
  const left = 260;
  const plot = width - left - 70;
  const max = 3; // ±3 decades
  const x = (v: number) => left + plot / 2 + (Math.max(-max, Math.min(max, Math.log10(v))) / max) * (plot / 2);
  const height = 40 + rows.length * rowH + 24;
  const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;");
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<text x="8" y="18" font-size="14" font-weight="bold">${esc(title)}</text>`,
  ];
  for (const d of [-3, -2, -1, 0, 1, 2, 3]) {
    const gx = left + plot / 2 + (d / max) * (plot / 2);
    parts.push(`<line x1="${gx}" y1="30" x2="${gx}" y2="${height - 20}" stroke="${d === 0 ? "#333" : "#ddd"}"/>`);
    parts.push(
      `<text x="${gx}" y="${height - 6}" text-anchor="middle" fill="#555">${10 ** d >= 1 ? `${10 ** d}×` : `1/${10 ** -d}×`}</text>`,
    );
  }
  rows.forEach((r, i) => {
    const y = 36 + i * rowH;
    parts.push(`<text x="${left - 8}" y="${y + 14}" text-anchor="end">${esc(r.label)}</text>`);
    if (r.value === undefined) {
      parts.push(`<text x="${left + plot / 2 + 6}" y="${y + 14}" fill="#999">n/a</text>`);
      return;
    }
    const x0 = left + plot / 2;
    const x1 = x(r.value);
    const good = better === "low" ? r.value <= 1 : r.value >= 1;
    parts.push(
      `<rect x="${Math.min(x0, x1)}" y="${y + 3}" width="${Math.max(1, Math.abs(x1 - x0))}" height="${rowH - 8}" fill="${good ? "#2e7d32" : "#c62828"}"/>`,
    );
    parts.push(`<text x="${Math.max(x0, x1) + 4}" y="${y + 14}" fill="#333">${fmtRatio(r.value)}</text>`);
  });
  parts.push("</svg>");
  return `${parts.join("\n")}\n`;
}

export interface RenderedDocs {
  markdown: string;
  charts: Record<string, string>;
}

export function renderDocs(report: BenchReport, prompt?: PromptReport): RenderedDocs {
  const rows = report.workloads;
  const name = (suffix: string) => `benchmarks-${report.size}-${suffix}.svg`;
  const charts = {
    [name("peer")]: chart(
      "Engram (native) time ÷ deepagents time — lower is better",
      rows.map((r) => ({ label: r.id, value: ratio(ms(r, "ours-native"), ms(r, "peer")) })),
      "low",
    ),
    [name("floor")]: chart(
      "Engram (native) time ÷ floor time (ripgrep/find/plain JS) — lower is better",
      rows.map((r) => ({ label: r.id, value: ratio(ms(r, "ours-native"), ms(r, "floor")) })),
      "low",
    ),
    [name("wasm")]: chart(
      "Engram WASM time ÷ native time — lower is better",
      rows.map((r) => ({ label: r.id, value: ratio(ms(r, "ours-wasm"), ms(r, "ours-native")) })),
      "low",
    ),
  };
  const m = report.machine;
  // A report merged from runs with --only: say which rows each run measured.
  const runs = new Map<string, Set<string>>();
  for (const r of rows) {
    const at = r.measuredAt ?? report.date;
    if (!runs.has(at)) runs.set(at, new Set());
    runs.get(at)?.add(r.kind === "core" ? (r.id.split(".")[0] as string) : r.kind);
  }
  const runLines =
    runs.size > 1
      ? [
          "Rows come from several runs (`--only` re-measures some rows and keeps the others); every row's subjects were measured in the same run:",
          "",
          ...[...runs].map(
            ([at, groups]) =>
              `- ${at}: ${[...groups].map((g) => `\`${g}.*\``).join(", ")} (${rows.filter((r) => (r.measuredAt ?? report.date) === at).length} rows)`,
          ),
        ]
      : [];
  const lines = [
    "# Benchmarks",
    "",
    `Generated by \`npm run bench -- --size ${report.size}\`; every answer is verified before its time counts.`,
    `${runs.size > 1 ? "Latest run" : "Run"} of ${report.date} on ${m.cores} × ${m.cpus}, ${m.memoryGb} GiB, Node ${m.node}, ${m.platform}.`,
    `Corpus: ${report.corpus.files.toLocaleString("en-US")} files, ${(report.corpus.bytes / 1e6).toFixed(1)} MB (seeded, source-like, with CJK, emoji and astral lines).`,
    ...(runLines.length ? ["", ...runLines] : []),
    "",
    "Times are medians per call with the fastest–slowest sample below them. Each group of rows runs in a fresh",
    "process; within a row every subject is warmed up until its rate settles, then the subjects' samples are",
    "taken in turns, so that all of them meet the same background load. Between samples the garbage is",
    "collected and the event loop turns once (as between a server's requests: N-API finalizers, which free",
    "native memory, run from it). Ratios are computed within one row:",
    "the machine is shared and noisy, so absolute times mean less than the ratios.",
    "",
    "## Targets",
    "",
    "| target | status | measured |",
    "|---|---|---|",
    ...[...targets(report), ...(prompt ? promptTargets(prompt) : [])].map(
      (t) => `| ${t.goal} | ${t.met === undefined ? "pending" : t.met ? "met" : "**not met**"} | ${t.detail} |`,
    ),
    "",
    "Targets not met are explained, with the measurements that show why, in",
    "[the decision record](decisions/2026-11-29-wasm-size-and-prompt-cache.md).",
    "",
    "## Results",
    "",
    "| workload | engram native | engram wasm | deepagents 1.14.1 | floor | native ÷ peer | native ÷ floor | wasm ÷ native | max RSS |",
    "|---|---|---|---|---|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| \`${r.id}\` ${r.title} | ${cell(r, "ours-native")} | ${cell(r, "ours-wasm")} | ${cell(r, "peer")} | ${cell(r, "floor")} | ` +
        `${fmtRatio(ratio(ms(r, "ours-native"), ms(r, "peer")))} | ${fmtRatio(ratio(ms(r, "ours-native"), ms(r, "floor")))} | ` +
        `${fmtRatio(ratio(ms(r, "ours-wasm"), ms(r, "ours-native")))} | ${(r.maxRssKb / 1024).toFixed(0)} MB |`,
    ),
    "",
    "Floor: plain JS (`indexOf`, `endsWith`, `split`) over the same in-memory strings for State, Store and Composite;",
    "`rg`, `find` and `readdirSync` on the same tree for Filesystem (their times include process start, as the peer's `rg` call does).",
    "The peer's grep is literal only (regex: n/a). Max RSS is the process high-water mark after the workload.",
    "",
    "`store-sqlite` and `store-postgres`: Engram's `StoreBackend` over `SqliteStore` (`@engram/sqlite`, a WAL file) and",
    "`PostgresStore` (`@engram/postgres`) on the local PostgreSQL server; the peer in both rows is `deepagents`' `StoreBackend`",
    "over LangGraph's own `PostgresStore` (`@langchain/langgraph-checkpoint-postgres`) on the same server. Each subject has its",
    "own database file or schema, loaded before timing (ours through `write`, the peer through its own `uploadFiles`) and",
    "dropped afterwards. The peer is loaded and measured once; both rows show that measurement. Ours keeps a resident mirror",
    "checked against the store's change token on every call (SQLite: `PRAGMA data_version`; PostgreSQL: LISTEN/NOTIFY); the",
    "peer reads the whole namespace from the database, 100 items a page, for every grep, glob and ls. The floor is plain JS",
    "over the same strings in memory. `ls-root` against `ls` shows whether listing costs O(result) or O(files below).",
    "",
    "`grep-common`: Engram stops a search at the core's ceiling of 10,000 matching lines (`truncated` set, verified); the peer",
    "and the floor count every line. Rows measured before that ceiling existed returned every line.",
    "",
    ...(prompt ? renderPromptSection(prompt) : []),
    "## Charts",
    "",
    ...Object.keys(charts).map((f) => `![${f}](${f})`),
    "",
  ];
  return { markdown: lines.join("\n"), charts };
}
