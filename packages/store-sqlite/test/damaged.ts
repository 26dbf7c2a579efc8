/**
 * A row whose value is not JSON (another program wrote the table, a damaged disk) — shared by the
 * SQLite and PostgreSQL tests: the store names it with a typed `store_error`, and everything built
 * on the store keeps working around it (the row costs only itself).
 */
import { EngramError, type Store, StoreBackend, StoreMemoryStorage } from "engram";
import { StorePendingWork, isDamagedValue } from "engram/kit";
import { expect, it } from "vitest";

export interface DamagedRowSetup {
  store: Store;
  /** Overwrites the stored text of `key` in `namespace` behind the store's back. */
  corrupt(namespace: readonly string[], key: string, text: string): Promise<void>;
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error("expected a rejection");
}

export function damagedRowSuite(setup: () => DamagedRowSetup): void {
  it("a value that is not JSON is a typed store_error naming the key, for get, list and search", async () => {
    const { store, corrupt } = setup();
    const ns = ["damaged", "store"];
    await store.put(ns, "a", { n: 1 });
    await store.put(ns, "b", { n: 2 });
    await corrupt(ns, "b", "{not json");
    const reads: (() => Promise<unknown>)[] = [() => store.get(ns, "b"), () => store.list(ns), () => store.list(ns, { delimiter: "/" })];
    if (store.search) reads.push(() => (store.search as NonNullable<Store["search"]>)(ns, { filter: { n: 2 } }));
    for (const read of reads) {
      const e = await rejection(read());
      expect(e).toBeInstanceOf(EngramError);
      expect(EngramError.hasCode(e, "store_error")).toBe(true);
      expect(isDamagedValue(e)).toBe(true);
      expect(e).toMatchObject({ damagedKey: "b", raw: "{not json" });
      expect((e as Error).message).toContain('"b"');
    }
    // Listing without values never reads one: still fine.
    expect((await store.list(ns, { values: false })).items.map((i) => i.key)).toEqual(["a", "b"]);
    expect((await store.get(ns, "a"))?.value).toEqual({ n: 1 });
  });

  it("StoreBackend: a damaged file is not served, every other operation keeps working, a write replaces it", async () => {
    const { store, corrupt } = setup();
    const ns = ["damaged", "backend"];
    const backend = new StoreBackend({ store, namespace: ns });
    await backend.write("/a.md", "hello a\n");
    await backend.write("/docs/b.md", "hello b\n");
    await backend.write("/docs/c.md", "hello c\n");
    expect((await backend.grep("hello")).matches).toHaveLength(3); // mirrored before the damage
    await corrupt(ns, "/docs/b.md", "garbage{");
    // The backend that mirrored it before the damage (which changed no revision) keeps its copy;
    // a fresh one (another process) does not serve it. Both keep working.
    const fresh = new StoreBackend({ store, namespace: ns });
    expect((await fresh.grep("hello", { outputMode: "files_with_matches" })).files).toEqual(["/a.md", "/docs/c.md"]);
    for (const b of [fresh, backend]) {
      expect((await b.read("/a.md")).content).toBe("hello a");
      expect((await b.glob("**/*.md")).files?.map((f) => f.path)).toContain("/docs/c.md");
      expect((await b.ls("/docs")).entries?.map((e) => e.path)).toEqual(["/docs/c.md"]);
      expect((await b.ls("/")).entries?.map((e) => e.path)).toEqual(["/a.md", "/docs/"]);
      expect((await b.stat("/docs/b.md")) as { error?: { code: string } }).toMatchObject({ error: { code: "file_not_found" } });
    }
    expect((await fresh.glob("**/*.md")).files?.map((f) => f.path)).toEqual(["/a.md", "/docs/c.md"]);
    expect((await fresh.read("/docs/b.md")).error?.code).toBe("file_not_found");
    expect((await fresh.edit("/docs/c.md", "hello c", "bye c")).error).toBeUndefined();
    expect(await backend.write("/docs/b.md", "repaired\n")).toMatchObject({ path: "/docs/b.md" });
    expect((await backend.read("/docs/b.md")).content).toBe("repaired");
    expect(await backend.delete("/docs")).toEqual({ deleted: 2 });
  });

  it("long-term memory: a damaged document is quarantined (raw text kept) and a fresh one saved", async () => {
    const { store, corrupt } = setup();
    const storage = new StoreMemoryStorage({ store, namespace: ["damaged", "lt"] });
    const first = await storage.load("u1");
    const saved = await storage.save("u1", undefined, first.memory, first.revision);
    expect(saved.ok).toBe(true);
    const ns = ["damaged", "lt", "users", "u1"];
    await corrupt(ns, "memory", '{"version":1,"facts":[{"trunc');
    const loaded = await storage.load("u1");
    expect(loaded.warning).toMatch(/was invalid .*kept as "memory\.corrupt-\d+"/);
    expect(loaded.memory.facts).toEqual([]);
    const aside = (await store.list<string>(ns, { prefix: "memory.corrupt-" })).items;
    expect(aside.map((i) => i.value)).toEqual(['{"version":1,"facts":[{"trunc']);
    // The fresh document saves under the revision load returned, and loads cleanly.
    expect((await storage.save("u1", undefined, loaded.memory, loaded.revision)).ok).toBe(true);
    expect((await storage.load("u1")).warning).toBeUndefined();
  });

  it("pending long-term work: a damaged entry is skipped, the others are listed", async () => {
    const { store, corrupt } = setup();
    const namespace = ["damaged", "pending"];
    const pending = new StorePendingWork({ store, namespace });
    const entry = (id: string) => ({
      id,
      job: { conversation: { messages: [{ role: "user" as const, content: "hi" }] }, threadId: "t", userId: "u", capturedAt: 1 },
      reason: "model down",
      attempts: 1,
      updatedAt: 2,
    });
    for (const id of ["p1", "p2", "p3"]) await pending.put(entry(id) as never);
    await corrupt(namespace, "p2", "not json at all");
    expect((await pending.list()).map((e) => e.id)).toEqual(["p1", "p3"]);
  });
}
