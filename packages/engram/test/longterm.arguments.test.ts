/** `LongTermMemory.addFact` at the boundary: a fact that is not an object is a program's mistake
 * (it rejects with `invalid_argument` and stores nothing); what is wrong inside one (no text
 * content, an unknown category) stays `{ error }` data. */
import { beforeAll, describe, expect, it } from "vitest";
import { type Core, EngramError, FakeChatModel, LongTermMemory, loadCore } from "../src/index.js";

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});

describe("LongTermMemory.addFact arguments", () => {
  it.each([null, undefined, "Drinks tea", 42, ["Drinks tea"]])("a fact given as %j rejects with invalid_argument", async (input) => {
    const memory = new LongTermMemory({ model: new FakeChatModel([]), core });
    let thrown: unknown;
    await memory.addFact("u", undefined, input as never).catch((e: unknown) => {
      thrown = e;
    });
    expect(thrown).toBeInstanceOf(EngramError);
    expect((thrown as EngramError).code).toBe("invalid_argument");
    expect(await memory.listFacts("u")).toEqual([]);
  });

  it("a fact object with bad fields is answered as data", async () => {
    const memory = new LongTermMemory({ model: new FakeChatModel([]), core });
    expect((await memory.addFact("u", undefined, { content: 42 as never })).error?.code).toBeDefined();
    expect((await memory.addFact("u", undefined, { content: "Drinks tea", category: "nope" as never })).error?.code).toBeDefined();
    expect((await memory.addFact("u", undefined, { content: "Drinks tea" })).fact?.content).toBe("Drinks tea");
  });
});
