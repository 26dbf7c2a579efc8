/** Human review cannot be bypassed through `task`: subagents inherit `interruptOn`, their
 * interrupts pause the whole run with their identity, and a resume continues inside them. */
import { beforeAll, describe, expect, it } from "vitest";
import {
  type AgentOutput,
  type Core,
  FakeChatModel,
  InMemoryStore,
  type Message,
  type ModelRequest,
  ResumeError,
  StoreBackend,
  createDeepAgent,
  loadCore,
  resume,
} from "../src/index.js";
import { bundledFixture } from "./fixtures/node-bundle.js";

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});

const user = (content: string): { messages: Message[] } => ({ messages: [{ role: "user", content }] });
const first = (req: ModelRequest) => req.messages[0]?.content ?? "";
const last = (req: ModelRequest) => req.messages.at(-1);

/** A scripted model for every level: the parent delegates, the child writes, each reports. */
function script(): FakeChatModel {
  return new FakeChatModel((req) => {
    const f = first(req);
    const l = last(req);
    if (f === "parent task") {
      if (l?.role === "user") return { toolCalls: [{ id: "t1", name: "task", args: { description: "child: write the report" } }] };
      return `parent got: ${l?.content}`;
    }
    if (f.startsWith("child")) {
      if (l?.role === "user")
        return { toolCalls: [{ id: "w1", name: "write_file", args: { file_path: "/report.md", content: "by child" } }] };
      return `child saw: ${l?.content}`;
    }
    return undefined;
  });
}

function setup(model = script(), extra: Parameters<typeof createDeepAgent>[1] = {}) {
  const backend = new StoreBackend({ store: new InMemoryStore(), core });
  const agent = createDeepAgent(model, { core, backend, interruptOn: { write_file: true }, ...extra });
  return { agent, backend, model };
}

describe("review inside task subagents", () => {
  it("pauses the whole run before the subagent writes, with the subagent's identity", async () => {
    const { agent, backend } = setup();
    const events: string[] = [];
    let out: AgentOutput | undefined;
    for await (const ev of agent.stream(user("parent task"), { threadId: "r1" })) {
      events.push(ev.type);
      if (ev.type === "final") out = ev.output;
    }
    expect(out?.stopReason).toBe("interrupted");
    expect(events).toContain("interrupt");
    expect(out?.interrupt?.toolCalls).toEqual([
      {
        id: "t1/w1",
        name: "write_file",
        args: { file_path: "/report.md", content: "by child" },
        allow: ["approve", "edit", "reject"],
        subagent: { name: "general-purpose", depth: 1, path: "task:general-purpose/1" },
      },
    ]);
    expect((await backend.read("/report.md")).error?.code).toBe("file_not_found");
  });

  it("approve: the subagent writes, finishes its work, and the parent continues", async () => {
    const { agent, backend } = setup();
    await agent.invoke(user("parent task"), { threadId: "r2" });
    const done = await agent.invoke(resume({ "t1/w1": { type: "approve" } }), { threadId: "r2" });
    expect(done.stopReason).toBe("done");
    expect((await backend.read("/report.md")).content).toBe("by child");
    expect(done.messages.at(-1)?.content).toBe("parent got: child saw: Wrote /report.md");
  });

  it("edit: the subagent runs the edited call", async () => {
    const { agent, backend } = setup();
    await agent.invoke(user("parent task"), { threadId: "r2e" });
    await agent.invoke(resume({ "t1/w1": { type: "edit", args: { file_path: "/edited.md", content: "changed" } } }), { threadId: "r2e" });
    expect((await backend.read("/edited.md")).content).toBe("changed");
    expect((await backend.read("/report.md")).error?.code).toBe("file_not_found");
  });

  it("reject: nothing is written and the subagent sees the rejection", async () => {
    const { agent, backend, model } = setup();
    await agent.invoke(user("parent task"), { threadId: "r3" });
    const done = await agent.invoke(resume({ "t1/w1": { type: "reject", message: "not now" } }), { threadId: "r3" });
    expect((await backend.read("/report.md")).error?.code).toBe("file_not_found");
    const childAfter = model.requests.find((r) => first(r).startsWith("child") && last(r)?.role === "tool");
    expect(childAfter?.messages.at(-1)?.content).toContain("The user rejected this write_file call: not now");
    expect(done.messages.at(-1)?.content).toContain("parent got: child saw: The user rejected");
  });

  it("refuses a resume that misses the subagent's decision, and loses nothing", async () => {
    const { agent, backend } = setup();
    await agent.invoke(user("parent task"), { threadId: "r4" });
    await expect(agent.invoke(resume({ w1: { type: "approve" } }), { threadId: "r4" })).rejects.toBeInstanceOf(ResumeError);
    await expect(agent.invoke(resume({ "t1/w1": { type: "maybe" } as never }), { threadId: "r4" })).rejects.toThrow(/not allowed/);
    expect((await backend.read("/report.md")).error?.code).toBe("file_not_found");
    const done = await agent.invoke(resume({ "t1/w1": { type: "approve" } }), { threadId: "r4" });
    expect(done.messages.at(-1)?.content).toBe("parent got: child saw: Wrote /report.md");
  });

  it("a subagent definition can make review stricter, never weaker", async () => {
    const model = new FakeChatModel((req) => {
      const f = first(req);
      const l = last(req);
      if (f === "parent task") {
        if (l?.role === "user")
          return { toolCalls: [{ id: "t1", name: "task", args: { description: "child: go", subagent_type: "writer" } }] };
        return `parent got: ${l?.content}`;
      }
      if (l?.role === "user")
        return {
          toolCalls: [
            { id: "w1", name: "write_file", args: { file_path: "/x.md", content: "x" } },
            { id: "e1", name: "ls", args: { path: "/" } },
          ],
        };
      return "child done";
    });
    const { agent, backend } = setup(model, {
      subagents: [
        { name: "writer", description: "writes", systemPrompt: "Write.", interruptOn: { write_file: false, ls: { allow: ["reject"] } } },
      ],
    });
    const out = await agent.invoke(user("parent task"), { threadId: "s1" });
    expect(out.interrupt?.toolCalls.map((c) => [c.id, c.allow, c.subagent?.name])).toEqual([
      ["t1/w1", ["approve", "edit", "reject"], "writer"],
      ["t1/e1", ["reject"], "writer"],
    ]);
    await expect(agent.invoke(resume({ "t1/w1": { type: "approve" }, "t1/e1": { type: "approve" } }), { threadId: "s1" })).rejects.toThrow(
      /not allowed/,
    );
    await agent.invoke(resume({ "t1/w1": { type: "approve" }, "t1/e1": { type: "reject" } }), { threadId: "s1" });
    expect((await backend.read("/x.md")).content).toBe("x");
  });

  it("nested depth 2: the grandchild's call surfaces with its path and resumes into it", async () => {
    const model = new FakeChatModel((req) => {
      const f = first(req);
      const l = last(req);
      if (l?.role === "tool") return `${f.split(":")[0]} saw: ${l.content}`;
      if (f === "parent task") return { toolCalls: [{ id: "t1", name: "task", args: { description: "child: delegate" } }] };
      if (f.startsWith("child")) return { toolCalls: [{ id: "t2", name: "task", args: { description: "grandchild: write" } }] };
      if (f.startsWith("grandchild"))
        return { toolCalls: [{ id: "w1", name: "write_file", args: { file_path: "/deep.md", content: "deep" } }] };
      return undefined;
    });
    const { agent, backend } = setup(model);
    const out = await agent.invoke(user("parent task"), { threadId: "n1" });
    expect(out.interrupt?.toolCalls.map((c) => [c.id, c.subagent])).toEqual([
      ["t1/t2/w1", { name: "general-purpose", depth: 2, path: "task:general-purpose/1/task:general-purpose/1" }],
    ]);
    expect((await backend.read("/deep.md")).error?.code).toBe("file_not_found");
    const done = await agent.invoke(resume({ "t1/t2/w1": { type: "approve" } }), { threadId: "n1" });
    expect((await backend.read("/deep.md")).content).toBe("deep");
    expect(done.messages.at(-1)?.content).toBe("parent task saw: child saw: grandchild saw: Wrote /deep.md");
  });

  it("parallel siblings: both pause, decisions apply per subagent, results keep the call order", async () => {
    const model = new FakeChatModel((req) => {
      const f = first(req);
      const l = last(req);
      if (f === "parent task") {
        if (l?.role === "user")
          return {
            toolCalls: [
              { id: "t1", name: "task", args: { description: "child a" } },
              { id: "l1", name: "ls", args: { path: "/" } },
              { id: "t2", name: "task", args: { description: "child b" } },
            ],
          };
        return `parent got: ${req.messages
          .filter((m) => m.role === "tool")
          .map((m) => `${m.toolCallId}=${m.content}`)
          .join(" | ")}`;
      }
      const which = f.endsWith("a") ? "a" : "b";
      if (l?.role === "user")
        return { toolCalls: [{ id: `w${which}`, name: "write_file", args: { file_path: `/${which}.md`, content: which } }] };
      return `${which}: ${l?.content}`;
    });
    const { agent, backend } = setup(model);
    const out = await agent.invoke(user("parent task"), { threadId: "p1" });
    expect(out.interrupt?.toolCalls.map((c) => [c.id, c.subagent?.path])).toEqual([
      ["t1/wa", "task:general-purpose/1"],
      ["t2/wb", "task:general-purpose/2"],
    ]);
    const done = await agent.invoke(resume({ "t1/wa": { type: "approve" }, "t2/wb": { type: "reject" } }), { threadId: "p1" });
    expect((await backend.read("/a.md")).content).toBe("a");
    expect((await backend.read("/b.md")).error?.code).toBe("file_not_found");
    expect(done.messages.filter((m) => m.role === "tool").map((m) => m.toolCallId)).toEqual(["t1", "l1", "t2"]);
    expect(done.messages.at(-1)?.content).toMatch(
      /^parent got: t1=a: Wrote \/a\.md \| l1=.* \| t2=b: The user rejected this write_file call/,
    );
  });

  it("resumes into the subagent from a durable checkpointer in a new process", async () => {
    const { execFileSync } = await import("node:child_process");
    const { mkdtempSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const dir = mkdtempSync(join(tmpdir(), "engram-review-"));
    // Bundled once, started with plain node (not tsx) each time.
    const script = await bundledFixture(join(import.meta.dirname, "fixtures/agent/review-process.ts"));
    const run = (mode: string) =>
      JSON.parse(
        execFileSync(process.execPath, [script, mode, dir], { encoding: "utf8", env: process.env }).trim().split("\n").at(-1) as string,
      );
    try {
      expect(run("start")).toEqual({ interrupted: ["t1/w1"], path: "task:general-purpose/1", exists: false });
      expect(run("resume")).toEqual({ answer: "parent got: child read:      1\tstep 1", stopReason: "done" });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
