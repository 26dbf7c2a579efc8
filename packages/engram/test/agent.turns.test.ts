/** Runs of one thread on one agent take turns, so neither loses what the other saved (its
 * messages, its files); runs of different threads still run side by side. Across agents
 * (processes) sharing a checkpointer, a save over an unseen save is a `conflict`. */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type Checkpointer, FakeChatModel, InMemoryCheckpointer, type Message, type Tool, createDeepAgent, resume } from "../src/index.js";
import { core, fileModel, user } from "./fixtures/session.js";

const options = { core, enableSubagents: false, enableMemory: false, enableSkills: false } as const;

const lastTool = (messages: Message[]) => messages.filter((m) => m.role === "tool").at(-1)?.content ?? "";
const userTexts = (messages: Message[] | undefined) => (messages ?? []).filter((m) => m.role === "user").map((m) => m.content);

/** A promise and its resolve. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

/**
 * The file model of the fixtures, whose first call for a user text starting with `wait` holds
 * until `gates[text]` opens; `calls` lists the user texts as their first model calls start.
 */
function gatedModel(gates: Record<string, Promise<void>>) {
  const calls: string[] = [];
  const files = fileModel();
  const model = new FakeChatModel(async (req) => {
    const last = req.messages.at(-1);
    if (last?.role === "user") {
      calls.push(last.content);
      await gates[last.content];
    }
    return files.invoke(req).then((r) => {
      const calls = r.message.toolCalls ?? [];
      return calls.length > 0 ? { toolCalls: calls.map(({ name, args }) => ({ name, args })) } : r.message.content;
    });
  });
  return { model, calls };
}

describe("runs of one thread take turns", () => {
  it("keeps the files and messages of concurrent runs of one thread (none saves over another)", async () => {
    const checkpointer = new InMemoryCheckpointer();
    const agent = createDeepAgent(fileModel(), { ...options, checkpointer });
    await agent.invoke(user("save /a.md one"), { threadId: "t" });
    // Before turns, the second run to save wrote its copy of the thread over the first's: /b.md
    // and the "save /b.md two" exchange were gone.
    await Promise.all([agent.invoke(user("save /b.md two"), { threadId: "t" }), agent.invoke(user("read /a.md"), { threadId: "t" })]);
    const out = await agent.invoke(user("read /b.md"), { threadId: "t" });
    expect(lastTool(out.messages)).toContain("two");
    expect(userTexts(out.messages)).toEqual(["save /a.md one", "save /b.md two", "read /a.md", "read /b.md"]);
  });

  it("runs twelve concurrent writers of one thread one after the other, in the order they were started", async () => {
    const checkpointer = new InMemoryCheckpointer();
    const agent = createDeepAgent(fileModel(), { ...options, checkpointer });
    const texts = Array.from({ length: 12 }, (_, i) => `save /f${i}.md file ${i}`);
    const outs = await Promise.all(texts.map((t) => agent.invoke(user(t), { threadId: "many" })));
    // Each run saw every earlier run's messages.
    expect(outs.map((out) => userTexts(out.messages))).toEqual(texts.map((_, i) => texts.slice(0, i + 1)));
    expect(userTexts((await checkpointer.get("many"))?.messages)).toEqual(texts);
    for (let i = 0; i < 12; i++) {
      const read = await agent.invoke(user(`read /f${i}.md`), { threadId: "many" });
      expect(lastTool(read.messages)).toContain(`file ${i}`);
    }
  });

  it("starts a run only after the run ahead of it saved, while other threads run meanwhile", async () => {
    const first = gate();
    const { model, calls } = gatedModel({ "save /x.md first": first.opened });
    const agent = createDeepAgent(model, { ...options, checkpointer: new InMemoryCheckpointer() });
    const a1 = agent.invoke(user("save /x.md first"), { threadId: "a" });
    const a2 = agent.invoke(user("read /x.md"), { threadId: "a" });
    // Thread b is not held up by thread a's turn.
    const b = await agent.invoke(user("save /y.md other"), { threadId: "b" });
    expect(lastTool(b.messages)).toMatch(/wrote|\/y\.md/i);
    expect(calls).toEqual(["save /x.md first", "save /y.md other"]); // a2 has not called the model
    first.open();
    const [, second] = await Promise.all([a1, a2]);
    expect(lastTool(second.messages)).toContain("first");
    expect(calls).toEqual(["save /x.md first", "save /y.md other", "read /x.md"]);
  });

  it("lets a run waiting for its turn be aborted, without touching the thread or the runs behind it", async () => {
    const first = gate();
    const { model, calls } = gatedModel({ "save /x.md first": first.opened });
    const checkpointer = new InMemoryCheckpointer();
    const agent = createDeepAgent(model, { ...options, checkpointer });
    const a1 = agent.invoke(user("save /x.md first"), { threadId: "a" });
    const abort = new AbortController();
    const a2 = agent.invoke(user("save /x.md second"), { threadId: "a", signal: abort.signal });
    const a3 = agent.invoke(user("read /x.md"), { threadId: "a" });
    abort.abort(new Error("changed my mind"));
    await expect(a2).rejects.toThrow("changed my mind");
    // a3 still waits for a1, not for the aborted a2.
    await new Promise((r) => setTimeout(r, 20));
    expect(calls).toEqual(["save /x.md first"]);
    first.open();
    const third = await a3;
    await a1;
    expect(lastTool(third.messages)).toContain("first");
    expect(userTexts((await checkpointer.get("a"))?.messages)).toEqual(["save /x.md first", "read /x.md"]);
    expect(calls).not.toContain("save /x.md second");
  });

  it("ends a turn when the run saved, even if nobody reads the rest of its stream", async () => {
    const agent = createDeepAgent(fileModel(), { ...options, checkpointer: new InMemoryCheckpointer() });
    for await (const _ of agent.stream(user("save /s.md streamed"), { threadId: "s" })) break;
    // Not a deadlock: the abandoned stream's run still ends and saves; the next run follows it.
    const out = await agent.invoke(user("read /s.md"), { threadId: "s" });
    expect(lastTool(out.messages)).toContain("streamed");
  });

  it("refuses, with conflict, a save over a save another agent made meanwhile (two processes)", async () => {
    const first = gate();
    const checkpointer = new InMemoryCheckpointer();
    const { model } = gatedModel({ "save /x.md from a": first.opened });
    const a = createDeepAgent(model, { ...options, checkpointer });
    const b = createDeepAgent(fileModel(), { ...options, checkpointer });
    await b.invoke(user("save /base.md base"), { threadId: "p" });
    const slow = a.invoke(user("save /x.md from a"), { threadId: "p" });
    await new Promise((r) => setTimeout(r, 10));
    await b.invoke(user("save /y.md from b"), { threadId: "p" });
    first.open();
    await expect(slow).rejects.toMatchObject({
      name: "EngramError",
      code: "conflict",
      message: expect.stringContaining("this run's messages and files were not saved"),
    });
    // Nothing of b's was overwritten; a, retried, continues from b's save.
    expect(userTexts((await checkpointer.get("p"))?.messages)).toEqual(["save /base.md base", "save /y.md from b"]);
    const retried = await a.invoke(user("save /x.md from a"), { threadId: "p" });
    expect(userTexts(retried.messages)).toEqual(["save /base.md base", "save /y.md from b", "save /x.md from a"]);
    for (const [path, text] of [
      ["/base.md", "base"],
      ["/y.md", "from b"],
      ["/x.md", "from a"],
    ]) {
      expect(lastTool((await b.invoke(user(`read ${path}`), { threadId: "p" })).messages)).toContain(text);
    }
    // A thread deleted and started again meanwhile is not the thread this run loaded.
    const third = gate();
    const { model: m3 } = gatedModel({ "save /z.md late": third.opened });
    const late = createDeepAgent(m3, { ...options, checkpointer }).invoke(user("save /z.md late"), { threadId: "p" });
    await new Promise((r) => setTimeout(r, 10));
    await checkpointer.delete("p");
    await b.invoke(user("save /fresh.md anew"), { threadId: "p" });
    third.open();
    await expect(late).rejects.toMatchObject({ code: "conflict" });
    expect(userTexts((await checkpointer.get("p"))?.messages)).toEqual(["save /fresh.md anew"]);
    // A new thread, too: two first saves, one refused.
    const second = gate();
    const { model: m2 } = gatedModel({ "save /n.md a": second.opened });
    const pending = createDeepAgent(m2, { ...options, checkpointer }).invoke(user("save /n.md a"), { threadId: "new" });
    await new Promise((r) => setTimeout(r, 10));
    await b.invoke(user("save /n.md b"), { threadId: "new" });
    second.open();
    await expect(pending).rejects.toMatchObject({ code: "conflict" });
    expect(userTexts((await checkpointer.get("new"))?.messages)).toEqual(["save /n.md b"]);
  });

  it("runs an approved call once when two processes resume the same review at once", async () => {
    const shared = new InMemoryCheckpointer();
    // Both resumes load the interrupted thread before either saves (as two processes can).
    let barrier: { gets: number; loaded: ReturnType<typeof gate> } | undefined;
    const checkpointer: Checkpointer = {
      incremental: true,
      get: async (id, o) => {
        const cp = await shared.get(id, o);
        if (barrier && ++barrier.gets === 2) barrier.loaded.open();
        return cp;
      },
      put: async (id, cp) => {
        await barrier?.loaded.opened;
        return shared.put(id, cp);
      },
      delete: (id) => shared.delete(id),
    };
    let sent = 0;
    const send = {
      name: "send_email",
      description: "Sends an email.",
      schema: z.object({ to: z.string() }),
      run: async () => ({ content: `sent #${++sent}` }),
    } as unknown as Tool<never>;
    const agent = () =>
      createDeepAgent(
        new FakeChatModel((req) =>
          req.messages.at(-1)?.role === "user" ? { toolCalls: [{ id: "m1", name: "send_email", args: { to: "ada" } }] } : "sent",
        ),
        { ...options, checkpointer, tools: [send], interruptOn: { send_email: true } },
      );
    const first = await agent().invoke(user("email ada"), { threadId: "r" });
    expect(first.interrupt?.toolCalls[0]?.id).toBe("m1");
    barrier = { gets: 0, loaded: gate() };
    const both = await Promise.allSettled([
      agent().invoke(resume({ m1: { type: "approve" } }), { threadId: "r" }),
      agent().invoke(resume({ m1: { type: "approve" } }), { threadId: "r" }),
    ]);
    expect(sent).toBe(1);
    expect(both.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
    const refused = both.find((r) => r.status === "rejected") as PromiseRejectedResult;
    expect(refused.reason).toMatchObject({ name: "ResumeError", code: "invalid_resume", message: expect.stringContaining("not applied") });
    const saved = await shared.get("r");
    expect(saved?.interrupt).toBeUndefined();
    expect(saved?.messages.filter((m) => m.role === "tool").map((m) => m.content)).toEqual(["sent #1"]);
  });

  it("takes a review before running it: a resume that dies midway leaves nothing to resume again", async () => {
    const checkpointer = new InMemoryCheckpointer();
    const never = new Promise<never>(() => {});
    const hang = {
      name: "send_email",
      description: "Sends an email.",
      schema: z.object({ to: z.string() }),
      run: () => never, // the process dies while the call runs
    } as unknown as Tool<never>;
    const model = () =>
      new FakeChatModel((req) =>
        req.messages.at(-1)?.role === "user" ? { toolCalls: [{ id: "m1", name: "send_email", args: { to: "ada" } }] } : "ok",
      );
    const dying = createDeepAgent(model(), { ...options, checkpointer, tools: [hang], interruptOn: { send_email: true } });
    await dying.invoke(user("email ada"), { threadId: "d" });
    void dying.invoke(resume({ m1: { type: "approve" } }), { threadId: "d" });
    await new Promise((r) => setTimeout(r, 20));
    const saved = await checkpointer.get("d");
    expect(saved?.interrupt).toBeUndefined();
    // Another process: the review is gone, and the next run answers the call it left.
    const files = fileModel();
    const next = createDeepAgent(files, { ...options, checkpointer, tools: [hang], interruptOn: { send_email: true } });
    await expect(next.invoke(resume({ m1: { type: "approve" } }), { threadId: "d" })).rejects.toMatchObject({ name: "ResumeError" });
    await next.invoke(user("hello"), { threadId: "d" });
    const sent = files.requests.at(-1)?.messages ?? [];
    expect(sent.find((m) => m.role === "tool")?.content).toMatch(/cancelled before it ran/);
  });

  it("ends a turn when the run fails, so the thread takes runs again", async () => {
    let fail = true;
    const files = fileModel();
    const model = new FakeChatModel(async (req) => {
      if (fail) {
        fail = false;
        throw new Error("provider down");
      }
      const r = await files.invoke(req);
      const calls = r.message.toolCalls ?? [];
      return calls.length > 0 ? { toolCalls: calls.map(({ name, args }) => ({ name, args })) } : r.message.content;
    });
    const agent = createDeepAgent(model, { ...options, checkpointer: new InMemoryCheckpointer() });
    const [failed, next] = await Promise.allSettled([
      agent.invoke(user("save /e.md x"), { threadId: "e" }),
      agent.invoke(user("save /e.md y"), { threadId: "e" }),
    ]);
    expect(failed.status).toBe("rejected");
    expect(next.status).toBe("fulfilled");
    const out = await agent.invoke(user("read /e.md"), { threadId: "e" });
    expect(lastTool(out.messages)).toContain("y");
  });
});
