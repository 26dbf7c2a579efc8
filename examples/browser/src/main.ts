/**
 * Engram in a web page: the agent streams its turn into the page. Memory (AGENTS.md) lives in
 * an in-memory Store for the page's lifetime; give StoreBackend any Store — e.g. one on
 * IndexedDB or your server's API — to keep it longer.
 */
import { CompositeBackend, FakeChatModel, InMemoryStore, StoreBackend, createDeepAgent, loadCore } from "engram";

const log = document.getElementById("log") as HTMLElement;
const print = (line: string) => log.append(`${line}\n`);

async function main() {
  const core = await loadCore(); // WebAssembly, fetched next to app.js
  const memory = new InMemoryStore();
  const scripted = new FakeChatModel((request, n) => {
    const known = `${request.system}\n${request.systemContext ?? ""}`.includes("likes tea");
    if (n === 0) {
      return {
        toolCalls: [
          { name: "write_file", args: { file_path: "/memories/AGENTS.md", content: "- The user likes tea.\n" } },
          { name: "write_file", args: { file_path: "/notes.md", content: "tea, not coffee\n" } },
        ],
      };
    }
    return n === 1 ? "Noted." : known ? "You like tea." : "I don't know yet.";
  });
  const agent = createDeepAgent(scripted, {
    core,
    backend: ({ state }) => new CompositeBackend(state, { "/memories/": new StoreBackend({ store: memory, namespace: ["page"] }) }),
    memorySources: ["/memories/AGENTS.md"],
  });

  const wrote: string[] = [];
  let answer = "";
  for (const [threadId, text] of [
    ["first", "I like tea."],
    ["second", "What do I like?"],
  ] as const) {
    print(`> ${text}`);
    for await (const event of agent.stream({ messages: [{ role: "user", content: text }] }, { threadId })) {
      if (event.type === "tool_end" && threadId === "first") wrote.push(String(event.result));
      if (event.type === "final") answer = String(event.output.messages.at(-1)?.content ?? "");
    }
    print(answer);
  }
  // Tool calls of one turn run in parallel: sort what they report.
  return { core: core.kind, answer, modelCalls: scripted.requests.length, wrote: wrote.sort() };
}

main().then(
  (result) => Object.assign(globalThis, { __engramExample: result }),
  (error: unknown) => Object.assign(globalThis, { __engramExample: { error: String((error as Error)?.stack ?? error) } }),
);
