/** The memory evaluation's runner pieces that need no real model: the bench harness's flags
 * (`--only memory-eval`, `--size tiny` = the smoke subset), the o200k count of what each request
 * sends (agent turns apart from extraction), cut session replies kept instead of failing the
 * turn, the long multi-session cases, and their side-by-side table. */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getEncoding } from "js-tiktoken";
import { describe, expect, it } from "vitest";
import { evalArgs } from "../../../benches/src/memory-eval/bench-args.js";
import { keepCutReplies } from "../../../benches/src/memory-eval/cut-replies.js";
import {
  type CaseResult,
  type EvalReport,
  LONG_CASE_TURNS,
  mergeReports,
  renderMarkdown,
  renderReports,
} from "../../../benches/src/memory-eval/report.js";
import { DatedCheckpointer, historyText, replaySessions, runMemoryEval } from "../../../benches/src/memory-eval/run.js";
import { parseEvalSet } from "../../../benches/src/memory-eval/score.js";
import { meteredModel, requestTokens } from "../../../benches/src/memory-eval/tokens.js";
import { FakeChatModel, InMemoryStore, type ModelRequest, StoreMemoryStorage, createDeepAgent } from "../src/index.js";

const o200k = getEncoding("o200k_base");
const count = (text: string) => o200k.encode(text).length;

describe("npm run bench -- --only memory-eval", () => {
  it("hands the evaluation its own flags; --size tiny is the smoke subset, any other size the whole set", () => {
    expect(evalArgs(["--only", "memory-eval"])).toEqual([]);
    expect(evalArgs(["--size", "tiny", "--only", "memory-eval", "--configs", "engram"])).toEqual(["--smoke", "--configs", "engram"]);
    expect(evalArgs(["--only", "memory-eval", "--size", "medium", "--category", "multi-session"])).toEqual(["--category", "multi-session"]);
    expect(() => evalArgs(["--only", "memory-eval", "--size", "huge"])).toThrow(/--size must be one of/);
  });

  it("refuses a flag it does not know (--help, a typo) before loading any model", async () => {
    await expect(runMemoryEval(["--help"])).rejects.toThrow(/--help: not an option of the memory evaluation/);
    await expect(runMemoryEval(["--smoke", "--config", "engram"])).rejects.toThrow(/--config: not an option/);
    await expect(runMemoryEval(["--smoke", "--cases"])).rejects.toThrow(/--cases needs a value/);
  });

  it("leaves every other selection to the timing rows (`--only memory` is the memory.* rows)", () => {
    expect(evalArgs(["--only", "memory"])).toBeUndefined();
    expect(evalArgs(["--only", "memory."])).toBeUndefined();
    expect(evalArgs(["--size", "tiny"])).toBeUndefined();
  });
});

describe("what each configuration sends, in o200k tokens", () => {
  it("counts the system prompt, the context block, the messages, tool calls and tool schemas", () => {
    const request: ModelRequest = {
      system: "You are a helpful assistant.",
      systemContext: "<memory>\n- Lives in Lisbon\n</memory>",
      messages: [
        { role: "user", content: "Where do I live?" },
        { role: "assistant", content: "", toolCalls: [{ id: "1", name: "read_file", args: { path: "/a" } }] },
      ],
      tools: [{ name: "read_file", description: "Reads a file.", parameters: { type: "object" } }],
    };
    expect(requestTokens(request)).toBe(
      count("You are a helpful assistant.") +
        count("<memory>\n- Lives in Lisbon\n</memory>") +
        count("Where do I live?") +
        count("read_file") +
        count('{"path":"/a"}') +
        count('{"name":"read_file","description":"Reads a file.","parameters":{"type":"object"}}'),
    );
  });

  it("tallies the agent's turns apart from extraction (JSON requests), and restarts on take", async () => {
    const fake = new FakeChatModel(["one", "two", "{}"]);
    const { model, take } = meteredModel(fake);
    const agent = createDeepAgent(model, {
      systemPrompt: "Be brief.",
      enableFilesystem: false,
      enableSkills: false,
      enableSubagents: false,
    });
    await agent.invoke({ messages: [{ role: "user", content: "Hello there" }] });
    const first = take();
    expect(first.agent.calls).toBe(1);
    expect(first.agent.tokens).toBeGreaterThanOrEqual(count("Be brief.") + count("Hello there"));
    expect(first.extraction).toEqual({ calls: 0, tokens: 0 });
    // What the first turn was sent beside the system prompt: the runner reads the blocks from it.
    expect(first.firstContext).toBe(fake.requests[0]?.systemContext);
    expect(first.firstContext).toContain("<agent_memory>");
    await model.invoke({ system: "Extract.", messages: [{ role: "user", content: "x" }], tools: [] });
    await model.invoke({ system: "Extract.", messages: [], tools: [], responseFormat: { name: "u", schema: { type: "object" } } });
    const second = take();
    expect(second.agent).toEqual({ calls: 1, tokens: count("Extract.") + count("x") });
    expect(second.firstContext).toBe("");
    expect(second.extraction).toEqual({ calls: 1, tokens: count("Extract.") });
    expect(take().agent.calls).toBe(0);
  });
});

describe("a replayed session's reply cut at its cap", () => {
  const cut = () =>
    new FakeChatModel((request) =>
      request.responseFormat
        ? { content: '{"newFacts"', finishReason: "length" }
        : { content: "SELECT customer_ref, count(*)", finishReason: "length" },
    );
  const agentOf = (model: FakeChatModel | ReturnType<typeof keepCutReplies>) =>
    createDeepAgent(model, { enableFilesystem: false, enableSkills: false, enableSubagents: false, modelSettings: { maxOutputTokens: 8 } });

  it("fails the turn on the agent's own terms, and is kept as it is through keepCutReplies", async () => {
    await expect(agentOf(cut()).invoke({ messages: [{ role: "user", content: "Write me a SQL query." }] })).rejects.toThrow(/output limit/);
    const out = await agentOf(keepCutReplies(cut())).invoke({ messages: [{ role: "user", content: "Write me a SQL query." }] });
    expect(out.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(out.messages.at(-1)?.content).toBe("SELECT customer_ref, count(*)");
  });

  it("passes a cut JSON reply (extraction) through as cut, streamed or not", async () => {
    const model = keepCutReplies(cut());
    const json: ModelRequest = { system: "", messages: [], tools: [], responseFormat: { name: "u", schema: {} } };
    expect((await model.invoke(json)).finishReason).toBe("length");
    const events = [];
    for await (const ev of model.stream(json)) events.push(ev);
    expect(events.at(-1)).toMatchObject({ type: "finish", finishReason: "length" });
    const text: ModelRequest = { system: "", messages: [{ role: "user", content: "q" }], tools: [] };
    const streamed = [];
    for await (const ev of model.stream(text)) streamed.push(ev);
    expect(streamed.at(-1)).toMatchObject({ type: "finish", finishReason: "stop" });
  });
});

describe("the long multi-session cases", () => {
  const set = parseEvalSet(JSON.parse(readFileSync(join(import.meta.dirname, "../../../benches/memory-eval/cases.json"), "utf8")));
  const long = set.cases.filter((c) => c.sessions.reduce((n, s) => n + s.turns.length, 0) >= LONG_CASE_TURNS);

  it("are at least five multi-session cases of three sessions of ten turns or more", () => {
    expect(long.length).toBeGreaterThanOrEqual(5);
    for (const c of long) {
      expect(c.category, c.id).toBe("multi-session");
      expect(c.sessions.length, c.id).toBeGreaterThanOrEqual(3);
      for (const s of c.sessions) expect(s.turns.length, c.id).toBeGreaterThanOrEqual(10);
    }
  });

  it("cost ten times what a short case's history costs to paste (the token comparison means something)", () => {
    const short = set.cases.filter((c) => c.category === "multi-session" && !long.includes(c));
    const most = Math.max(...short.map((c) => count(historyText(c))));
    for (const c of long) expect(count(historyText(c)), c.id).toBeGreaterThan(Math.max(600, 10 * most));
  });
});

describe("the long cases' table", () => {
  const result = (config: CaseResult["config"], pass: boolean, question: number, extra: Partial<CaseResult> = {}): CaseResult => ({
    id: "multi-long-01",
    category: "multi-session",
    config,
    answer: pass ? "PostgreSQL 16, Marcus" : "PostgreSQL 13",
    pass,
    reason: pass ? "" : "misses /16/",
    questionInputTokens: 9999,
    totalInputTokens: 9999,
    seconds: 1,
    turns: 31,
    promptTokens: { question, questionCalls: 1, sessions: 0, extraction: config === "engram" ? 5000 : 0, extractionCalls: 3 },
    ...extra,
  });

  it("puts engram beside the full history per case, in o200k tokens, with the ratio and the extraction's cost", () => {
    const results = [
      result("engram", true, 400, { memoryBlockTokens: 150, facts: ["a", "b"] }),
      result("full-history", false, 1000, { historyTokens: 700 }),
      result("no-memory", false, 250),
    ];
    const report = (extra: Partial<Parameters<typeof renderMarkdown>[0]>) =>
      renderMarkdown({ date: "2026-11-29T07:00:00Z", model: "m", subset: "some", cases: 1, results, summary: [], ...extra });
    const md = report({});
    expect(md).toContain("mean o200k tokens of what the question's model calls sent");
    expect(md).toContain("| multi-session | 1/1 (100%) · 400 tok | 0/1 (0%) · 250 tok | 0/1 (0%) · 1000 tok |");
    expect(md).toContain("| multi-long-01 | 31 | pass | fail | fail | 400 | 1000 | 0.40× | 150 / 700 | 5000 (3 calls) | 2 |");
    expect(md).toContain("| all (1) | | 1/1 | 0/1 | | 400 | 1000 | 0.40× | | | |");
    // With recall injection, the recalled block beside the memory block.
    const recalled = report({
      results: [result("engram", true, 400, { memoryBlockTokens: 150, recallBlockTokens: 90 }), results[1] as CaseResult],
    });
    expect(recalled).toContain("| 150 + 90 / 700 |");
    const noted = report({
      recall: { inject: 6, snippetChars: 240, injectTokens: 400 },
      notes: ["Baselines from an earlier run."],
    });
    expect(noted).toContain("recall injection on (`threadRecall: { inject: 6, snippetChars: 240, injectTokens: 400, tool: false }`)");
    expect(noted).toContain("Baselines from an earlier run.");
    expect(md).not.toContain("threadRecall: {");
  });

  it("renders several saved runs as one section, each under its subset", () => {
    const one = {
      date: "2026-11-29T04:00:00Z",
      model: "m",
      subset: "smoke",
      cases: 1,
      results: [result("engram", true, 400)],
      summary: [],
    };
    const two = { ...one, subset: "some-multi-session" };
    expect(renderReports([one])).toBe(renderMarkdown(one));
    const both = renderReports([one, two]);
    expect(both.indexOf("### smoke set (1 cases)")).toBeGreaterThanOrEqual(0);
    expect(both.indexOf("### some-multi-session set (1 cases)")).toBeGreaterThan(both.indexOf("### smoke set"));
    expect(both).not.toContain("| temporal |");
  });

  it("merges several runs into one table, each run named with what it gave; a later run's result replaces an earlier's", () => {
    const run = (subset: string, date: string, results: CaseResult[]) => ({ date, model: "m", subset, cases: 1, results, summary: [] });
    const engram = {
      ...run("smoke", "2026-11-29T14:09:00Z", [result("engram", true, 400)]),
      recall: { inject: 6, snippetChars: 240, injectTokens: 400 },
    };
    const baselines = run("baselines", "2026-11-29T16:30:00Z", [result("no-memory", false, 250), result("full-history", true, 1000)]);
    const other = run("rest", "2026-11-29T16:40:00Z", [{ ...result("engram", false, 300), id: "multi-04", turns: 2 }]);
    const parts = [
      { label: "a.json", report: engram },
      { label: "b.json", report: baselines },
      { label: "c.json", report: other },
    ];
    const merged = mergeReports(parts, "whole");
    expect(merged.cases).toBe(2);
    expect(merged.date).toBe("2026-11-29T16:40:00Z");
    expect(merged.recall).toEqual(engram.recall);
    expect(merged.notes).toContain("a.json (smoke, run 2026-11-29 14:09 UTC): engram 1.");
    expect(merged.notes).toContain("b.json (baselines, run 2026-11-29 16:30 UTC): no-memory 1, full-history 1.");
    expect(renderMarkdown(merged)).toContain("| multi-session | 1/2 (50%) · 350 tok | 0/1 (0%) · 250 tok | 1/1 (100%) · 1000 tok |");
    // A re-run of one case replaces it, and says so.
    const rerun = run("re-run", "2026-11-29T17:00:00Z", [{ ...result("engram", true, 320), id: "multi-04", turns: 2 }]);
    const again = mergeReports([...parts, { label: "d.json", report: rerun }], "whole");
    expect(again.results.filter((r) => r.config === "engram").map((r) => [r.id, r.pass])).toEqual([
      ["multi-long-01", true],
      ["multi-04", true],
    ]);
    expect(again.notes).toContain("d.json (re-run, run 2026-11-29 17:00 UTC): engram 1, replacing multi-04 engram of c.json.");
    // Some cases only, and a note of one's own.
    const some = mergeReports(parts, "smoke", { keep: (r) => r.id === "multi-04", note: "Engram re-run after a fix." });
    expect(some.results.map((r) => r.id)).toEqual(["multi-04"]);
    expect(some.cases).toBe(1);
    expect(some.notes?.at(-1)).toBe("Engram re-run after a fix.");
    expect(() =>
      mergeReports(
        [
          { label: "a.json", report: engram },
          { label: "e.json", report: { ...baselines, model: "other" } },
        ],
        "x",
      ),
    ).toThrow("e.json: model other, not m");
  });

  it("--merge --rescore scores every saved answer again with the current checks, and says what changed", async () => {
    const dir = mkdtempSync(join(tmpdir(), "memory-eval-merge-"));
    try {
      const saved = (config: CaseResult["config"], answer: string): CaseResult => ({
        ...result(config, false, 200),
        id: "abstain-09",
        category: "abstention",
        turns: 1,
        answer,
        reason: "does not say it does not know",
      });
      const file = join(dir, "a.json");
      const update: CaseResult = {
        ...result("engram", true, 200),
        id: "update-03",
        category: "knowledge-update",
        answer: "Your favourite editor is Zed.",
        memoryBlock: "<memory>\nFacts:\n- [preference | 0.90] Switched editors from Sublime Text to Zed (as of 2026-11-14)\n</memory>",
        supersededInjected: ["Sublime"],
      };
      const results = [
        saved("no-memory", "I did not tell you about your car."),
        saved("engram", "I told you that you like Thai food."),
        update,
      ];
      writeFileSync(file, JSON.stringify({ date: "2026-11-29T16:00:00Z", model: "m", subset: "rest", cases: 1, results, summary: [] }));
      const out = join(dir, "all.json");
      await runMemoryEval(["--merge", file, "--out", out, "--rescore", "--subset", "whole"]);
      const merged = JSON.parse(readFileSync(out, "utf8")) as { results: CaseResult[]; notes: string[]; subset: string };
      expect(merged.subset).toBe("whole");
      expect(merged.results.map((r) => [r.config, r.pass])).toEqual([
        ["no-memory", true],
        ["engram", false],
        ["engram", true],
      ]);
      // The block saved with the result is searched again: the old editor named only as what the
      // user switched from is not a superseded value injected.
      expect(merged.results[2]?.supersededInjected).toEqual([]);
      expect(merged.notes.at(-1)).toBe(
        "Every saved answer scored again with the current checks: abstain-09 no-memory fail→pass, update-03 superseded injected [Sublime]→[].",
      );
      expect(readFileSync(join(dir, "all.md"), "utf8")).toContain("| abstention |");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("is left out when no long case was run, and old results keep the model's token counts", () => {
    const old = { ...result("engram", true, 400), turns: 2, promptTokens: undefined };
    const md = renderMarkdown({ date: "2026-11-29T07:00:00Z", model: "m", subset: "smoke", cases: 1, results: [old], summary: [] });
    expect(md).not.toContain("Long multi-session cases");
    expect(md).toContain("as the model reported them");
    expect(md).toContain("· 9999 tok");
  });
});

describe("the engram configuration's threads", () => {
  it("are checkpointed at the session's day, so recall injection dates them", async () => {
    const checkpointer = new DatedCheckpointer();
    const model = new FakeChatModel(() => "ok");
    const agent = createDeepAgent(model, {
      enableMemory: false,
      enableSkills: false,
      enableFilesystem: false,
      enableSubagents: false,
      checkpointer,
      threadRecall: { inject: 3, tool: false },
    });
    checkpointer.at = Date.parse("2026-10-20T09:30:00Z");
    await agent.invoke({ messages: [{ role: "user", content: "We upgraded billing to PostgreSQL 16." }] }, { threadId: "s1", userId: "u" });
    expect((await checkpointer.get("s1"))?.savedAt).toBe(Date.parse("2026-10-20T09:30:00Z"));
    checkpointer.at = Date.parse("2026-11-20T10:00:00Z");
    await agent.invoke({ messages: [{ role: "user", content: "Which PostgreSQL does billing run?" }] }, { threadId: "q", userId: "u" });
    expect(model.requests.at(-1)?.systemContext).toContain("- 2026-10-20 (Tuesday): We upgraded billing to PostgreSQL 16.");
  });
});

describe("--replay", () => {
  const c = parseEvalSet({
    askedAt: "2026-11-20T10:00:00Z",
    cases: [
      {
        id: "update-x",
        category: "knowledge-update",
        sessions: [{ at: "2026-11-15T09:00:00Z", turns: ["I moved to Lisbon last month."] }],
        question: "Where do I live?",
        expected: "Lisbon",
        check: { anyOf: ["Lisbon"] },
      },
    ],
  }).cases[0] as Parameters<typeof replaySessions>[0];
  const saved = (facts: Pick<CaseResult, "facts" | "storedFacts">): CaseResult => ({
    id: "update-x",
    category: "knowledge-update",
    config: "engram",
    answer: "",
    pass: true,
    reason: "",
    questionInputTokens: 0,
    totalInputTokens: 0,
    seconds: 0,
    turns: 1,
    ...facts,
  });

  it("leaves the saved run's facts as stored and the sessions' user turns checkpointed at their day", async () => {
    const storage = new StoreMemoryStorage({ store: new InMemoryStore() });
    const checkpointer = new DatedCheckpointer();
    const fact = { content: "Lives in Lisbon", category: "personal", confidence: 1, createdAt: "2026-11-15T09:00:00.000Z" };
    await replaySessions(c, saved({ storedFacts: [fact] }), storage, checkpointer);
    const { memory } = await storage.load("eval-user", undefined);
    expect(memory.facts).toEqual([expect.objectContaining(fact)]);
    const thread = await checkpointer.get("update-x-session-1");
    expect(thread?.savedAt).toBe(Date.parse("2026-11-15T09:00:00Z"));
    expect(thread?.messages.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["I moved to Lisbon last month."]);
  });

  it("reads a run saved before storedFacts from its fact lines, each confirmed on its day", async () => {
    const storage = new StoreMemoryStorage({ store: new InMemoryStore() });
    await replaySessions(c, saved({ facts: ["Lives in Lisbon [2026-11-15]", "Has a cat [no day]"] }), storage, new DatedCheckpointer());
    const { memory } = await storage.load("eval-user", undefined);
    expect(memory.facts.map((f) => [f.content, f.createdAt.slice(0, 10), f.category])).toEqual([
      ["Lives in Lisbon", "2026-11-15", "context"],
      ["Has a cat [no day]", "2026-01-01", "context"],
    ]);
  });

  it("says when prompts were read fresh, in a run and in a merge only when every part was", () => {
    const run = (freshPrompts: boolean): EvalReport => ({
      date: "2026-11-29T07:00:00Z",
      model: "m",
      subset: "some",
      cases: 1,
      results: [saved({})],
      summary: [],
      ...(freshPrompts && { freshPrompts }),
    });
    expect(renderMarkdown(run(true))).toContain("`--fresh-prompts`");
    expect(renderMarkdown(run(false))).not.toContain("`--fresh-prompts`");
    const merge = (...fresh: boolean[]) =>
      mergeReports(
        fresh.map((f, i) => ({ label: `p${i}`, report: run(f) })),
        "whole",
      );
    expect(merge(true, true).freshPrompts).toBe(true);
    expect(merge(true, false).freshPrompts).toBeUndefined();
  });

  it("replays the engram configuration only, from a readable report with engram results", async () => {
    await expect(runMemoryEval(["--replay", "x.json", "--configs", "no-memory"])).rejects.toThrow(/engram configuration only/);
    // Fresh prompts are llama.cpp's to give: an endpoint's run must not be reported as such.
    await expect(
      runMemoryEval(["--fresh-prompts", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--out", "/nonexistent/x.json"]),
    ).rejects.toThrow(/--fresh-prompts applies to a llama: model only/);
    const dir = mkdtempSync(join(tmpdir(), "memory-eval-replay-"));
    try {
      const file = (name: string, text: string) => {
        writeFileSync(join(dir, name), text);
        return join(dir, name);
      };
      await expect(runMemoryEval(["--replay", join(dir, "missing.json")])).rejects.toThrow(/--replay: cannot read/);
      await expect(runMemoryEval(["--replay", file("bad.json", "{")])).rejects.toThrow(/--replay: cannot read/);
      await expect(runMemoryEval(["--replay", file("other.json", "[1]")])).rejects.toThrow(/not a memory evaluation report/);
      const baselines = JSON.stringify({ results: [{ ...saved({}), config: "no-memory" }] });
      await expect(runMemoryEval(["--replay", file("base.json", baselines)])).rejects.toThrow(/no engram results/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
