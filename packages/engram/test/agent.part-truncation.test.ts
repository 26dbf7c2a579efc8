/** Truncation and limits on their own (`agent/truncation.ts`, `agent/run-limits.ts`): a cut
 * free-text reply is continued once from the budget; a cut structured reply, a second cut,
 * `onTruncated: "error"` or a spent budget fail with `truncated`; a model call is reserved only
 * while the run is not cancelled and the budget lasts. */
import { describe, expect, it } from "vitest";
import { ModelCallBudget, reserveModelCall } from "../src/agent/run-limits.js";
import { CONTINUE_PROMPT, type Reply, completeReply } from "../src/agent/truncation.js";
import { ModelError } from "../src/errors.js";
import type { ModelRequest } from "../src/models/types.js";

const request: ModelRequest = { system: "s", messages: [{ role: "user", content: "write" }], tools: [] };

/** A model call answering `replies` in order, recording the requests. */
function scripted(...replies: Reply[]) {
  const requests: ModelRequest[] = [];
  const call = async (r: ModelRequest) => {
    requests.push(r);
    const next = replies.shift();
    if (!next) throw new Error("no reply left");
    return next;
  };
  return { call, requests };
}

const text = (content: string, finishReason = "stop", structuredCut = false): Reply => ({
  message: { role: "assistant", content },
  finishReason,
  structuredCut,
});

const policy = (onTruncated: "continue" | "error" = "continue", calls = 10) => ({
  onTruncated,
  budget: new ModelCallBudget(calls),
  modelId: "m",
});

const truncated = (e: unknown) => e instanceof ModelError && e.code === "truncated";

describe("truncation", () => {
  it("passes a reply that was not cut through as is", async () => {
    const { call, requests } = scripted({ ...text("whole"), usage: { inputTokens: 3, outputTokens: 1 } });
    const p = policy();
    expect(await completeReply(request, call, p)).toEqual({
      message: { role: "assistant", content: "whole" },
      finishReason: "stop",
      usage: { inputTokens: 3, outputTokens: 1 },
    });
    expect(requests).toHaveLength(1);
    expect(p.budget.used).toBe(0);
  });

  it("continues a cut text reply once, from the budget, and joins the two parts", async () => {
    const { call, requests } = scripted(text("Once upon", "length"), text(" a time.", "stop"));
    const p = policy();
    const reply = await completeReply(request, call, p);
    expect(reply.message.content).toBe("Once upon a time.");
    expect(reply.finishReason).toBe("stop");
    expect(p.budget.used).toBe(1);
    expect(requests[1]?.messages.slice(-2)).toEqual([
      { role: "assistant", content: "Once upon" },
      { role: "user", content: CONTINUE_PROMPT },
    ]);
    // The continuation is asked on its own request: the first is unchanged.
    expect(requests[0]?.messages).toHaveLength(1);
  });

  it("fails a second cut, and never continues what cannot be continued", async () => {
    const twice = scripted(text("a", "length"), text("b", "length"));
    await expect(completeReply(request, twice.call, policy())).rejects.toSatisfy(truncated);
    await expect(completeReply(request, twice.call, policy())).rejects.toThrow(/no reply left/);

    const cases: [string, Reply, ModelRequest, ReturnType<typeof policy>][] = [
      ["a cut JSON reply", text("{", "length", true), request, policy()],
      ["a reply to a responseFormat request", text("{", "length"), { ...request, responseFormat: { name: "f", schema: {} } }, policy()],
      [
        "a cut tool call",
        { message: { role: "assistant", content: "", toolCalls: [{ id: "1", name: "t", args: {} }] }, finishReason: "length" },
        request,
        policy(),
      ],
      ['onTruncated: "error"', text("a", "length"), request, policy("error")],
      ["a spent budget", text("a", "length"), request, policy("continue", 0)],
    ];
    for (const [what, reply, req, p] of cases) {
      const { call, requests } = scripted(reply, text("more"));
      const err = await completeReply(req, call, p).catch((e: unknown) => e);
      expect(truncated(err), what).toBe(true);
      expect(requests, what).toHaveLength(1);
    }
  });
});

describe("limits", () => {
  it("reserves model calls until the budget is spent, then says so", () => {
    const budget = new ModelCallBudget(2);
    expect(reserveModelCall(budget, undefined)).toBe(true);
    expect(reserveModelCall(budget, undefined)).toBe(true);
    expect(budget.exhausted).toBe(false);
    expect(reserveModelCall(budget, undefined)).toBe(false);
    expect(budget.exhausted).toBe(true);
    expect(budget.used).toBe(2);
  });

  it("throws the signal's reason for a cancelled run, before taking a call", () => {
    const budget = new ModelCallBudget(5);
    const controller = new AbortController();
    const reason = new Error("stop now");
    controller.abort(reason);
    expect(() => reserveModelCall(budget, controller.signal)).toThrow(reason);
    const plain = new AbortController();
    plain.abort();
    expect(() => reserveModelCall(budget, plain.signal)).toThrow(expect.objectContaining({ name: "AbortError" }));
    expect(budget.used).toBe(0);
  });
});
