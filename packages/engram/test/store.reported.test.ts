/**
 * A `StoreBackend` never reads older than it reported: when its store's change notices arrive
 * late (PostgreSQL's NOTIFY), a `stat` or `ls` that went to the store may already name a newer
 * revision than the resident mirror holds; the next read of that file serves that revision (or
 * newer), with the version it read. Another writer is a second backend on the same store.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { type Core, InMemoryStore, type Namespace, type Store, StoreBackend, loadCore } from "../src/index.js";

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});

/** `store` whose change token stays what it was until `deliver()`: every notice is in flight. */
function lateNotices(store: InMemoryStore): { store: Store; deliver: () => void } {
  const held = new Map<string, string>();
  const late: Store = {
    get: (ns, key) => store.get(ns, key),
    put: (ns, key, value, options) => store.put(ns, key, value, options),
    delete: (ns, keys) => store.delete(ns, keys),
    list: (ns, options) => store.list(ns, options),
    changeToken: async (ns: Namespace) => {
      const key = ns.join("/");
      const token = held.get(key) ?? (await store.changeToken(ns));
      held.set(key, token);
      return token;
    },
  };
  return { store: late, deliver: () => held.clear() };
}

function backends() {
  const shared = new InMemoryStore();
  const { store, deliver } = lateNotices(shared);
  const reader = new StoreBackend({ store, namespace: ["files"], core });
  const writer = new StoreBackend({ store: shared, namespace: ["files"], core });
  return { reader, writer, deliver };
}

describe("StoreBackend reads are never older than what it reported", () => {
  it("after a stat names a newer revision, read, readBytes and the read tool's text serve it", async () => {
    const { reader, writer, deliver } = backends();
    await writer.write("/AGENTS.md", "- old\n");
    expect((await reader.read("/AGENTS.md")).content).toBe("- old");

    const edited = await writer.write("/AGENTS.md", "- new\n");
    const stat = await reader.stat("/AGENTS.md");
    expect(stat.info?.version).toBe(edited.version);
    const read = await reader.read("/AGENTS.md");
    expect(read.content).toBe("- new");
    expect(read.version).toBe(edited.version);

    await writer.write("/AGENTS.md", "- newer\n");
    await reader.stat("/AGENTS.md");
    expect(new TextDecoder().decode((await reader.readBytes("/AGENTS.md")).data)).toBe("- newer\n");

    await writer.write("/AGENTS.md", "- newest\n");
    await reader.stat("/AGENTS.md");
    const text = await reader.toolText({ op: "read", path: "/AGENTS.md", offset: 0, limit: 10 }, 10_000);
    expect(text?.text).toContain("- newest");
    deliver();
    expect((await reader.read("/AGENTS.md")).content).toBe("- newest");
  });

  it("an ls that lists newer revisions, a file another writer deleted, and one created in a scope already searched", async () => {
    const { reader, writer } = backends();
    await writer.write("/docs/a.md", "a1");
    await writer.write("/docs/b.md", "b1");
    expect((await reader.grep("1", { path: "/" })).matches?.length).toBe(2);

    await writer.write("/docs/a.md", "a2");
    const listed = await reader.ls("/docs");
    const a = listed.entries?.find((e) => e.path === "/docs/a.md");
    const read = await reader.read("/docs/a.md");
    expect(read.content).toBe("a2");
    expect(read.version).toBe(a?.version);

    await writer.delete("/docs/b.md");
    expect((await reader.stat("/docs/b.md")).error?.code).toBe("file_not_found");
    expect((await reader.read("/docs/b.md")).error?.code).toBe("file_not_found");

    await writer.write("/docs/c.md", "c1");
    expect((await reader.stat("/docs/c.md")).info?.isDir).toBe(false);
    expect((await reader.read("/docs/c.md")).content).toBe("c1");
  });

  it("a read reports the version of what it read, also without another writer", async () => {
    const { reader } = backends();
    const w = await reader.write("/a.md", "x\ny\n");
    const r = await reader.read("/a.md", { offset: 1 });
    expect(r).toMatchObject({ content: "y", version: w.version });
    expect((await reader.stat("/a.md")).info?.version).toBe(w.version);
  });
});
