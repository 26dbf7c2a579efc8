/**
 * When long-term memory extraction runs (`schedule`): with a local model it waits for idle time —
 * a turn that starts aborts the extraction under way, whose work resumes after the turn — and a
 * bounded `close` keeps what it did not extract as pending work that a later process resumes.
 * The extraction model here is slow on purpose: it answers only when a test lets it, or fails as
 * soon as its call is aborted.
 */
import { beforeAll, describe, expect, it } from "vitest";
import {
  type AgentEvent,
  type Core,
  FakeChatModel,
  InMemoryStore,
  LongTermMemory,
  type ModelRequest,
  StoreMemoryStorage,
  createDeepAgent,
  loadCore,
} from "../src/index.js";

const FACT = "Favourite drink is green tea";
let core: Core;
beforeAll(async () => {
  core = await loadCore();
});

const SAID = "my favourite drink is green tea";
const isExtraction = (r: ModelRequest) => r.responseFormat?.name.startsWith("memory_") === true;
const factsReply = (...contents: string[]) =>
  JSON.stringify({ newFacts: contents.map((content) => ({ content, category: "preference", confidence: 0.95 })), factsToRemove: [] });

/** A local model (by its id) whose extraction calls hang until released or aborted, and which
 * records, for every turn call, how many extraction calls were still running. */
function slowExtractionModel() {
  let running = 0;
  let release: (() => void) | undefined;
  const started: (() => void)[] = [];
  const state = { aborted: 0, answered: 0, runningDuringTurns: [] as number[] };
  const model = new FakeChatModel(
    async (request) => {
      if (!isExtraction(request)) {
        state.runningDuringTurns.push(running);
        return "noted";
      }
      running++;
      for (const notify of started.splice(0)) notify();
      try {
        await new Promise<void>((resolve, reject) => {
          release = resolve;
          const signal = request.signal;
          if (signal?.aborted) reject(signal.reason);
          signal?.addEventListener("abort", () => {
            state.aborted++;
            reject(signal.reason);
          });
        });
      } finally {
        running--;
      }
      state.answered++;
      return factsReply(FACT);
    },
    { id: "llama:slow.gguf" },
  );
  return {
    model,
    state,
    /** Resolves when an extraction call is running. */
    extractionStarted: () => (running > 0 ? Promise.resolve() : new Promise<void>((resolve) => started.push(resolve))),
    /** Lets the running extraction call answer. */
    answer: () => release?.(),
  };
}

async function drain(events: AsyncIterable<AgentEvent>): Promise<void> {
  for await (const _ of events);
}

describe("long-term memory with a local model: extraction in idle time", () => {
  it("a turn preempts the extraction under way; its work resumes after the turn and nothing is lost", async () => {
    const slow = slowExtractionModel();
    const store = new InMemoryStore();
    const agent = createDeepAgent(slow.model, { core, store, longTermMemory: { debounceMs: 0, onWarning: () => {} } });
    await agent.invoke({ messages: [{ role: "user", content: SAID }] }, { threadId: "t1", userId: "u" });
    await slow.extractionStarted();

    // The next turn starts while extraction runs: the extraction call is aborted at once, and
    // the turn's model call finds no extraction running.
    const turn = drain(
      agent.stream({ messages: [{ role: "user", content: "what should I cook tonight?" }] }, { threadId: "t1", userId: "u" }),
    );
    expect(slow.state.aborted).toBe(1);
    await turn;
    expect(slow.state.runningDuringTurns).toEqual([0, 0]);

    // Idle again: the preempted work (merged with the new capture of the thread) is extracted.
    await slow.extractionStarted();
    slow.answer();
    await agent.longTermMemory?.flush();
    expect(slow.state.answered).toBe(1);
    const facts = (await agent.longTermMemory?.listFacts("u")) ?? [];
    expect(facts.map((f) => f.content)).toEqual([FACT]);
    expect(await agent.longTermMemory?.pendingWork()).toEqual([]);
    await agent.close();
  });

  it("waits for debounceMs without a turn, and never starts while a turn runs", async () => {
    const slow = slowExtractionModel();
    const memory = new LongTermMemory({ model: slow.model, debounceMs: 1000, core, onWarning: () => {} });
    const endTurn = memory.beginTurn();
    memory.capture(
      [
        { role: "user", content: SAID },
        { role: "assistant", content: "noted" },
      ],
      { threadId: "t", userId: "u" },
    );
    // Held by the turn: even a flush waits for it to end.
    let flushed = false;
    const flush = memory.flush().then(() => {
      flushed = true;
    });
    await new Promise((r) => setTimeout(r, 1300));
    expect(slow.model.requests.filter(isExtraction)).toHaveLength(0);
    expect(flushed).toBe(false);
    endTurn();
    await slow.extractionStarted();
    slow.answer();
    await flush;
    expect((await memory.listFacts("u")).map((f) => f.content)).toEqual([FACT]);
    await memory.close();
  });

  it('"background" (the default for a hosted model) extracts alongside turns', async () => {
    const slow = slowExtractionModel();
    const memory = new LongTermMemory({ model: slow.model, schedule: "background", debounceMs: 0, core, onWarning: () => {} });
    memory.capture(
      [
        { role: "user", content: SAID },
        { role: "assistant", content: "noted" },
      ],
      { threadId: "t", userId: "u" },
    );
    await slow.extractionStarted();
    const endTurn = memory.beginTurn();
    expect(slow.state.aborted).toBe(0);
    slow.answer();
    await memory.flush();
    endTurn();
    expect((await memory.listFacts("u")).map((f) => f.content)).toEqual([FACT]);
    await memory.close();
    expect(() => new LongTermMemory({ model: slow.model, schedule: "soon" as "idle" })).toThrow(/schedule/);
  });

  it("close({ timeoutMs }) returns in time, keeps the unfinished extraction as pending work, and the next process resumes it", async () => {
    const store = new InMemoryStore();
    const slow = slowExtractionModel();
    const first = new LongTermMemory({
      model: slow.model,
      storage: new StoreMemoryStorage({ store }),
      debounceMs: 0,
      core,
      onWarning: () => {},
    });
    first.capture(
      [
        { role: "user", content: SAID },
        { role: "assistant", content: "noted" },
      ],
      { threadId: "t", userId: "u" },
    );
    await slow.extractionStarted();
    const started = performance.now();
    await first.close({ timeoutMs: 200 });
    const ms = performance.now() - started;
    expect(ms).toBeLessThan(2000);
    expect(slow.state.aborted).toBe(1);
    const pending = await first.pendingWork();
    expect(pending).toHaveLength(1);
    expect(JSON.stringify(pending[0]?.job.conversation.messages)).toContain(SAID);
    expect(() => first.capture([{ role: "user", content: "x" }], { threadId: "t", userId: "u" })).toThrow();

    const next = slowExtractionModel();
    const second = new LongTermMemory({
      model: next.model,
      storage: new StoreMemoryStorage({ store }),
      debounceMs: 0,
      core,
      onWarning: () => {},
    });
    const flush = second.flush();
    await next.extractionStarted();
    next.answer();
    await flush;
    expect((await second.listFacts("u")).map((f) => f.content)).toEqual([FACT]);
    expect(await second.pendingWork()).toEqual([]);
    await second.close({ timeoutMs: 0 });
  });
});
