/**
 * Threads belong to a user: `--user` scopes what `threads list|show|resume`, `run --thread` and
 * `chat --thread` reach, another user's thread answers as one that does not exist; threads saved
 * before they had owners are the OS login's default user's. A damaged row (checkpoint, memory
 * history record) costs only itself in a listing, named in a warning.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { SqliteCheckpointer } from "@engram/sqlite";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { afterToolResult, isMemoryExtraction, lastUserText, memoryUpdate } from "../../../examples/node/scripted-model-server.js";
import { UserThreads } from "../src/user-threads.js";
import { type CommandSandbox, engram, jsonLines, useCommandSandbox } from "./helpers.js";

let { server, home, cwd, root, env } = {} as CommandSandbox;
useCommandSandbox("engram-threads-", {}, (s) => {
  ({ server, home, cwd, root, env } = s);
});

const model = () => ["--base-url", server.baseURL, "--model", "openai-compatible:scripted"];
const as = (user: string, args: string[], input?: string) =>
  engram(["--user", user, ...args], { env, cwd: cwd.path, ...(input !== undefined && { input }) });
const database = () => join(home.path, "engram.db");

/** The model writes /w.md (reviewed) and then says what the tool said; else it echoes. */
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

describe("UserThreads", () => {
  it("a key names one user's thread, whatever the user's name holds", () => {
    const ab = new UserThreads("a~b", false);
    const a = new UserThreads("a", true);
    expect(ab.key("t1")).toBe("a~b~t1");
    expect(ab.idOf("a~b~t1")).toBe("t1");
    // User "a" never owns "a~b"'s thread: a thread name cannot hold the mark.
    expect(a.idOf("a~b~t1")).toBeUndefined();
    expect(a.problem("b~t1")).toMatch(/cannot contain "~"/);
    // Keys without an owner: only for the user who owns them.
    expect(a.idOf("t-old")).toBe("t-old");
    expect(ab.idOf("t-old")).toBeUndefined();
  });

  it("a thread name fits its store namespace together with its owner", () => {
    const user = new UserThreads("u".repeat(100), false);
    expect(user.problem("x".repeat(27))).toBeUndefined();
    expect(user.problem("x".repeat(28))).toMatch(/at most 27 characters/);
    expect(user.problem("a/b")).toMatch(/invalid namespace component/);
  });
});

describe("threads belong to a user", { timeout: 300_000 }, () => {
  it("another user's thread is not listed, shown or resumed: the answer is that of a thread that does not exist", async () => {
    writeThenReport();
    const started = await as("alice", [...model(), "run", "--json", "hello from alice"]);
    expect(started.code, started.stderr).toBe(0);
    const { threadId } = jsonLines(started.stdout).at(-1) as { threadId: string };

    expect(jsonLines((await as("alice", ["threads", "list", "--json"])).stdout).map((t) => t.threadId)).toEqual([threadId]);
    const bobList = await as("bob", ["threads", "list", "--json"]);
    expect(bobList.code).toBe(0);
    expect(bobList.stdout).toBe("");
    expect((await as("bob", ["threads", "list"])).stdout).toContain("no threads yet");

    for (const cmd of ["show", "resume"]) {
      const hers = await as("bob", ["threads", cmd, threadId]);
      const none = await as("bob", ["threads", cmd, "t-20200101-000000-000000"]);
      expect(hers.code).toBe(2);
      expect(none.code).toBe(2);
      expect(hers.stdout).not.toContain("hello from alice");
      expect(hers.stderr).toContain(`no thread "${threadId}" of user bob`);
      expect(hers.stderr.replace(threadId, "ID")).toBe(none.stderr.replace("t-20200101-000000-000000", "ID"));
    }
    expect((await as("alice", ["threads", "show", threadId])).stdout).toContain("hello from alice");
  });

  it("bob cannot decide alice's pending review with run --thread <hers> --yes; alice still can", async () => {
    writeThenReport();
    const args = [...model(), "--root", root.path, "--write", "--review", "write_file"];
    const stopped = await as("alice", [...args, "run", "--json", "write alice's file"]);
    expect(stopped.code).toBe(5);
    const { threadId } = jsonLines(stopped.stdout).at(-1) as { threadId: string };

    const bob = await as("bob", [...args, "run", "--thread", threadId, "--yes"]);
    expect(bob.code).toBe(2);
    expect(bob.stderr).toContain(`no thread "${threadId}" of user bob`);
    expect(() => readFileSync(join(root.path, "w.md"))).toThrow();
    // Nor from chat: bob's thread of that name is his own, new one.
    const chat = await as("bob", [...args, "chat", "--thread", threadId], "/review\n/exit\n");
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout).not.toContain("waits for a review");
    expect(chat.stdout).toContain("nothing to review");
    expect((await as("alice", ["threads", "list"])).stdout).toContain("[waits for review]");

    const alice = await as("alice", [...args, "run", "--thread", threadId, "--yes"]);
    expect(alice.code, alice.stderr).toBe(0);
    expect(readFileSync(join(root.path, "w.md"), "utf8")).toBe("write alice's file");
  });

  it("the same thread name is a different thread for each user", async () => {
    writeThenReport();
    expect((await as("alice", [...model(), "run", "--thread", "shared", "alice speaks"])).code).toBe(0);
    expect((await as("bob", [...model(), "run", "--thread", "shared", "bob speaks"])).code).toBe(0);
    const alice = await as("alice", ["threads", "show", "shared"]);
    const bob = await as("bob", ["threads", "show", "shared"]);
    expect(alice.stdout).toContain("alice speaks");
    expect(alice.stdout).not.toContain("bob speaks");
    expect(bob.stdout).toContain("bob speaks");
    expect(bob.stdout).not.toContain("alice speaks");
    expect(jsonLines((await as("bob", ["threads", "list", "--json"])).stdout)).toMatchObject([{ threadId: "shared", messages: 2 }]);
  });

  it("a thread name cannot hold the owner mark: a usage error before anything runs", async () => {
    const r = await as("bob", [...model(), "run", "--thread", "alice~t-1", "--yes"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--thread: a thread name cannot contain");
    expect(server.requests).toHaveLength(0);
  });

  it("threads saved without an owner belong to the OS login's default user only", async () => {
    writeThenReport();
    // Creates the database, then a thread as the command saved them before threads had owners.
    expect((await as("bob", ["threads", "list"])).code).toBe(0);
    const checkpointer = new SqliteCheckpointer({ path: database() });
    await checkpointer.put("old-thread", { messages: [{ role: "user", content: "from before owners" }], data: {}, savedAt: Date.now() });
    checkpointer.close();
    const { ENGRAM_USER: _user, ...loginEnv } = env;
    const login = (args: string[]) => engram(args, { env: loginEnv, cwd: cwd.path });

    expect(jsonLines((await login(["threads", "list", "--json"])).stdout)).toMatchObject([{ threadId: "old-thread" }]);
    expect((await login(["threads", "show", "old-thread"])).stdout).toContain("from before owners");
    const resumed = await login([...model(), "run", "--thread", "old-thread", "and now"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(jsonLines((await login(["threads", "list", "--json"])).stdout)).toMatchObject([{ threadId: "old-thread", messages: 3 }]);

    expect((await as("bob", ["threads", "list", "--json"])).stdout).toBe("");
    expect((await as("bob", ["threads", "show", "old-thread"])).code).toBe(2);
  });
});

describe("a damaged row costs only itself", { timeout: 300_000 }, () => {
  it("threads list lists around a damaged checkpoint and names it", async () => {
    writeThenReport();
    for (const t of ["good", "broken"]) expect((await as("tester", [...model(), "run", "--thread", t, `about ${t}`])).code).toBe(0);
    const db = new Database(database());
    const changed = db.prepare("UPDATE engram_checkpoints SET doc = '{\"messages\": [' WHERE thread_id LIKE '%broken'").run();
    db.close();
    expect(changed.changes).toBe(1);

    for (const json of [false, true]) {
      const r = await as("tester", ["threads", "list", ...(json ? ["--json"] : [])]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain("good");
      expect(r.stdout).not.toContain("broken");
      expect(r.stderr).toMatch(/warning: thread broken cannot be read, it is left out: .*damaged checkpoint/);
      if (json) expect(jsonLines(r.stdout).map((t) => t.threadId)).toEqual(["good"]);
    }
  });

  it("memory history lists around a damaged record and names it", async () => {
    for (const fact of ["likes tea", "likes rust", "likes snow"]) expect((await as("tester", ["memory", "add", fact])).code).toBe(0);
    const db = new Database(database());
    const keys = db.prepare("SELECT key FROM engram_items WHERE ns = 'memory-history/tester' ORDER BY key").pluck().all() as string[];
    expect(keys).toHaveLength(3);
    db.prepare("UPDATE engram_items SET value = 'not json' WHERE ns = 'memory-history/tester' AND key = ?").run(keys[1]);
    db.close();

    const r = await as("tester", ["memory", "history"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`warning: memory change ${keys[1]} cannot be read (a damaged record), it is left out`);
    expect(r.stdout).toContain(keys[0] as string);
    expect(r.stdout).toContain(keys[2] as string);
    expect(r.stdout).not.toContain(keys[1] as string);
    const json = await as("tester", ["memory", "history", "--json"]);
    expect(json.code, json.stderr).toBe(0);
    expect(jsonLines(json.stdout).map((c) => c.id)).toEqual([keys[2], keys[0]]);
  });
});
