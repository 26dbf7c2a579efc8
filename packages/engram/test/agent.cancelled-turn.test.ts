/** A cancelled run leaves a marker in its thread: the next reader (the model, a person looking at
 * the thread) sees that the turn ended without an answer. */
import { expect, it } from "vitest";
import { CANCELLED_TURN } from "../src/agent/thread.js";
import { FakeChatModel, InMemoryCheckpointer, createDeepAgent } from "../src/index.js";

it("a cancelled turn is recorded in the thread after what completed", async () => {
  const model = new FakeChatModel(() => "a long answer that never finishes", { delayMs: 200, streamChunks: 5 });
  const checkpointer = new InMemoryCheckpointer();
  const agent = createDeepAgent(model, { checkpointer });
  const controller = new AbortController();
  const events = agent.stream(
    { messages: [{ role: "user", content: "tell me everything" }] },
    { threadId: "t", signal: controller.signal },
  );
  const stopped: string[] = [];
  await expect(
    (async () => {
      for await (const ev of events) {
        if (ev.type === "model_delta") controller.abort();
        if (ev.type === "final") stopped.push(ev.stopReason);
      }
    })(),
  ).rejects.toMatchObject({ code: "aborted" });
  expect(stopped).toEqual(["cancelled"]);
  const saved = await checkpointer.get("t");
  expect(saved?.messages.map((m) => [m.role, m.content])).toEqual([
    ["user", "tell me everything"],
    ["assistant", CANCELLED_TURN],
  ]);
  // The next turn goes on after it.
  const next = await agent.invoke({ messages: [{ role: "user", content: "short version?" }] }, { threadId: "t" });
  expect(next.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
});
