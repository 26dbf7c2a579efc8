/**
 * Tool-level rows: the text the model receives — capped at each library's default —
 * from `grep` (a common and a rare token, content mode), `glob` and `read_file`, over the whole
 * corpus held as thread state. Ours: `createFilesystemTools` on a `StateBackend` (native, WASM),
 * whose text is made in the core in one call. The peer: deepagents' own `grep`, `glob` and
 * `read_file` tools (from `createFilesystemMiddleware`) over its `StateBackend`, invoked as a
 * LangChain tool is. The `tool.composite-*` rows put that State behind a composite with a Store
 * mounted at `/memories/`, each library its own, as an agent with long-term memory has it. Each
 * answer is checked once before it is timed.
 */
import { InMemoryStore as PeerInMemoryStore } from "@langchain/langgraph";
import {
  createFilesystemMiddleware,
  CompositeBackend as PeerComposite,
  StateBackend as PeerState,
  StoreBackend as PeerStore,
} from "deepagents";
import {
  type Backend,
  CompositeBackend,
  type Core,
  InMemoryStore,
  StateBackend,
  StoreBackend,
  type Tool,
  createFilesystemTools,
  invokeTool,
} from "engram";
import { BIG_FILE, COMMON_TOKEN, type Corpus, RARE_TOKEN } from "./corpus.js";
import { type Checked, QUICK, STEADY, timeChecked } from "./measure.js";
import type { Outcome, WorkloadResult } from "./results.js";
import type { Role } from "./subjects.js";

type Args = Record<string, unknown>;

interface ToolCase {
  id: string;
  title: string;
  tool: "grep" | "glob" | "read_file";
  args: Args;
  /** The State behind a composite with a Store at `/memories/`. */
  composite?: boolean;
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
      id: "tool.composite-grep-common",
      title: `grep tool, common token '${COMMON_TOKEN}', content mode, the State behind a composite with a Store at /memories/: the capped text`,
      tool: "grep",
      args: { pattern: COMMON_TOKEN, output_mode: "content" },
      composite: true,
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

const MEMORY = "# Preferences\n- dark mode\n";

async function ours(core: Core, c: Corpus, composite: boolean): Promise<Runner> {
  const state = new StateBackend({ core });
  const w = await state.writeMany(c.files.map((f) => [f.path, f.content] as const));
  if (w.error) throw new Error(`loading the corpus: ${w.error.message}`);
  let backend: Backend = state;
  if (composite) {
    const memories = new StoreBackend({ store: new InMemoryStore(), namespace: ["memories"], core });
    await memories.write("/preferences.md", MEMORY);
    backend = new CompositeBackend(state, { "/memories/": memories }, { core });
  }
  const tools = new Map(createFilesystemTools({ backend, core }).map((t) => [t.name, t as Tool<never>]));
  return async (name, args) => (await invokeTool(tools.get(name) as Tool<never>, args)).content;
}

interface PeerTool {
  name: string;
  invoke(args: Args): Promise<unknown>;
}

async function peer(c: Corpus, composite: boolean): Promise<Runner> {
  const now = new Date().toISOString();
  const files: Record<string, { content: string; mimeType: string; created_at: string; modified_at: string }> = {};
  for (const f of c.files) files[f.path] = { content: f.content, mimeType: "text/plain", created_at: now, modified_at: now };
  let backend: unknown = new PeerState({ state: { files } } as never);
  if (composite) {
    const memories = new PeerStore({ store: new PeerInMemoryStore(), namespace: ["memories"] });
    await memories.write("/preferences.md", MEMORY);
    backend = new PeerComposite(backend as never, { "/memories/": memories as never });
  }
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
  // Each layout's subjects, made when a row first needs them.
  const layouts = new Map<boolean, [Role, string, Runner][]>();
  const subjectsFor = async (composite: boolean) => {
    let made = layouts.get(composite);
    if (!made) {
      made = [];
      for (const core of cores) {
        made.push([core.kind === "native" ? "ours-native" : "ours-wasm", `engram (${core.kind})`, await ours(core, corpus, composite)]);
      }
      made.push(["peer", "deepagents 1.14.1", await peer(corpus, composite)]);
      layouts.set(composite, made);
    }
    return made;
  };
  const rows: WorkloadResult[] = [];
  for (const k of list) {
    const subjects = await subjectsFor(k.composite ?? false);
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
