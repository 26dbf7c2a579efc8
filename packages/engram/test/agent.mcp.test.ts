/** MCP servers wired into the agent (`mcpServers`), against the real MCP server fixture over stdio. */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AgentEvent,
  ConfigError,
  type Core,
  FakeChatModel,
  InMemoryCheckpointer,
  type Message,
  type ModelRequest,
  createDeepAgent,
  loadCore,
  resume,
} from "../src/index.js";
import { bundledFixture } from "./fixtures/node-bundle.js";

// The server fixture, bundled once, starts with plain node (not tsx) each time.
const node = process.execPath;
let server: string;
let core: Core;
let dir: string;
beforeAll(async () => {
  server = await bundledFixture(fileURLToPath(new URL("./fixtures/mcp/server.ts", import.meta.url)));
  core = await loadCore();
  dir = mkdtempSync(join(tmpdir(), "engram-agent-mcp-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The fixture over stdio, started through `sh` so that the server's pid lands in `pidFile`. */
const fixture = (pidFile: string) => ({
  command: "/bin/sh",
  args: ["-c", 'echo $$ > "$0"; exec "$1" "$2" stdio', pidFile, node, server],
});

const user = (content: string): { messages: Message[] } => ({ messages: [{ role: "user", content }] });
const toolResults = (messages: Message[]) => messages.filter((m) => m.role === "tool").map((m) => m.content);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Waits (bounded: 200 × 25 ms) until `done()` holds; returns whether it did. */
async function eventually(done: () => boolean | Promise<boolean>): Promise<boolean> {
  for (let i = 0; i < 200; i++) {
    if (await done()) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return done();
}

describe("mcpServers", () => {
  it("calls a server's tool through the agent, with the server's schema as is, and close stops the server", async () => {
    const pidFile = join(dir, "calls.pid");
    const model = new FakeChatModel([{ toolCalls: [{ id: "c1", name: "fixture__add", args: { a: 2, b: 3 } }] }, "the sum is 5"]);
    const agent = createDeepAgent(model, { core, mcpServers: { fixture: fixture(pidFile) }, enableSubagents: false });
    try {
      const out = await agent.invoke(user("add 2 and 3"));
      expect(toolResults(out.messages)).toEqual(["5"]);
      expect(out.messages.at(-1)?.content).toBe("the sum is 5");
      const spec = model.requests[0]?.tools.find((t) => t.name === "fixture__add");
      expect(spec?.description).toBe("Adds two numbers");
      expect(spec?.parameters).toMatchObject({
        type: "object",
        properties: { a: { type: "number" }, b: { type: "number" } },
        required: ["a", "b"],
      });
      // The built-in tools are still there, and the server's other tools too.
      expect(model.requests[0]?.tools.map((t) => t.name)).toEqual(expect.arrayContaining(["read_file", "fixture__shout_loud"]));
    } finally {
      // The server runs until the agent is closed.
      const pid = Number(readFileSync(pidFile, "utf8").trim());
      expect(Number.isInteger(pid) && pid > 0 && alive(pid)).toBe(true);
      await agent.close();
      expect(await eventually(() => !alive(pid))).toBe(true);
    }
  }, 60_000);

  it("lists the tools at every run: a tool the server adds (list_changed) reaches the model", async () => {
    const model = new FakeChatModel((req: ModelRequest) => {
      const last = req.messages.at(-1);
      if (last?.role === "user" && last.content === "unlock") return { toolCalls: [{ name: "fixture__unlock", args: {} }] };
      if (last?.role === "user" && last.content === "secret" && req.tools.some((t) => t.name === "fixture__secret"))
        return { toolCalls: [{ name: "fixture__secret", args: {} }] };
      return `tools: ${req.tools.length}`;
    });
    const agent = createDeepAgent(model, { core, mcpServers: { fixture: fixture(join(dir, "list.pid")) } });
    try {
      const first = await agent.invoke(user("unlock"), { threadId: "l" });
      expect(toolResults(first.messages)).toEqual(["unlocked"]);
      // The notification reaches the client on its own schedule: a later run sees the new tool.
      let answer: string[] = [];
      const seen = await eventually(async () => {
        answer = toolResults((await agent.invoke(user("secret"), { threadId: "l" })).messages);
        return answer.at(-1) === "42";
      });
      expect(seen).toBe(true);
    } finally {
      await agent.close();
    }
  }, 60_000);

  it("reviews a server's tool by its namespaced name (interruptOn), then runs it on approval", async () => {
    const model = new FakeChatModel([{ toolCalls: [{ id: "a1", name: "fixture__add", args: { a: 40, b: 2 } }] }, "done"]);
    const agent = createDeepAgent(model, {
      core,
      checkpointer: new InMemoryCheckpointer(),
      mcpServers: { fixture: fixture(join(dir, "review.pid")) },
      interruptOn: { fixture__add: true },
    });
    try {
      const events: AgentEvent[] = [];
      for await (const ev of agent.stream(user("add"), { threadId: "r" })) events.push(ev);
      const interrupt = events.find((e) => e.type === "interrupt");
      expect(interrupt?.type === "interrupt" && interrupt.interrupt.toolCalls.map((c) => c.name)).toEqual(["fixture__add"]);
      expect(events.some((e) => e.type === "tool_start")).toBe(false);
      const done = await agent.invoke(resume({ a1: { type: "approve" } }), { threadId: "r" });
      expect(toolResults(done.messages)).toEqual(["42"]);
    } finally {
      await agent.close();
    }
  }, 60_000);

  it("passes image attachments on in tool_end", async () => {
    const model = new FakeChatModel([{ toolCalls: [{ name: "fixture__pixel", args: {} }] }, "seen"]);
    const agent = createDeepAgent(model, { core, mcpServers: { fixture: fixture(join(dir, "pixel.pid")) } });
    try {
      const ends: AgentEvent[] = [];
      for await (const ev of agent.stream(user("pixel"))) if (ev.type === "tool_end") ends.push(ev);
      const end = ends[0];
      expect(end?.type === "tool_end" && end.attachments?.[0]?.mimeType).toBe("image/png");
      expect(end?.type === "tool_end" && end.result).toContain("[image attached: image/png");
    } finally {
      await agent.close();
    }
  }, 60_000);

  it("tells the model a result too large for stdio was too large, and the next call reconnects", async () => {
    const model = new FakeChatModel([
      { toolCalls: [{ name: "fixture__big", args: { bytes: 11 * 1024 * 1024 } }] },
      { toolCalls: [{ name: "fixture__add", args: { a: 2, b: 3 } }] },
      "the sum is 5",
      { toolCalls: [{ name: "fixture__add", args: { a: 1, b: 1 } }] },
      "2",
    ]);
    const agent = createDeepAgent(model, { core, mcpServers: { fixture: fixture(join(dir, "big.pid")) }, enableSubagents: false });
    try {
      const out = await agent.invoke(user("get it"));
      expect(out.stopReason).toBe("done");
      const [big, sum] = toolResults(out.messages);
      expect(big).toMatch(/^Error: big on MCP server 'fixture' failed: its result was too large/);
      expect(sum).toBe("5");
      // And in the agent's later runs.
      expect(toolResults((await agent.invoke(user("again"))).messages)).toEqual(["2"]);
    } finally {
      await agent.close();
    }
  }, 60_000);

  it("fails a run with a typed error when a server cannot start, and connects again on the next run", async () => {
    const model = new FakeChatModel(["connected"]);
    const late = join(dir, "late-server.sh");
    const agent = createDeepAgent(model, { core, mcpServers: { late: { command: late } } });
    try {
      await expect(agent.invoke(user("hi"))).rejects.toMatchObject({ name: "EngramError", message: expect.stringMatching(/'late'/) });
      expect(model.requests.length).toBe(0);
      // The server appears: the next run connects instead of repeating the first failure.
      writeFileSync(late, `#!/bin/sh\nexec "${node}" "${server}" stdio\n`, { mode: 0o755 });
      const out = await agent.invoke(user("hi"));
      expect(out.messages.at(-1)?.content).toBe("connected");
      expect(model.requests[0]?.tools.map((t) => t.name)).toContain("late__add");
    } finally {
      await agent.close();
    }
  }, 60_000);

  it("checks the configuration when the agent is built", () => {
    const model = new FakeChatModel(["x"]);
    const ok = { fixture: { command: node, args: [server, "stdio"] } };
    expect(() => createDeepAgent(model, { mcpServers: ok, interruptOn: { fixture__add: true } })).not.toThrow();
    const bad = (options: object, option: string) => {
      let error: unknown;
      try {
        createDeepAgent(model, options);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).option).toBe(option);
    };
    bad({ mcpServers: ok, interruptOn: { other__add: true } }, "interruptOn.other__add");
    bad({ mcpServers: ok, interruptOn: { fixture__: true } }, "interruptOn.fixture__");
    bad({ mcpServers: { "bad name": { command: "x" } } }, "mcpServers.bad name");
    bad({ mcpServers: { s: { command: "" } } }, "mcpServers.s.command");
    bad({ mcpServers: { s: { url: "not a url" } } }, "mcpServers.s.url");
    bad({ mcpServers: { s: { command: "x", url: "http://127.0.0.1/" } } }, "mcpServers.s.url");
  });
});

// Review of MCP tools whose server names hold characters a tool name cannot (`shout.loud` reaches
// the model as `fixture__shout_loud`): `interruptOn` naming the tool as the server spells it must
// still review it — never accepted and then silently not applied.
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
        mcpServers: { fixture: { command: node, args: [server, "stdio"] } },
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
