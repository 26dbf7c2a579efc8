/** Memory history: recorded changes of AGENTS.md files, diffs, reverts, redaction and retention. */
import { beforeAll, describe, expect, it } from "vitest";
import { type Core, FakeChatModel, InMemoryStore, StateBackend, StoreBackend, createDeepAgent, loadCore } from "../src/index.js";
import { MemoryHistory, recordMemoryChanges, restoreThrough } from "../src/memory/history/index.js";

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});

const read = async (b: StateBackend, path: string) => {
  const r = await b.readBytes(path);
  return r.error ? undefined : new TextDecoder().decode(r.data);
};

function setup(retention?: { maxChanges?: number; maxAgeDays?: number }, now?: () => number) {
  const store = new InMemoryStore();
  const history = new MemoryHistory({ store, ...(retention && { retention }), ...(now && { now }) });
  const inner = new StateBackend({ core });
  const backend = recordMemoryChanges(inner, { history, paths: ["/AGENTS.md"], userId: "u1", threadId: "t1" });
  return { store, history, inner, backend };
}

describe("memory history", () => {
  it("records writes, edits and deletes of memory files with before and after, newest first", async () => {
    const { history, backend } = setup();
    await backend.write("/AGENTS.md", "# Notes\n- likes tea\n");
    await backend.edit("/AGENTS.md", "tea", "green tea");
    await backend.write("/other.md", "not memory");
    await backend.delete("/AGENTS.md");
    const changes = await history.list("u1");
    expect(changes.map((c) => [c.before, c.after])).toEqual([
      ["# Notes\n- likes green tea\n", null],
      ["# Notes\n- likes tea\n", "# Notes\n- likes green tea\n"],
      [null, "# Notes\n- likes tea\n"],
    ]);
    expect(changes.every((c) => c.userId === "u1" && c.threadId === "t1" && c.actor === "agent" && c.kind === "agents_md")).toBe(true);
    expect(changes[0]!.id > changes[1]!.id && changes[1]!.id > changes[2]!.id).toBe(true);
    expect(await history.list("someone-else")).toEqual([]);
  });

  it("does not record a failed or empty change", async () => {
    const { history, backend } = setup();
    await backend.write("/AGENTS.md", "same\n");
    expect((await backend.edit("/AGENTS.md", "missing", "x")).error?.code).toBe("string_not_found");
    await backend.write("/AGENTS.md", "same\n");
    expect(await history.list("u1")).toHaveLength(1);
  });

  it("shows a change as a unified diff", async () => {
    const { history, backend } = setup();
    await backend.write("/AGENTS.md", "a\nb\nc\n");
    await backend.edit("/AGENTS.md", "b", "B");
    const [change] = await history.list("u1");
    const diff = history.diff(change!);
    expect(diff).toContain("--- a/AGENTS.md");
    expect(diff).toContain("+++ b/AGENTS.md");
    expect(diff).toMatch(/^-b$/m);
    expect(diff).toMatch(/^\+B$/m);
  });

  it("reverts a change, records the revert, and refuses to lose a later change", async () => {
    const { history, backend, inner } = setup();
    await backend.write("/AGENTS.md", "v1\n");
    await backend.write("/AGENTS.md", "v2\n");
    await backend.write("/AGENTS.md", "v3\n");
    const [v3, v2] = await history.list("u1");
    await expect(history.revert("u1", v2!.id, restoreThrough(inner))).rejects.toMatchObject({ code: "conflict" });
    expect(await read(inner, "/AGENTS.md")).toBe("v3\n");
    const revert = await history.revert("u1", v3!.id, restoreThrough(inner));
    expect(await read(inner, "/AGENTS.md")).toBe("v2\n");
    expect(revert).toMatchObject({ actor: "revert", reverts: v3!.id, before: "v3\n", after: "v2\n" });
    // Reverting the creation deletes the file again.
    const created = (await history.list("u1")).at(-1)!;
    await history.revert("u1", (await history.list("u1"))[0]!.id, restoreThrough(inner)); // undo the revert: v3
    await expect(history.revert("u1", created.id, restoreThrough(inner))).rejects.toMatchObject({ code: "conflict" });
    await expect(history.revert("u1", "nope", restoreThrough(inner))).rejects.toMatchObject({ code: "file_not_found" });
  });

  it("never keeps a secret, even in before/after text", async () => {
    const { history, backend, store } = setup();
    const secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    await backend.write("/AGENTS.md", `token: ${secret}\n`);
    const [change] = await history.list("u1");
    expect(change!.after).not.toContain(secret);
    expect(change!.after).toContain("[REDACTED]");
    const dump = JSON.stringify(await store.list(["memory-history", "u1"]));
    expect(dump).not.toContain(secret);
  });

  it("keeps at most maxChanges per user and drops changes older than maxAgeDays", async () => {
    let now = Date.UTC(2026, 0, 1);
    const { history, backend } = setup({ maxChanges: 3, maxAgeDays: 2 }, () => now);
    for (let i = 0; i < 5; i++) await backend.write("/AGENTS.md", `v${i}\n`);
    expect((await history.list("u1")).map((c) => c.after)).toEqual(["v4\n", "v3\n", "v2\n"]);
    now += 3 * 86_400_000;
    await backend.write("/AGENTS.md", "late\n");
    expect((await history.list("u1")).map((c) => c.after)).toEqual(["late\n"]);
    expect(() => new MemoryHistory({ store: new InMemoryStore(), retention: { maxChanges: 0 } })).toThrow(/maxChanges/);
  });

  it("wraps class backends (private fields) and records appends", async () => {
    const history = new MemoryHistory({ store: new InMemoryStore() });
    const store = recordMemoryChanges(new StoreBackend({ store: new InMemoryStore(), namespace: ["m"], core }), {
      history,
      paths: ["/AGENTS.md"],
      userId: "u1",
    });
    await store.write("/AGENTS.md", "a\n");
    expect((await store.ls("/")).entries?.map((e) => e.path)).toEqual(["/AGENTS.md"]);
    const state = recordMemoryChanges(new StateBackend({ core }), { history, paths: ["/AGENTS.md"], userId: "u2" });
    await state.write("/AGENTS.md", "a\n");
    expect(state.append).toBeTypeOf("function");
    await state.append?.("/AGENTS.md", "b\n");
    expect((await history.list("u2")).map((c) => c.after)).toEqual(["a\nb\n", "a\n"]);
  });

  it("records every saved or cleared long-term facts document of an agent (kind facts, redacted)", async () => {
    const store = new InMemoryStore();
    const history = new MemoryHistory({ store });
    const agent = createDeepAgent(new FakeChatModel(["ok"]), { core, store, longTermMemory: true, memoryHistory: history });
    const memory = agent.longTermMemory!;
    const added = await memory.addFact("ada", undefined, { content: "Prefers tea", category: "preference" });
    expect(added.error).toBeUndefined();
    const token = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    expect(
      (await memory.addFact("ada", undefined, { content: `Deploys to build-3 with token ${token}`, category: "context" })).error,
    ).toBeUndefined();
    await memory.clear("ada");
    const changes = await history.list("ada", { kind: "facts" });
    expect(changes.map((c) => [c.target, c.actor])).toEqual([
      ["facts", "agent"],
      ["facts", "agent"],
      ["facts", "agent"],
    ]);
    const [cleared, second, first] = changes;
    expect(first!.before).toBeNull();
    expect(first!.after).toMatch(/^\S+ Prefers tea\n$/);
    expect(second!.after).toContain("Deploys to build-3");
    expect(second!.after).not.toContain(token);
    expect(cleared!.after).toBeNull();
    expect(JSON.stringify(await store.list(["memory-history", "ada"]))).not.toContain(token);
    await agent.close();
  });
});
