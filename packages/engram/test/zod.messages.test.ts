/** The library's schemas are `zod/mini`, which loads no messages: without classic `zod` in the
 * bundle (an edge app), the errors a person or a model reads must still be zod's English ones. */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import * as z from "zod/mini";
import { ConfigError, FakeChatModel, StateBackend, createDeepAgent, createFilesystemTools, invokeTool } from "../src/index.js";

describe("messages without a configured zod locale", () => {
  let saved: z.core.$ZodConfig;
  beforeEach(() => {
    // What an app that never imports classic `zod` has: no locale, no custom error map.
    saved = { ...z.config() };
    Object.assign(z.config(), { localeError: undefined, customError: undefined });
  });
  afterEach(() => {
    Object.assign(z.config(), saved);
  });

  it("tool argument errors are in English", async () => {
    const read = createFilesystemTools({ backend: new StateBackend() }).find((t) => t.name === "read_file");
    const out = await invokeTool(read as never, { file_path: 3 });
    expect(out).toMatchObject({
      isError: true,
      content: "Error: invalid arguments for read_file: file_path: Invalid input: expected string, received number",
    });
  });

  it("an option without a message of its own is explained in English", () => {
    let error: unknown;
    try {
      createDeepAgent(new FakeChatModel(["ok"]), { middleware: [{ name: "m", tools: 3 as never }] });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toBe("middleware[0].tools: Invalid input: expected array, received number");
  });

  it("an application's own error map wins", async () => {
    z.config({ customError: () => "custom" });
    const read = createFilesystemTools({ backend: new StateBackend() }).find((t) => t.name === "read_file");
    expect((await invokeTool(read as never, { file_path: 3 })).content).toBe("Error: invalid arguments for read_file: file_path: custom");
  });
});

describe("zod/mini schemas where the options take a zod schema", () => {
  it("a mini responseFormat is sent as JSON Schema and validates the answer, retried once", async () => {
    const Answer = z.object({ n: z.number().check(z.int(), z.gte(1)) });
    const model = new FakeChatModel(['{"n":0}', '{"n":2}']);
    const agent = createDeepAgent(model, { responseFormat: Answer, enableSubagents: false, enableMemory: false, enableSkills: false });
    const out = await agent.invoke({ messages: [{ role: "user", content: "n?" }] });
    expect(out.structuredResponse).toEqual({ n: 2 });
    expect(model.requests[1]?.responseFormat?.schema).toMatchObject({ type: "object", properties: { n: { type: "integer", minimum: 1 } } });
    expect(model.requests[1]?.messages.at(-1)?.content).toMatch(
      /does not match the required schema: n: Too small: expected number to be >=1/,
    );
  });
});
