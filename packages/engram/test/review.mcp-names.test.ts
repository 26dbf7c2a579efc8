/**
 * Review of MCP tools whose server names hold characters a tool name cannot (`shout.loud` reaches
 * the model as `fixture__shout_loud`): `interruptOn` naming the tool as the server spells it must
 * still review it — never accepted and then silently not applied.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Core, FakeChatModel, InMemoryCheckpointer, type Message, createDeepAgent, loadCore, resume } from "../src/index.js";

const tsx = fileURLToPath(new URL("../../../node_modules/.bin/tsx", import.meta.url));
const server = fileURLToPath(new URL("./fixtures/mcp/server.ts", import.meta.url));

let core: Core;
let dir: string;
beforeAll(async () => {
  core = await loadCore();
  dir = mkdtempSync(join(tmpdir(), "engram-review-mcp-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const user = (content: string): { messages: Message[] } => ({ messages: [{ role: "user", content }] });
const toolResults = (messages: Message[]) => messages.filter((m) => m.role === "tool").map((m) => m.content);

describe("review of MCP tools by the server's spelling", () => {
  for (const [label, interruptOn, subagentReview] of [
    ["interruptOn", { "fixture__shout.loud": true }, undefined],
    ["a subagent's interruptOn", {}, { "fixture__shout.loud": true }],
  ] as const) {
    it(`${label}: 'fixture__shout.loud' reviews the tool the model calls as fixture__shout_loud`, async () => {
      const call = { id: "s1", name: "fixture__shout_loud", args: { text: "quiet" } };
      const model = new FakeChatModel(
        subagentReview
          ? [
              { toolCalls: [{ id: "t1", name: "task", args: { description: "shout", subagent_type: "shouter" } }] },
              { toolCalls: [call] },
              "shouted",
              "done",
            ]
          : [{ toolCalls: [call] }, "done"],
      );
      const agent = createDeepAgent(model, {
        core,
        checkpointer: new InMemoryCheckpointer(),
        mcpServers: { fixture: { command: tsx, args: [server, "stdio"] } },
        interruptOn,
        ...(subagentReview && {
          subagents: [{ name: "shouter", description: "shouts", systemPrompt: "shout", interruptOn: subagentReview }],
        }),
      });
      try {
        const out = await agent.invoke(user("shout"), { threadId: "r" });
        expect(toolResults(out.messages)).not.toContain("QUIET");
        expect(out.interrupt?.toolCalls.map((c) => c.name)).toEqual(["fixture__shout_loud"]);
        const id = out.interrupt?.toolCalls[0]?.id as string;
        const done = await agent.invoke(resume({ [id]: { type: "reject", message: "no" } }), { threadId: "r" });
        expect(done.stopReason).toBe("done");
        expect(JSON.stringify(done.messages)).not.toContain("QUIET");
      } finally {
        await agent.close();
      }
    }, 60_000);
  }
});
