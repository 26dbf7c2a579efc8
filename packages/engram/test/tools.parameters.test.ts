/** What a model is given for a tool's arguments: the schema without the `$schema` marker and
 * zod's implicit integer bounds, on every request of a run. */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { FakeChatModel, type ModelRequest, StateBackend, createDeepAgent, loadCore } from "../src/index.js";
import { toolParameters } from "../src/tools/parameters.js";

describe("tool parameters", () => {
  it("drop $schema and the ±(2^53 − 1) bounds zod gives every integer; bounds a tool sets stay", () => {
    const schema = z.object({
      offset: z.number().int().optional(),
      limit: z.number().int().min(1).max(50),
      items: z.array(z.object({ n: z.number().int() })),
    });
    const raw = JSON.stringify(z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }));
    expect(raw).toContain("$schema");
    expect(raw).toContain(String(Number.MAX_SAFE_INTEGER));
    const params = toolParameters(schema);
    const text = JSON.stringify(params);
    expect(text).not.toContain("$schema");
    expect(text).not.toContain(String(Number.MAX_SAFE_INTEGER));
    expect(text).not.toContain(String(Number.MIN_SAFE_INTEGER));
    expect(params).toMatchObject({
      type: "object",
      properties: { limit: { type: "integer", minimum: 1, maximum: 50 }, offset: { type: "integer" } },
      required: ["limit", "items"],
    });
  });

  it("the built-in tools' schemas reach the model without them", async () => {
    const seen: ModelRequest[] = [];
    const model = new FakeChatModel((req) => {
      seen.push(req);
      return "done";
    });
    const core = await loadCore();
    const agent = createDeepAgent(model, { core, backend: new StateBackend({ core }) });
    await agent.invoke({ messages: [{ role: "user", content: "hi" }] });
    const tools = JSON.stringify(seen[0]?.tools);
    expect(tools).toContain("read_file");
    expect(tools).not.toContain("$schema");
    expect(tools).not.toContain(String(Number.MAX_SAFE_INTEGER));
  });
});
