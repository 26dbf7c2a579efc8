/** The `search_past_threads` tool in a scripted run: an earlier thread's decision is found for
 * the same user (with no long-term fact extracted), never for another user, never the thread
 * asking; the option is validated and the tool exists only when it is on. */
import { describe, expect, it } from "vitest";
import * as z from "zod/mini";
import {
  type Checkpointer,
  ConfigError,
  FakeChatModel,
  InMemoryCheckpointer,
  type Message,
  type Tool,
  createDeepAgent,
} from "../src/index.js";
import { PAST_THREADS_TOOL_NAME } from "../src/middleware/past-threads.js";
import { core, user } from "./fixtures/session.js";

/** A model that searches past threads for "recall <words>" (and answers with the tool's text),
 * and answers anything else "noted". */
function recallModel(): FakeChatModel {
  return new FakeChatModel((req) => {
    const last = req.messages.at(-1);
    if (last?.role === "tool") return `found: ${last.content}`;
    const text = last?.content ?? "";
    if (text.startsWith("recall ")) return { toolCalls: [{ name: PAST_THREADS_TOOL_NAME, args: { query: text.slice(7) } }] };
    return text.startsWith("we decided") ? "Decision noted: PostgreSQL for the billing service." : "noted";
  });
}

const bare = { core, enableSubagents: false, enableMemory: false, enableSkills: false, enableFilesystem: false } as const;
const toolText = (messages: Message[]) => messages.filter((m) => m.role === "tool").at(-1)?.content ?? "";

describe("search_past_threads", () => {
  it("finds a decision from the same user's earlier thread and names it, with a snippet", async () => {
    const checkpointer = new InMemoryCheckpointer({ core });
    const agent = createDeepAgent(recallModel(), { ...bare, checkpointer, threadRecall: true });
    await agent.invoke(user("we decided to run the billing service on PostgreSQL 16"), { threadId: "ada-1", userId: "ada" });
    await agent.invoke(user("let us talk about lunch"), { threadId: "ada-2", userId: "ada" });
    await agent.invoke(user("we decided billing runs on MySQL"), { threadId: "bob-1", userId: "bob" });
    // No long-term memory: the decision is nowhere but in thread ada-1's messages.
    const out = await agent.invoke(user("recall billing service decided"), { threadId: "ada-3", userId: "ada" });
    const found = toolText(out.messages);
    expect(found).toContain('thread "ada-1"');
    expect(found).toContain("we decided to run the billing service on PostgreSQL 16");
    expect(found).not.toContain("MySQL");
    expect(found).not.toContain("ada-2");
    // The asking thread (whose own message matches) is not among the results.
    expect(found).not.toContain("ada-3");
    expect(out.messages.at(-1)?.content).toContain("ada-1");
    // Bob asks the same: only his thread.
    const bobs = toolText((await agent.invoke(user("recall billing service decided"), { threadId: "bob-2", userId: "bob" })).messages);
    expect(bobs).toContain('thread "bob-1"');
    expect(bobs).not.toContain("PostgreSQL");
  });

  it("records the run's user with its checkpoint; a run without one saves none and the tool refuses", async () => {
    const checkpointer = new InMemoryCheckpointer({ core });
    const agent = createDeepAgent(recallModel(), { ...bare, checkpointer, threadRecall: true });
    await agent.invoke(user("we decided billing uses PostgreSQL"), { threadId: "owned", userId: "ada" });
    await agent.invoke(user("we decided billing uses PostgreSQL"), { threadId: "anonymous" });
    expect((await checkpointer.get("owned"))?.userId).toBe("ada");
    expect((await checkpointer.get("anonymous"))?.userId).toBeUndefined();
    const out = await agent.invoke(user("recall billing"), { threadId: "asking" });
    const last = out.messages.filter((m) => m.role === "tool").at(-1);
    expect(last?.content).toContain("no user");
    // The unowned thread is nobody's: not even the default user's search finds it.
    const found = toolText((await agent.invoke(user("recall billing"), { threadId: "x", userId: "default" })).messages);
    expect(found).toContain("No earlier thread");
  });

  it("is offered only when threadRecall is on, and caps its results at maxResults", async () => {
    const checkpointer = new InMemoryCheckpointer({ core });
    const off = recallModel();
    await createDeepAgent(off, { ...bare, checkpointer }).invoke(user("hello"), { threadId: "t0", userId: "ada" });
    expect(off.requests[0]?.tools?.map((t) => t.name) ?? []).not.toContain(PAST_THREADS_TOOL_NAME);
    const on = recallModel();
    const agent = createDeepAgent(on, { ...bare, checkpointer, threadRecall: { maxResults: 2, snippetChars: 40 } });
    for (let i = 0; i < 6; i++)
      await agent.invoke(user(`we decided item ${i} about billing ${"and more words ".repeat(20)}`), {
        threadId: `t${i + 1}`,
        userId: "ada",
      });
    const found = toolText((await agent.invoke(user("recall billing"), { threadId: "ask", userId: "ada" })).messages);
    expect(on.requests[0]?.tools?.map((t) => t.name)).toContain(PAST_THREADS_TOOL_NAME);
    expect(found.match(/^\[\d+\] thread/gm)?.length).toBe(2);
    // Two blocks of a header line and a snippet of at most 40 characters each.
    expect(found.length < 400).toBe(true);
  });

  it("is the top agent's tool: subagents do not get it", async () => {
    const model = new FakeChatModel((req) => {
      const first = req.messages[0]?.content ?? "";
      if (req.messages.length > 1) return "done";
      return first.startsWith("sub:") ? "sub done" : { toolCalls: [{ name: "task", args: { description: "sub: look around" } }] };
    });
    const agent = createDeepAgent(model, { ...bare, enableSubagents: true, threadRecall: true });
    await agent.invoke(user("go"), { threadId: "top", userId: "ada" });
    const toolsOf = (prefix: string) =>
      model.requests.find((r) => (r.messages[0]?.content ?? "").startsWith(prefix))?.tools?.map((t) => t.name) ?? [];
    expect(toolsOf("go")).toContain(PAST_THREADS_TOOL_NAME);
    expect(toolsOf("sub:")).toContain("task");
    expect(toolsOf("sub:")).not.toContain(PAST_THREADS_TOOL_NAME);
  });

  it("rejects bad options and a checkpointer that can neither search nor list", () => {
    const model = recallModel();
    const opaque: Checkpointer = { get: async () => undefined, put: async () => 1, delete: async () => {} };
    expect(() => createDeepAgent(model, { ...bare, checkpointer: opaque, threadRecall: true })).toThrow(ConfigError);
    expect(() => createDeepAgent(model, { ...bare, checkpointer: opaque, threadRecall: false })).not.toThrow();
    for (const bad of [{ maxResults: 0 }, { maxResults: 51 }, { snippetChars: 10 }, { other: 1 }, "yes"]) {
      expect(() => createDeepAgent(model, { ...bare, threadRecall: bad as never })).toThrow(ConfigError);
    }
    const clash: Tool<Record<string, never>> = {
      name: PAST_THREADS_TOOL_NAME,
      description: "mine",
      schema: z.object({}),
      run: async () => ({ content: "" }),
    };
    expect(() => createDeepAgent(model, { ...bare, tools: [clash as Tool<never>] })).toThrow(ConfigError);
  });
});
