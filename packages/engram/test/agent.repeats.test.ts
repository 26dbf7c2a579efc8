/** A model that keeps making the same failing call is told, then stopped
 * (`maxRepeatedToolFailures`); different arguments or a success in between start the count
 * again. */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type AgentEvent, FakeChatModel, type Tool, createDeepAgent } from "../src/index.js";
import { core, user } from "./fixtures/session.js";

/** A tool that fails for ids starting "bad" and succeeds otherwise; records its runs. */
function lookupTool() {
  const runs: string[] = [];
  const tool = {
    name: "lookup",
    description: "looks an id up",
    schema: z.object({ id: z.string(), verbose: z.optional(z.boolean()) }),
    async run({ id }: { id: string }) {
      runs.push(id);
      return id.startsWith("bad") ? { content: `Error: no record ${id}`, isError: true } : { content: `record ${id}` };
    },
  } as unknown as Tool<never>;
  return { tool, runs };
}

const toolMessages = (messages: { role: string; content: string }[]) => messages.filter((m) => m.role === "tool").map((m) => m.content);

describe("repeated failing calls", () => {
  it("warn at the third failure and stop the run when the model repeats the call once more", async () => {
    const { tool, runs } = lookupTool();
    // Key order differs between the calls: the same call all the same.
    const model = new FakeChatModel((_, i) => ({
      toolCalls: [{ name: "lookup", args: i % 2 ? { verbose: true, id: "bad" } : { id: "bad", verbose: true } }],
    }));
    const events: AgentEvent[] = [];
    for await (const ev of createDeepAgent(model, { core, tools: [tool] }).stream(user("find bad"))) events.push(ev);
    const final = events.at(-1);
    expect(final?.type === "final" && final.stopReason).toBe("repeated_tool_failure");
    expect(runs).toEqual(["bad", "bad", "bad"]);
    expect(model.requests).toHaveLength(4);
    const results = toolMessages(final?.type === "final" ? final.output.messages : []);
    expect(results).toHaveLength(4);
    expect(results[1]).not.toMatch(/failed \d+ times/);
    expect(results[2]).toMatch(/has now failed 3 times in a row\. Do not make it again/);
    expect(results[3]).toMatch(/^Error: not run: lookup failed 3 times/);
    expect(events.some((e) => e.type === "warning" && /lookup/.test(e.message))).toBe(true);
  });

  it("count only the same arguments, and start again after a call that succeeds", async () => {
    const { tool, runs } = lookupTool();
    const ids = ["bad", "bad", "ok", "bad", "bad", "bad2", "bad", "bad"];
    const model = new FakeChatModel((_, i) => (i < ids.length ? { toolCalls: [{ name: "lookup", args: { id: ids[i] } }] } : "gave up"));
    const out = await createDeepAgent(model, { core, tools: [tool] }).invoke(user("find"));
    // bad×2, ok (resets), then bad, bad, bad2 (fails, other args), bad (the third), bad → stopped.
    expect(out.stopReason).toBe("repeated_tool_failure");
    expect(runs).toEqual(["bad", "bad", "ok", "bad", "bad", "bad2", "bad"]);
  });

  it("takes the count from maxRepeatedToolFailures, and refuses a bad value", async () => {
    const { tool, runs } = lookupTool();
    const model = new FakeChatModel(() => ({ toolCalls: [{ name: "lookup", args: { id: "bad" } }] }));
    const out = await createDeepAgent(model, { core, tools: [tool], maxRepeatedToolFailures: 1 }).invoke(user("find"));
    expect(out.stopReason).toBe("repeated_tool_failure");
    expect(runs).toEqual(["bad"]);
    expect(() => createDeepAgent(model, { core, maxRepeatedToolFailures: 0 })).toThrow(
      expect.objectContaining({ name: "ConfigError", message: expect.stringMatching(/^maxRepeatedToolFailures: must be an integer ≥ 1/) }),
    );
  });

  it("stop a subagent that loops on a failing task, and its parent goes on", async () => {
    // The subagent repeats an unknown subagent name forever (refused by the task schema).
    const model = new FakeChatModel((req) => {
      const first = req.messages[0]?.content ?? "";
      if (first === "go")
        return req.messages.some((m) => m.role === "tool") ? "top done" : { toolCalls: [{ name: "task", args: { description: "sub" } }] };
      return { toolCalls: [{ name: "task", args: { description: "again", subagent_type: "helper" } }] };
    });
    const out = await createDeepAgent(model, { core }).invoke(user("go"));
    expect(out.stopReason).toBe("done");
    expect(toolMessages(out.messages)[0]).toMatch(/the subagent stopped early: repeated_tool_failure/);
    // go, 4 subagent turns (3 refused calls, then the repeat that stops it), the top's answer.
    expect(model.requests).toHaveLength(6);
  });
});
