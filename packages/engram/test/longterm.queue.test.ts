/** Long-term memory: the debounced, coalescing, single-worker queue, alone and behind
 * `LongTermMemory.capture`. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { FakeChatModel } from "../src/models/fake.js";
import type { Message, ModelRequest } from "../src/models/types.js";
import { LongTermMemory, UpdateQueue } from "../src/memory/longterm/index.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const user = (content: string): Message => ({ role: "user", content });
const assistant = (content: string): Message => ({ role: "assistant", content });

/** A model reply adding one fact per `content`. */
function factsReply(...contents: string[]): string {
  return JSON.stringify({ newFacts: contents.map((content) => ({ content, category: "context", confidence: 0.9 })), factsToRemove: [] });
}

function promptOf(request: ModelRequest): string {
  return request.messages.map((m) => m.content).join("\n");
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("UpdateQueue", () => {
  it("coalesces items of one key (newest wins, merge applied) and debounces each key", async () => {
    const seen: string[] = [];
    const q = new UpdateQueue<string>({
      debounceMs: 60,
      process: async (item) => {
        seen.push(item);
      },
      merge: (older, newer) => `${newer}+${older}`,
    });
    // Fake clocks: the windows below are exact, however loaded the machine is.
    vi.useFakeTimers();
    try {
      q.add("k", "a");
      q.add("k", "b");
      q.add("other", "x");
      await vi.advanceTimersByTimeAsync(20);
      q.add("k", "c"); // restarts k's delay: due at 80
      expect(q.pending).toBe(2);
      await vi.advanceTimersByTimeAsync(50); // now 70
      expect(seen).toEqual(["x"]); // `other` was due at 60, `k` not yet
      await vi.advanceTimersByTimeAsync(20); // now 90
      expect(seen).toEqual(["x", "c+b+a"]);
      expect(q.pending).toBe(0);
      await q.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it("flush processes everything pending now, without waiting for the debounce", async () => {
    const seen: string[] = [];
    const q = new UpdateQueue<string>({ debounceMs: 60_000, process: async (i) => void seen.push(i) });
    q.add("a", "1");
    q.add("b", "2");
    // Had flush waited for the 60 s debounce, the test would time out.
    await q.flush();
    expect(seen).toEqual(["1", "2"]);
    await q.close();
  });

  it("runs one item at a time and keeps an item added for the key being processed", async () => {
    let active = 0;
    let maxActive = 0;
    const seen: string[] = [];
    const q = new UpdateQueue<string>({
      debounceMs: 0,
      process: async (item) => {
        active++;
        maxActive = Math.max(maxActive, active);
        if (item === "first") q.add("k", "added-while-processing");
        await sleep(15);
        seen.push(item);
        active--;
      },
    });
    q.add("k", "first");
    q.add("j", "second", { immediate: true });
    await q.flush();
    expect(seen.sort()).toEqual(["added-while-processing", "first", "second"]);
    expect(maxActive).toBe(1);
    await q.close();
  });

  it("arms no timer while the worker is busy (no spinning), however many items arrive", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const seen: string[] = [];
    const q = new UpdateQueue<string>({
      debounceMs: 0,
      process: async (item) => {
        if (item === "slow") await gate;
        seen.push(item);
      },
    });
    q.add("slow", "slow");
    await sleep(5);
    expect(q.busy).toBe(true);
    const spy = vi.spyOn(globalThis, "setTimeout");
    for (let i = 0; i < 50; i++) q.add(`k${i}`, `item${i}`, { immediate: true });
    await sleep(20);
    expect(spy.mock.calls.filter(([, ms]) => ms !== 20).length).toBe(0);
    spy.mockRestore();
    release();
    await q.flush();
    expect(seen.length).toBe(51);
    await q.close();
  });

  it("reports a failing item and carries on with the next", async () => {
    const errors: unknown[] = [];
    const seen: string[] = [];
    const q = new UpdateQueue<string>({
      debounceMs: 0,
      process: async (item) => {
        if (item === "bad") throw new Error("boom");
        seen.push(item);
      },
      onError: (e, item) => errors.push([String(e), item]),
    });
    q.add("a", "bad");
    q.add("b", "good");
    await q.flush();
    expect(errors).toEqual([["Error: boom", "bad"]]);
    expect(seen).toEqual(["good"]);
    await q.close();
  });

  it("close flushes, leaves no timer, and refuses later items; discard drops pending items", async () => {
    const seen: string[] = [];
    const q = new UpdateQueue<string>({ debounceMs: 60_000, process: async (i) => void seen.push(i) });
    q.add("a", "1");
    q.add("b", "2");
    q.add("c", "3");
    expect(q.discard((key) => key === "b")).toBe(1);
    await q.close();
    expect(seen).toEqual(["1", "3"]);
    expect(() => q.add("d", "4")).toThrow(/closed/);
  });
});

describe("LongTermMemory.capture", () => {
  const ids = { threadId: "t1", userId: "u1" };

  it("several captures of one thread make one model call with the latest conversation and OR-merged flags", async () => {
    const model = new FakeChatModel(() => factsReply("Uses pnpm"));
    const memory = new LongTermMemory({ model, debounceMs: 30_000, onWarning: () => {} });
    expect(memory.capture([user("No, that's wrong — use pnpm"), assistant("OK, pnpm it is.")], ids)).toBe(true);
    memory.capture([user("No, that's wrong — use pnpm"), assistant("OK."), user("thanks"), assistant("You're welcome.")], ids);
    memory.capture([user("hello"), assistant("hi")], { threadId: "t2", userId: "u1" });
    expect(memory.pending).toBe(2);
    expect(model.requests.length).toBe(0); // debounced
    await memory.flush();
    expect(model.requests.length).toBe(2);
    const t1 = model.requests.map(promptOf).find((p) => p.includes("pnpm")) as string;
    expect(t1).toContain("You're welcome.");
    expect(t1).not.toContain("pnpm it is"); // the older conversation of the thread was replaced
    expect(t1).toMatch(/corrected the assistant/);
    await memory.close();
  });

  it("keeps flags of a coalesced capture even when the newest has none", async () => {
    const model = new FakeChatModel(() => factsReply("x"));
    const memory = new LongTermMemory({ model, debounceMs: 30_000, onWarning: () => {} });
    memory.capture([user("不对，应该用 Go"), assistant("好的")], ids);
    memory.capture([user("继续"), assistant("好的")], ids);
    await memory.flush();
    expect(model.requests.length).toBe(1);
    expect(promptOf(model.requests[0] as ModelRequest)).toMatch(/corrected the assistant/);
    await memory.close();
  });

  it("immediate captures run at once and never merge with the thread's debounced capture", async () => {
    const model = new FakeChatModel((req) => factsReply(promptOf(req).includes("summarised away") ? "Old fact" : "New fact"));
    // Queueing is under test, not what the facts say: the user-support check is off.
    const memory = new LongTermMemory({ model, debounceMs: 30_000, onWarning: () => {}, minUserSupport: 0 });
    memory.capture([user("summarised away: I live in Lyon"), assistant("noted")], ids, { immediate: true });
    memory.capture([user("now: I like tea"), assistant("noted")], ids);
    await sleep(30);
    expect(model.requests.length).toBe(1); // the immediate one, without waiting 30 s
    await memory.close();
    expect((await memory.listFacts("u1")).map((f) => f.content).sort()).toEqual(["New fact", "Old fact"]);
  });

  it("close loses nothing and captures after close throw", async () => {
    const model = new FakeChatModel((req) => factsReply(`fact of ${/thread (\w+)/.exec(promptOf(req))?.[1]}`));
    const memory = new LongTermMemory({ model, debounceMs: 300_000, onWarning: () => {}, minUserSupport: 0 });
    for (const t of ["alpha", "beta", "gamma"]) memory.capture([user(`thread ${t}`), assistant("ok")], { threadId: t, userId: "u1" });
    await memory.close();
    expect((await memory.listFacts("u1")).map((f) => f.content).sort()).toEqual(["fact of alpha", "fact of beta", "fact of gamma"]);
    expect(() => memory.capture([user("late"), assistant("ok")], ids)).toThrow();
  });

  it("a failed extraction is reported and does not stop later ones", async () => {
    const warnings: string[] = [];
    const model = new FakeChatModel((req) => (promptOf(req).includes("explode") ? undefined : factsReply("survived")));
    const memory = new LongTermMemory({ model, debounceMs: 0, onWarning: (m) => warnings.push(m), retryBackoffMs: 0 });
    memory.capture([user("explode"), assistant("ok")], { threadId: "x", userId: "u1" });
    memory.capture([user("I survived"), assistant("ok")], { threadId: "y", userId: "u1" });
    await memory.close();
    expect(warnings.some((w) => /failed/.test(w) && /script_exhausted|no turn/.test(w))).toBe(true);
    expect((await memory.listFacts("u1")).map((f) => f.content)).toEqual(["survived"]);
    // The failed one is kept for a later retry, not dropped.
    expect((await memory.pendingWork()).map((e) => e.job.threadId)).toEqual(["x"]);
  });

  it("validates its options", () => {
    const model = new FakeChatModel([]);
    expect(() => new LongTermMemory({ model, debounceMs: 500 })).toThrow(/debounceMs/);
    expect(() => new LongTermMemory({ model, debounceMs: 301_000 })).toThrow(/debounceMs/);
    expect(() => new LongTermMemory({ model, confidenceThreshold: 2 })).toThrow(/confidenceThreshold/);
    expect(() => new LongTermMemory({ model, recall: "vector" as never })).toThrow(/recall/);
    expect(() => new LongTermMemory({} as never)).toThrow(/model/);
  });
});
