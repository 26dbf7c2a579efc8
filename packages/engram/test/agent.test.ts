/** End-to-end agent runs with a scripted model, on the selected core. */
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type Checkpointer,
  ConfigError,
  type Core,
  FakeChatModel,
  InMemoryCheckpointer,
  type Message,
  type Middleware,
  StateBackend,
  type Tool,
  createDeepAgent,
  loadCore,
  resume,
} from "../src/index.js";
import { checkpointFiles } from "../src/kit.js";
import { bundledFixture } from "./fixtures/node-bundle.js";

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});

/** The State files a thread's checkpoint holds. */
async function threadFiles(checkpointer: Checkpointer, threadId: string): Promise<StateBackend> {
  const cp = await checkpointer.get(threadId);
  return StateBackend.restore((cp && checkpointFiles(cp, core)) ?? new Uint8Array(), { core });
}

const user = (content: string): { messages: Message[] } => ({ messages: [{ role: "user", content }] });
const call = (name: string, args: Record<string, unknown>, id?: string) => ({ name, args, ...(id && { id }) });

function echoTool(name = "echo"): Tool<never> {
  return {
    name,
    description: "Echoes its input.",
    schema: z.object({ text: z.string() }),
    run: async ({ text }: { text: string }) => ({ content: `echo: ${text}` }),
  } as unknown as Tool<never>;
}

describe("createDeepAgent options", () => {
  const model = new FakeChatModel(["hi"]);
  it("rejects unknown options, tool clashes and bad limits with ConfigError", () => {
    expect(() => createDeepAgent(model, { bogus: 1 } as never)).toThrow(ConfigError);
    expect(() => createDeepAgent(model, { tools: [echoTool("read_file")] })).toThrow(/clashes with a built-in/);
    expect(() => createDeepAgent(model, { maxTurns: -1 })).toThrow(ConfigError);
    expect(() => createDeepAgent(model, { summarizationThreshold: 1.5 })).toThrow(ConfigError);
    expect(() => createDeepAgent(model, { interruptOn: { write_file: { allow: ["maybe" as "approve"] } } })).toThrow(ConfigError);
  });
});

describe("the agent loop", () => {
  it("runs a multi-tool turn, concurrently, and answers", async () => {
    const model = new FakeChatModel([
      { toolCalls: [call("write_file", { file_path: "/a.md", content: "alpha" }), call("echo", { text: "x" })] },
      { toolCalls: [call("read_file", { file_path: "/a.md" }), call("grep", { pattern: "alpha" })] },
      "done",
    ]);
    const agent = createDeepAgent(model, { core, tools: [echoTool()], enableSubagents: false });
    const out = await agent.invoke(user("go"), { threadId: "t1" });
    expect(out.messages.at(-1)).toEqual({ role: "assistant", content: "done" });
    const toolMessages = out.messages.filter((m) => m.role === "tool").map((m) => m.content);
    expect(toolMessages).toEqual(["Wrote /a.md", "echo: x", "     1\talpha", "/a.md"]);
    // The model saw the tools and the static system prompt.
    expect(model.requests[0]?.tools.map((t) => t.name)).toEqual([
      "ls",
      "read_file",
      "write_file",
      "edit_file",
      "glob",
      "grep",
      "delete",
      "echo",
    ]);
    expect(model.requests[0]?.system).toContain("read_file");
  });

  it("returns tool errors to the model instead of crashing", async () => {
    const boom = {
      name: "boom",
      description: "fails",
      schema: z.object({}),
      run: async () => {
        throw new Error("kaput");
      },
    } as unknown as Tool<never>;
    const model = new FakeChatModel([
      { toolCalls: [call("boom", {}), call("nope", {}), call("read_file", { file_path: "/missing" })] },
      "recovered",
    ]);
    const out = await createDeepAgent(model, { core, tools: [boom] }).invoke(user("go"));
    const results = out.messages.filter((m) => m.role === "tool").map((m) => m.content);
    expect(results[0]).toContain("boom failed: kaput");
    expect(results[1]).toContain("unknown tool 'nope'");
    expect(results[2]).toBe("Error: File not found: '/missing'");
    expect(out.messages.at(-1)?.content).toBe("recovered");
  });

  it("stops at maxTurns with stopReason max_turns", async () => {
    const model = new FakeChatModel(() => ({ toolCalls: [call("ls", { path: "/" })] }));
    const events = [];
    for await (const ev of createDeepAgent(model, { core, maxTurns: 3 }).stream(user("loop forever"))) events.push(ev);
    expect(model.requests.length).toBe(3);
    const final = events.at(-1);
    expect(final?.type === "final" && final.stopReason).toBe("max_turns");
    expect(final?.type === "final" && final.output.stopReason).toBe("max_turns");
  });

  it("streams model deltas, tool start/end and a final event in order", async () => {
    const model = new FakeChatModel([{ content: "let me look", toolCalls: [call("ls", { path: "/" })] }, "all empty"]);
    const types: string[] = [];
    let text = "";
    for await (const ev of createDeepAgent(model, { core }).stream(user("look"))) {
      types.push(ev.type);
      if (ev.type === "model_delta") text += ev.text;
    }
    expect(text).toBe("let me lookall empty");
    const compact = types.filter((t, i) => t !== types[i - 1]);
    expect(compact).toEqual(["model_delta", "tool_start", "tool_end", "model_delta", "final"]);
  });

  it("stops cleanly on abort", async () => {
    const controller = new AbortController();
    const model = new FakeChatModel(() => {
      controller.abort();
      return { toolCalls: [call("ls", { path: "/" })] };
    });
    await expect(createDeepAgent(model, { core }).invoke(user("go"), { signal: controller.signal })).rejects.toThrow();
    expect(model.requests.length).toBe(1);
  });

  it("evicts a large result of a non-filesystem tool to /large_tool_results", async () => {
    const big = {
      name: "dump",
      description: "big",
      schema: z.object({}),
      run: async () => ({ content: "row\n".repeat(30_000) }),
    } as unknown as Tool<never>;
    const model = new FakeChatModel([
      { toolCalls: [call("dump", {}, "call_big")] },
      { toolCalls: [call("read_file", { file_path: "/large_tool_results/call_big.txt", offset: 29_999 })] },
      "ok",
    ]);
    const out = await createDeepAgent(model, { core, tools: [big], evictionThreshold: 1000 }).invoke(user("go"));
    const results = out.messages.filter((m) => m.role === "tool").map((m) => m.content);
    expect(results[0]).toContain("saved to /large_tool_results/call_big.txt");
    expect(results[0]?.length).toBeLessThan(2000);
    expect(results[1]).toBe(" 30000\trow");
  });

  it("runs user middleware hooks in slot 7 and can rewrite requests", async () => {
    const seen: string[] = [];
    const mw: Middleware = {
      name: "audit",
      beforeModel: (req) => ({ ...req, system: `${req.system}\n[audited]` }),
      wrapToolCall: async (c, next) => {
        seen.push(c.name);
        return next(c);
      },
      afterAgent: () => {
        seen.push("end");
      },
    };
    const model = new FakeChatModel([{ toolCalls: [call("ls", { path: "/" })] }, "fine"]);
    await createDeepAgent(model, { core, middleware: [mw] }).invoke(user("go"));
    expect(model.requests[0]?.system.endsWith("[audited]")).toBe(true);
    expect(seen).toEqual(["ls", "end"]);
  });

  it("repairs malformed tool calls and answers dangling ones", async () => {
    const model = new FakeChatModel([
      { toolCalls: [{ id: "", name: "write_file", args: { __raw: '```json\n{"file_path": "/p.md", "content": "fixed"}\n```' } }] },
      "ok",
    ]);
    const out = await createDeepAgent(model, { core }).invoke(user("go"));
    expect(out.messages.find((m) => m.role === "tool")?.content).toBe("Wrote /p.md");
    expect(out.messages[1]?.toolCalls?.[0]?.id).toMatch(/^patched_/);
  });
});

describe("threads", () => {
  it("keeps messages and State files per thread, isolated between threads", async () => {
    const checkpointer = new InMemoryCheckpointer();
    const model = new FakeChatModel((req) => {
      const last = req.messages.at(-1)?.content ?? "";
      if (last.startsWith("save")) return { toolCalls: [call("write_file", { file_path: "/note.md", content: last })] };
      if (last.startsWith("read")) return { toolCalls: [call("read_file", { file_path: "/note.md" })] };
      return `seen ${req.messages.length} messages`;
    });
    const agent = createDeepAgent(model, { core, checkpointer });
    await agent.invoke(user("save A"), { threadId: "a" });
    await agent.invoke(user("save B"), { threadId: "b" });
    const a = await agent.invoke(user("read"), { threadId: "a" });
    const b = await agent.invoke(user("read"), { threadId: "b" });
    expect(a.messages.filter((m) => m.role === "tool").at(-1)?.content).toBe("     1\tsave A");
    expect(b.messages.filter((m) => m.role === "tool").at(-1)?.content).toBe("     1\tsave B");
    expect(a.messages.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["save A", "read"]);
    // A fresh agent on the same checkpointer continues the thread (files included).
    const again = await createDeepAgent(model, { core, checkpointer }).invoke(user("read"), { threadId: "a" });
    expect(again.messages.filter((m) => m.role === "tool").at(-1)?.content).toBe("     1\tsave A");
  });
});

describe("human in the loop", () => {
  const setup = () => {
    const checkpointer = new InMemoryCheckpointer();
    const model = new FakeChatModel((req) => {
      const last = req.messages.at(-1);
      if (last?.role === "user")
        return { toolCalls: [call("write_file", { file_path: "/x.md", content: "draft" }, "w1"), call("ls", { path: "/" }, "l1")] };
      return `after review: ${req.messages
        .filter((m) => m.role === "tool")
        .map((m) => m.content)
        .join(" | ")}`;
    });
    const agent = createDeepAgent(model, { core, checkpointer, interruptOn: { write_file: true } });
    return { agent, model, checkpointer };
  };

  it("interrupts before the tool runs and approves on resume", async () => {
    const { agent } = setup();
    const first = await agent.invoke(user("write it"), { threadId: "h" });
    expect(first.interrupt?.toolCalls).toEqual([
      { id: "w1", name: "write_file", args: { file_path: "/x.md", content: "draft" }, allow: ["approve", "edit", "reject"] },
    ]);
    const done = await agent.invoke(resume({ w1: { type: "approve" } }), { threadId: "h" });
    expect(done.interrupt).toBeUndefined();
    expect(done.messages.at(-1)?.content).toContain("Wrote /x.md");
  });

  it("applies edited arguments", async () => {
    const { agent } = setup();
    await agent.invoke(user("write it"), { threadId: "h2" });
    const done = await agent.invoke(resume({ w1: { type: "edit", args: { file_path: "/edited.md", content: "final" } } }), {
      threadId: "h2",
    });
    expect(done.messages.at(-1)?.content).toContain("Wrote /edited.md");
  });

  it("tells the model about a rejection", async () => {
    const { agent } = setup();
    await agent.invoke(user("write it"), { threadId: "h3" });
    const done = await agent.invoke(resume({ w1: { type: "reject", message: "not now" } }), { threadId: "h3" });
    expect(done.messages.at(-1)?.content).toContain("The user rejected this write_file call: not now");
    // Tool results answer the calls in the order the model made them.
    expect(done.messages.filter((m) => m.role === "tool").map((m) => m.toolCallId)).toEqual(["w1", "l1"]);
  });

  it("refuses a resume without a pending interrupt or with a missing decision", async () => {
    const { agent } = setup();
    await expect(agent.invoke(resume({}), { threadId: "none" })).rejects.toMatchObject({
      name: "ResumeError",
      message: expect.stringMatching(/no interrupted run/),
    });
    await agent.invoke(user("write it"), { threadId: "h4" });
    await expect(agent.invoke(resume({}), { threadId: "h4" })).rejects.toMatchObject({
      name: "ResumeError",
      message: expect.stringMatching(/no decision/),
    });
    await expect(agent.invoke(resume({ w1: { type: "maybe" } as never }), { threadId: "h4" })).rejects.toThrow(/not allowed/);
    await expect(agent.invoke({ messages: "hi" } as never)).rejects.toMatchObject({ name: "EngramError", code: "invalid_argument" });
    // The refused resumes lost nothing: the thread still waits, and a valid decision completes it.
    const done = await agent.invoke(resume({ w1: { type: "approve" } }), { threadId: "h4" });
    expect(done.messages.at(-1)?.content).toContain("Wrote /x.md");
  });
});

describe("subagents", () => {
  it("runs a task in a fresh context on the shared backend", async () => {
    const backend = new StateBackend({ core });
    const model = new FakeChatModel((req) => {
      const first = req.messages[0]?.content ?? "";
      if (first === "parent task" && req.messages.length === 1)
        return { toolCalls: [call("task", { description: "child: write the report" })] };
      if (first.startsWith("child") && req.messages.length === 1)
        return { toolCalls: [call("write_file", { file_path: "/report.md", content: "by child" })] };
      if (first.startsWith("child")) return "report written";
      return `parent got: ${req.messages.at(-1)?.content}`;
    });
    const checkpointer = new InMemoryCheckpointer();
    const out = await createDeepAgent(model, { core, backend, checkpointer }).invoke(user("parent task"), { threadId: "sub" });
    expect(out.messages.at(-1)?.content).toBe("parent got: report written");
    // The child wrote to the thread's files (a copy of the template `backend`, checkpointed).
    expect((await (await threadFiles(checkpointer, "sub")).read("/report.md")).content).toBe("by child");
    expect((await backend.read("/report.md")).error?.code).toBe("file_not_found");
    // The child saw only its task, not the parent's conversation.
    const childFirst = model.requests.find((r) => r.messages[0]?.content.startsWith("child"));
    expect(childFirst?.messages.length).toBe(1);
  });

  it("bounds depth per call chain", async () => {
    const model = new FakeChatModel((req) => {
      const last = req.messages.at(-1);
      if (last?.role === "tool") return `up: ${last.content}`;
      return { toolCalls: [call("task", { description: `level ${req.messages[0]?.content}` }), call("task", { description: "sibling" })] };
    });
    const out = await createDeepAgent(model, { core, maxSubagentDepth: 2 }).invoke(user("0"));
    const final = out.messages.at(-1)?.content ?? "";
    expect(final).toContain("depth limit (2)");
    // Parallel siblings do not share a counter: both children at depth 1 could spawn depth 2.
    const depthTwoRuns = model.requests.filter((r) => r.messages[0]?.content.startsWith("level level"));
    expect(depthTwoRuns.length).toBeGreaterThanOrEqual(2);
  });
});

describe("summarization", () => {
  it("appends history to a file, summarises, and keeps the tail", async () => {
    const backend = new StateBackend({ core });
    let summaries = 0;
    const dropped: number[] = [];
    const model = new FakeChatModel((req) => {
      if (req.system.startsWith("You compress")) return `summary #${++summaries}`;
      return `reply to ${req.messages.at(-1)?.content}`;
    });
    const checkpointer = new InMemoryCheckpointer();
    const agent = createDeepAgent(model, {
      core,
      backend,
      checkpointer,
      maxInputTokens: 400,
      summarizationThreshold: 0.5,
      summarizationKeepMessages: 2,
      beforeSummarize: (msgs) => {
        dropped.push(msgs.length);
      },
      systemPrompt: "short",
    });
    for (let i = 0; i < 6; i++) await agent.invoke(user(`message ${i} ${"lorem ipsum ".repeat(20)}`), { threadId: "s" });
    expect(summaries).toBeGreaterThanOrEqual(2);
    expect(dropped.length).toBe(summaries);
    const history = (await (await threadFiles(checkpointer, "s")).read("/conversation_history/s.md")).content ?? "";
    expect(history).toContain("message 0");
    expect(history).toContain("summary #1");
    // The model's latest request: a summary first, then only the recent messages.
    const last = model.requests.filter((r) => !r.system.startsWith("You compress")).at(-1);
    expect(last?.messages[0]?.content).toMatch(
      /^\[Summary of the earlier conversation; the full history is in \/conversation_history\/s\.md\]/,
    );
    expect(last?.messages.length).toBeLessThanOrEqual(4);
  });
});

describe("durable human review", () => {
  it("resumes an interrupted run in a new process from a durable checkpointer", async () => {
    const { execFileSync } = await import("node:child_process");
    const { mkdtempSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const dir = mkdtempSync(join(tmpdir(), "engram-hitl-"));
    // Bundled once, started with plain node (not tsx) each time.
    const script = await bundledFixture(join(import.meta.dirname, "fixtures/agent/hitl-process.ts"));
    const run = (mode: string) =>
      JSON.parse(
        execFileSync(process.execPath, [script, mode, dir], { encoding: "utf8", env: process.env }).trim().split("\n").at(-1) as string,
      );
    try {
      expect(run("start")).toEqual({ interrupted: ["w1"] });
      expect(run("resume")).toEqual({ answer: "final:      1\tstep 1" });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
