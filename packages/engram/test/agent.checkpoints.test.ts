/** Incremental checkpoints: a save writes only the files written since the last save (a delta
 * naming its base snapshot), with a full snapshot every so often and after a delete; restores
 * of a delta chain are byte-identical; damaged or missing parts are a ResumeError that loses
 * nothing; a killed writer and a second writing process leave a thread that resumes; a review
 * approved by several processes at once runs its call once. */
import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import Database from "better-sqlite3";
import { SqliteCheckpointer } from "@engram/sqlite";
import { afterAll, describe, expect, it } from "vitest";
import { type Checkpointer, FakeChatModel, InMemoryCheckpointer, ResumeError, StateBackend, createDeepAgent } from "../src/index.js";
import { interruptedCallNotice } from "../src/kit.js";
import { JsonFileCheckpointer } from "./fixtures/agent/file-checkpointer.js";
import { bundledFixture } from "./fixtures/node-bundle.js";
import { core, fileModel, user } from "./fixtures/session.js";

const execFileAsync = promisify(execFile);
const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "engram-cp-"));
  dirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const quiet = { enableSubagents: false, enableMemory: false, enableSkills: false } as const;

/** The child process of these tests (see the fixture), bundled once: each process starts with
 * plain node. */
const writer = () => bundledFixture(join(import.meta.dirname, "fixtures/agent/checkpoint-writer.ts"));

/** An agent whose thread StateBackend is captured (`live()`), on `checkpointer`; `remove(path)`
 * deletes a path at the start of the next run. */
function capturing(checkpointer: Checkpointer) {
  let live: StateBackend | undefined;
  let doomed: string | undefined;
  const agent = createDeepAgent(fileModel(), {
    core,
    checkpointer,
    ...quiet,
    // The thread's own state (resident between runs).
    backend: (ctx) => {
      live = ctx.state;
      return ctx.state;
    },
    middleware: [
      {
        name: "remove",
        beforeAgent: async () => {
          if (doomed) await live?.delete(doomed);
          doomed = undefined;
        },
      },
    ],
  });
  return { agent, live: () => live as StateBackend, remove: (path: string) => void (doomed = path) };
}

/** The files a stored checkpoint comes to. */
async function storedFiles(checkpointer: Checkpointer, threadId: string): Promise<Uint8Array> {
  const cp = await checkpointer.get(threadId);
  if (!cp?.files) throw new Error("no files stored");
  return core.applyFileDeltas(cp.files, cp.filesDeltas ?? []);
}

const tenThousand = () => Array.from({ length: 10_000 }, (_, i) => [`/src/m${i % 100}/f${i}.ts`, `export const v${i} = ${i};\n`] as const);

describe("incremental checkpoints", () => {
  it("saves one edit of a 10k-file thread as that one file, in memory and in SQLite", async () => {
    for (const checkpointer of [new InMemoryCheckpointer(), new SqliteCheckpointer({ path: join(tempDir(), "a.db") })]) {
      const template = new StateBackend({ core });
      expect((await template.writeMany(tenThousand())).written).toBe(10_000);
      const agent = createDeepAgent(fileModel(), { core, checkpointer, ...quiet, backend: template });
      await agent.invoke(user("read /src/m1/f1.ts"), { threadId: "big" });
      const first = await checkpointer.get("big");
      const full = first?.files?.byteLength ?? 0;
      expect(full).toBeGreaterThan(10_000 * 40);
      expect(first?.filesDeltas).toBeUndefined();

      await agent.invoke(user("save /src/m7/f7.ts export const v7 = 'edited';"), { threadId: "big" });
      const after = await checkpointer.get("big");
      expect(after?.files?.byteLength).toBe(full); // the base snapshot is not written again
      expect(after?.filesRef).toEqual({ id: first?.filesRef?.id, deltas: 1 });
      const delta = after?.filesDeltas?.[0] as Uint8Array;
      const content = "export const v7 = 'edited';";
      // Header (9) + one record: path length, path, modified_at, version, data length, data.
      expect(delta.byteLength).toBe(9 + 4 + "/src/m7/f7.ts".length + 24 + content.length);
      expect(Buffer.from(delta).includes(Buffer.from(content))).toBe(true);
      expect(Buffer.from(delta).includes(Buffer.from("/src/m8/f8.ts"))).toBe(false);

      // A run that changes nothing adds no delta.
      await agent.invoke(user("read /src/m7/f7.ts"), { threadId: "big" });
      expect((await checkpointer.get("big"))?.filesRef).toEqual({ id: first?.filesRef?.id, deltas: 1 });
      if (checkpointer instanceof SqliteCheckpointer) checkpointer.close();
    }
  }, 60_000);

  it("restores a chain of deltas byte for byte, with full snapshots after a delete and every 32 deltas", async () => {
    const checkpointer = new InMemoryCheckpointer();
    const { agent, live, remove } = capturing(checkpointer);
    const ids = new Set<string>();
    for (let i = 0; i < 40; i++) {
      await agent.invoke(user(`save /d${i % 7}/f${i % 11}.md round ${i} — 😀 ${"x".repeat(i)}`), { threadId: "chain" });
      const cp = await checkpointer.get("chain");
      ids.add(cp?.filesRef?.id as string);
      expect(cp?.filesRef?.deltas ?? 99).toBeLessThanOrEqual(32);
      // What a fresh process would restore equals the live files, byte for byte.
      expect(Buffer.from(await storedFiles(checkpointer, "chain")).equals(Buffer.from(await live().snapshot()))).toBe(true);
    }
    expect(ids.size).toBe(2); // the first save, and the full snapshot after 32 deltas
    remove("/d0");
    await agent.invoke(user("save /after.md delete"), { threadId: "chain" });
    expect((await live().stat("/d0/f0.md")).error?.code).toBe("file_not_found");
    const cp = await checkpointer.get("chain");
    expect(cp?.filesRef?.deltas).toBe(0); // a delete leaves no delta: a full snapshot
    expect(Buffer.from(await storedFiles(checkpointer, "chain")).equals(Buffer.from(await live().snapshot()))).toBe(true);

    // Another agent (nothing resident) resumes the thread from the stored chain.
    const other = createDeepAgent(fileModel(), { core, checkpointer, ...quiet });
    await other.invoke(user("save /x.md from the other agent"), { threadId: "chain" });
    const out = await other.invoke(user("read /d1/f1.md"), { threadId: "chain" });
    expect(out.messages.at(-1)?.content).toContain("round");
  });

  it("a missing or damaged part is a ResumeError that loses nothing", async () => {
    const path = join(tempDir(), "damaged.db");
    const checkpointer = new SqliteCheckpointer({ path });
    const agent = createDeepAgent(fileModel(), { core, checkpointer, ...quiet });
    await agent.invoke(user("save /a.md alpha"), { threadId: "t" });
    await agent.invoke(user("save /b.md beta"), { threadId: "t" });
    const db = new Database(path);
    const parts = () =>
      db.prepare("SELECT seq, bytes FROM engram_checkpoint_files WHERE thread_id = 't' ORDER BY seq").all() as {
        seq: number;
        bytes: Buffer;
      }[];
    const before = parts();
    expect(before.map((p) => p.seq)).toEqual([0, 1]);
    const [base, delta] = before.map((p) => p.bytes) as [Buffer, Buffer];
    const fresh = () => createDeepAgent(fileModel(), { core, checkpointer, ...quiet }); // nothing resident

    // The base snapshot is missing.
    db.prepare("DELETE FROM engram_checkpoint_files WHERE thread_id = 't' AND seq = 0").run();
    await expect(fresh().invoke(user("read /a.md"), { threadId: "t" })).rejects.toBeInstanceOf(ResumeError);
    // A delta is missing.
    db.prepare("INSERT INTO engram_checkpoint_files VALUES ('t', 0, ?)").run(base);
    db.prepare("DELETE FROM engram_checkpoint_files WHERE thread_id = 't' AND seq = 1").run();
    await expect(fresh().invoke(user("read /a.md"), { threadId: "t" })).rejects.toThrow(/1 deltas|0 of 1/);
    // A delta is damaged (cut short), and then the base (not a snapshot).
    db.prepare("INSERT INTO engram_checkpoint_files VALUES ('t', 1, ?)").run(delta.subarray(0, 20));
    await expect(fresh().invoke(user("read /a.md"), { threadId: "t" })).rejects.toThrow(/damaged/);
    db.prepare("UPDATE engram_checkpoint_files SET bytes = ? WHERE thread_id = 't' AND seq = 1").run(delta);
    db.prepare("UPDATE engram_checkpoint_files SET bytes = ? WHERE thread_id = 't' AND seq = 0").run(Buffer.from("not a snapshot"));
    const failed = await fresh()
      .invoke(user("read /a.md"), { threadId: "t" })
      .catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(ResumeError);
    expect((failed as ResumeError).code).toBe("invalid_resume");
    // Nothing was overwritten by the failed runs: the messages are the last good save's, the
    // good parts are intact; repaired, the thread resumes with both files.
    const users = (await checkpointer.get("t"))?.messages.filter((m) => m.role === "user").map((m) => m.content);
    expect(users).toEqual(["save /a.md alpha", "save /b.md beta"]);
    expect(parts()[1]?.bytes.equals(delta)).toBe(true);
    db.prepare("UPDATE engram_checkpoint_files SET bytes = ? WHERE thread_id = 't' AND seq = 0").run(base);
    const back = fresh();
    expect((await back.invoke(user("read /a.md"), { threadId: "t" })).messages.at(-1)?.content).toContain("alpha");
    expect((await back.invoke(user("read /b.md"), { threadId: "t" })).messages.at(-1)?.content).toContain("beta");
    db.close();
    checkpointer.close();
  }, 60_000);

  it("a thread whose writer was killed mid-save resumes consistently (real child processes)", async () => {
    const db = join(tempDir(), "killed.db");
    const fixture = await writer();
    let next = 0;
    for (let round = 0; round < 3; round++) {
      const child: ChildProcess = spawn(process.execPath, [fixture, db, "loop", String(next)], {
        env: process.env,
        stdio: ["ignore", "pipe", "inherit"],
      });
      // Let it save a varying number of turns (past a full-snapshot rollover in the first round),
      // then kill it wherever it is.
      const want = round === 0 ? 36 : 5 + round * 3;
      let last = next - 1;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("the writer made no progress")), 90_000);
        let out = "";
        child.stdout?.on("data", (chunk: Buffer) => {
          out += chunk.toString();
          const saved = [...out.matchAll(/saved (\d+)/g)].map((m) => Number(m[1]));
          last = saved.at(-1) ?? last;
          if (saved.length >= want) {
            setTimeout(() => {
              child.kill("SIGKILL");
              clearTimeout(timer);
              resolve();
            }, round * 7);
          }
        });
        child.on("exit", () => {
          clearTimeout(timer);
          resolve();
        });
      });
      await new Promise((r) => (child.exitCode === null && child.signalCode === null ? child.once("exit", r) : r(undefined)));
      // This process resumes the thread: the files restore, and /n.md holds the last turn the
      // checkpoint's messages record (the kill came before or after that save committed).
      const checkpointer = new SqliteCheckpointer({ path: db });
      const saved = await checkpointer.get("killed");
      const lastSave = [...(saved?.messages ?? [])].reverse().find((m) => m.role === "user" && m.content.startsWith("save /n.md "));
      const n = Number(lastSave?.content.split(" ")[2]);
      expect(n).toBeGreaterThanOrEqual(last);
      const agent = createDeepAgent(fileModel(), { core, checkpointer, ...quiet });
      const read = await agent.invoke(user("read /n.md"), { threadId: "killed" });
      // The killed run's committed steps are adopted and its task finished before the read: the
      // thread may now record a later turn than the checkpoint did. /n.md holds that turn — or,
      // when the kill landed inside its write, the turn before, and the thread tells the model
      // the write was interrupted.
      const at = read.messages.findLastIndex((msg) => msg.role === "user" && msg.content.startsWith("save /n.md "));
      const m = Number(read.messages[at]?.content.split(" ")[2]);
      expect(m).toBeGreaterThanOrEqual(n);
      // Interrupted: the call that writes /n.md (not a later turn's write of its own file).
      const write = read.messages[at + 1]?.toolCalls?.find((c) => c.args.file_path === "/n.md");
      const interrupted = read.messages.some(
        (msg) => msg.role === "tool" && msg.toolCallId === write?.id && msg.content.includes(interruptedCallNotice("write_file")),
      );
      const content = read.messages.at(-1)?.content ?? "";
      expect(content).toMatch(new RegExp(`\\t${interrupted ? m - 1 : m}(\\n|$)`));
      const seed = await agent.invoke(user("read /seed/d3/f3.txt"), { threadId: "killed" });
      expect(seed.messages.at(-1)?.content).toContain("seed file 3");
      checkpointer.close();
      next = m + 1;
    }
  }, 240_000);

  it("a run that lost a race with a second process is refused with conflict (the other's save stands, nothing mixed)", async () => {
    const db = join(tempDir(), "race.db");
    const checkpointer = new SqliteCheckpointer({ path: db });
    const fixture = await writer();
    const other = (path: string, text: string) =>
      execFileSync(process.execPath, [fixture, db, "save", path, text], { encoding: "utf8", env: process.env });
    // "race <path> <text>": the other process saves the thread while this run is under way,
    // between loading the thread and saving it.
    const model = new FakeChatModel((req) => {
      const last = req.messages.at(-1);
      if (last?.role !== "user") return `done: ${last?.content}`;
      const [verb, path, ...text] = last.content.split(" ");
      if (verb === "race") expect(other("/theirs.md", "from the other process")).toContain("done");
      return { toolCalls: [{ name: "write_file", args: { file_path: path, content: text.join(" ") } }] };
    });
    // Saved once per run (a durable run would hold the thread: the other process would be
    // refused at once instead of saving first; that side is in agent.durable.test.ts).
    const agent = createDeepAgent(model, { core, checkpointer, ...quiet, durability: "run" });
    await agent.invoke(user("save /mine.md first"), { threadId: "shared" });
    await agent.invoke(user("save /mine2.md second"), { threadId: "shared" });
    const base = (await checkpointer.get("shared"))?.filesRef;
    expect(base?.deltas).toBe(1);
    await expect(agent.invoke(user("race /late.md late"), { threadId: "shared" })).rejects.toMatchObject({
      name: "EngramError",
      code: "conflict",
    });
    // The other process appended a delta; this run's save (from the revision before it) was
    // refused, and changed nothing.
    const after = await checkpointer.get("shared");
    expect(after?.filesRef).toEqual({ id: base?.id, deltas: 2 });
    expect(after?.messages.filter((m) => m.role === "user").map((m) => m.content)).toEqual([
      "save /mine.md first",
      "save /mine2.md second",
      "save /theirs.md from the other process",
    ]);
    // Run again, it continues from the other's save.
    await agent.invoke(user("save /late.md late"), { threadId: "shared" });
    const fresh = createDeepAgent(fileModel(), { core, checkpointer, ...quiet });
    const text = async (t: string) => (await fresh.invoke(user(t), { threadId: "shared" })).messages.at(-1)?.content ?? "";
    expect(await text("read /late.md")).toContain("late");
    expect(await text("read /mine.md")).toContain("first");
    expect(await text("read /theirs.md")).toContain("from the other process");
    checkpointer.close();
  }, 60_000);

  it("one review approved by three processes at once runs its call once", async () => {
    const dir = tempDir();
    const db = join(dir, "review.db");
    const effects = join(dir, "effects.log");
    writeFileSync(effects, "");
    const fixture = await writer();
    const last = (stdout: string) => JSON.parse(stdout.trim().split("\n").at(-1) as string) as Record<string, unknown>;
    const args = (mode: string) => [fixture, db, mode, effects];
    expect(last(execFileSync(process.execPath, args("review"), { encoding: "utf8", env: process.env }))).toEqual({ interrupted: ["e1"] });
    const outs = await Promise.all(
      [0, 1, 2].map(async () =>
        last((await execFileAsync(process.execPath, args("approve"), { encoding: "utf8", env: process.env })).stdout),
      ),
    );
    expect(readFileSync(effects, "utf8").trim().split("\n")).toHaveLength(1);
    // The others found the review taken: the thread held by the approving run (`conflict`),
    // or the review decided already when they loaded it (`invalid_resume`).
    const answers = outs.map((o) => (o.ok ? "ok" : o.error));
    expect(answers.filter((a) => a === "ok")).toEqual(["ok"]);
    for (const a of answers.filter((a) => a !== "ok")) expect(["conflict", "invalid_resume"]).toContain(a);
    const checkpointer = new SqliteCheckpointer({ path: db });
    const saved = await checkpointer.get("review");
    expect(saved?.interrupt).toBeUndefined();
    expect(saved?.messages.filter((m) => m.role === "tool").map((m) => m.content)).toEqual(["recorded"]);
    checkpointer.close();
  }, 60_000);

  it("a checkpointer without deltas still gets full snapshots and resumes", async () => {
    const checkpointer = new JsonFileCheckpointer(tempDir());
    const agent = createDeepAgent(fileModel(), { core, checkpointer, ...quiet });
    await agent.invoke(user("save /a.md one"), { threadId: "j" });
    await agent.invoke(user("save /b.md two"), { threadId: "j" });
    const cp = await checkpointer.get("j");
    expect(cp?.filesDeltas).toBeUndefined();
    const fresh = createDeepAgent(fileModel(), { core, checkpointer, ...quiet });
    expect((await fresh.invoke(user("read /a.md"), { threadId: "j" })).messages.at(-1)?.content).toContain("one");
    expect((await fresh.invoke(user("read /b.md"), { threadId: "j" })).messages.at(-1)?.content).toContain("two");
  });
});
