/** Resident thread state: a thread's StateBackend stays loaded between its runs, so an
 * unchanged thread of 10,000 files is neither restored nor serialised again; a checkpoint
 * changed elsewhere (another agent, another process) is restored as before. */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteCheckpointer } from "@engram/sqlite";
import { describe, expect, it } from "vitest";
import { type Checkpointer, type Core, InMemoryCheckpointer, StateBackend, createDeepAgent } from "../src/index.js";
import type { CoreFileTable } from "../src/kit.js";
import { core, user, fileModel } from "./fixtures/session.js";

/** `core` with its table restores and snapshots counted. */
function counting() {
  const n = { restores: 0, snapshots: 0 };
  const watch = (t: CoreFileTable): CoreFileTable => {
    const snapshot = t.snapshot.bind(t);
    Object.assign(t, {
      snapshot: () => {
        n.snapshots++;
        return snapshot();
      },
    });
    return t;
  };
  const c: Core = {
    ...core,
    createFileTable: () => watch(core.createFileTable()),
    restoreFileTable: (bytes) => {
      n.restores++;
      return watch(core.restoreFileTable(bytes));
    },
  };
  return { core: c, n };
}

/** An agent on the scripted file model whose core counts restores and snapshots. */
function fileAgent(checkpointer: Checkpointer) {
  const { core: watched, n } = counting();
  const agent = createDeepAgent(fileModel(), {
    core: watched,
    checkpointer,
    enableSubagents: false,
    enableMemory: false,
    enableSkills: false,
  });
  return { agent, n };
}

describe("resident thread state", () => {
  it("reuses an unchanged thread's loaded files and restores a checkpoint changed elsewhere", async () => {
    const template = new StateBackend({ core });
    const files = Array.from({ length: 10_000 }, (_, i) => [`/src/m${i % 50}/f${i}.md`, `file ${i}\n`] as const);
    expect((await template.writeMany(files)).written).toBe(10_000);
    const checkpointer = new InMemoryCheckpointer();
    const { core: watched, n } = counting();
    const options = { core: watched, checkpointer, enableSubagents: false, enableMemory: false, enableSkills: false, backend: template };
    const agent = createDeepAgent(fileModel(), options);
    const read = async (path: string) => {
      const out = await agent.invoke(user(`read ${path}`), { threadId: "t" });
      return out.messages.filter((m) => m.role === "tool").at(-1)?.content ?? "";
    };

    expect(await read("/src/m1/f1.md")).toContain("file 1");
    expect(n).toEqual({ restores: 1, snapshots: 0 }); // the template's copy; saved without serialising
    expect(await read("/src/m2/f2.md")).toContain("file 2");
    expect(await read("/src/m3/f3.md")).toContain("file 3");
    expect(n).toEqual({ restores: 1, snapshots: 0 }); // neither restored nor serialised again

    await agent.invoke(user("save /new.md hello"), { threadId: "t" });
    // A change is saved as a delta of the changed file only: no full snapshot.
    expect(n).toEqual({ restores: 1, snapshots: 0 });
    const saved = await checkpointer.get("t");
    expect(saved?.filesDeltas?.length).toBe(1);
    expect(saved?.filesDeltas?.[0]?.byteLength).toBeLessThan(200);
    expect(await read("/new.md")).toContain("hello");
    expect(n).toEqual({ restores: 1, snapshots: 0 });

    // Another agent on the same checkpointer changes the thread: the resident copy is stale.
    const other = createDeepAgent(fileModel(), { ...options, core });
    await other.invoke(user("save /other.md from elsewhere"), { threadId: "t" });
    expect(await read("/other.md")).toContain("from elsewhere");
    expect(n.restores).toBe(2);
    expect(await read("/new.md")).toContain("hello");
    expect(n.restores).toBe(2);

    // A deleted thread starts again from the template, not from the resident copy.
    await checkpointer.delete("t");
    expect(await read("/new.md")).toMatch(/not found/i);
  });

  it("lets concurrent runs of one thread take turns on its loaded files, and gives other threads their own", async () => {
    const checkpointer = new InMemoryCheckpointer();
    const { agent, n } = fileAgent(checkpointer);
    await agent.invoke(user("save /a.md one"), { threadId: "a" });
    await agent.invoke(user("save /b.md two"), { threadId: "b" });
    const before = n.restores;
    const runs = await Promise.all([
      agent.invoke(user("read /a.md"), { threadId: "a" }),
      agent.invoke(user("read /a.md"), { threadId: "a" }),
    ]);
    for (const out of runs) expect(out.messages.filter((m) => m.role === "tool").at(-1)?.content).toContain("one");
    expect(n.restores).toBe(before); // one after the other, each on the files the run before kept
    const b = await agent.invoke(user("read /a.md"), { threadId: "b" });
    expect(b.messages.filter((m) => m.role === "tool").at(-1)?.content).toMatch(/not found/i);
  });

  it("releases the copies it stops keeping (past 16 threads, or stale), and those threads resume from their checkpoints", async () => {
    const cleared: number[] = [];
    const watch = (t: CoreFileTable): CoreFileTable => {
      const clear = t.clear.bind(t);
      return Object.assign(t, {
        clear: () => {
          cleared.push(t.size);
          clear();
        },
      });
    };
    const c: Core = {
      ...core,
      createFileTable: () => watch(core.createFileTable()),
      restoreFileTable: (b) => watch(core.restoreFileTable(b)),
    };
    const checkpointer = new InMemoryCheckpointer();
    const options = { core: c, checkpointer, enableSubagents: false, enableMemory: false, enableSkills: false };
    const agent = createDeepAgent(fileModel(), options);
    const last = async (text: string, threadId: string) =>
      (await agent.invoke(user(text), { threadId })).messages.filter((m) => m.role === "tool").at(-1)?.content ?? "";
    for (let i = 0; i < 16; i++) await last(`save /t${i}.md thread ${i}`, `t${i}`);
    expect(cleared).toEqual([]);
    await last("save /t16.md thread 16", "t16");
    expect(cleared).toEqual([1]); // t0's copy: its one file, released when t16 came in
    expect(await last("read /t0.md", "t0")).toContain("thread 0"); // restored from its checkpoint
    expect(cleared).toEqual([1, 1]); // and kept again, in place of t1's copy
    // Another agent changes t5: the resident copy is stale, released, and the checkpoint wins.
    await createDeepAgent(fileModel(), { ...options, core }).invoke(user("save /t5.md changed"), { threadId: "t5" });
    expect(await last("read /t5.md", "t5")).toContain("changed");
    expect(cleared).toEqual([1, 1, 1]);
    // A deleted thread's copy goes too; the thread starts empty.
    await checkpointer.delete("t6");
    expect(await last("read /t6.md", "t6")).toMatch(/not found/i);
    expect(cleared).toEqual([1, 1, 1, 1]);
    // Concurrent runs of one thread take turns on the kept copy: nothing restored or released.
    const both = await Promise.all([last("read /t7.md", "t7"), last("read /t7.md", "t7")]);
    expect(both).toEqual([expect.stringContaining("thread 7"), expect.stringContaining("thread 7")]);
    expect(cleared).toHaveLength(4);
    expect(await last("read /t7.md", "t7")).toContain("thread 7");
  });

  it("restores a thread another process changed through the same SQLite checkpointer", async () => {
    const dir = mkdtempSync(join(tmpdir(), "engram-resident-"));
    const db = join(dir, "threads.db");
    const checkpointer = new SqliteCheckpointer({ path: db });
    const { agent, n } = fileAgent(checkpointer);
    const last = async (text: string) => (await agent.invoke(user(text), { threadId: "shared" })).messages.at(-1)?.content ?? "";
    const other = (text: string) =>
      execFileSync(process.execPath, ["--import", "tsx", join(import.meta.dirname, "fixtures/agent/resident-writer.ts"), db, text], {
        encoding: "utf8",
        env: process.env,
      });
    try {
      await last("save /a.md first");
      expect(await last("read /a.md")).toContain("first");
      const restores = n.restores;
      expect(other("save /a.md changed elsewhere")).toContain("done");
      expect(await last("read /a.md")).toContain("changed elsewhere"); // not the resident copy
      expect(n.restores).toBe(restores + 1);
      await last("save /b.md mine");
      expect(other("read /b.md")).toContain("mine"); // and the other process sees this one's save
    } finally {
      checkpointer.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
