/**
 * Engram in Deno, on the WebAssembly core. `npm install` (or `deno install`) fills node_modules;
 * then `deno task start`. The only permission is reading node_modules (the core's .wasm file):
 * no network, no environment, no other files. The agent keeps per-user AGENTS.md memory in a
 * Store and its scratch files in thread state.
 */
import { CompositeBackend, FakeChatModel, InMemoryStore, StoreBackend, createDeepAgent, loadCore } from "engram";

const store = new InMemoryStore(); // any Store works here, e.g. a KV-backed one
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

const agent = createDeepAgent(model, {
  backend: ({ userId, state }) =>
    new CompositeBackend(state, {
      "/memories/": new StoreBackend({ store, namespace: ["users", userId ?? "anonymous"] }),
    }),
  memorySources: ["/memories/AGENTS.md"],
});

const first = await agent.invoke({ messages: [{ role: "user", content: "I like tea." }] }, { threadId: "a", userId: "u1" });
const second = await agent.invoke({ messages: [{ role: "user", content: "What do I like?" }] }, { threadId: "b", userId: "u1" });
console.log(
  JSON.stringify({
    core: (await loadCore()).kind,
    answer: second.messages.at(-1)?.content,
    modelCalls: model.requests.length,
    wrote: first.messages.filter((m) => m.role === "tool").map((m) => m.content),
  }),
);
await agent.close();
