/**
 * Tool-level rows (issue 13): the text the model receives — capped at each library's default —
 * from `grep` (a common and a rare token, content mode), `glob` and `read_file`, over the whole
 * corpus held as thread state. Ours: `createFilesystemTools` on a `StateBackend` (native, WASM),
 * whose text is made in the core in one call. The peer: deepagents' own `grep`, `glob` and
 * `read_file` tools (from `createFilesystemMiddleware`) over its `StateBackend`, invoked as a
 * LangChain tool is. Each answer is checked once before it is timed.
 */
import { createFilesystemMiddleware, StateBackend as PeerState } from "deepagents";
import { type Core, StateBackend, type Tool, createFilesystemTools, invokeTool } from "engram";
import { BIG_FILE, COMMON_TOKEN, type Corpus, RARE_TOKEN } from "./corpus.js";
import { type Checked, QUICK, STEADY, timeChecked } from "./measure.js";
import type { Outcome, WorkloadResult } from "./run.js";
import type { Role } from "./subjects.js";

type Args = Record<string, unknown>;

interface ToolCase {
  id: string;
  title: string;
  tool: "grep" | "glob" | "read_file";
  args: Args;
  /** Whether a text answers the call (both libraries format differently). */
  check(text: string): boolean;
}

function cases(c: Corpus): ToolCase[] {
  return [
    {
      id: "tool.grep-common",
      title: `grep tool, common token '${COMMON_TOKEN}' (${c.expected.commonLines.toLocaleString("en-US")} lines), content mode: the capped text`,
      tool: "grep",
      args: { pattern: COMMON_TOKEN, output_mode: "content" },
      check: (t) => t.split("\n").filter((l) => l.includes(COMMON_TOKEN)).length >= Math.min(500, c.expected.commonLines),
    },
    {
      id: "tool.grep-rare",
      title: `grep tool, rare token (${c.expected.rareLines} lines), content mode: the text`,
      tool: "grep",
      args: { pattern: RARE_TOKEN, output_mode: "content" },
      check: (t) => t.split("\n").filter((l) => l.includes(RARE_TOKEN)).length === c.expected.rareLines,
    },
    {
      id: "tool.glob",
      title: `glob tool, **/*.ts (${c.expected.tsFiles.toLocaleString("en-US")} files): the capped text`,
      tool: "glob",
      args: { pattern: "**/*.ts" },
      check: (t) => t.split("\n").filter((l) => l.endsWith(".ts")).length >= Math.min(1000, c.expected.tsFiles),
    },
    {
      id: "tool.read",
      title: "read_file tool, 100 lines at offset 5,000 of a 10,000-line file: the numbered text",
      tool: "read_file",
      args: { file_path: BIG_FILE, offset: 5000, limit: 100 },
      // Lines 5000..5099 of `export const line<i> = …`, and not line 5100.
      check: (t) => t.includes(c.expected.readFirstLine) && t.includes("line5099 =") && !t.includes("line5100 ="),
    },
  ];
}

type Runner = (tool: ToolCase["tool"], args: Args) => Promise<string>;

async function ours(core: Core, c: Corpus): Promise<Runner> {
  const backend = new StateBackend({ core });
  const w = await backend.writeMany(c.files.map((f) => [f.path, f.content] as const));
  if (w.error) throw new Error(`loading the corpus: ${w.error.message}`);
  const tools = new Map(createFilesystemTools({ backend, core }).map((t) => [t.name, t as Tool<never>]));
  return async (name, args) => (await invokeTool(tools.get(name) as Tool<never>, args)).content;
}

interface PeerTool {
  name: string;
  invoke(args: Args): Promise<unknown>;
}

function peer(c: Corpus): Runner {
  const now = new Date().toISOString();
  const files: Record<string, { content: string; mimeType: string; created_at: string; modified_at: string }> = {};
  for (const f of c.files) files[f.path] = { content: f.content, mimeType: "text/plain", created_at: now, modified_at: now };
  const backend = new PeerState({ state: { files } } as never);
  const mw = createFilesystemMiddleware({ backend: backend as never }) as unknown as { tools: PeerTool[] };
  const tools = new Map(mw.tools.map((t) => [t.name, t]));
  const text = (out: unknown): string =>
    typeof out === "string"
      ? out
      : Array.isArray(out)
        ? out.map((b) => (typeof b === "string" ? b : String((b as { text?: unknown }).text ?? ""))).join("")
        : String((out as { content?: unknown })?.content ?? out);
  return async (name, args) => text(await (tools.get(name) as PeerTool).invoke(args));
}

async function checked(label: string, run: Runner, k: ToolCase): Promise<Checked> {
  try {
    const first = await run(k.tool, k.args);
    if (!k.check(first)) return { label, note: `wrong answer: ${JSON.stringify(first.slice(0, 120))}…` };
    return { label, call: () => run(k.tool, k.args) };
  } catch (e) {
    return { label, note: `failed: ${(e as Error).message}` };
  }
}

/** The tool-level rows, for `run.ts`. */
export async function toolRows(corpus: Corpus, cores: Core[], wanted: (id: string) => boolean, quick: boolean): Promise<WorkloadResult[]> {
  const list = cases(corpus).filter((k) => wanted(k.id));
  if (list.length === 0) return [];
  const opts = quick ? QUICK : STEADY;
  const subjects: [Role, string, Runner][] = [];
  for (const core of cores) {
    subjects.push([core.kind === "native" ? "ours-native" : "ours-wasm", `engram (${core.kind})`, await ours(core, corpus)]);
  }
  subjects.push(["peer", "deepagents 1.14.1", peer(corpus)]);
  const rows: WorkloadResult[] = [];
  for (const k of list) {
    const list: Checked[] = [];
    for (const [, label, run] of subjects) list.push(await checked(label, run, k));
    const timed = await timeChecked(list, opts);
    const outcomes: WorkloadResult["outcomes"] = {};
    subjects.forEach(([role], i) => {
      outcomes[role] = timed[i] as Outcome;
    });
    rows.push({ id: k.id, title: k.title, kind: "core", outcomes, maxRssKb: process.resourceUsage().maxRSS });
    process.stderr.write(
      `[bench] ${k.id}: ${Object.values(outcomes)
        .map((o) => `${o?.label} ${o?.ok ? `${o.timing?.medianMs.toFixed(3)} ms` : o?.note}`)
        .join(" · ")}\n`,
    );
  }
  return rows;
}
