/**
 * The prompt rows: what each model path sends over a scripted ten-step task, and what of each
 * request repeats the one before it — within a run, across runs of a thread, and across the
 * events that change the prompt (an AGENTS.md edit, a fact added, a skill added, a
 * summarisation). deepagents runs the same task through its own OpenAI client (`ChatOpenAI`).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createOpenAI } from "@ai-sdk/openai";
import { ChatOpenAI } from "@langchain/openai";
import { createDeepAgent as createPeerAgent } from "deepagents";
import {
  type ChatModel,
  type Checkpointer,
  type Core,
  type DeepAgent,
  FilesystemBackend,
  InMemoryCheckpointer,
  InMemoryStore,
  type LanguageModelLike,
  OpenAICompatibleModel,
  createDeepAgent,
} from "engram";
import { type Part, promptTokens, shared } from "./measure.js";
import { type Recorded, type ScriptStep, type ScriptedServer, startScriptedServer } from "./server.js";

const PLAN = `# Release plan (draft)\n\n${Array.from({ length: 12 }, (_, i) => `- step ${i + 1}: check module ${i + 1}, run its tests, note changes`).join("\n")}\n`;
const TODO = "# TODO\n\n- TODO: changelog\n- TODO: version bump\n- TODO: announce\n";

/** Ten tool calls over files, then the answer: the same task for every framework. */
export const SCRIPT: readonly ScriptStep[] = [
  { name: "write_file", args: { file_path: "/notes/plan.md", content: PLAN } },
  { name: "read_file", args: { file_path: "/notes/plan.md" } },
  { name: "edit_file", args: { file_path: "/notes/plan.md", old_string: "(draft)", new_string: "(final)" } },
  { name: "read_file", args: { file_path: "/notes/plan.md" } },
  { name: "ls", args: { path: "/notes" } },
  { name: "write_file", args: { file_path: "/notes/todo.md", content: TODO } },
  { name: "glob", args: { pattern: "**/*.md", path: "/notes" } },
  { name: "grep", args: { pattern: "TODO", path: "/notes" } },
  { name: "read_file", args: { file_path: "/notes/todo.md" } },
  { name: "ls", args: { path: "/notes" } },
];
const ANSWER = "Done: /notes/plan.md is final and /notes/todo.md lists three items.";
const TASK = "Write a release plan to /notes/plan.md, mark it final, and keep a TODO list next to it.";

const AGENTS_MD = `# Project memory\n\n- The project is a TypeScript monorepo; releases are cut from main.\n- The user prefers short answers and British spelling.\n- Release notes go in /notes.\n`;
const skill = (name: string, description: string) =>
  `---\nname: ${name}\ndescription: ${description}\n---\n\n# ${name}\n\n1. Read the plan.\n2. Do the steps in order.\n`;

/** One model path of ours. */
export type OursPath = "openai-compatible" | "ai-sdk";

/** The first request after an event against the last one before it. */
export interface EventShare {
  event: string;
  /** The part the event changes (where the first difference belongs). */
  changes: Part;
  share: number;
  /** Where the two requests first differ. */
  firstChange?: { part: Part; section: string };
  /** The first difference is in the part the event changes, or later. */
  ok: boolean;
}

export interface PromptRow {
  id: string;
  label: string;
  /** Agent turns of the ten-step run (ten tool calls and the answer). */
  steps: number;
  /** o200k prompt tokens of each turn of the run, in order. */
  tokensPerStep: number[];
  totalTokens: number;
  /** Each turn's share of the previous turn, from the second turn on. */
  /** Each turn's share of the previous turn, from the second turn on; `whole`: how many turns
   * repeat the previous request entirely (it is their prefix), of `pairs`. */
  withinRun: { mean: number; min: number; whole: number; pairs: number };
  /** The tool names offered. */
  tools: string[];
  events: EventShare[];
  /** The same task with the defaults alone (no AGENTS.md, skills or facts): the figures the
   * peer, which runs with its defaults, is compared with. Ours only. */
  defaults?: Pick<PromptRow, "steps" | "tokensPerStep" | "totalTokens" | "withinRun" | "tools">;
}

const turns = (requests: readonly Recorded[]) => requests.filter((r) => r.turn);

function runFigures(requests: readonly Recorded[]): Pick<PromptRow, "steps" | "tokensPerStep" | "totalTokens" | "withinRun" | "tools"> {
  const list = turns(requests);
  const tokensPerStep = list.map((r) => promptTokens(r.body));
  const pairs = list.slice(1).map((r, i) => shared((list[i] as Recorded).body, r.body));
  const shares = pairs.map((p) => p.share);
  return {
    steps: list.length,
    tokensPerStep,
    totalTokens: tokensPerStep.reduce((a, b) => a + b, 0),
    withinRun: {
      mean: shares.reduce((a, b) => a + b, 0) / Math.max(1, shares.length),
      min: Math.min(...shares),
      whole: pairs.filter((p) => p.firstChange === undefined).length,
      pairs: pairs.length,
    },
    tools: (list[0]?.body.tools ?? []).map((t) => t.function.name).sort(),
  };
}

function eventShare(event: string, changes: Part, before: Recorded, after: Recorded): EventShare {
  const s = shared(before.body, after.body);
  const order: Part[] = ["tools", "instructions", "context", "conversation"];
  const ok = s.firstChange === undefined || order.indexOf(s.firstChange.part) >= order.indexOf(changes);
  return { event, changes, share: s.share, ...(s.firstChange && { firstChange: s.firstChange }), ok };
}

function oursModel(path: OursPath, server: ScriptedServer): ChatModel | LanguageModelLike {
  if (path === "openai-compatible") return new OpenAICompatibleModel({ baseURL: server.baseURL, model: "scripted", apiKey: "bench" });
  return createOpenAI({ baseURL: server.baseURL, apiKey: "bench" }).chat("scripted") as unknown as LanguageModelLike;
}

/** Our ten-step run and the events after it, on one thread of a Filesystem backend (with `execute`). */
export async function oursRow(path: OursPath, core: Core): Promise<PromptRow> {
  const server = await startScriptedServer(SCRIPT, ANSWER);
  const root = mkdtempSync(join(tmpdir(), "engram-prompt-"));
  const put = (p: string, text: string) => {
    mkdirSync(dirname(join(root, p)), { recursive: true });
    writeFileSync(join(root, p), text);
  };
  put("AGENTS.md", AGENTS_MD);
  put("skills/release-notes/SKILL.md", skill("release-notes", "How this project writes release notes."));
  const checkpointer: Checkpointer = new InMemoryCheckpointer();
  // Shared by the agents of the thread: the long-term facts live in it.
  const store = new InMemoryStore();
  const agents: DeepAgent[] = [];
  const agent = (extra: { maxInputTokens?: number } = {}) => {
    const a = createDeepAgent(oursModel(path, server), {
      core,
      checkpointer,
      store,
      backend: new FilesystemBackend({ rootDir: root, execute: { sandbox: "none" } }),
      longTermMemory: { debounceMs: 300_000, recall: "confidence" },
      ...extra,
    });
    agents.push(a);
    return a;
  };
  const warn = console.warn;
  console.warn = () => undefined; // the unconfined-execute warning: no command runs here
  try {
    const main = agent();
    const ltm = main.longTermMemory;
    if (!ltm) throw new Error("long-term memory is off");
    for (const content of ["The user works on the Engram project.", "The user prefers pnpm over npm."]) {
      await ltm.addFact("default", undefined, { content, category: "preference" });
    }
    const thread = { threadId: "t" };
    const run = async (a: DeepAgent, text: string) => {
      await a.invoke({ messages: [{ role: "user", content: text }] }, thread);
      return turns(server.requests);
    };
    const first = await run(main, TASK);
    const figures = runFigures(first);
    const events: EventShare[] = [];
    let last = first.at(-1) as Recorded;
    const next = async (event: string, changes: Part, change: () => unknown | Promise<unknown>, a = main) => {
      await change();
      const before = server.requests.length;
      await run(a, `${TASK} (again, after: ${event})`);
      const list = turns(server.requests.slice(before));
      events.push(eventShare(event, changes, last, list[0] as Recorded));
      last = list.at(-1) as Recorded;
    };
    await next("the next run of the thread", "conversation", () => undefined);
    await next("AGENTS.md edited", "context", () => put("AGENTS.md", `${AGENTS_MD}- Version numbers follow semver.\n`));
    await next("a long-term fact added", "context", () =>
      ltm.addFact("default", undefined, { content: "The user's releases ship on Tuesdays.", category: "preference" }),
    );
    await next("a skill added", "context", () =>
      put("skills/changelog/SKILL.md", skill("changelog", "How this project keeps its changelog.")),
    );
    // A summary: the same agent with a budget the thread has outgrown summarises before its first call.
    await next("a summarisation", "conversation", () => undefined, agent({ maxInputTokens: 6000 }));
    // The defaults alone, on a fresh directory and thread (still with `execute` offered).
    const plainRoot = mkdtempSync(join(tmpdir(), "engram-prompt-plain-"));
    let defaults: PromptRow["defaults"];
    try {
      const plain = createDeepAgent(oursModel(path, server), {
        core,
        backend: new FilesystemBackend({ rootDir: plainRoot, execute: { sandbox: "none" } }),
      });
      agents.push(plain);
      server.clear();
      await plain.invoke({ messages: [{ role: "user", content: TASK }] }, { threadId: "plain" });
      defaults = runFigures(server.requests);
    } finally {
      rmSync(plainRoot, { recursive: true, force: true });
    }
    return {
      defaults,
      id: `prompt.${path}`,
      label: `engram (${path === "ai-sdk" ? "AI SDK, @ai-sdk/openai" : "OpenAI-compatible"})`,
      ...figures,
      events,
    };
  } finally {
    console.warn = warn;
    for (const a of agents) await a.close().catch(() => undefined);
    await server.close();
    rmSync(root, { recursive: true, force: true });
  }
}

/** deepagents' ten-step run through LangChain's `ChatOpenAI` against the same server. */
export async function peerRow(): Promise<PromptRow> {
  const server = await startScriptedServer(SCRIPT, ANSWER);
  try {
    const model = new ChatOpenAI({ model: "scripted", apiKey: "bench", configuration: { baseURL: server.baseURL }, maxRetries: 0 });
    const agent = createPeerAgent({ model });
    await agent.invoke({ messages: [{ role: "user", content: TASK }] }, { recursionLimit: 100 });
    return { id: "prompt.peer", label: "deepagents 1.14.1 (ChatOpenAI)", ...runFigures(server.requests), events: [] };
  } finally {
    await server.close();
  }
}
