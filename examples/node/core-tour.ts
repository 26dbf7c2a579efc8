/**
 * The Engram core on both builds: a resident file table, a router, grep, glob, read and edit.
 * Run it with `node_modules/.bin/tsx examples/node/core-tour.ts` (after `npm run setup`).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  CompositeBackend,
  type Core,
  type CoreKind,
  FilesystemBackend,
  InMemoryStore,
  StateBackend,
  StoreBackend,
  FakeChatModel,
  createDeepAgent,
  createFilesystemTools,
  invokeTool,
  loadCore,
} from "engram";

const kinds: CoreKind[] = ["native", "wasm"];

function section(title: string): void {
  console.log(`\n\x1b[1m${title}\x1b[0m`);
}

function demo(core: Core): void {
  section(`── ${core.kind} core ──`);
  const table = core.createFileTable();
  table.write("/AGENTS.md", "# Memory\n- The user prefers TypeScript.\n- 用户喜欢简洁的回答。\n");
  table.write("/src/app.ts", 'import { run } from "./run";\n// TODO: handle errors\nrun();\n');
  table.write("/src/run.ts", "export function run() {\n  console.log('running'); // TODO: logging\n}\n");
  table.write("/memories/notes.md", "Remember: deploy on Fridays is forbidden.\n");

  const router = core.createRouter(["/memories/"]);
  for (const p of ["/memories/notes.md", "/memoriesX/a.md", "/src/../memories", "/../etc/passwd"]) {
    const r = router.route(p);
    console.log(`route ${p.padEnd(20)} → ${r.error ? `error ${r.error.code}` : `${r.prefix ?? "(default)"} ${r.path}`}`);
  }

  const todo = table.grep({ pattern: "TODO" });
  for (const m of todo.matches ?? []) console.log(`grep TODO        ${m.path}:${m.line}: ${m.text.trim()}`);
  const rx = table.grep({ pattern: "^export\\s+function\\s+(\\w+)", regex: true, outputMode: "files_with_matches" });
  console.log(`grep regex       ${rx.files?.join(", ")}`);
  console.log(
    `glob **/*.ts     ${table
      .glob({ pattern: "**/*.ts" })
      .files?.map((f) => f.path)
      .join(", ")}`,
  );
  console.log(
    `ls /             ${table
      .ls("/")
      .entries?.map((e) => e.path)
      .join("  ")}`,
  );

  const edit = table.edit({ path: "/AGENTS.md", oldString: "TypeScript", newString: "TypeScript and Rust" });
  console.log(`edit AGENTS.md   ${edit.error ? edit.error.message : `${edit.occurrences} replacement, version ${edit.version}`}`);
  const read = table.read("/AGENTS.md", { offset: 0, limit: 3 });
  if (!read.error) console.log(core.formatNumbered(read.content, 1));
  console.log(`bad path         ${table.read("/a/../../x").error?.message}`);

  // A few thousand files, to show the resident table at work.
  const big = core.createFileTable();
  for (let i = 0; i < 5000; i++) {
    const rare = i % 500 === 0 ? "needle_42 " : "";
    big.write(`/repo/pkg${i % 20}/mod${i % 7}/file${i}.ts`, `// file ${i}\nexport const v${i} = ${i}; ${rare}\n`.repeat(20));
  }
  let t = performance.now();
  const hits = big.grep({ pattern: "needle_42", outputMode: "count" });
  const grepMs = performance.now() - t;
  t = performance.now();
  const globbed = big.glob({ pattern: "**/mod3/*.ts", path: "/repo" });
  const globMs = performance.now() - t;
  const total = Object.values(hits.counts ?? {}).reduce((a, b) => a + b, 0);
  console.log(
    `5,000 files      grep: ${total} lines in ${grepMs.toFixed(2)} ms · glob: ${globbed.files?.length} files in ${globMs.toFixed(2)} ms`,
  );
  table.dispose();
  big.dispose();
}

/** The backends and the model-facing tools over one composite tree. */
async function backends(core: Core): Promise<void> {
  section("── backends and tools ──");
  const project = mkdtempSync(join(tmpdir(), "engram-demo-"));
  writeFileSync(join(project, "main.py"), "def main():\n    # TODO: parse args\n    print('hi')\n");
  const backend = new CompositeBackend(
    new StateBackend({ core }),
    {
      "/memories/": new StoreBackend({ store: new InMemoryStore(), namespace: ["users", "demo"], core }),
      "/workspace/": new FilesystemBackend({ rootDir: project, core }),
    },
    { core },
  );
  await backend.write("/memories/preferences.md", "- Answer briefly.\n- TODO: learn the user's timezone\n");
  await backend.write("/scratch/plan.md", "1. read the code\n2. TODO: fix the bug\n");
  const tools = new Map(createFilesystemTools({ backend, core }).map((t) => [t.name, t]));
  const call = async (name: string, args: object) => {
    const r = await invokeTool(tools.get(name)!, args);
    console.log(`\n> ${name} ${JSON.stringify(args)}\n${r.content}`);
  };
  await call("ls", { path: "/" });
  await call("grep", { pattern: "TODO", output_mode: "content" });
  await call("read_file", { file_path: "/workspace/main.py", limit: 2 });
  await call("read_file", { file_path: "/workspace/../../etc/passwd" });
  rmSync(project, { recursive: true, force: true });
}

/** An offline agent turn: a scripted model saves a preference to memory and sees it next call. */
async function agentTurn(core: Core): Promise<void> {
  section("── a scripted agent turn (offline) ──");
  const backend = new StateBackend({ core });
  await backend.write("/AGENTS.md", "# Memory\n- (nothing yet)\n");
  const model = new FakeChatModel([
    {
      content: "I'll remember that.",
      toolCalls: [
        {
          name: "edit_file",
          args: { file_path: "/AGENTS.md", old_string: "- (nothing yet)", new_string: "- The user prefers short answers." },
        },
      ],
    },
    "Noted — short answers from now on.",
  ]);
  const agent = createDeepAgent(model, { core, backend, memoryFile: "/AGENTS.md" });
  for await (const ev of agent.stream({ messages: [{ role: "user", content: "Please keep answers short." }] }, { threadId: "demo" })) {
    if (ev.type === "tool_start") console.log(`tool_start  ${ev.call.name} ${JSON.stringify(ev.call.args)}`);
    if (ev.type === "tool_end") console.log(`tool_end    ${ev.result}`);
    if (ev.type === "final") console.log(`final       ${ev.output.messages.at(-1)?.content}`);
  }
  const seen = /<agent_memory>\n([\s\S]*?)\n<\/agent_memory>/.exec(model.requests[1]?.system ?? "")?.[1];
  console.log(`memory the model saw on its next call:\n${seen}`);
}

for (const kind of kinds) {
  demo(await loadCore({ core: kind }));
}
await backends(await loadCore());
await agentTurn(await loadCore());
