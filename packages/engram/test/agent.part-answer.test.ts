/** The structured answer on its own (`agent/answer.ts`): each step takes the answer's state and
 * returns the next; the second wrong answer fails the run with `invalid_response`. */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  checkAnswers,
  nativeAnswerStep,
  noAnswer,
  proseAnswerStep,
  respondTool,
  withAnswer,
  type CheckedAnswer,
} from "../src/agent/answer.js";
import { RESPOND_TOOL } from "../src/agent/options.js";
import { FORMAT_PROMPT, structuredFormat } from "../src/agent/structured.js";
import { EngramError } from "../src/errors.js";
import { invokeTool } from "../src/tools/types.js";

const format = structuredFormat(z.object({ city: z.string(), days: z.number() }));

describe("structured answer", () => {
  it("takes a valid answer and counts a wrong one, without changing the state it was given", () => {
    const start = noAnswer();
    const taken = withAnswer(start, { ok: true, value: { city: "Oslo" } });
    expect(taken).toEqual({ done: true, failures: 0, value: { city: "Oslo" } });
    const wrong = withAnswer(start, { ok: false, errors: "days: required" });
    expect(wrong).toEqual({ done: false, failures: 1, errors: "days: required" });
    expect(start).toEqual({ done: false, failures: 0 });
  });

  it("fails at the second wrong answer with invalid_response and the last errors", () => {
    const once = withAnswer(noAnswer(), { ok: false, errors: "first" });
    expect(() => checkAnswers(once)).not.toThrow();
    const twice = withAnswer(once, { ok: false, errors: "second" });
    try {
      checkAnswers(twice);
      expect.unreachable();
    } catch (e) {
      expect(EngramError.hasCode(e, "invalid_response")).toBe(true);
      expect((e as Error).message).toContain("second");
    }
  });

  it("native mode: prose is asked for the JSON, a wrong JSON answer gets its errors back, the next wrong one fails", () => {
    const first = nativeAnswerStep(noAnswer(), format, "It is Oslo, for three days.", 0);
    expect(first).toEqual({ answer: noAnswer(), prompt: FORMAT_PROMPT });
    const second = nativeAnswerStep(first.answer, format, '{"city": "Oslo"}', 1);
    expect(second.answer.failures).toBe(1);
    expect(second.prompt).toMatch(/^Your final answer does not match the required schema: days: /);
    expect(() => nativeAnswerStep(second.answer, format, "still prose", 2)).toThrow(/not a JSON object/);
    const fenced = nativeAnswerStep(second.answer, format, '```json\n{"city": "Oslo", "days": 3}\n```', 2);
    expect(fenced).toEqual({ answer: { done: true, failures: 1, errors: expect.any(String), value: { city: "Oslo", days: 3 } } });
  });

  it("native mode: a first answer already in the schema is taken as is; a first wrong JSON answer counts", () => {
    expect(nativeAnswerStep(noAnswer(), format, '{"city":"Rome","days":2}', 0).answer.value).toEqual({ city: "Rome", days: 2 });
    const wrong = nativeAnswerStep(noAnswer(), format, '{"city":"Rome"}', 0);
    expect(wrong.answer.failures).toBe(1);
  });

  it("tool mode: a prose reply is an answer only as the schema's JSON; else it counts and reminds once", () => {
    expect(proseAnswerStep(noAnswer(), format, '{"city":"Rome","days":2}')).toEqual({
      answer: { done: true, failures: 0, value: { city: "Rome", days: 2 } },
    });
    const reminded = proseAnswerStep(noAnswer(), format, "Rome, two days");
    expect(reminded.answer).toEqual({ done: false, failures: 1, errors: `no ${RESPOND_TOOL} call` });
    expect(reminded.prompt).toBe(`Give your final answer by calling ${RESPOND_TOOL}.`);
    expect(() => proseAnswerStep(reminded.answer, format, "Rome")).toThrow(EngramError);
  });

  it("the respond tool hands every checked answer to the run and tells the model about a wrong one", async () => {
    const recorded: CheckedAnswer[] = [];
    const tool = respondTool(format, (c) => recorded.push(c));
    expect(tool.name).toBe(RESPOND_TOOL);
    expect(tool.jsonSchema).toEqual(format.jsonSchema);
    const bad = await invokeTool(tool, { city: "Oslo" });
    expect(bad.isError).toBe(true);
    expect(bad.content).toMatch(/^Error: the answer does not match the required schema: days: .*Call respond again\.$/);
    expect(await invokeTool(tool, { city: "Oslo", days: 1 })).toEqual({ content: "Final answer recorded." });
    expect(recorded.map((c) => c.ok)).toEqual([false, true]);
  });
});
