/**
 * `npm run bench -- [--size tiny|small|medium|large] [--only <substring>] [--out <dir>] [--no-docs] [--no-isolate]`
 * `npm run bench -- --render <results.json>` rewrites docs/benchmarks.md and its charts from saved results.
 * `npm run bench -- --only memory-eval [--size tiny]` runs the long-term memory evaluation with a
 * real model (the whole set; `tiny` its smoke subset), see `memory-eval/run.ts`.
 *
 * One run measures every workload on every subject — ours (native, WASM), the `deepagents` peer
 * and the floor — after verifying each answer; ratios are computed pair by pair in the same run.
 * With `--only`, the rows measured replace (or join) those of the newest earlier results of the
 * same size in `--out`, so the docs keep every row; each row records the run it comes from.
 * Each group of rows (a backend kind, the memory rows, …; see `GROUPS`) runs in a fresh process,
 * so no row pays for the garbage an earlier group left; `--no-isolate` measures all in this one.
 *
 * The `store-postgres` rows and the peer of the `store-sqlite` rows need PostgreSQL (ENGRAM_PG_URL,
 * default the server of scripts/setup.sh --test): without one they are skipped with a note, unless
 * CI is set, where its absence fails the run.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Core, loadCore } from "engram";
import { BIG_FILE, COMMON_TOKEN, type Corpus, LS_DIR, RARE_REGEX, RARE_TOKEN, SIZES, type SizeName, generateCorpus } from "./corpus.js";
import { type Checked, QUICK, STEADY, type Timing, summary, timeChecked } from "./measure.js";
import { STEPS, oursTurn, peerTurn } from "./agent-loop.js";
import { injection } from "./longterm.js";
import { memoryRefresh } from "./memory.js";
import { boundaryRows } from "./boundary.js";
import { toolRows } from "./tools.js";
import { growthRows } from "./growth.js";
import { durableRows } from "./durable.js";
import { recallRows } from "./recall.js";
import { evalArgs } from "./memory-eval/bench-args.js";
import { sandboxRows } from "./sandbox.js";
import { capabilityRows } from "./capabilities.js";
import { isDbKind, postgresUnavailable } from "./databases.js";
import type { BenchReport, Outcome, WorkloadResult } from "./results.js";
import {
  GREP_CEILING,
  KINDS,
  type Kind,
  ROUTED_FILE,
  type Role,
  type Subject,
  floorSubject,
  oursSubject,
  peerSubject,
} from "./subjects.js";

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, "..", "..");

export type { BenchReport, Outcome, WorkloadResult } from "./results.js";

interface Workload {
  id: string;
  title: string;
  /** The expected answer; `run` returns the subject's answer. */
  expected: unknown;
  /** A count of matching lines: a subject that caps its greps answers at most its cap. */
  capped?: boolean;
  run(s: Subject): Promise<unknown> | undefined;
  mutates?: boolean;
}

function args() {
  const argv = process.argv.slice(2);
  const get = (flag: string) => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const size = (get("--size") ?? "medium") as SizeName;
  if (!(size in SIZES)) throw new Error(`--size must be one of ${Object.keys(SIZES).join(", ")}`);
  return {
    size,
    only: get("--only"),
    out: get("--out") ?? join(repo, "benches", "results"),
    docs: !argv.includes("--no-docs"),
    render: get("--render"),
    isolate: !argv.includes("--no-isolate"),
    /** Internal (a child of the isolating run): the row-id prefixes to measure, comma-separated. */
    group: get("--group")?.split(","),
    /** Internal: where a child writes its rows. */
    child: get("--child"),
    /** Internal: the corpus already written to disk by the parent. */
    disk: get("--disk"),
  };
}

/**
 * The rows measured together in one process, by id prefix. Each group runs in a fresh process
 * so that one group's heap (1.5 GB after the database kinds) does not tax the next group's
 * allocation-heavy rows with garbage collection. The two database kinds share one peer.
 */
const GROUPS: readonly (readonly string[])[] = [
  ["state."],
  ["store."],
  ["store-sqlite.", "store-postgres."],
  ["filesystem."],
  ["composite."],
  ["core."],
  ["memory."],
  ["agent."],
  ["tool."],
  ["durable."],
];

function workloads(c: Corpus): Workload[] {
  let writes = 0;
  const flips = new Map<Subject, number>();
  const e = c.expected;
  // The top-level directories, and /edit_targets/ written when the subjects are prepared.
  const rootEntries = new Set(c.files.map((f) => f.path.split("/")[1])).size + 1;
  return [
    {
      id: "grep-rare",
      title: `grep literal, rare token (${e.rareLines} lines)`,
      expected: e.rareLines,
      run: (s) => s.grepLines(RARE_TOKEN, false),
    },
    {
      id: "grep-common",
      title:
        e.commonLines > GREP_CEILING
          ? `grep literal, common token (${e.commonLines} lines; engram stops at its ceiling of ${GREP_CEILING.toLocaleString("en-US")}, marked truncated)`
          : `grep literal, common token (${e.commonLines} lines)`,
      expected: e.commonLines,
      capped: true,
      run: (s) => s.grepLines(COMMON_TOKEN, false),
    },
    { id: "grep-regex", title: "grep regex", expected: e.rareLines, run: (s) => s.grepLines(RARE_REGEX, true) },
    {
      id: "grep-icase",
      title: "grep literal, rare token, case-insensitive",
      expected: e.rareLines,
      run: (s) => s.grepLines(RARE_TOKEN.toLowerCase(), false, true),
    },
    { id: "glob-ts", title: `glob **/*.ts (${e.tsFiles} files)`, expected: e.tsFiles, run: (s) => s.globCount("**/*.ts") },
    { id: "ls", title: `ls of one directory (${e.lsEntries} entries)`, expected: e.lsEntries, run: (s) => s.lsCount?.(LS_DIR) },
    {
      // Against `ls`: as many entries over ten times the files below them. Listing in O(result)
      // makes the two cost the same; listing in O(files below) makes this one ~10× dearer.
      id: "ls-root",
      title: `ls of / (${rootEntries} entries over all ${c.files.length} files)`,
      expected: rootEntries,
      run: (s) => s.lsCount?.("/"),
    },
    { id: "read", title: "read 2,000 lines at offset 5,000", expected: e.readFirstLine, run: (s) => s.readFirst(BIG_FILE, 5000, 2000) },
    {
      id: "routed-read",
      title: "routed read of a small file",
      expected: "# Preferences",
      run: (s) => s.routedRead?.(ROUTED_FILE).then((t) => t.split("\n", 1)[0]),
    },
    {
      id: "edit",
      title: "edit (unique match)",
      expected: true,
      mutates: true,
      run: (s) => {
        // Each subject edits a file of its own (the filesystem subjects share one directory),
        // flipping it between the two marks with a count of its own, so every timed call is one
        // successful edit (a shared file or count put whole samples of one subject out of step:
        // a failed edit, then the reverse one).
        const n = flips.get(s) ?? 0;
        flips.set(s, n + 1);
        const [from, to] = n % 2 === 0 ? ["MARK_A", "MARK_B"] : ["MARK_B", "MARK_A"];
        return s.edit(editTarget(s), from, to);
      },
    },
    {
      id: "write",
      title: "write a new 2 KB file",
      expected: true,
      mutates: true,
      run: (s) => s.write(`/bench_writes/w${writes++}.txt`, "lorem ipsum dolor sit amet\n".repeat(76)),
    },
  ];
}

/** The file the edit row flips, one per subject. */
function editTarget(s: Subject): string {
  return `/edit_targets/${s.role}.md`;
}

/** Runs the workload once on the subject and checks its answer. */
async function checked(s: Subject, w: Workload): Promise<Checked> {
  const label = s.label;
  let answer: unknown;
  try {
    const first = w.run(s);
    if (first === undefined) return { label, note: "not offered" };
    answer = await first;
  } catch (e) {
    return { label, note: `failed: ${(e as Error).message}` };
  }
  if (typeof answer === "number" && Number.isNaN(answer)) return { label, note: "not offered" };
  const expected = w.capped && s.grepCap !== undefined && typeof w.expected === "number" ? Math.min(w.expected, s.grepCap) : w.expected;
  if (!w.mutates && answer !== expected) {
    return { label, note: `wrong answer: ${JSON.stringify(answer)} (expected ${JSON.stringify(expected)})` };
  }
  if (w.mutates && answer !== true) return { label, note: "the operation reported failure" };
  return { label, call: () => w.run(s) as Promise<unknown> };
}

/** The row's outcome per subject: each checked once, then the correct ones timed together. */
async function timeOutcomes(subjects: readonly Subject[], w: Workload, quick: boolean): Promise<Outcome[]> {
  const list: Checked[] = [];
  for (const s of subjects) list.push(await checked(s, w));
  return timeChecked(list, quick ? QUICK : STEADY);
}

/** A fresh process: loading and instantiating the core, then its first grep (median of five). */
/** Cold starts of both cores: `COLD_RUNS` fresh processes each, taken in turns (as every row's
 * samples are) so that a burst of background load meets both. */
function coldStarts(): Record<"native" | "wasm", Timing> {
  const once = (kind: "native" | "wasm") => {
    const script =
      `const {loadCore}=await import("engram");const t=performance.now();const c=await loadCore({core:"${kind}"});` +
      `const f=c.createFileTable();f.write("/a","x needle");if(f.grep({pattern:"needle"}).matches.length!==1)process.exit(1);` +
      `console.log(performance.now()-t)`;
    return Number(execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: join(repo, "benches"), encoding: "utf8" }));
  };
  const runs = { native: [] as number[], wasm: [] as number[] };
  for (let i = 0; i < COLD_RUNS; i++) for (const kind of ["native", "wasm"] as const) runs[kind].push(once(kind));
  return { native: summary(runs.native, 1), wasm: summary(runs.wasm, 1) };
}

/** Fresh processes per core in the cold-start row. */
const COLD_RUNS = 9;

/** One of our calls, checked once to do the job (a falsy result fails the row). */
async function checkedCall(core: Core, call: () => Promise<unknown>, failNote: string): Promise<Checked> {
  const label = `engram (${core.kind})`;
  return (await call()) ? { label, call } : { label, note: failNote };
}

function pathWorkload(core: Core): () => number {
  const inputs = Array.from({ length: 1000 }, (_, i) =>
    i % 4 === 0
      ? `/a/../../etc/passwd${i}`
      : i % 4 === 1
        ? `//src/./mod${i}/../file${i}.ts`
        : i % 4 === 2
          ? `~/x${i}`
          : `/docs/${i}/readme.md`,
  );
  return () => inputs.filter((p) => core.normalizePath(p).error).length;
}

/** The newest results of `size` in `dir` (by file name, which starts with the date), if any. */
function newestResults(dir: string, size: SizeName): (BenchReport & { file: string }) | undefined {
  const name = readdirSync(dir)
    .filter((f) => f.endsWith(`-${size}.json`))
    .sort()
    .at(-1);
  if (!name) return undefined;
  const file = join(dir, name);
  return { ...(JSON.parse(readFileSync(file, "utf8")) as BenchReport), file };
}

/** The earlier report's rows with those measured now replacing or joining them, in the harness's order. */
function mergeRows(earlier: BenchReport, now: WorkloadResult[]): WorkloadResult[] {
  const fresh = new Map(now.map((r) => [r.id, r]));
  const rows = earlier.workloads.map((r) => fresh.get(r.id) ?? { ...r, measuredAt: r.measuredAt ?? earlier.date });
  const kept = new Set(rows.map((r) => r.id));
  rows.push(...now.filter((r) => !kept.has(r.id)));
  // Stable: rows of one kind keep their order; kinds follow KINDS, then the core rows.
  const rank = (r: WorkloadResult) => {
    const i = KINDS.indexOf(r.kind as Kind);
    return i < 0 ? KINDS.length : i;
  };
  return rows
    .map((r, i) => ({ r, i }))
    .sort((a, b) => rank(a.r) - rank(b.r) || a.i - b.i)
    .map(({ r }) => r);
}

/** The prompt rows' module builds the o200k tokenizer as it loads (~90 MB of live heap): loaded
 * only where prompt rows are measured or the page is written, so that a group's child process
 * starts small (a large heap made its collections, and the WASM rows' warm-up, slower). */
const promptModule = () => import("./prompt/main.js");

async function writeDocs(report: BenchReport, out = join(repo, "benches", "results")): Promise<void> {
  (await promptModule()).writeDocs(report, out);
}

/** Writes the corpus to a fresh temporary directory (the Filesystem rows and the floor read it). */
function writeCorpus(size: SizeName, corpus: Corpus, log: (m: string) => void): string {
  const disk = mkdtempSync(join(tmpdir(), `engram-bench-${size}-`));
  log(`corpus ${size}: ${corpus.files.length} files, ${(corpus.bytes / 1e6).toFixed(1)} MB → ${disk}`);
  for (const f of corpus.files) {
    mkdirSync(join(disk, dirname(f.path)), { recursive: true });
    writeFileSync(join(disk, f.path), f.content);
  }
  return disk;
}

/** Measures, in this process, every wanted row. */
async function measureRows(
  quick: boolean,
  corpus: Corpus,
  disk: string,
  wanted: (id: string) => boolean,
  log: (m: string) => void,
): Promise<WorkloadResult[]> {
  const native = await loadCore({ core: "native" });
  const wasm = await loadCore({ core: "wasm" });
  const results: WorkloadResult[] = [];
  const offered = (kind: Kind, id: string) => (id !== "routed-read" || kind === "composite") && (id !== "ls-root" || isDbKind(kind));
  // Asked once, before the first kind that needs it.
  let pgDown: Promise<string | undefined> | undefined;
  // The database kinds share one peer (deepagents on LangGraph's PostgresStore), loaded and
  // measured once: its rows in both kinds show the same outcome.
  const dbPeer: { subject?: Promise<Subject>; outcomes: Map<string, Outcome> } = { outcomes: new Map() };

  try {
    for (const kind of KINDS) {
      const list = workloads(corpus).filter((w) => wanted(`${kind}.${w.id}`) && offered(kind, w.id));
      if (list.length === 0) continue;
      const down = isDbKind(kind) ? await (pgDown ??= postgresUnavailable()) : undefined;
      if (down && kind === "store-postgres") {
        log(`${kind}: skipped: ${down} (set ENGRAM_PG_URL; under CI this fails the run)`);
        continue;
      }
      log(`${kind}: preparing subjects`);
      const kindStarted = performance.now();
      const subjects: Subject[] = [];
      /** Roles that cannot run here, with the note their rows carry. */
      const skipped = new Map<Role, Outcome>();
      try {
        subjects.push(await oursSubject(kind, native, corpus, disk), await oursSubject(kind, wasm, corpus, disk));
        if (down) skipped.set("peer", { label: "deepagents 1.14.1 (LangGraph PostgresStore)", ok: false, note: `skipped: ${down}` });
        else if (isDbKind(kind)) {
          dbPeer.subject ??= peerSubject(kind, corpus, disk);
          subjects.push(await dbPeer.subject);
        } else subjects.push(await peerSubject(kind, corpus, disk));
        subjects.push(floorSubject(kind, corpus, disk));
        for (const s of subjects) await s.write(editTarget(s), "alpha MARK_A omega\n");
        log(`${kind}: subjects ready in ${((performance.now() - kindStarted) / 1000).toFixed(1)} s`);
        for (const w of list) {
          const outcomes: WorkloadResult["outcomes"] = {};
          // The database kinds' shared peer is timed with the first of them only.
          const sharedPeer = (s: Subject) => isDbKind(kind) && s.role === "peer";
          const known = (s: Subject) => (sharedPeer(s) ? dbPeer.outcomes.get(w.id) : undefined);
          const fresh = subjects.filter((s) => !known(s));
          const timed = await timeOutcomes(fresh, w, quick);
          for (const s of subjects) {
            const o = known(s) ?? (timed[fresh.indexOf(s)] as Outcome);
            if (sharedPeer(s)) dbPeer.outcomes.set(w.id, o);
            outcomes[s.role] = o;
          }
          for (const [role, o] of skipped) outcomes[role] = o;
          for (const role of ["peer", "floor"] as const) {
            // Keep the roles in their usual order (a skipped peer joined last).
            const o = outcomes[role];
            delete outcomes[role];
            if (o) outcomes[role] = o;
          }
          results.push({ id: `${kind}.${w.id}`, title: w.title, kind, outcomes, maxRssKb: process.resourceUsage().maxRSS });
          log(
            `${kind}.${w.id}: ${Object.values(outcomes)
              .map((o) => `${o?.label} ${o?.ok ? `${o.timing?.medianMs.toFixed(3)} ms` : o?.note}`)
              .join(" · ")}`,
          );
        }
      } finally {
        for (const s of subjects) if (!isDbKind(kind) || s.role !== "peer") await s.close?.();
      }
      log(`${kind}: done in ${((performance.now() - kindStarted) / 1000).toFixed(1)} s`);
    }
  } finally {
    if (dbPeer.subject) await (await dbPeer.subject.catch(() => undefined))?.close?.();
  }

  if (wanted("core.paths")) {
    const list: Checked[] = [native, wasm].map((core) => {
      const run = pathWorkload(core);
      const label = `engram (${core.kind})`;
      return run() === 500 ? { label, call: async () => run() } : { label, note: "wrong escape count" };
    });
    const [n, w] = await timeChecked(list, quick ? QUICK : STEADY);
    const outcomes: WorkloadResult["outcomes"] = { "ours-native": n, "ours-wasm": w };
    results.push({
      id: "core.paths",
      title: "resolve 1,000 paths (half of them hostile)",
      kind: "core",
      outcomes,
      maxRssKb: process.resourceUsage().maxRSS,
    });
  }
  for (const [label, bytes] of [
    ["1 KB", 1024],
    ["64 KB", 64 * 1024],
    ["1 MB", 1024 * 1024],
  ] as const) {
    for (const changed of [false, true]) {
      const id = `memory.refresh-${label.replace(" ", "").toLowerCase()}-${changed ? "changed" : "unchanged"}`;
      if (!wanted(id)) continue;
      const list: Checked[] = [];
      for (const core of [native, wasm]) {
        list.push(await checkedCall(core, await memoryRefresh(core, bytes, changed), "memory missing from the prompt"));
      }
      const [n, w] = await timeChecked(list, quick ? QUICK : STEADY);
      const outcomes: WorkloadResult["outcomes"] = { "ours-native": n, "ours-wasm": w };
      results.push({
        id,
        title: `memory refresh per model call, AGENTS.md ${label}, ${changed ? "changed (includes the write)" : "unchanged"}`,
        kind: "core",
        outcomes,
        maxRssKb: process.resourceUsage().maxRSS,
      });
    }
  }
  if (wanted("memory.redact-64kb")) {
    // What every memory write pays: the redactor over a 64 KB AGENTS.md holding three secrets.
    const line = "- The user prefers concise answers; the project uses pnpm and Rust 2021.\n";
    const secrets = [
      "- OpenAI key sk-proj-A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0U1v2W3x4\n",
      "- aws AKIAZ3MX7QP2RT5WLK8N\n",
      "password: Tr0ub4dor&3xyz\n",
    ];
    const body = line.repeat(Math.round((64 * 1024) / line.length / 3));
    const text = secrets.map((s) => body + s).join("");
    const list: Checked[] = [];
    for (const core of [native, wasm]) {
      list.push(await checkedCall(core, async () => core.redactSecrets(text).count === 3, "not three secrets redacted"));
    }
    const [n, w] = await timeChecked(list, quick ? QUICK : STEADY);
    results.push({
      id: "memory.redact-64kb",
      title: "secret redaction of a memory write, AGENTS.md 64 KB with three secrets",
      kind: "core",
      outcomes: { "ours-native": n, "ours-wasm": w },
      maxRssKb: process.resourceUsage().maxRSS,
    });
  }
  const ask = "How do we handle Postgres releases?";
  const injections = [
    ["memory.longterm-inject-confidence", "confidence", [ask], "by confidence"],
    [
      "memory.longterm-inject-relevance",
      "relevance",
      [ask, "Which Postgres releases do we handle?"],
      "by relevance, a new request each call",
    ],
    ["memory.longterm-inject-relevance-repeat", "relevance", [ask], "by relevance, the same request (each model call of one run)"],
  ] as const;
  for (const [id, recall, requests, how] of injections) {
    if (!wanted(id)) continue;
    const list: Checked[] = [];
    for (const core of [native, wasm]) {
      list.push(await checkedCall(core, await injection(core, recall, requests), "the injected block misses the expected facts"));
    }
    const [n, w] = await timeChecked(list, quick ? QUICK : STEADY);
    const outcomes: WorkloadResult["outcomes"] = { "ours-native": n, "ours-wasm": w };
    results.push({
      id,
      title: `long-term memory injection, 1,000 facts into 2,000 tokens, ${how}`,
      kind: "core",
      outcomes,
      maxRssKb: process.resourceUsage().maxRSS,
    });
  }
  if (wanted("agent.loop")) {
    const outcomes: WorkloadResult["outcomes"] = {};
    const opts = quick
      ? { warmup: 1, samples: 3, minSampleMs: 2, budgetMs: 300 }
      : { warmup: 3, samples: 9, minSampleMs: 50, budgetMs: 4000 };
    const subjects: [Role, string, () => Promise<number>][] = [
      ["ours-native", "engram (native)", await oursTurn(native, corpus)],
      ["ours-wasm", "engram (wasm)", await oursTurn(wasm, corpus)],
      ["peer", "deepagents 1.14.1", peerTurn(corpus)],
    ];
    const list: Checked[] = [];
    for (const [, label, turn] of subjects) {
      try {
        const tools = await turn();
        list.push(tools === STEPS ? { label, call: turn } : { label, note: `wrong answer: ${tools} tool results (expected ${STEPS})` });
      } catch (e) {
        list.push({ label, note: `failed: ${(e as Error).message}` });
      }
    }
    // Per step: one model call plus its tool call; the final answer is one more model call.
    const per = (ms: number) => ms / (STEPS + 1);
    const timed = await timeChecked(list, opts);
    subjects.forEach(([role], i) => {
      const o = timed[i] as Outcome;
      const t = o.timing;
      outcomes[role] = t ? { ...o, timing: { ...t, medianMs: per(t.medianMs), minMs: per(t.minMs), maxMs: per(t.maxMs) } } : o;
    });
    results.push({
      id: "agent.loop",
      title: `agent-loop overhead per step (${STEPS} tool steps, scripted model, the corpus as thread files)`,
      kind: "core",
      outcomes,
      maxRssKb: process.resourceUsage().maxRSS,
    });
    log(
      `agent.loop: ${Object.values(outcomes)
        .map((o) => `${o?.label} ${o?.ok ? `${o.timing?.medianMs.toFixed(3)} ms/step` : o?.note}`)
        .join(" · ")}`,
    );
  }
  results.push(...growthRows([native, wasm], wanted, quick));
  results.push(...(await durableRows(wanted, quick)));
  results.push(...(await recallRows({ native, wasm }, wanted, quick, log)));
  results.push(...(await toolRows(corpus, [native, wasm], wanted, quick)));
  results.push(...(await boundaryRows([native, wasm], corpus, wanted, quick)));
  results.push(...(await sandboxRows(wanted, quick)));
  results.push(...(await capabilityRows([native, wasm], wanted, quick)));
  if (wanted("core.cold-start")) {
    const cold = coldStarts();
    results.push({
      id: "core.cold-start",
      title: "cold start: load + instantiate the core, first grep (fresh process)",
      kind: "core",
      outcomes: {
        "ours-native": { label: "engram (native)", ok: true, timing: cold.native },
        "ours-wasm": { label: "engram (wasm)", ok: true, timing: cold.wasm },
      },
      maxRssKb: process.resourceUsage().maxRSS,
    });
  }

  return results;
}

/** Whether a run asked for `only` may want a row of `group` (a substring without a dot may
 * match anywhere). */
function groupMayMatch(group: readonly string[], only: string | undefined): boolean {
  if (!only?.includes(".")) return true;
  return group.some((p) => only.startsWith(p) || p.startsWith(only));
}

/** Each group of rows in a fresh process (this script with `--child`), one after the other. A
 * tiny run, whose times mean nothing, puts every group in one child: each start loads the peer's
 * dependencies through tsx (about 5 s), and one child still goes through the path a page run takes. */
function measureIsolated(size: SizeName, only: string | undefined, disk: string, log: (m: string) => void): WorkloadResult[] {
  const rows: WorkloadResult[] = [];
  const dir = mkdtempSync(join(tmpdir(), "engram-bench-rows-"));
  const groups = size === "tiny" ? [GROUPS.flat()] : GROUPS;
  try {
    for (const [i, group] of groups.entries()) {
      if (!groupMayMatch(group, only)) continue;
      const file = join(dir, `${i}.json`);
      const argv = ["--size", size, "--group", group.join(","), "--child", file, "--disk", disk, ...(only ? ["--only", only] : [])];
      log(`${group.join(" ")}: a fresh process`);
      execFileSync(process.execPath, [...process.execArgv, "--expose-gc", fileURLToPath(import.meta.url), ...argv], {
        stdio: ["ignore", "inherit", "inherit"],
        env: process.env,
      });
      rows.push(...(JSON.parse(readFileSync(file, "utf8")) as WorkloadResult[]));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

async function main() {
  const memoryEval = evalArgs(process.argv.slice(2));
  if (memoryEval) {
    // A model's answers, not a timing: its own runner, which writes its own section of the docs.
    const { runMemoryEval } = await import("./memory-eval/run.js");
    await runMemoryEval(memoryEval);
    return;
  }
  const { size, only, out, docs, render, isolate, group, child, disk: givenDisk } = args();
  if (render) {
    await writeDocs(JSON.parse(readFileSync(render, "utf8")) as BenchReport, dirname(render));
    process.stderr.write(`[bench] docs/benchmarks.md rendered from ${render}\n`);
    return;
  }
  const quick = size === "tiny";
  const started = performance.now();
  const log = (m: string) => process.stderr.write(`[bench] ${m}\n`);
  if (only?.startsWith("prompt")) {
    // The prompt rows need no corpus: measured here, the docs rendered with the newest other rows.
    await (await promptModule()).measureAndSave(out, log);
    const earlier = newestResults(out, size);
    if (docs && earlier) await writeDocs(earlier, out);
    log(`prompt rows written to ${out}${docs && earlier ? ` and docs/benchmarks.md (with ${earlier.file})` : ""}`);
    return;
  }
  const wanted = (id: string) => (!only || id.includes(only)) && (!group || group.some((p) => id.startsWith(p)));
  const corpus = generateCorpus(size);
  const disk = givenDisk ?? writeCorpus(size, corpus, log);
  let results: WorkloadResult[];
  try {
    if (child) {
      writeFileSync(child, JSON.stringify(await measureRows(quick, corpus, disk, wanted, log)));
      return;
    }
    results = isolate ? measureIsolated(size, only, disk, log) : await measureRows(quick, corpus, disk, wanted, log);
  } finally {
    if (!givenDisk) rmSync(disk, { recursive: true, force: true });
  }

  const date = new Date().toISOString();
  for (const r of results) r.measuredAt = date;
  const report: BenchReport = {
    date,
    size,
    corpus: { files: corpus.files.length, bytes: corpus.bytes },
    wasmBytes: statSync(join(repo, "bindings", "wasm", "pkg", "engram_wasm_bg.wasm")).size,
    machine: {
      cpus: cpus()[0]?.model ?? "unknown",
      cores: cpus().length,
      memoryGb: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      platform: `${process.platform}-${process.arch}`,
    },
    workloads: results,
  };
  mkdirSync(out, { recursive: true });
  const file = join(out, `${report.date.slice(0, 10)}-${size}.json`);
  const earlier = only ? newestResults(out, size) : undefined;
  if (earlier) {
    report.workloads = mergeRows(earlier, results);
    log(`merged with ${earlier.file}: ${results.length} rows measured now, ${report.workloads.length - results.length} kept`);
  }
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  if (!only) await (await promptModule()).measureAndSave(out, log, quick);
  if (docs) await writeDocs(report, out);
  const failures = results.flatMap((r) =>
    Object.values(r.outcomes)
      .filter((o) => o && !o.ok && o.note !== "not offered" && !o.note?.startsWith("skipped"))
      .map((o) => `${r.id}: ${o?.label}: ${o?.note}`),
  );
  log(`wrote ${file}${docs ? " and docs/benchmarks.md" : ""} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  // Only our own wrong answers fail the run; a peer's are reported in the results.
  const ours = failures.filter((f) => f.includes("engram ("));
  for (const f of failures) log(`verification: ${f}`);
  if (ours.length > 0) process.exit(1);
}

await main();
