/**
 * An agent's memory file on PostgreSQL, edited by another connection or another process: the
 * memory step never injects text older than a version its backend already reported (a `stat`
 * that went to the database while the change notice was still on its way), so no edit stays
 * pinned stale in its cache, and the request after a committed edit carries it.
 */
import { join } from "node:path";
import { PostgresStore } from "@engram/postgres";
import { type Backend, type HookContext, type ModelRequest, StoreBackend } from "engram";
import { memoryMiddleware } from "engram/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Child } from "../../store-sqlite/test/helpers.js";
import { PG_URL, dropSchema, pgAvailable, testSchema } from "./helpers.js";

const available = await pgAvailable();
const schema = testSchema("pg_memory");
const EDITOR = join(import.meta.dirname, "fixtures/memory-editor.ts");
let store: PostgresStore;

const request: ModelRequest = { system: "S", messages: [], tools: [] };
const context = {
  threadId: "t",
  depth: 0,
  state: { messages: [{ role: "user", content: "hi" }], data: {} },
  warn: () => {},
  interrupt: () => undefined,
} as unknown as HookContext;

/** The memory step over `/AGENTS.md` of `backend`: `shown()` runs it once and gives the edit
 * number its section carries; `reported` holds every revision a stat of the file reported. */
function memoryOf(backend: StoreBackend) {
  const reported: number[] = [];
  const observed = {
    stat: async (path: string) => {
      const r = await backend.stat(path);
      if (r.info && !r.info.isDir) reported.push(Number(r.info.version));
      return r;
    },
    read: (path: string) => backend.read(path),
  } as unknown as Backend;
  const step = memoryMiddleware({ backend: observed, sources: ["/AGENTS.md"] });
  const shown = async () => {
    const section = (await step.beforeModel?.(request, context))?.systemContext ?? "";
    return Number(/edit (\d+)/.exec(section)?.[1] ?? Number.NaN);
  };
  return { reported, shown };
}

describe.skipIf(!available)("memory on PostgreSQL edited elsewhere", () => {
  beforeAll(async () => {
    await dropSchema(schema);
    store = new PostgresStore({ connectionString: PG_URL, schema });
    expect(await store.listening()).toBe(true);
  });
  afterAll(async () => {
    await store?.close();
    await dropSchema(schema);
  });

  it("two connections: the request right after each of 200 committed edits carries it", async () => {
    const other = new PostgresStore({ connectionString: PG_URL, schema, listen: false });
    try {
      const writer = new StoreBackend({ store: other, namespace: ["conn"] });
      await writer.write("/AGENTS.md", "edit 0\n");
      const { shown } = memoryOf(new StoreBackend({ store, namespace: ["conn"] }));
      expect(await shown()).toBe(0);
      const stale: string[] = [];
      for (let i = 1; i <= 200; i++) {
        await writer.write("/AGENTS.md", `# memory\nedit ${i}\n`);
        const got = await shown();
        if (got !== i) stale.push(`edit ${i} showed ${got}`);
      }
      expect(stale).toEqual([]);
      expect(await shown()).toBe(200);
    } finally {
      await other.close();
    }
  }, 60_000);

  it("two processes: while another process edits 300 times, no request shows text older than a version already reported", async () => {
    const n = 300;
    const writer = new StoreBackend({ store, namespace: ["proc"] });
    const first = await writer.write("/AGENTS.md", "edit 0\n");
    const { reported, shown } = memoryOf(new StoreBackend({ store, namespace: ["proc"] }));
    expect(await shown()).toBe(0);
    const child = await Child.start(EDITOR, [`${PG_URL}#${schema}`, "proc", String(n)]);
    try {
      await child.waitFor((l) => l === '"ready"');
      child.send("go");
      // Each request: the edit it showed, and the newest revision reported up to its end.
      const samples: { shown: number; newest: number }[] = [];
      while (child.proc.exitCode === null) samples.push({ shown: await shown(), newest: Math.max(...reported) });
      expect((await child.exited).code).toBe(0);
      const editAt = new Map<number, number>([[Number(first.version), 0]]);
      for (const line of child.lines.filter((l) => l.startsWith("{"))) {
        const { i, revision } = JSON.parse(line) as { i: number; revision: string };
        editAt.set(Number(revision), i);
      }
      expect(editAt.size).toBe(n + 1);
      const older = samples.filter((s) => s.shown < (editAt.get(s.newest) as number));
      expect(older.map((s) => `showed edit ${s.shown} after edit ${editAt.get(s.newest)} was reported`)).toEqual([]);
      expect(samples.length).toBeGreaterThan(10);
      // The last edit is carried by the next request, notice or not.
      expect(await shown()).toBe(n);
      console.log(`postgres memory: ${samples.length} requests during ${n} edits by another process, none older than reported`);
    } finally {
      if (child.proc.exitCode === null) child.kill();
    }
  }, 60_000);
});
