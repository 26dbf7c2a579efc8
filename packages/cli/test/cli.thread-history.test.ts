/**
 * A thread's history in the command: `threads history` lists the steps its runs committed,
 * `threads fork --at` starts a new thread from one (which runs on from it), `/rewind` in `chat`
 * sets the thread back to one. Real processes, the real SQLite file, a scripted model behind a
 * real HTTP server.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { afterToolResult, isMemoryExtraction, lastUserText, memoryUpdate } from "../../../examples/node/scripted-model-server.js";
import { type CommandSandbox, engram, jsonLines, useCommandSandbox } from "./helpers.js";

let { server, cwd, env, root } = {} as CommandSandbox;
useCommandSandbox("engram-thread-history-", {}, (s) => {
  ({ server, cwd, env, root } = s);
});

const model = () => ["--base-url", server.baseURL, "--model", "openai-compatible:scripted"];
const cli = (args: string[], input?: string) => engram(args, { env, cwd: cwd.path, ...(input !== undefined && { input }) });

/** "write X" writes /w.md and reports; anything else is echoed. */
function writeThenReport(): void {
  server.setScript((r) =>
    isMemoryExtraction(r)
      ? { text: memoryUpdate() }
      : afterToolResult(r)
        ? { text: `tool said: ${r.messages.at(-1)?.content}` }
        : lastUserText(r).startsWith("write")
          ? { toolCalls: [{ name: "write_file", args: { file_path: "/w.md", content: lastUserText(r) } }] }
          : { text: `echo ${lastUserText(r)}` },
  );
}

interface Point {
  id: string;
  step: string;
  kind: string;
  messages: number;
  current: boolean;
}

async function history(id: string): Promise<Point[]> {
  const listed = await cli(["threads", "history", id, "--json"]);
  expect(listed.code, listed.stderr).toBe(0);
  return jsonLines(listed.stdout) as unknown as Point[];
}

async function shown(id: string): Promise<{ role: string; content: string }[]> {
  const out = await cli(["threads", "show", id, "--json"]);
  expect(out.code, out.stderr).toBe(0);
  return (JSON.parse(out.stdout) as { messages: { role: string; content: string }[] }).messages;
}

describe("thread history in the command", { timeout: 300_000 }, () => {
  it("threads history lists each committed step; fork --at starts a thread there, which runs on from it", async () => {
    writeThenReport();
    const ran = await cli([...model(), "run", "--json", "write one"]);
    expect(ran.code, ran.stderr).toBe(0);
    const { threadId } = jsonLines(ran.stdout).at(-1) as { threadId: string };
    expect((await cli([...model(), "run", "--thread", threadId, "say two"])).code).toBe(0);

    const points = await history(threadId);
    // Run one: the user's message, the call, its start and result, the answer; run two: its message and answer.
    expect(points.map((p) => p.kind)).toEqual(["state", "turn", "call", "result", "turn", "state", "turn"]);
    expect(points.map((p) => p.messages)).toEqual([1, 2, 2, 2, 4, 5, 6]);
    expect(points.filter((p) => p.current).map((p) => p.step)).toEqual([points.at(-1)?.step]);
    const text = await cli(["threads", "history", threadId]);
    expect(text.stdout).toContain(`${points[3]?.step}  `);
    expect(text.stdout).toContain("tool result");
    expect(text.stdout).toContain("← current");

    // Fork after the first run's answer: the new thread has its 4 messages.
    const forked = await cli(["threads", "fork", threadId, "--at", points[4]?.step as string, "--as", "branch", "--json"]);
    expect(forked.code, forked.stderr).toBe(0);
    expect(jsonLines(forked.stdout)[0]).toMatchObject({ threadId: "branch", from: threadId, messages: 4 });
    const branch = await shown("branch");
    expect(branch.map((m) => m.content)).toEqual((await shown(threadId)).slice(0, 4).map((m) => m.content));
    // It runs on from there: the model gets those 4 messages and the new one.
    server.requests.length = 0;
    expect((await cli([...model(), "run", "--thread", "branch", "say three"])).code).toBe(0);
    const asked = server.requests.find((r) => !isMemoryExtraction(r));
    expect(asked?.messages.filter((m) => m.role !== "system").map((m) => m.content ?? "")).toEqual([
      ...branch.map((m) => m.content),
      "say three",
    ]);
    // The source thread is unchanged.
    expect((await shown(threadId)).length).toBe(6);

    // Bad asks are usage errors that change nothing.
    expect((await cli(["threads", "fork", threadId, "--at", "nope:9"])).code).toBe(2);
    expect((await cli(["threads", "fork", threadId, "--at", points[1]?.step as string, "--as", "branch"])).code).toBe(2);
    expect((await cli(["threads", "history", "no-such-thread"])).code).toBe(2);
    expect((await cli(["threads", "fork", "no-such-thread", "--at", "x:1"])).code).toBe(2);
    expect((await shown("branch")).length).toBe(6);
  });

  it("/rewind in chat lists the recent steps and sets the thread back to one, files in the root too", async () => {
    writeThenReport();
    const ran = await cli([...model(), "--root", root.path, "--write", "run", "--json", "write one"]);
    expect(ran.code, ran.stderr).toBe(0);
    expect(readFileSync(join(root.path, "w.md"), "utf8")).toBe("write one");
    const { threadId } = jsonLines(ran.stdout).at(-1) as { threadId: string };
    expect((await cli([...model(), "run", "--thread", threadId, "say two"])).code).toBe(0);
    const points = await history(threadId);
    const target = points[4] as Point;

    const chat = await cli(
      [...model(), "--root", root.path, "--write", "chat", "--thread", threadId],
      `/rewind\n/rewind ${target.step}\n/rewind zz:1\n/exit\n`,
    );
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout).toContain(target.step);
    expect(chat.stdout).toContain("/rewind <step> sets the thread back");
    expect(chat.stdout).toContain(`rewound to ${target.step}: 4 msgs (were 6)`);
    expect(chat.stdout).toContain('no step "zz:1"');
    expect((await shown(threadId)).map((m) => m.content)).toEqual(["write one", "", "Wrote /w.md", "tool said: Wrote /w.md"]);
    // The rewound-to step is current; the steps after it stay (a rewind can be undone).
    const after = await history(threadId);
    expect(after.length).toBe(points.length);
    expect(after.find((p) => p.current)?.step).toBe(target.step);
    const undo = await cli(
      [...model(), "--root", root.path, "--write", "chat", "--thread", threadId],
      `/rewind ${points.at(-1)?.step}\n/exit\n`,
    );
    expect(undo.stdout).toContain("rewound to");
    expect((await shown(threadId)).length).toBe(6);

    // Before the write: the file the run created in the root goes; one changed by someone else
    // since makes the rewind a conflict that names it and changes nothing.
    const beforeWrite = points[1] as Point;
    writeFileSync(join(root.path, "w.md"), "edited by hand");
    const refused = await cli(
      [...model(), "--root", root.path, "--write", "chat", "--thread", threadId],
      `/rewind ${beforeWrite.step}\n/exit\n`,
    );
    expect(refused.stdout).toContain("not rewound");
    expect(refused.stdout).toContain("/w.md");
    expect(readFileSync(join(root.path, "w.md"), "utf8")).toBe("edited by hand");
    expect((await shown(threadId)).length).toBe(6);
    writeFileSync(join(root.path, "w.md"), "write one");
    const back = await cli(
      [...model(), "--root", root.path, "--write", "chat", "--thread", threadId],
      `/rewind ${beforeWrite.step}\n/exit\n`,
    );
    expect(back.stdout).toContain("files put back: /w.md");
    expect(existsSync(join(root.path, "w.md"))).toBe(false);
    expect((await shown(threadId)).length).toBe(2);
  });
});
