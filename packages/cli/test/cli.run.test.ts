/**
 * `engram run` as scripts use it — its `--json` event stream and exit codes — and the
 * `config`, `memory`, `threads` and `skills` commands, each a real process against a scripted
 * model behind a real OpenAI-compatible HTTP server, storage in a temporary ENGRAM_HOME.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  afterToolResult,
  isMemoryExtraction,
  lastUserText,
  memoryUpdate,
  systemText,
} from "../../../examples/node/scripted-model-server.js";
import { engram, jsonLines, startEngram, type CommandSandbox, useCommandSandbox } from "./helpers.js";

// Set before each test by the sandbox.
let { server, home, cwd, root, env } = {} as CommandSandbox;

useCommandSandbox("engram-cli-", {}, (s) => {
  ({ server, home, cwd, root, env } = s);
});

const model = () => ["--base-url", server.baseURL, "--model", "openai-compatible:scripted"];
const run = (args: string[], input?: string) => engram(args, { env, cwd: cwd.path, ...(input !== undefined && { input }) });
const noMemoryUpdate = (r: Parameters<typeof isMemoryExtraction>[0]) => (isMemoryExtraction(r) ? { text: memoryUpdate() } : undefined);

describe("engram run --json", { timeout: 300_000 }, () => {
  it("streams one JSON event per line and exits 0 when done", async () => {
    server.setScript((r) => noMemoryUpdate(r) ?? { text: `You said: ${lastUserText(r)}` });
    const r = await run([...model(), "run", "--json", "hello there"]);
    expect(r.code, r.stderr).toBe(0);
    const events = jsonLines(r.stdout);
    expect(events[0]).toMatchObject({ type: "start", userId: "tester", model: "openai-compatible:scripted" });
    const text = events
      .filter((e) => e.type === "model_delta")
      .map((e) => e.text)
      .join("");
    expect(text).toBe("You said: hello there");
    expect(events.at(-1)).toMatchObject({ type: "final", stopReason: "done", text: "You said: hello there", exitCode: 0 });
    expect(typeof events.at(-1)?.threadId).toBe("string");
  });

  it("reads the task from stdin", async () => {
    server.setScript((r) => noMemoryUpdate(r) ?? { text: `got ${lastUserText(r)}` });
    const r = await run([...model(), "run", "--json"], "piped task\n");
    expect(r.code, r.stderr).toBe(0);
    expect(jsonLines(r.stdout).at(-1)).toMatchObject({ stopReason: "done", text: "got piped task" });
  });

  it("writes under --root only with --write; otherwise the root is read-only", async () => {
    server.setScript(
      (r) =>
        noMemoryUpdate(r) ??
        (afterToolResult(r)
          ? { text: "done" }
          : { toolCalls: [{ name: "write_file", args: { file_path: "/notes/todo.md", content: "- ship it\n" } }] }),
    );
    const ro = await run([...model(), "--root", root.path, "run", "--json", "write the note"]);
    expect(ro.code, ro.stderr).toBe(0);
    const end = jsonLines(ro.stdout).find((e) => e.type === "tool_end") as { isError: boolean; result: string };
    expect(end.isError).toBe(true);
    expect(end.result).toMatch(/permission|read-only/i);
    expect(existsSync(join(root.path, "notes/todo.md"))).toBe(false);

    const rw = await run([...model(), "--root", root.path, "--write", "run", "--json", "write the note"]);
    expect(rw.code, rw.stderr).toBe(0);
    const events = jsonLines(rw.stdout);
    expect(events.find((e) => e.type === "tool_start")).toMatchObject({ call: { name: "write_file" } });
    expect(events.find((e) => e.type === "tool_end")).toMatchObject({ isError: false });
    expect(readFileSync(join(root.path, "notes/todo.md"), "utf8")).toBe("- ship it\n");
  });

  it("a review stops the run (exit 5); --yes on the thread approves, --deny rejects", async () => {
    server.setScript(
      (r) =>
        noMemoryUpdate(r) ??
        (afterToolResult(r)
          ? { text: `tool said: ${r.messages.at(-1)?.content}` }
          : { toolCalls: [{ name: "write_file", args: { file_path: `/${lastUserText(r)}.md`, content: "x" } }] }),
    );
    const args = [...model(), "--root", root.path, "--write", "--review", "write_file"];
    const stopped = await run([...args, "run", "--json", "a"]);
    expect(stopped.code, stopped.stderr).toBe(5);
    const final = jsonLines(stopped.stdout).at(-1) as {
      stopReason: string;
      threadId: string;
      interrupt: { toolCalls: { name: string }[] };
    };
    expect(final.stopReason).toBe("interrupted");
    expect(final.interrupt.toolCalls[0]?.name).toBe("write_file");
    expect(existsSync(join(root.path, "a.md"))).toBe(false);

    const approved = await run([...args, "run", "--json", "--thread", final.threadId, "--yes"]);
    expect(approved.code, approved.stderr).toBe(0);
    const review = jsonLines(approved.stdout)[0] as { type: string; decisions: Record<string, unknown> };
    expect(review.type).toBe("review");
    expect(Object.values(review.decisions)).toEqual([{ type: "approve" }]);
    expect(existsSync(join(root.path, "a.md"))).toBe(true);

    const denied = await run([...args, "run", "--json", "--deny", "b"]);
    expect(denied.code, denied.stderr).toBe(0);
    const events = jsonLines(denied.stdout);
    expect(events.find((e) => e.type === "review")).toBeDefined();
    const finals = events.filter((e) => e.type === "final");
    expect(finals.map((e) => e.stopReason)).toEqual(["interrupted", "done"]);
    expect(String(finals.at(-1)?.text)).toMatch(/rejected by --deny/);
    expect(existsSync(join(root.path, "b.md"))).toBe(false);
  });

  it("two processes approving one review at once: the call runs once, the other exits 1 saying why", async () => {
    server.setScript(
      (r) =>
        noMemoryUpdate(r) ??
        (afterToolResult(r)
          ? { text: `tool said: ${r.messages.at(-1)?.content}` }
          : { toolCalls: [{ name: "write_file", args: { file_path: "/once.md", content: "x" } }] }),
    );
    const args = [...model(), "--root", root.path, "--write", "--review", "write_file", "--no-long-term-memory"];
    const stopped = await run([...args, "run", "--json", "write it"]);
    expect(stopped.code, stopped.stderr).toBe(5);
    const { threadId } = jsonLines(stopped.stdout).at(-1) as { threadId: string };
    server.requests.length = 0;
    const both = await Promise.all([
      run([...args, "run", "--json", "--thread", threadId, "--yes"]),
      run([...args, "run", "--json", "--thread", threadId, "--yes"]),
    ]);
    expect(both.map((r) => r.code).sort(), both.map((r) => r.stderr).join("\n")).toEqual([0, 1]);
    // Refused while the other holds the thread (a live run), when taking the review, or finding
    // it decided already: each way it says so.
    const refused = both.find((r) => r.code === 1) as { stdout: string };
    const error = jsonLines(refused.stdout).find((e) => e.type === "error") as { code: string; message: string };
    expect(["conflict", "invalid_resume"]).toContain(error.code);
    expect(error.message).toMatch(
      error.code === "conflict" ? /another live run|saved by another run/ : /not applied|no interrupted run|no pending review/,
    );
    // The model heard back from the approved call once.
    expect(server.requests.filter((r) => afterToolResult(r))).toHaveLength(1);
    expect(existsSync(join(root.path, "once.md"))).toBe(true);
  });

  it("maps stop reasons and failures to exit codes: max_turns 3, truncated 6, model error 1", async () => {
    server.setScript((r) => noMemoryUpdate(r) ?? { toolCalls: [{ name: "ls", args: { path: "/" } }] });
    const turns = await run([...model(), "--max-turns", "2", "run", "--json", "loop"]);
    expect(turns.code, turns.stderr).toBe(3);
    expect(jsonLines(turns.stdout).at(-1)).toMatchObject({ type: "final", stopReason: "max_turns", exitCode: 3 });

    server.setScript((r) => noMemoryUpdate(r) ?? { text: "cut", finishReason: "length" });
    const cut = await run([...model(), "run", "--json", "long"]);
    expect(cut.code, cut.stderr).toBe(6);
    expect(jsonLines(cut.stdout).find((e) => e.type === "final")).toMatchObject({ stopReason: "truncated" });

    server.setScript(() => ({ status: 401, text: "bad key" }));
    const auth = await run([...model(), "run", "--json", "hi"]);
    expect(auth.code, auth.stderr).toBe(1);
    expect(jsonLines(auth.stdout).at(-1)).toMatchObject({ type: "error", code: "auth" });
  });

  it("human output: the answer on stdout; tool calls, subagents and the thread on stderr; no colours when piped", async () => {
    server.setScript((r) => {
      const user = lastUserText(r);
      if (isMemoryExtraction(r)) return { text: memoryUpdate() };
      if (user === "count the files") {
        return afterToolResult(r) ? { text: "there are none" } : { toolCalls: [{ name: "ls", args: { path: "/" } }] };
      }
      if (afterToolResult(r)) return { text: `The helper says: ${r.messages.at(-1)?.content}` };
      return {
        text: "Delegating. ",
        toolCalls: [{ name: "task", args: { description: "count the files", subagent_type: "general-purpose" } }],
      };
    });
    const r = await run([...model(), "run", "how many files?"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("Delegating. \nThe helper says: there are none\n");
    expect(r.stderr).toContain("▸ subagent general-purpose: count the files");
    expect(r.stderr).toMatch(/✓ task:general-purpose\/1 ls \/ · \d+ B · \d+ ms/);
    expect(r.stderr).toMatch(/◂ subagent general-purpose · done/);
    expect(r.stderr).toMatch(/✓ task general-purpose · \d+ B · \d+ ms/);
    expect(r.stderr).toMatch(/thread t-\d{8}-\d{6}-[0-9a-f]{6}/);
    expect(r.stdout + r.stderr).not.toContain("\x1b[");
  });

  it("SIGINT cancels the run through the model's signal: exit 130, final stopReason cancelled", async () => {
    server.setScript((r) => noMemoryUpdate(r) ?? { text: "slow ".repeat(400), chunkDelayMs: 25 });
    const p = startEngram([...model(), "run", "--json", "talk slowly"], { env, cwd: cwd.path });
    await p.waitForStdout('"model_delta"');
    p.child.kill("SIGINT");
    const r = await p.done;
    expect(r.code, r.stderr).toBe(130);
    const events = jsonLines(r.stdout);
    expect(events.find((e) => e.type === "final")).toMatchObject({ stopReason: "cancelled" });
    const text = events
      .filter((e) => e.type === "model_delta")
      .map((e) => e.text)
      .join("");
    expect(text.length).toBeLessThan("slow ".repeat(400).length);
  });

  it("usage and configuration errors exit 2 with one clear line", async () => {
    const none = await run(["run", "hi"]);
    expect(none.code).toBe(2);
    expect(none.stderr.trim().split("\n")).toHaveLength(1);
    expect(none.stderr).toMatch(/no model configured.*--model.*--base-url.*ENGRAM_MODEL/);

    expect((await run(["run", "--bogus"])).code).toBe(2);
    expect((await run([...model(), "run", "--yes", "--deny", "x"])).code).toBe(2);
    const key = await run(["--model", "openai:gpt-4.1", "run", "hi"]);
    expect(key.code).toBe(2);
    expect(key.stderr).toMatch(/OPENAI_API_KEY/);

    writeFileSync(join(cwd.path, "engram.config.json"), JSON.stringify({ maxTurns: "many" }));
    const bad = await run(["config"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("maxTurns");
    expect(bad.stderr).toContain(join(cwd.path, "engram.config.json"));
    writeFileSync(join(cwd.path, "engram.config.json"), "{ not json");
    expect((await run(["config"])).stderr).toMatch(/not valid JSON/);
  });
});

describe("engram config", { timeout: 120_000 }, () => {
  it("flags > environment > project file > user file, each value with its source", async () => {
    writeFileSync(
      join(home.path, "config.json"),
      JSON.stringify({ model: "openai:from-user", maxTurns: 7, review: ["write_file"], root: ".", maxOutputTokens: 100 }),
    );
    mkdirSync(join(cwd.path, ".engram"));
    writeFileSync(join(cwd.path, ".engram", "config.json"), JSON.stringify({ maxOutputTokens: 200, temperature: 0.5, root: "sub" }));
    const r = await engram(["--max-turns", "9", "config", "--json"], { env: { ...env, ENGRAM_TEMPERATURE: "0.2" }, cwd: cwd.path });
    expect(r.code, r.stderr).toBe(0);
    const { config, files } = JSON.parse(r.stdout) as { config: Record<string, { value: string; source: string }>; files: string[] };
    expect(files).toEqual([join(home.path, "config.json"), join(cwd.path, ".engram", "config.json")]);
    // (A project file may not choose the model: see cli.hardening.test.ts.)
    expect(config.model).toEqual({ value: "openai:from-user", source: `file ${join(home.path, "config.json")}` });
    expect(config.maxOutputTokens).toEqual({ value: "200", source: `file ${join(cwd.path, ".engram", "config.json")}` });
    expect(config.maxTurns).toEqual({ value: "9", source: "flag" });
    expect(config.temperature).toEqual({ value: "0.2", source: "env ENGRAM_TEMPERATURE" });
    expect(config.review).toEqual({ value: "write_file", source: `file ${join(home.path, "config.json")}` });
    expect(config.root?.value).toBe(join(cwd.path, "sub"));
    expect(config.user).toEqual({ value: "tester", source: "env ENGRAM_USER" });
    expect(config.database).toEqual({ value: join(home.path, "engram.db"), source: "default" });
    expect(config.write).toEqual({ value: "false", source: "default" });
  });
});

describe("memory, threads and skills", { timeout: 300_000 }, () => {
  it("memory add redacts secrets; facts, forget by id prefix, AGENTS.md through $EDITOR, clear", async () => {
    const secret = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
    const added = await run(["memory", "add", `My CI token is ${secret} and I prefer tabs`]);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toContain("redacted");
    await run(["memory", "add", "--category", "preference", "Likes short answers"]);
    const facts = jsonLines((await run(["memory", "facts", "--json"])).stdout) as { id: string; content: string }[];
    // Facts are kept in the third person (they are read inside <memory> as statements about the user).
    expect(facts.map((f) => f.content)).toEqual(["The user's CI token is [REDACTED] and the user prefers tabs", "Likes short answers"]);
    expect(JSON.stringify(facts)).not.toContain(secret);

    const forgot = await run(["memory", "forget", (facts[0]?.id ?? "").slice(0, 9)]);
    expect(forgot.code, forgot.stderr).toBe(0);
    expect((await run(["memory", "facts"])).stdout).not.toContain("tabs");

    expect((await run(["memory", "add", "--agents-md", `deploy key ${secret}`])).code).toBe(0);
    // $EDITOR appends a line with a secret; the saved file has it redacted.
    const editor = `node -e "require('fs').appendFileSync(process.argv[1], '- editor line ${secret}\\n')"`;
    const edited = await engram(["memory", "edit"], { env: { ...env, EDITOR: editor }, cwd: cwd.path });
    expect(edited.code, edited.stderr).toBe(0);
    const shown = await run(["memory", "show", "--json"]);
    const memory = JSON.parse(shown.stdout) as { agentsMd: string; longTerm: { facts: unknown[] } };
    expect(memory.agentsMd).toContain("- deploy key [REDACTED]");
    expect(memory.agentsMd).toContain("- editor line [REDACTED]");
    expect(memory.agentsMd).not.toContain(secret);
    expect(memory.longTerm.facts).toHaveLength(1);

    expect((await run(["memory", "clear"])).code).toBe(2); // not a terminal: needs --yes
    expect((await run(["memory", "clear", "--yes"])).code).toBe(0);
    expect((await run(["memory", "facts"])).stdout).toContain("no facts");
  });

  it("memory edit --project needs --write: the working directory is never writable unless asked", async () => {
    const r = await engram(["--root", root.path, "memory", "edit", "--project"], { env: { ...env, EDITOR: "true" }, cwd: cwd.path });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--write/);
  });

  it("threads list and show the saved conversations", async () => {
    server.setScript((r) => noMemoryUpdate(r) ?? { text: `echo ${lastUserText(r)}` });
    const first = jsonLines((await run([...model(), "run", "--json", "first thread"])).stdout).at(-1) as { threadId: string };
    await run([...model(), "run", "--json", "--thread", first.threadId, "and more"]);
    const list = await run(["threads", "list", "--json"]);
    const rows = jsonLines(list.stdout);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ threadId: first.threadId, messages: 4, preview: "first thread", interrupted: false });
    const shown = await run(["threads", "show", first.threadId]);
    expect(shown.stdout).toContain("echo first thread");
    expect(shown.stdout).toContain("echo and more");
    expect((await run(["threads", "show", "nope"])).code).toBe(2);
  });

  it("search_past_threads finds what the user said in an earlier thread; --no-thread-recall removes the tool", async () => {
    const offered = (r: Parameters<typeof lastUserText>[0]) => (r.tools ?? []).map((t) => t.function.name);
    server.setScript((r) => {
      const memory = noMemoryUpdate(r);
      if (memory) return memory;
      if (afterToolResult(r)) return { text: `recalled: ${r.messages.at(-1)?.content}` };
      if (lastUserText(r).startsWith("what did we decide") && offered(r).includes("search_past_threads"))
        return { toolCalls: [{ id: "c0", name: "search_past_threads", args: { query: "billing database" } }] };
      return { text: `noted; tools: ${offered(r).join(",")}` };
    });
    const first = jsonLines((await run([...model(), "run", "--json", "for billing we settled on PostgreSQL 16"])).stdout).at(-1);
    const asked = await run([...model(), "run", "--json", "what did we decide about the billing database?"]);
    expect(asked.code, asked.stderr).toBe(0);
    const answer = jsonLines(asked.stdout).at(-1) as { text: string };
    expect(answer.text).toMatch(/^recalled: /);
    expect(answer.text).toContain("PostgreSQL 16");
    expect(answer.text).toContain(String(first?.threadId));
    // Another user of the same database finds nothing of it.
    const other = await run([...model(), "--user", "someone-else", "run", "--json", "what did we decide about the billing database?"]);
    expect((jsonLines(other.stdout).at(-1) as { text: string }).text).not.toContain("PostgreSQL 16");
    const off = await run([...model(), "--no-thread-recall", "run", "--json", "hello"]);
    expect((jsonLines(off.stdout).at(-1) as { text: string }).text).not.toContain("search_past_threads");
  });

  it("threads resume asks the pending review first (lines from a pipe), then chats on the thread", async () => {
    server.setScript(
      (r) =>
        noMemoryUpdate(r) ??
        (afterToolResult(r)
          ? { text: `after review: ${r.messages.at(-1)?.content}` }
          : lastUserText(r) === "and now?"
            ? { text: `still on it (${r.messages.filter((m) => m.role === "user").length} user messages)` }
            : { toolCalls: [{ name: "write_file", args: { file_path: "/r.md", content: "resumed" } }] }),
    );
    const args = [...model(), "--root", root.path, "--write", "--review", "write_file"];
    const stopped = await run([...args, "run", "--json", "write r"]);
    expect(stopped.code).toBe(5);
    const { threadId } = jsonLines(stopped.stdout).at(-1) as { threadId: string };
    expect((await run(["threads", "list"])).stdout).toContain("[waits for review]");
    const resumed = await run([...args, "threads", "resume", threadId], "a\nand now?\n");
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain("this thread waits for a review");
    expect(resumed.stdout).toContain("after review: Wrote /r.md");
    expect(resumed.stdout).toContain("still on it (2 user messages)");
    // Extraction may still be waiting when the chat ends (a loaded machine): it says so.
    expect(resumed.stdout).toMatch(new RegExp(`memory saved( \\(1 conversation to learn from next time\\))? · thread ${threadId}`));
    expect(readFileSync(join(root.path, "r.md"), "utf8")).toBe("resumed");
    expect((await run(["threads", "resume", "no-such-thread"])).code).toBe(2);
  });

  it("skills list shows the user's and the project's skills (the project wins a clash)", async () => {
    const skill = (dir: string, name: string, description: string) => {
      mkdirSync(join(dir, name), { recursive: true });
      writeFileSync(join(dir, name, "SKILL.md"), `---\nname: ${name}\ndescription: ${description}\n---\nBody.\n`);
    };
    skill(join(home.path, "skills"), "release", "user release steps");
    skill(join(home.path, "skills"), "review", "user review checklist");
    skill(join(root.path, "skills"), "release", "project release steps");
    const r = await run(["--root", root.path, "skills", "list", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const skills = jsonLines(r.stdout) as { name: string; description: string }[];
    expect(skills.map((s) => [s.name, s.description])).toEqual([
      ["release", "project release steps"],
      ["review", "user review checklist"],
    ]);
  });

  it("a second process is answered from the AGENTS.md note and the fact the first one learned", async () => {
    server.setScript((r) => {
      if (isMemoryExtraction(r)) {
        const said = r.messages.map((m) => m.content ?? "").join("\n");
        return { text: memoryUpdate(said.includes("I live in Lyon") ? [{ content: "Lives in Lyon" }] : []) };
      }
      if (lastUserText(r).startsWith("note")) {
        return afterToolResult(r)
          ? { text: "noted" }
          : { toolCalls: [{ name: "write_file", args: { file_path: "/memories/AGENTS.md", content: "- Build with make.\n" } }] };
      }
      return { text: "ok" };
    });
    const first = await run([...model(), "run", "note this: I live in Lyon"]);
    expect(first.code, first.stderr).toBe(0);
    const before = server.requests.length;
    const second = await run([...model(), "run", "what do you know?"]);
    expect(second.code, second.stderr).toBe(0);
    const request = server.requests.slice(before).find((r) => !isMemoryExtraction(r));
    expect(request && systemText(request)).toContain("- Build with make.");
    expect(request && systemText(request)).toContain("Lives in Lyon");
    // Another user sees neither.
    const other = await engram([...model(), "run", "what do you know?"], { env: { ...env, ENGRAM_USER: "someone-else" }, cwd: cwd.path });
    expect(other.code).toBe(0);
    const theirs = server.requests.filter((r) => !isMemoryExtraction(r)).at(-1);
    expect(theirs && systemText(theirs)).not.toContain("Lyon");
    expect(theirs && systemText(theirs)).not.toContain("Build with make");
  });
});
