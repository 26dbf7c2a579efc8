/** createDeepAgent options are validated at build time: every invalid set throws a ConfigError
 * naming the option's path; valid sets build. */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { z as z3 } from "zod/v3";
import * as zm from "zod/mini";
import { ConfigError, type DeepAgentOptions, EngramError, FakeChatModel, type Tool, createDeepAgent } from "../src/index.js";

const model = new FakeChatModel(["ok"]);
const run = async () => ({ content: "ok" });
const tool = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  description: "d",
  schema: z.object({ q: z.string() }),
  run,
  ...extra,
});
const sub = (extra: Record<string, unknown> = {}) => ({
  name: "researcher",
  description: "finds things",
  systemPrompt: "You research.",
  ...extra,
});

/** [what, options, expected ConfigError.option] */
const INVALID: [string, unknown, string][] = [
  ["interruptOn entry is a string", { interruptOn: { write_file: "yes" } }, "interruptOn.write_file"],
  ["interruptOn entry is a number", { interruptOn: { write_file: 1 } }, "interruptOn.write_file"],
  ["unknown decision type", { interruptOn: { write_file: { allow: ["maybe"] } } }, "interruptOn.write_file.allow[0]"],
  ["an interrupt nobody can resume", { interruptOn: { write_file: { allow: [] } } }, "interruptOn.write_file.allow"],
  ["repeated decision", { interruptOn: { write_file: { allow: ["approve", "approve"] } } }, "interruptOn.write_file.allow"],
  [
    "unknown key in an interrupt entry",
    { interruptOn: { write_file: { allow: ["approve"], timeout: 5 } } },
    "interruptOn.write_file.timeout",
  ],
  ["interruptOn names no tool", { interruptOn: { wirte_file: true } }, "interruptOn.wirte_file"],
  ["interruptOn is not an object", { interruptOn: "all" }, "interruptOn"],
  ["long-term memory with the memory slot removed", { enableMemory: false, longTermMemory: {} }, "enableMemory"],
  ["maxTurns as a string", { maxTurns: "10" }, "maxTurns"],
  ["maxTurns zero", { maxTurns: 0 }, "maxTurns"],
  ["maxTurns fractional", { maxTurns: 1.5 }, "maxTurns"],
  ["maxInputTokens NaN", { maxInputTokens: Number.NaN }, "maxInputTokens"],
  ["summarizationThreshold 0", { summarizationThreshold: 0 }, "summarizationThreshold"],
  ["summarizationThreshold above 1", { summarizationThreshold: 1.5 }, "summarizationThreshold"],
  ["summarizationKeepMessages negative", { summarizationKeepMessages: -1 }, "summarizationKeepMessages"],
  ["evictionThreshold as a string", { evictionThreshold: "big" }, "evictionThreshold"],
  ["maxSubagentDepth negative", { maxSubagentDepth: -1 }, "maxSubagentDepth"],
  ["maxModelCalls zero", { maxModelCalls: 0 }, "maxModelCalls"],
  ["maxParallelToolCalls fractional", { maxParallelToolCalls: 2.5 }, "maxParallelToolCalls"],
  ["enableMemory as a string", { enableMemory: "no" }, "enableMemory"],
  ["enableSkills as a number", { enableSkills: 0 }, "enableSkills"],
  ["enableFilesystem null", { enableFilesystem: null }, "enableFilesystem"],
  ["enableSubagents as a string", { enableSubagents: "true" }, "enableSubagents"],
  ["subagentMemory as a string", { subagentMemory: "yes" }, "subagentMemory"],
  ["beforeSummarize not a function", { beforeSummarize: "save" }, "beforeSummarize"],
  ["systemPrompt a number", { systemPrompt: 42 }, "systemPrompt"],
  ["onTruncated unknown", { onTruncated: "ignore" }, "onTruncated"],
  ["modelSettings.temperature a string", { modelSettings: { temperature: "hot" } }, "modelSettings.temperature"],
  ["modelSettings unknown key", { modelSettings: { temprature: 0.2 } }, "modelSettings.temprature"],
  ["a tool without run", { tools: [{ name: "x", description: "d", schema: z.object({}) }] }, "tools[0].run"],
  ["a tool with a zod 3 schema", { tools: [tool("x", { schema: z3.object({ q: z3.string() }) })] }, "tools[0].schema"],
  ["a tool with a JSON Schema object", { tools: [tool("x", { schema: { type: "object" } })] }, "tools[0].schema"],
  ["a tool named like a built-in", { tools: [tool("read_file")] }, "tools[0].name"],
  ["two tools with one name", { tools: [tool("a"), tool("a")] }, "tools[1].name"],
  ["a tool name with spaces", { tools: [tool("look up")] }, "tools[0].name"],
  ["tools not an array", { tools: tool("a") }, "tools"],
  ["a subagent with a number as model", { subagents: [sub({ model: 42 })] }, "subagents[0].model"],
  ["a subagent with an unknown provider", { subagents: [sub({ model: "nope:x" })] }, "subagents[0].model"],
  ["a subagent without description", { subagents: [{ name: "r", systemPrompt: "s" }] }, "subagents[0].description"],
  ["a subagent named general-purpose", { subagents: [sub({ name: "general-purpose" })] }, "subagents[0].name"],
  ["two subagents with one name", { subagents: [sub(), sub()] }, "subagents[1].name"],
  ["a subagent's bad interrupt entry", { subagents: [sub({ interruptOn: { write_file: "x" } })] }, "subagents[0].interruptOn.write_file"],
  ["a subagent's bad tool", { subagents: [sub({ tools: [{ name: "t" }] })] }, "subagents[0].tools[0].description"],
  ["a middleware without a name", { middleware: [{ beforeModel: () => undefined }] }, "middleware[0].name"],
  ["a middleware hook not a function", { middleware: [{ name: "a", afterModel: 3 }] }, "middleware[0].afterModel"],
  ["two middleware with one name", { middleware: [{ name: "a" }, { name: "a" }] }, "middleware[1].name"],
  ["a checkpointer without methods", { checkpointer: {} }, "checkpointer"],
  ["a store as a string", { store: "sqlite" }, "store"],
  ["a backend as a path", { backend: "/tmp" }, "backend"],
  ["longTermMemory as a string", { longTermMemory: "yes" }, "longTermMemory"],
  ["longTermMemory.recall unknown", { longTermMemory: { recall: "magic" } }, "longTermMemory.recall"],
  ["longTermMemory.maxFacts zero", { longTermMemory: { maxFacts: 0 } }, "longTermMemory.maxFacts"],
  ["longTermMemory unknown key", { longTermMemory: { debounce: 10 } }, "longTermMemory.debounce"],
  ["skillsDir relative", { skillsDir: "skills" }, "skillsDir"],
  ["memorySources a string", { memorySources: "AGENTS.md" }, "memorySources"],
  ["an unknown option", { maxTurn: 10 }, "maxTurn"],
];

describe("invalid options throw ConfigError naming the option", () => {
  it("has at least 25 cases", () => expect(INVALID.length).toBeGreaterThanOrEqual(25));
  for (const [what, options, path] of INVALID) {
    it(what, () => {
      let error: unknown;
      try {
        createDeepAgent(model, options as DeepAgentOptions);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect(error).toBeInstanceOf(EngramError);
      expect(error).toMatchObject({ code: "invalid_config", option: path });
      expect((error as Error).message.startsWith(`${path}: `)).toBe(true);
    });
  }
  it("explains what a tool schema must be", () => {
    expect(() => createDeepAgent(model, { tools: [tool("x", { schema: z3.object({}) }) as unknown as Tool<never>] })).toThrow(
      /zod 4 schema/,
    );
  });
  it("refuses options that are not an object", () => {
    expect(() => createDeepAgent(model, "fast" as never)).toThrow(ConfigError);
  });
});

describe("valid options build", () => {
  const VALID: [string, DeepAgentOptions][] = [
    ["no options", {}],
    [
      "every interrupt form",
      { interruptOn: { write_file: true, edit_file: { allow: ["approve", "reject"] }, ls: false, task: { allow: ["reject"] } } },
    ],
    ["a zod 4 tool and review of it", { tools: [tool("lookup") as unknown as Tool<never>], interruptOn: { lookup: true } }],
    ["a zod mini tool schema", { tools: [tool("mini", { schema: zm.object({ q: zm.string() }) }) as unknown as Tool<never>] }],
    [
      "subagents with models and stricter review",
      {
        subagents: [sub({ model: new FakeChatModel(["x"]), interruptOn: { ls: true } }), sub({ name: "writer", model: "openai:gpt-4.1" })],
      },
    ],
    [
      "limits and settings",
      {
        maxTurns: 1,
        maxModelCalls: 5,
        maxParallelToolCalls: 1,
        maxSubagentDepth: 0,
        summarizationKeepMessages: 0,
        modelSettings: { temperature: 0, maxOutputTokens: 256, seed: 7 },
        onTruncated: "error",
        subagentMemory: false,
      },
    ],
    ["long-term memory options", { longTermMemory: { debounceMs: 0, recall: "relevance", agentName: "bot" } }],
    ["explicit undefined values", { maxTurns: undefined, tools: undefined }],
  ];
  for (const [what, options] of VALID) it(what, () => expect(() => createDeepAgent(model, options)).not.toThrow());
});
