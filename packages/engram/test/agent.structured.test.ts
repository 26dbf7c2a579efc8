/** Structured output (`responseFormat`): a validated final answer, in native JSON mode and through
 * the `respond` tool; one retry with the validation errors, then a typed error. */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type AgentEvent,
  ConfigError,
  type DeepAgentOptions,
  EngramError,
  FakeChatModel,
  type Tool,
  createDeepAgent,
} from "../src/index.js";
import { core, user } from "./fixtures/session.js";

const Weather = z.object({ city: z.string(), temp: z.number() });
const base = (): DeepAgentOptions => ({ core, enableSubagents: false, enableMemory: false, enableSkills: false });

async function collect(stream: AsyncGenerator<AgentEvent, void>) {
  const events: AgentEvent[] = [];
  let error: unknown;
  try {
    for await (const ev of stream) events.push(ev);
  } catch (e) {
    error = e;
  }
  return { events, error };
}

describe("responseFormat, native mode", () => {
  it("takes a valid JSON answer as is: one call, the value on the output and the final event", async () => {
    const model = new FakeChatModel(['{"city":"Paris","temp":21}']);
    const { events } = await collect(createDeepAgent(model, { ...base(), responseFormat: Weather }).stream(user("weather?")));
    const final = events.at(-1);
    expect(final?.type === "final" && final.output.structuredResponse).toEqual({ city: "Paris", temp: 21 });
    expect(final?.type === "final" && final.stopReason).toBe("done");
    expect(model.requests.length).toBe(1);
    expect(model.requests[0]?.responseFormat).toBeUndefined();
  });

  it("asks for the answer in the provider's JSON mode when the model ends in prose", async () => {
    const model = new FakeChatModel(["It is 21 degrees in Paris.", '```json\n{"city":"Paris","temp":21}\n```']);
    const out = await createDeepAgent(model, { ...base(), responseFormat: Weather }).invoke(user("weather?"));
    expect(out.structuredResponse).toEqual({ city: "Paris", temp: 21 });
    const format = model.requests[1];
    expect(format?.responseFormat?.name).toBe("final_response");
    expect(format?.responseFormat?.schema).toMatchObject({
      type: "object",
      properties: { city: { type: "string" }, temp: { type: "number" } },
      required: ["city", "temp"],
    });
    expect(format?.tools).toEqual([]);
  });

  it("sends the validation errors back once, then takes the corrected answer", async () => {
    const model = new FakeChatModel(['{"city":"Paris"}', '{"city":"Paris","temp":21}']);
    const out = await createDeepAgent(model, { ...base(), responseFormat: Weather }).invoke(user("weather?"));
    expect(out.structuredResponse).toEqual({ city: "Paris", temp: 21 });
    expect(model.requests.length).toBe(2);
    const retry = model.requests[1];
    expect(retry?.messages.at(-1)?.content).toMatch(/does not match the required schema: temp: /);
    expect(retry?.responseFormat?.name).toBe("final_response");
  });

  it("fails with invalid_response when the answer is wrong twice", async () => {
    const model = new FakeChatModel(['{"city":"Paris"}', '{"city":7,"temp":21}', "never asked"]);
    const { events, error } = await collect(createDeepAgent(model, { ...base(), responseFormat: Weather }).stream(user("weather?")));
    expect(error).toBeInstanceOf(EngramError);
    expect(error).toMatchObject({ code: "invalid_response", message: expect.stringMatching(/city/) });
    expect(model.requests.length).toBe(2);
    const final = events.at(-1);
    expect(final?.type === "final" && final.stopReason).toBe("error");
    expect(final?.type === "final" && final.output.structuredResponse).toBeUndefined();
  });

  it("accepts a JSON Schema object, validated as such", async () => {
    const schema = { type: "object", properties: { n: { type: "integer", minimum: 1 } }, required: ["n"] };
    const ok = await createDeepAgent(new FakeChatModel(['{"n":3}']), { ...base(), responseFormat: schema }).invoke(user("n?"));
    expect(ok.structuredResponse).toEqual({ n: 3 });
    const bad = createDeepAgent(new FakeChatModel(['{"n":0}', '{"n":2.5}']), { ...base(), responseFormat: schema }).invoke(user("n?"));
    await expect(bad).rejects.toMatchObject({ code: "invalid_response" });
  });

  it("leaves subagents answering in text", async () => {
    const model = new FakeChatModel((req) => {
      const first = req.messages[0]?.content ?? "";
      if (first.startsWith("child")) return "child: it is 21 in Paris";
      if (req.messages.length === 1) return { toolCalls: [{ name: "task", args: { description: "child: look it up" } }] };
      return '{"city":"Paris","temp":21}';
    });
    const out = await createDeepAgent(model, { ...base(), enableSubagents: true, responseFormat: Weather }).invoke(user("weather?"));
    expect(out.structuredResponse).toEqual({ city: "Paris", temp: 21 });
    const child = model.requests.filter((r) => r.messages[0]?.content.startsWith("child"));
    expect(child.length).toBe(1);
    expect(child[0]?.responseFormat).toBeUndefined();
  });
});

describe("responseFormat, tool mode", () => {
  const options = (): DeepAgentOptions => ({ ...base(), responseFormat: Weather, responseMode: "tool" });

  it("ends the run when the model calls respond with a valid answer", async () => {
    const model = new FakeChatModel([{ toolCalls: [{ name: "respond", args: { city: "Oslo", temp: -3 } }] }, "never asked"]);
    const out = await createDeepAgent(model, options()).invoke(user("weather?"));
    expect(out.structuredResponse).toEqual({ city: "Oslo", temp: -3 });
    expect(out.stopReason).toBe("done");
    expect(model.requests.length).toBe(1);
    const respond = model.requests[0]?.tools.find((t) => t.name === "respond");
    expect(respond?.parameters).toMatchObject({ type: "object", required: ["city", "temp"] });
    expect(out.messages.at(-1)).toMatchObject({ role: "tool", content: "Final answer recorded." });
  });

  it("returns the validation errors as the tool result once", async () => {
    const model = new FakeChatModel([
      { toolCalls: [{ name: "respond", args: { city: "Oslo" } }] },
      { toolCalls: [{ name: "respond", args: { city: "Oslo", temp: -3 } }] },
    ]);
    const out = await createDeepAgent(model, options()).invoke(user("weather?"));
    expect(out.structuredResponse).toEqual({ city: "Oslo", temp: -3 });
    expect(model.requests[1]?.messages.at(-1)?.content).toMatch(/^Error: the answer does not match the required schema: temp:/);
  });

  it("fails with invalid_response at the second wrong answer (a prose answer counts)", async () => {
    const model = new FakeChatModel(["it is cold", { toolCalls: [{ name: "respond", args: { city: 1, temp: 2 } }] }, "never asked"]);
    await expect(createDeepAgent(model, options()).invoke(user("weather?"))).rejects.toMatchObject({ code: "invalid_response" });
    expect(model.requests.length).toBe(2);
    expect(model.requests[1]?.messages.at(-1)?.content).toBe("Give your final answer by calling respond.");
  });
});

describe("responseFormat options", () => {
  const model = new FakeChatModel(["x"]);
  const option = (options: DeepAgentOptions) => {
    try {
      createDeepAgent(model, options);
    } catch (e) {
      return e instanceof ConfigError ? e.option : e;
    }
    return "accepted";
  };

  it("are checked when the agent is built", () => {
    expect(option({ responseFormat: "json" as never })).toBe("responseFormat");
    expect(option({ responseFormat: Weather, responseMode: "yaml" as never })).toBe("responseMode");
    const respond = {
      name: "respond",
      description: "mine",
      schema: z.object({}),
      run: async () => ({ content: "" }),
    } as unknown as Tool<never>;
    expect(option({ responseFormat: Weather, responseMode: "tool", tools: [respond] })).toBe("tools");
    expect(option({ responseFormat: Weather, tools: [respond] })).toBe("accepted");
  });
});
