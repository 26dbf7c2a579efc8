/** Thread isolation: thread-scoped files belong to one thread and are checkpointed with it,
 * whichever way the backend is configured (default, template instance, factory, composite). */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteCheckpointer } from "@engram/sqlite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Backend,
  type Checkpointer,
  CompositeBackend,
  ConfigError,
  type DeepAgentOptions,
  FakeChatModel,
  InMemoryCheckpointer,
  InMemoryStore,
  StateBackend,
  StoreBackend,
  createDeepAgent,
} from "../src/index.js";
import { checkpointFiles as storedFiles } from "../src/kit.js";
import { core, user, fileModel } from "./fixtures/session.js";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "engram-threads-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const agentWith = (backend: DeepAgentOptions["backend"], checkpointer: Checkpointer) =>
  createDeepAgent(fileModel(), { core, checkpointer, enableSubagents: false, enableMemory: false, enableSkills: false, backend });

/** What `read <path>` answers on a thread. */
async function readOn(agent: ReturnType<typeof agentWith>, threadId: string, path: string): Promise<string> {
  const out = await agent.invoke(user(`read ${path}`), { threadId });
  return out.messages.filter((m) => m.role === "tool").at(-1)?.content ?? "";
}

/** The files a thread's checkpoint holds. */
async function checkpointFiles(checkpointer: Checkpointer, threadId: string): Promise<StateBackend> {
  const cp = await checkpointer.get(threadId);
  const files = cp && storedFiles(cp, core);
  expect(files).toBeInstanceOf(Uint8Array);
  return StateBackend.restore(files as Uint8Array, { core });
}

describe("a StateBackend instance is a template", () => {
  it("gives each thread its own copy, checkpointed, and never changes the instance", async () => {
    const template = new StateBackend({ core });
    await template.write("/seed.md", "from the template");
    const checkpointer = new InMemoryCheckpointer();
    const agent = agentWith(template, checkpointer);
    await agent.invoke(user("save /note.md thread one"), { threadId: "one" });
    // Thread two starts from the template: the seed, not thread one's note.
    expect(await readOn(agent, "two", "/note.md")).toBe("Error: File not found: '/note.md'");
    expect(await readOn(agent, "two", "/seed.md")).toBe("     1\tfrom the template");
    expect(await readOn(agent, "one", "/note.md")).toBe("     1\tthread one");
    // The instance itself is untouched; thread one's files are in its checkpoint.
    expect((await template.read("/note.md")).error?.code).toBe("file_not_found");
    expect((await (await checkpointFiles(checkpointer, "one")).read("/note.md")).content).toBe("thread one");
  });

  it("survives a restart with a durable checkpointer (SQLite)", async () => {
    const path = join(dir, "template.db");
    const first = new SqliteCheckpointer({ path });
    const seed = new StateBackend({ core });
    await seed.write("/seed.md", "v1");
    await agentWith(seed, first).invoke(user("save /note.md kept"), { threadId: "t" });
    first.close();
    // A new agent, a new template (changed), a new checkpointer on the same file.
    const second = new SqliteCheckpointer({ path });
    try {
      const seed2 = new StateBackend({ core });
      await seed2.write("/seed.md", "v2");
      const agent = agentWith(seed2, second);
      expect(await readOn(agent, "t", "/note.md")).toBe("     1\tkept");
      // The thread keeps the template files it started from; a new thread gets the new ones.
      expect(await readOn(agent, "t", "/seed.md")).toBe("     1\tv1");
      expect(await readOn(agent, "u", "/seed.md")).toBe("     1\tv2");
      expect(await readOn(agent, "u", "/note.md")).toBe("Error: File not found: '/note.md'");
    } finally {
      second.close();
    }
  });
});

describe("a backend factory", () => {
  it("checkpoints the StateBackend it returns, and restores it into a new one after a restart", async () => {
    const checkpointer = new InMemoryCheckpointer();
    const made: StateBackend[] = [];
    const factory = () => {
      const b = new StateBackend({ core });
      made.push(b);
      return b;
    };
    await agentWith(factory, checkpointer).invoke(user("save /a.md alpha"), { threadId: "f1" });
    await agentWith(factory, checkpointer).invoke(user("save /a.md beta"), { threadId: "f2" });
    const restarted = agentWith(factory, checkpointer);
    expect(await readOn(restarted, "f1", "/a.md")).toBe("     1\talpha");
    expect(await readOn(restarted, "f2", "/a.md")).toBe("     1\tbeta");
    expect(made.length).toBe(4);
  });

  it("refuses the same StateBackend for two threads with a ConfigError", async () => {
    const shared = new StateBackend({ core });
    const checkpointer = new InMemoryCheckpointer();
    const agent = agentWith(() => shared, checkpointer);
    await agent.invoke(user("save /a.md one"), { threadId: "x" });
    // The same thread may get it again (a factory caching per thread).
    await agent.invoke(user("save /b.md two"), { threadId: "x" });
    const error = await agent.invoke(user("read /a.md"), { threadId: "y" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect(error).toMatchObject({ code: "invalid_config", option: "backend" });
    // Thread y never ran: nothing of thread x was saved under it.
    expect(await checkpointer.get("y")).toBeUndefined();
  });

  it("shares an instance that is not thread-scoped (a per-user store backend)", async () => {
    const store = new InMemoryStore();
    const byUser = new Map<string, Backend>();
    const factory = ({ userId }: { userId?: string }) => {
      let b = byUser.get(userId ?? "");
      if (!b) byUser.set(userId ?? "", (b = new StoreBackend({ store, namespace: ["files", userId ?? "anon"], core })));
      return b;
    };
    const checkpointer = new InMemoryCheckpointer();
    const agent = agentWith(factory, checkpointer);
    await agent.invoke(user("save /pref.md tabs"), { threadId: "p1", userId: "ann" });
    expect((await agent.invoke(user("read /pref.md"), { threadId: "p2", userId: "ann" })).messages.at(-2)?.content).toBe("     1\ttabs");
    expect(await readOn(agent, "p3", "/pref.md")).toBe("Error: File not found: '/pref.md'");
    // Nothing thread-scoped: the checkpoint holds no files.
    expect((await checkpointer.get("p1"))?.files).toBeUndefined();
  });
});

describe("a composite with a State default route", () => {
  it("refuses a composite instance that routes to a StateBackend (its files would be shared by every thread)", () => {
    const model = new FakeChatModel(["hi"]);
    const direct = new CompositeBackend(
      new StateBackend({ core }),
      { "/m/": new StoreBackend({ store: new InMemoryStore(), namespace: ["m"], core }) },
      { core },
    );
    const nested = new CompositeBackend(
      new StoreBackend({ store: new InMemoryStore(), namespace: ["n"], core }),
      { "/deep/": direct },
      { core },
    );
    for (const backend of [direct, nested]) {
      expect(() => createDeepAgent(model, { backend, core })).toThrow(ConfigError);
      expect(() => createDeepAgent(model, { backend, core })).toThrow(/pass a factory/);
    }
    // Without thread state inside, an instance is fine to share.
    const storeOnly = new CompositeBackend(new StoreBackend({ store: new InMemoryStore(), namespace: ["s"], core }), {}, { core });
    expect(() => createDeepAgent(model, { backend: storeOnly, core })).not.toThrow();
  });

  it("isolates and checkpoints the thread's State route, shares the store route", async () => {
    const store = new InMemoryStore();
    const memories = new StoreBackend({ store, namespace: ["memories"], core });
    const factory = ({ state }: { state: StateBackend }) => new CompositeBackend(state, { "/memories/": memories }, { core });
    const path = join(dir, "composite.db");
    const checkpointer = new SqliteCheckpointer({ path });
    try {
      const agent = agentWith(factory, checkpointer);
      await agent.invoke(user("save /scratch.md only mine"), { threadId: "c1" });
      await agent.invoke(user("save /memories/team.md shared"), { threadId: "c1" });
      expect(await readOn(agent, "c2", "/scratch.md")).toBe("Error: File not found: '/scratch.md'");
      expect(await readOn(agent, "c2", "/memories/team.md")).toBe("     1\tshared");
      // The checkpoint holds the State route's files only.
      const files = await checkpointFiles(checkpointer, "c1");
      expect((await files.read("/scratch.md")).content).toBe("only mine");
      expect((await files.read("/memories/team.md")).error?.code).toBe("file_not_found");
    } finally {
      checkpointer.close();
    }
    // Restart: a new agent and checkpointer on the same database.
    const again = new SqliteCheckpointer({ path });
    try {
      const agent = agentWith(factory, again);
      expect(await readOn(agent, "c1", "/scratch.md")).toBe("     1\tonly mine");
      expect(await readOn(agent, "c1", "/memories/team.md")).toBe("     1\tshared");
    } finally {
      again.close();
    }
  });
});
