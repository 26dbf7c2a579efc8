/**
 * `engram run` killed with SIGKILL in the middle of a 20-step task: `threads list` marks the
 * thread interrupted (step k), `engram run --thread <id>` resumes it, no model request whose
 * answer was committed is made again, and the thread ends as an uninterrupted run's.
 */
import { describe, expect, it } from "vitest";
import { isMemoryExtraction, lastUserText, memoryUpdate } from "../../../examples/node/scripted-model-server.js";
import { type CommandSandbox, engram, jsonLines, startEngram, useCommandSandbox } from "./helpers.js";

let { server, cwd, env } = {} as CommandSandbox;
useCommandSandbox("engram-durable-", {}, (s) => {
  ({ server, cwd, env } = s);
});

const STEPS = 20;
const model = () => ["--base-url", server.baseURL, "--model", "openai-compatible:scripted"];

/** Step i (tool results so far) writes /notes/<i>.md; after 20 steps the answer is "finished".
 * Returns the steps asked for, in order. */
function script(): number[] {
  const asked: number[] = [];
  server.setScript((r) => {
    if (isMemoryExtraction(r)) return { text: memoryUpdate() };
    if (lastUserText(r) === "hello") return { text: "hi" };
    const step = r.messages.filter((m) => m.role === "tool").length;
    asked.push(step);
    if (step >= STEPS) return { text: "finished" };
    return {
      toolCalls: [{ id: `w-${step}`, name: "write_file", args: { file_path: `/notes/${step}.md`, content: `note ${step}` } }],
      chunkDelayMs: 2,
    };
  });
  return asked;
}

type Shown = { messages: { role: string; content: string; toolCallId?: string }[] };

describe("engram run after a crash", () => {
  it("a run killed with SIGKILL is marked interrupted and resumed by engram run --thread", async () => {
    const opts = { env, cwd: cwd.path };
    script();
    // Threads with a first exchange saved (a thread is listed once it has a checkpoint).
    for (const thread of ["whole", "crashed"]) expect((await engram([...model(), "run", "--thread", thread, "hello"], opts)).code).toBe(0);
    const whole = await engram([...model(), "run", "--json", "--yes", "--thread", "whole", "go"], opts);
    expect(whole.code).toBe(0);
    const reference = JSON.parse((await engram(["threads", "show", "whole", "--json"], opts)).stdout) as Shown;

    const asked = script();
    const running = startEngram([...model(), "run", "--json", "--yes", "--thread", "crashed", "go"], opts);
    // Killed in the middle: after the 8th tool result was shown.
    while (asked.length < 8) await new Promise((r) => setTimeout(r, 5));
    running.child.kill("SIGKILL");
    await running.done;

    const listed = jsonLines((await engram(["threads", "list", "--json"], opts)).stdout);
    const row = listed.find((r) => r.threadId === "crashed") as { run?: { state: string; step: number } } | undefined;
    expect(row?.run?.state).toBe("interrupted");
    expect(row?.run?.step).toBeGreaterThan(0);
    const text = await engram(["threads", "list"], opts);
    expect(text.stdout).toMatch(/crashed.*interrupted \(step \d+\): engram threads resume crashed/);

    const before = asked.length;
    const resumed = await engram([...model(), "run", "--json", "--yes", "--thread", "crashed"], opts);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain("resuming thread crashed");
    const after = asked.slice(before);
    const shown = JSON.parse((await engram(["threads", "show", "crashed", "--json"], opts)).stdout) as Shown;
    // A crash loses at most the step in flight: the only step asked for again is the last one
    // asked before the kill (its answer not committed yet), and each at most once more.
    const again = after.filter((step) => asked.slice(0, before).includes(step));
    expect(again.length).toBeLessThanOrEqual(1);
    if (again.length === 1) expect(again[0]).toBe(asked[before - 1]);
    expect(new Set(after).size).toBe(after.length);
    expect(after.at(-1)).toBe(STEPS);
    // The thread ends as the uninterrupted run's, but for the notice of a write the kill cut.
    expect(shown.messages.length).toBe(reference.messages.length);
    shown.messages.forEach((m, i) => {
      if (m.content.includes("was interrupted")) expect(m.toolCallId).toBe(reference.messages[i]?.toolCallId);
      else expect(m).toEqual(reference.messages[i]);
    });
    expect(
      jsonLines((await engram(["threads", "list", "--json"], opts)).stdout).find((r) => r.threadId === "crashed")?.run,
    ).toBeUndefined();
  }, 120_000);

  it("engram threads resume finishes a killed run before the chat's first message", async () => {
    const opts = { env, cwd: cwd.path };
    script();
    expect((await engram([...model(), "run", "--thread", "chatted", "hello"], opts)).code).toBe(0);
    const asked = script();
    const running = startEngram([...model(), "run", "--json", "--yes", "--thread", "chatted", "go"], opts);
    while (asked.length < 5) await new Promise((r) => setTimeout(r, 5));
    running.child.kill("SIGKILL");
    await running.done;

    const before = asked.length;
    const chat = await engram([...model(), "threads", "resume", "chatted"], { ...opts, input: "and then\n" });
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout).toMatch(/this thread's run was interrupted at step \d+ \(its process ended\): resuming it/);
    // The killed task goes on to its answer first; the chat's message follows it.
    expect(asked.slice(before).at(-2)).toBe(STEPS);
    const shown = JSON.parse((await engram(["threads", "show", "chatted", "--json"], opts)).stdout) as Shown;
    const users = shown.messages.filter((m) => m.role === "user").map((m) => m.content);
    expect(users).toEqual(["hello", "go", "and then"]);
    const go = shown.messages.findIndex((m) => m.content === "go");
    const then = shown.messages.findIndex((m) => m.content === "and then");
    expect(shown.messages[then - 1]).toMatchObject({ role: "assistant", content: "finished" });
    expect(shown.messages.slice(go, then).filter((m) => m.role === "tool")).toHaveLength(STEPS);
    expect(shown.messages.at(-1)).toMatchObject({ role: "assistant", content: "finished" });
  }, 120_000);
});
