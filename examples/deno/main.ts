/**
 * Engram in Deno on the WebAssembly core, with its memory and threads in Deno KV
 * (`@engram/deno`). `npm install` (or `deno install`) fills node_modules; then `deno task start`.
 * The permissions: Deno KV (`--unstable-kv`), reading node_modules (the core's .wasm file), and
 * reading and writing data/ (the database): no network, no environment, no other files. The
 * agent keeps per-user AGENTS.md memory in the KV store and its threads in the KV checkpointer;
 * the second conversation runs on the database opened anew, as after a restart.
 */
import { DenoKvCheckpointer, DenoKvStore, openKv } from "@engram/deno";
import { CompositeBackend, type DeepAgent, FakeChatModel, StoreBackend, createDeepAgent, loadCore } from "engram";

const model = new FakeChatModel((request, call) => {
  if (call === 0) {
    return {
      toolCalls: [
        { name: "write_file", args: { file_path: "/memories/AGENTS.md", content: "- The user likes tea.\n" } },
        { name: "write_file", args: { file_path: "/notes.md", content: "tea, not coffee\n" } },
      ],
    };
  }
  if (call === 1) return "Noted.";
  // A new conversation: the memory file is in the prompt, the first thread's notes are not.
  return `${request.system}\n${request.systemContext ?? ""}`.includes("likes tea") ? "You like tea." : "I don't know yet.";
});

/** Runs `fn` with an agent on the database, then closes both (as a process that exits). */
async function session<T>(fn: (agent: DeepAgent) => Promise<T>): Promise<T> {
  const kv = await openKv("data/engram.kv");
  const store = new DenoKvStore(kv);
  const agent = createDeepAgent(model, {
    // Run claims are lock files in data/: each step of a run is committed as it happens.
    checkpointer: new DenoKvCheckpointer(kv, { runLocks: "data/engram.runs" }),
    backend: ({ userId, state }) =>
      new CompositeBackend(state, {
        "/memories/": new StoreBackend({ store, namespace: ["users", userId ?? "anonymous"] }),
      }),
    memorySources: ["/memories/AGENTS.md"],
  });
  try {
    return await fn(agent);
  } finally {
    await agent.close();
    kv.close();
  }
}

await Deno.mkdir("data", { recursive: true });
// A new user each run, so the example can run again on the same database.
const userId = `u-${crypto.randomUUID()}`;
const first = await session((agent) =>
  agent.invoke({ messages: [{ role: "user", content: "I like tea." }] }, { threadId: `${userId}-a`, userId }),
);
const second = await session((agent) =>
  agent.invoke({ messages: [{ role: "user", content: "What do I like?" }] }, { threadId: `${userId}-b`, userId }),
);
console.log(
  JSON.stringify({
    core: (await loadCore()).kind,
    answer: second.messages.at(-1)?.content,
    modelCalls: model.requests.length,
    wrote: first.messages.filter((m) => m.role === "tool").map((m) => m.content),
  }),
);
