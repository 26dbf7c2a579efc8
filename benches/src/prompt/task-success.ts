/**
 * Whether a real model still does the task after the tool schemas and descriptions were cut for
 * tokens: eight small file tasks, each checked on the files or the answer, run by the real 1.5B
 * GGUF with the tool specs as the agent sends them now and with the specs from before the cut
 * (`benches/prompt-specs/before-1b12909.json`, dumped from that commit's agent), swapped in by a
 * middleware so that nothing else differs. Greedy decoding: one run per task and variant.
 * `tsx benches/src/prompt/task-success.ts [--threads N]` → `benches/results/<date>-task-success.json`.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { FilesystemBackend, type Middleware, createDeepAgent, loadCore } from "engram";
import type { ToolSpec } from "engram/kit";
import { LlamaCppModel } from "engram/llama";

const REPO = join(dirname(fileURLToPath(import.meta.url)), "../../..");
const GGUF = process.env.ENGRAM_BENCH_GGUF ?? join(REPO, ".cache/models/Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf");
const RUNTIME = join(REPO, ".cache/llama/node_modules/node-llama-cpp");
const BEFORE: ToolSpec[] = JSON.parse(readFileSync(join(REPO, "benches/prompt-specs/before-1b12909.json"), "utf8"));

const SEED: Record<string, string> = {
  "data/count.txt": "4711\n",
  "docs/plan.md": "# Plan\n\nThis plan is a draft.\n",
  "docs/guide.md": "# Guide\n\nRead the plan first.\n",
  "src/a.ts": "export const apple = 1;\n",
  "src/b.ts": "export const banana = 2;\n",
  "src/c.ts": "export const cherry = 3;\n",
  "tmp/old.txt": "old\n",
};

interface Task {
  id: string;
  prompt: string;
  /** Whether it was done: the project's files after the run, and the answer. */
  check(read: (path: string) => string | undefined, answer: string): boolean;
}

const TASKS: Task[] = [
  {
    id: "write",
    prompt: "Create the file /notes/hello.md containing the text: hello world",
    check: (r) => /hello world/i.test(r("notes/hello.md") ?? ""),
  },
  { id: "read", prompt: "What number is written in /data/count.txt? Answer with the number.", check: (_, a) => a.includes("4711") },
  {
    id: "edit",
    prompt: "In /docs/plan.md, replace the word 'draft' with 'final'.",
    check: (r) => /final/.test(r("docs/plan.md") ?? "") && !/draft/.test(r("docs/plan.md") ?? ""),
  },
  { id: "ls", prompt: "How many files are in the /src directory? Answer with a number.", check: (_, a) => /\b(3|three)\b/i.test(a) },
  { id: "grep", prompt: "Which file under /src mentions banana? Answer with its path.", check: (_, a) => a.includes("b.ts") },
  { id: "delete", prompt: "Delete the file /tmp/old.txt.", check: (r) => r("tmp/old.txt") === undefined },
  {
    id: "copy",
    prompt: "Copy the contents of /data/count.txt into a new file /data/copy.txt.",
    check: (r) => (r("data/copy.txt") ?? "").includes("4711"),
  },
  { id: "glob", prompt: "List the markdown files under /docs.", check: (_, a) => a.includes("plan.md") && a.includes("guide.md") },
];

/** Sends `specs` in place of the tool specs the agent built (same names, other text). */
function withSpecs(specs: ToolSpec[]): Middleware {
  const byName = new Map(specs.map((s) => [s.name, s]));
  return {
    name: "earlier-tool-specs",
    beforeModel: (request) => ({ ...request, tools: (request.tools ?? []).map((t) => byName.get(t.name) ?? t) }),
  };
}

async function main(): Promise<void> {
  const threads = Number(process.argv[process.argv.indexOf("--threads") + 1]) || 2;
  const core = await loadCore();
  const model = new LlamaCppModel({ modelPath: GGUF, module: RUNTIME, threads, contextSize: 8192 });
  const results: { task: string; variant: string; ok: boolean; turns: number; promptTokens: number; answer: string }[] = [];
  try {
    for (const variant of ["now", "before the cut"] as const) {
      for (const task of TASKS) {
        const dir = mkdtempSync(join(tmpdir(), "engram-task-"));
        for (const [path, text] of Object.entries(SEED)) {
          mkdirSync(dirname(join(dir, path)), { recursive: true });
          writeFileSync(join(dir, path), text);
        }
        const agent = createDeepAgent(model, {
          core,
          backend: new FilesystemBackend({ rootDir: dir, virtualMode: true, execute: true }),
          enableMemory: false,
          enableSkills: false,
          maxTurns: 8,
          modelSettings: { temperature: 0 },
          ...(variant === "before the cut" && { middleware: [withSpecs(BEFORE)] }),
        });
        const out = await agent.invoke({ messages: [{ role: "user", content: task.prompt }] }, { threadId: task.id });
        const answer = String(out.messages.at(-1)?.content ?? "");
        const read = (path: string) => {
          try {
            return readFileSync(join(dir, path), "utf8");
          } catch {
            return undefined;
          }
        };
        const ok = task.check(read, answer);
        const turns = out.messages.filter((m) => m.role === "assistant").length;
        results.push({ task: task.id, variant, ok, turns, promptTokens: out.usage?.inputTokens ?? 0, answer: answer.slice(0, 200) });
        process.stderr.write(`[task-success] ${variant} ${task.id}: ${ok ? "done" : "NOT done"} in ${turns} turns\n`);
        rmSync(dir, { recursive: true, force: true });
      }
    }
  } finally {
    await model.dispose();
  }
  const file = join(REPO, `benches/results/${new Date().toISOString().slice(0, 10)}-task-success.json`);
  writeFileSync(file, `${JSON.stringify({ model: GGUF.split("/").pop(), measuredAt: new Date().toISOString(), results }, null, 1)}\n`);
  for (const variant of ["now", "before the cut"]) {
    const rows = results.filter((r) => r.variant === variant);
    process.stdout.write(`${variant}: ${rows.filter((r) => r.ok).length}/${rows.length} tasks done\n`);
  }
}

await main();
