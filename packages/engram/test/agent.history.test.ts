/** The `memoryHistory` option: the agent's changes to its memory files are recorded and revertible. */
import { beforeAll, describe, expect, it } from "vitest";
import {
  type Core,
  FakeChatModel,
  InMemoryStore,
  MemoryHistory,
  type Message,
  type ModelRequest,
  StoreBackend,
  createDeepAgent,
  loadCore,
  restoreThrough,
} from "../src/index.js";

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});

const user = (content: string): { messages: Message[] } => ({ messages: [{ role: "user", content }] });
const prompt = (r: ModelRequest | undefined) => `${r?.system ?? ""}\n${(r as { systemContext?: string } | undefined)?.systemContext ?? ""}`;

async function setup() {
  const store = new InMemoryStore();
  const history = new MemoryHistory({ store });
  // Memory on a shared, durable backend (a StoreBackend), as memories usually are.
  const files = new StoreBackend({ store, namespace: ["files"], core });
  await files.write("/AGENTS.md", "- likes tabs\n");
  return { history, files };
}

describe("memoryHistory", () => {
  it("records an edit_file of AGENTS.md with the thread, and reverts it through the backend", async () => {
    const { history, files } = await setup();
    const model = new FakeChatModel([
      { toolCalls: [{ name: "edit_file", args: { file_path: "/AGENTS.md", old_string: "tabs", new_string: "spaces" } }] },
      "noted",
      "hello again",
    ]);
    // The default memory file ("AGENTS.md", no slash) is watched as /AGENTS.md.
    const agent = createDeepAgent(model, { core, backend: files, memoryHistory: history });
    await agent.invoke(user("I prefer spaces"), { threadId: "h1", userId: "ann" });
    const [change, ...rest] = await history.list("ann");
    expect(rest).toEqual([]);
    expect(change).toMatchObject({
      kind: "agents_md",
      target: "/AGENTS.md",
      actor: "agent",
      threadId: "h1",
      before: "- likes tabs\n",
      after: "- likes spaces\n",
    });
    expect(change?.runId).toMatch(/^run-/);
    expect(history.diff(change as NonNullable<typeof change>)).toContain("+- likes spaces");

    const reverted = await history.revert("ann", change?.id as string, restoreThrough(files));
    expect(reverted).toMatchObject({ actor: "revert", reverts: change?.id, after: "- likes tabs\n" });
    expect((await files.read("/AGENTS.md")).content).toBe("- likes tabs");
    // The next run sees the restored memory.
    await agent.invoke(user("hi"), { threadId: "h1", userId: "ann" });
    expect(prompt(model.requests.at(-1))).toContain("- likes tabs");
  });

  it("records writes by any spelling of the path and by subagents; other files are not recorded", async () => {
    const { history, files } = await setup();
    const model = new FakeChatModel((req) => {
      const first = req.messages[0]?.content ?? "";
      if (first.startsWith("child") && req.messages.length === 1)
        return { toolCalls: [{ name: "write_file", args: { file_path: "/./AGENTS.md", content: "- from the child\n" } }] };
      if (first.startsWith("child")) return "child done";
      if (req.messages.length === 1)
        return {
          toolCalls: [
            { name: "write_file", args: { file_path: "/notes.md", content: "not memory" } },
            { name: "task", args: { description: "child: update memory" } },
          ],
        };
      return "done";
    });
    const agent = createDeepAgent(model, { core, backend: files, memoryHistory: history, memorySources: ["/AGENTS.md"] });
    await agent.invoke(user("go"), { threadId: "h2" });
    // No userId: the default user.
    const changes = await history.list("default");
    expect(changes.map((c) => [c.target, c.threadId, c.after])).toEqual([["/AGENTS.md", "h2", "- from the child\n"]]);
    expect(await history.list("ann")).toEqual([]);
  });
});
