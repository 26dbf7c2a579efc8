/** Long-term facts memory wired into the agent: capture after a run, injection per user. */
import { beforeAll, expect, it } from "vitest";
import { type Core, FakeChatModel, InMemoryStore, createDeepAgent, loadCore } from "../src/index.js";

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});

const isExtraction = (system: string) => system.startsWith("You maintain the long-term memory");

it("learns a fact after a run, injects it for that user only, and never stores a secret", async () => {
  const store = new InMemoryStore();
  const model = new FakeChatModel((req) => {
    if (isExtraction(req.system)) {
      const convo = req.messages[0]?.content ?? "";
      expect(convo).not.toContain("sk-live-1234567890abcdefghij");
      return JSON.stringify({
        user: { workContext: { summary: "Works at Acme on the billing service.", shouldUpdate: true } },
        newFacts: [
          { content: "Works at Acme on the billing service", category: "context", confidence: 0.95 },
          { content: "API key is sk-live-1234567890abcdefghij", category: "knowledge", confidence: 0.9 },
          { content: "Might like jazz", category: "preference", confidence: 0.3 },
        ],
        factsToRemove: [],
      });
    }
    return `ok (${req.messages.length})`;
  });
  const agent = createDeepAgent(model, { core, store, longTermMemory: { debounceMs: 0 } });
  await agent.invoke(
    {
      messages: [{ role: "user", content: "I work at Acme on the billing service. My key is sk-live-1234567890abcdefghij, keep it safe." }],
    },
    { threadId: "t1", userId: "alice" },
  );
  await agent.close();

  const again = createDeepAgent(model, { core, store, longTermMemory: { debounceMs: 0 } });
  await again.invoke({ messages: [{ role: "user", content: "what do you know?" }] }, { threadId: "t2", userId: "alice" });
  await again.invoke({ messages: [{ role: "user", content: "and about me?" }] }, { threadId: "t3", userId: "bob" });
  await again.close();

  // Long-term facts are volatile: they travel in the system context, after the static prompt.
  const prompts = model.requests.filter((r) => !isExtraction(r.system)).map((r) => r.systemContext ?? "");
  const alice = prompts.at(-2) ?? "";
  const bob = prompts.at(-1) ?? "";
  expect(alice).toContain("<memory>");
  expect(alice).toContain("Works at Acme on the billing service");
  expect(alice).not.toContain("Might like jazz");
  expect(bob).not.toContain("Acme");
  const stored = JSON.stringify((await store.list(["engram", "longterm", "users", "alice"])).items);
  // The same memory is reachable through the agent for apps: list, then clear.
  const facts = (await again.longTermMemory?.listFacts("alice")) ?? [];
  expect(facts.map((f) => f.content)).toContain("Works at Acme on the billing service");
  await again.longTermMemory?.clear("alice");
  expect(await again.longTermMemory?.listFacts("alice")).toEqual([]);
  expect(stored).toContain("Acme");
  expect(stored).not.toContain("sk-live-1234567890abcdefghij");
});

it("sends summarised-away messages to long-term memory before they are dropped", async () => {
  let extractions = 0;
  const model = new FakeChatModel((req) => {
    if (isExtraction(req.system)) {
      extractions++;
      return JSON.stringify({ newFacts: [{ content: "Prefers metric units", category: "preference", confidence: 0.9 }] });
    }
    if (req.system.startsWith("You compress")) return "summary";
    return "reply";
  });
  const agent = createDeepAgent(model, {
    core,
    maxInputTokens: 300,
    summarizationThreshold: 0.5,
    summarizationKeepMessages: 2,
    systemPrompt: "short",
    longTermMemory: { debounceMs: 30_000 },
  });
  for (let i = 0; i < 4; i++) {
    await agent.invoke(
      { messages: [{ role: "user", content: `use metric units please ${"x ".repeat(60)}` }] },
      { threadId: "s", userId: "u" },
    );
  }
  // The immediate capture at summarisation ran without waiting for the 30 s debounce.
  await new Promise((r) => setTimeout(r, 50));
  expect(extractions).toBeGreaterThanOrEqual(1);
  await agent.close();
});

it("flushes pending long-term memory when the process gets SIGTERM", async () => {
  const { spawn } = await import("node:child_process");
  const { mkdtempSync, readFileSync, rmSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const dir = mkdtempSync(join(tmpdir(), "engram-signal-"));
  try {
    const child = spawn(
      join(import.meta.dirname, "../../../node_modules/.bin/tsx"),
      [join(import.meta.dirname, "fixtures/agent/signal-process.ts"), dir],
      {
        env: process.env,
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    await new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (d: Buffer) => d.toString().includes("ready") && resolve());
      child.on("exit", (code) => reject(new Error(`child exited early (${code})`)));
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code, signal) => resolve(code ?? (signal ? -1 : null))));
    child.kill("SIGTERM");
    expect(await exited).toBe(143);
    const memory = readFileSync(join(dir, "users", "ops", "memory.json"), "utf8");
    expect(memory).toContain("Deploys on Tuesdays");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);

it("reuses the last injection only while the stored memory is unchanged", async () => {
  const { LongTermMemory } = await import("../src/index.js");
  for (const recall of ["confidence", "relevance"] as const) {
    const ltm = new LongTermMemory({ model: new FakeChatModel([]), core, recall });
    expect(await ltm.inject("u", undefined, "tea?")).toBe("");
    const added = await ltm.addFact("u", undefined, { content: "Drinks green tea" });
    expect(added.error).toBeUndefined();
    expect(await ltm.inject("u", undefined, "tea?")).toContain("Drinks green tea");
    const id = (await ltm.listFacts("u"))[0]?.id as string;
    await ltm.editFact("u", undefined, id, { content: "Drinks black coffee" });
    const edited = await ltm.inject("u", undefined, "coffee?");
    expect(edited).toContain("Drinks black coffee");
    expect(edited).not.toContain("green tea");
    await ltm.clear("u");
    expect(await ltm.inject("u", undefined, "coffee?")).toBe("");
    await ltm.close();
  }
});
