/**
 * Scaling out: two worker processes run agents against one PostgreSQL database. Each writes a
 * status file into the shared `/memories/` namespace; then a coordinator agent — a third
 * process's view — reads both through its memory sources, with no file system in common.
 *
 *   DATABASE_URL=postgres://engram:engram@127.0.0.1:5432/engram npm start
 *
 * `node main.js` starts the workers itself (`main.js worker <n> <run>`); in production they are
 * separate machines pointing at the same database.
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { CompositeBackend, FakeChatModel, StateBackend, StoreBackend, createDeepAgent } from "engram";
import { PostgresCheckpointer, PostgresStore } from "@engram/postgres";

const connectionString = process.env.DATABASE_URL ?? "postgres://engram:engram@127.0.0.1:5432/engram";
const [role, workerId, runId = randomUUID()] = process.argv.slice(2);
const namespace = ["example-team", runId];

const store = new PostgresStore({ connectionString });
const checkpointer = new PostgresCheckpointer({ connectionString });
const backend = () => new CompositeBackend(new StateBackend(), { "/memories/": new StoreBackend({ store, namespace }) });

try {
  if (role === "worker") {
    // A worker: its (scripted) model records that it finished, in the shared memory.
    const model = new FakeChatModel([
      { toolCalls: [{ name: "write_file", args: { file_path: `/memories/worker-${workerId}.md`, content: `worker ${workerId} done\n` } }] },
      "Recorded.",
    ]);
    const agent = createDeepAgent(model, { backend, checkpointer });
    await agent.invoke({ messages: [{ role: "user", content: "Do your part." }] }, { threadId: `${runId}-worker-${workerId}` });
    await agent.close();
  } else {
    // The coordinator: start two workers, wait for both, then ask an agent that remembers both.
    await Promise.all(["1", "2"].map((id) => runWorker(id)));
    const model = new FakeChatModel((request) => {
      // Memory reaches the model as system text (`systemContext`, the part that changes between calls).
      const memory = `${request.system}\n${request.systemContext ?? ""}`;
      const seen = [...memory.matchAll(/worker (\d) done/g)].map((m) => `worker ${m[1]} done`).sort();
      return `Both workers reported: ${seen.join(", ")}.`;
    });
    const agent = createDeepAgent(model, {
      backend,
      checkpointer,
      memorySources: ["/memories/worker-1.md", "/memories/worker-2.md"],
    });
    const out = await agent.invoke({ messages: [{ role: "user", content: "Status?" }] }, { threadId: `${runId}-coordinator` });
    await agent.close();
    console.log(JSON.stringify({ workers: 2, answer: out.messages.at(-1)?.content, modelCalls: model.requests.length }));
  }
} finally {
  await store.close();
  await checkpointer.close();
}

function runWorker(id: string): Promise<void> {
  const child = spawn(process.execPath, [...process.execArgv, process.argv[1] ?? "main.js", "worker", id, runId], { stdio: "inherit" });
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`worker ${id} exited with ${code}`))));
  });
}
