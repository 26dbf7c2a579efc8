/** SqliteStore and SqliteCheckpointer: the conformance suites plus SQLite's own guarantees. */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { type Core, StoreBackend, loadCore } from "engram";
import { checkpointerConformance, storeConformance } from "engram/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCHEMA_VERSION, SqliteCheckpointer, SqliteStore, defaultDatabasePath } from "@engram/sqlite";
import { databaseOfSchema } from "./helpers.js";

const dir = mkdtempSync(join(process.platform === "linux" ? "/dev/shm" : tmpdir(), "engram-sqlite-"));
const path = join(dir, "conformance.db");
let store: SqliteStore;
let checkpointer: SqliteCheckpointer;
beforeAll(() => {
  store = new SqliteStore({ path });
  checkpointer = new SqliteCheckpointer({ path });
});
afterAll(() => {
  store.close();
  checkpointer.close();
  rmSync(dir, { recursive: true, force: true });
});

storeConformance("SqliteStore", { describe, it, expect }, () => store);
checkpointerConformance("SqliteCheckpointer", { describe, it, expect }, () => checkpointer);

describe("SqliteStore on disk", () => {
  it("uses WAL, a busy timeout and a migrations table", () => {
    const db = store.database;
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(db.pragma("busy_timeout", { simple: true })).toBe(5000);
    expect(db.prepare("SELECT max(version) FROM engram_migrations").pluck().get()).toBe(SCHEMA_VERSION);
  });

  it("lists a prefix with a range on the unique key index, never a scan", () => {
    const plan = store.database
      .prepare("EXPLAIN QUERY PLAN SELECT key, revision FROM engram_items WHERE ns = ? AND key >= ? AND key < ? ORDER BY key LIMIT ?")
      .all("ns", "/a/", "/a0", 10) as { detail: string }[];
    const detail = plan.map((p) => p.detail).join("\n");
    expect(detail).toMatch(/SEARCH engram_items USING INDEX sqlite_autoindex_engram_items_1 \(ns=\? AND key>\? AND key<\?\)/);
    expect(detail).not.toMatch(/SCAN|TEMP B-TREE/);
  });

  it("sees another connection's commit on the next changeToken (PRAGMA data_version)", async () => {
    const other = new SqliteStore({ path });
    try {
      const ns = ["dv", "t"];
      const before = await store.changeToken(ns);
      expect(await store.changeToken(ns)).toBe(before);
      await other.put(ns, "x", 1);
      const after = await store.changeToken(ns);
      expect(after).not.toBe(before);
      expect(after).toBe(await other.changeToken(ns));
      await other.delete(ns, ["x"]);
      expect(await store.changeToken(ns)).not.toBe(after);
    } finally {
      other.close();
    }
  });

  it("keeps working through StoreBackend, with its mirror refreshed by change token", async () => {
    const core: Core = await loadCore();
    const a = new StoreBackend({ store, namespace: ["fs", "shared"], core });
    const other = new SqliteStore({ path });
    try {
      const b = new StoreBackend({ store: other, namespace: ["fs", "shared"], core });
      await a.write("/notes/a.md", "needle one\n");
      expect((await b.grep("needle", { outputMode: "files_with_matches" })).files).toEqual(["/notes/a.md"]);
      await a.write("/notes/a.md", "changed\n");
      expect((await b.grep("needle")).matches).toEqual([]);
      expect((await b.ls("/notes")).entries?.map((e) => e.path)).toEqual(["/notes/a.md"]);
      await expect(a.write("/x.md", 123 as unknown as string)).rejects.toMatchObject({ code: "invalid_argument" });
      expect((await a.read("/x.md")).error?.code).toBe("file_not_found");
      const long = await a.write(`/${"d".repeat(2000)}`, "x");
      expect("error" in long && long.error?.code).toBe("invalid_path");
    } finally {
      other.close();
    }
  });

  it("loads a checkpoint row written in the version-less format of the first releases", async () => {
    const legacy = readFileSync(join(import.meta.dirname, "../../engram/test/fixtures/stores/checkpoint-v0.json"), "utf8");
    // A database of schema 2 (no revisions) holding the row, opened by this version: migration
    // 3 gives the row a revision.
    const p = join(dir, "schema2.db");
    const db = databaseOfSchema(p, 2);
    db.prepare("INSERT INTO engram_checkpoints VALUES (?, 0, ?, NULL, 0, 1)").run("legacy", legacy);
    db.close();
    const upgraded = new SqliteCheckpointer({ path: p });
    const cp = await upgraded.get("legacy");
    upgraded.close();
    expect(cp?.version).toBe(1);
    expect(cp?.revision).toBeGreaterThan(0);
    expect(cp?.messages.at(-1)?.toolCalls?.[0]?.name).toBe("write_file");
    expect(cp?.interrupt?.toolCalls[0]?.id).toBe("w1");
    expect(cp?.data).toEqual({ summarizations: 1 });
    expect(Array.from(cp?.files ?? [])).toEqual([0, 1, 2, 253, 254, 255]);
  });

  it("moves items and checkpoints of schema 3 into rowid tables, keeping every row, revision and key rule", async () => {
    const p = join(dir, "schema3.db");
    const db = databaseOfSchema(p, 3);
    const items = db.prepare("INSERT INTO engram_items (ns, key, value, revision, updated_at) VALUES (?, ?, ?, ?, ?)");
    for (let i = 0; i < 300; i++)
      items.run(i % 2 ? "fs/a" : "fs/b", `/d${i % 7}/f${i}.md`, JSON.stringify({ n: i, text: "é".repeat(i * 10) }), i + 1, 1000 + i);
    db.prepare("UPDATE engram_counters SET value = 300 WHERE name = 'revision'").run();
    db.prepare(
      "INSERT INTO engram_checkpoints (thread_id, format, doc, files, saved_at, interrupted, revision) VALUES (?, ?, ?, ?, ?, ?, ?)",
    ).run("t1", 1, JSON.stringify({ version: 1, messages: [{ role: "user", content: "hi" }] }), null, 5, 0, 42);
    db.close();

    const upgraded = new SqliteStore({ path: p });
    const cps = new SqliteCheckpointer({ path: p });
    try {
      const tables = upgraded.database.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table'").all() as {
        name: string;
        sql: string;
      }[];
      for (const t of tables.filter((t) => t.name === "engram_items" || t.name === "engram_checkpoints"))
        expect(t.sql).not.toMatch(/WITHOUT ROWID/);
      expect(tables.map((t) => t.name)).not.toContain("engram_items_v4");
      const a = await upgraded.list(["fs", "a"]);
      expect(a.items).toHaveLength(150);
      expect(await upgraded.get(["fs", "b"], "/d2/f100.md")).toEqual({
        key: "/d2/f100.md",
        value: { n: 100, text: "é".repeat(1000) },
        revision: "101",
        updatedAt: 1100,
      });
      const grouped = await upgraded.list(["fs", "b"], { prefix: "/", delimiter: "/" });
      expect(grouped.prefixes).toEqual(["/d0/", "/d1/", "/d2/", "/d3/", "/d4/", "/d5/", "/d6/"]);
      // One row per key still: a put replaces, a compare-and-swap sees the kept revision.
      const put = await upgraded.batch([{ op: "put", namespace: ["fs", "b"], key: "/d2/f100.md", value: 1, ifRevision: "101" }]);
      expect(put).toEqual({ ok: true, revisions: ["301"] });
      expect(upgraded.database.prepare("SELECT count(*) FROM engram_items WHERE key = '/d2/f100.md'").pluck().get()).toBe(1);
      const cp = await cps.get("t1");
      expect(cp?.revision).toBe(42);
      expect(cp?.messages[0]).toMatchObject({ content: "hi" });
    } finally {
      upgraded.close();
      cps.close();
    }
  });

  it("refuses a database whose schema is newer, and a damaged checkpoint, with store_error", async () => {
    const p = join(dir, "newer.db");
    new SqliteStore({ path: p }).close();
    const db = new Database(p);
    db.prepare("INSERT INTO engram_migrations VALUES (?, 0)").run(SCHEMA_VERSION + 1);
    db.prepare(
      "INSERT INTO engram_checkpoints (thread_id, format, doc, files, saved_at, interrupted) VALUES ('bad', 1, '{not json', NULL, 0, 0)",
    ).run();
    db.close();
    expect(() => new SqliteStore({ path: p })).toThrow(expect.objectContaining({ code: "store_error" }));
    store.database
      .prepare(
        "INSERT OR REPLACE INTO engram_checkpoints (thread_id, format, doc, files, saved_at, interrupted) VALUES ('bad', 1, '{not json', NULL, 0, 0)",
      )
      .run();
    await expect(checkpointer.get("bad")).rejects.toMatchObject({ code: "store_error" });
    // A save over it does not read it: the thread can be started afresh.
    await checkpointer.put("bad", { messages: [{ role: "user", content: "fresh" }], data: {}, savedAt: Date.now() });
    expect((await checkpointer.get("bad"))?.messages[0]).toMatchObject({ content: "fresh" });
    store.database
      .prepare(
        "INSERT OR REPLACE INTO engram_checkpoints (thread_id, format, doc, files, saved_at, interrupted) VALUES ('future', 9, '{\"version\":9,\"messages\":[]}', NULL, 0, 0)",
      )
      .run();
    await expect(checkpointer.get("future")).rejects.toMatchObject({ code: "store_error" });
  });

  it("puts the default database under ENGRAM_HOME, else ~/.engram", () => {
    const saved = process.env.ENGRAM_HOME;
    try {
      process.env.ENGRAM_HOME = join(dir, "home");
      expect(defaultDatabasePath()).toBe(join(dir, "home", "engram.db"));
      const s = new SqliteStore();
      s.close();
      delete process.env.ENGRAM_HOME;
      expect(defaultDatabasePath()).toMatch(/[/\\]\.engram[/\\]engram\.db$/);
    } finally {
      if (saved === undefined) delete process.env.ENGRAM_HOME;
      else process.env.ENGRAM_HOME = saved;
    }
  });
});
