/**
 * Memory that survives the process: run this twice. The first run tells the agent your name; it
 * writes it to `/memories/AGENTS.md`, which lives in a SQLite file. The second run is a new
 * process with a new thread, and the agent greets you by name, because the memory file is
 * re-read into the prompt before every model call.
 *
 *   npm start            # "Noted: I will remember that your name is Ada."
 *   npm start            # "Welcome back, Ada!"
 *
 * The model is scripted (FakeChatModel), so this runs offline; swap in "openai:gpt-4.1" or any AI
 * SDK model for the real thing. `ENGRAM_EXAMPLE_DB` chooses the file (default ./memory.db).
 */
import { CompositeBackend, FakeChatModel, type ModelRequest, StoreBackend, createDeepAgent, loadCore } from "engram";
import { SqliteCheckpointer, SqliteStore } from "@engram/sqlite";

const path = process.env.ENGRAM_EXAMPLE_DB ?? "./memory.db";
const store = new SqliteStore({ path });
const checkpointer = new SqliteCheckpointer({ path });

/** What the model saw as memory: the AGENTS.md text is injected as system context. */
const remembered = (request: ModelRequest) => `${request.system}\n${request.systemContext ?? ""}`.includes("name is Ada");

// A scripted model: it saves the name when it does not know it yet, and greets when it does.
const model = new FakeChatModel((request) => {
  if (request.messages.at(-1)?.role === "tool") return "Noted: I will remember that your name is Ada.";
  if (remembered(request)) return "Welcome back, Ada!";
  return {
    toolCalls: [
      { name: "write_file", args: { file_path: "/memories/AGENTS.md", content: "# About the user\n- The user's name is Ada.\n" } },
      { name: "write_file", args: { file_path: "/scratch/todo.md", content: "- greet Ada next time\n" } },
    ],
  };
});

const agent = createDeepAgent(model, {
  // /memories/ is durable (the SQLite store, per user); everything else is thread state.
  backend: ({ userId, state }) =>
    new CompositeBackend(state, {
      "/memories/": new StoreBackend({ store, namespace: ["users", userId ?? "anonymous"] }),
    }),
  memorySources: ["/memories/AGENTS.md"],
  checkpointer,
});

try {
  const threadId = `run-${Date.now()}`;
  const out = await agent.invoke({ messages: [{ role: "user", content: "Hi, I'm Ada." }] }, { threadId, userId: "ada" });
  const memory = await store.get<{ content?: unknown }>(["users", "ada"], "/AGENTS.md");
  console.log(
    JSON.stringify({
      core: (await loadCore()).kind,
      answer: out.messages.at(-1)?.content,
      modelCalls: model.requests.length,
      memoryStored: memory !== undefined,
    }),
  );
} finally {
  await agent.close();
  store.close();
  checkpointer.close();
}
