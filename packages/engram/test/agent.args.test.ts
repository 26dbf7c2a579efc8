/** Malformed tool arguments reach the model as a precise error it can act on, and nothing runs. */
import { beforeAll, expect, it } from "vitest";
import { type Core, FakeChatModel, StateBackend, createDeepAgent, loadCore } from "../src/index.js";

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});

it("answers unreadable arguments with the parse error instead of running the tool", async () => {
  const backend = new StateBackend({ core });
  const model = new FakeChatModel([
    // Not JSON even after repair: a prose "argument".
    { toolCalls: [{ id: "c1", name: "write_file", args: "file_path is /a.md and content is hi" }] },
    { toolCalls: [{ id: "c2", name: "write_file", args: '{"file_path": "/a.md", "content": "hi",}' }] },
    "done",
  ]);
  const agent = createDeepAgent(model, { backend: () => backend, enableSubagents: false, core });
  const out = await agent.invoke({ messages: [{ role: "user", content: "write hi" }] });
  const results = out.messages.filter((m) => m.role === "tool").map((m) => m.content);
  expect(results[0]).toMatch(/^Error: invalid arguments for write_file: .*JSON.*Call it again with a valid JSON object\.$/s);
  // A trailing comma is repaired by the model layer: the second call runs.
  expect(results[1]).not.toMatch(/^Error/);
  expect(new TextDecoder().decode((await backend.readBytes("/a.md")).data)).toBe("hi");
  expect(out.stopReason).toBe("done");
});
