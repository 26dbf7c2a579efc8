/** SQLite shared by real processes: CAS increments, fact saves, and writers killed mid-transaction. */
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { StoreBackend, StoreMemoryStorage } from "engram";
import { prng } from "engram/testing";
import { afterAll, describe, expect, it } from "vitest";
import { SCHEMA_VERSION, SqliteCheckpointer, SqliteStore } from "@engram/sqlite";
import { Child, WORKER, databaseOfSchema, fillSchema3, raceWorkers, threadIntact } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "engram-sqlite-mp-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// These tests do not touch the core: they run once (native project), not once per core.
describe.skipIf(process.env.ENGRAM_CORE === "wasm")("SQLite across processes", () => {
  /** Four processes that open databases on command, all four at once: started once for the
   * file's races to open a database (see the worker's `open` mode). */
  let openers: Promise<Child[]> | undefined;
  afterAll(async () => {
    for (const c of (await openers) ?? []) c.proc.stdin?.end();
    await Promise.all(((await openers) ?? []).map((c) => c.exited));
  });
  async function openAtOnce(path: string): Promise<void> {
    // The database named here is never opened: each race names its own.
    openers ??= Promise.all(Array.from({ length: 4 }, () => Child.start(WORKER, ["sqlite", join(dir, "unused.db"), "open"])));
    const children = await openers;
    await Promise.all(children.map((c) => c.waitFor((l) => l === '"ready"')));
    for (const c of children) c.send(`open ${path}`);
    const opened = JSON.stringify({ opened: path });
    await Promise.all(children.map((c) => c.waitFor((l) => l === opened, 50_000)));
  }

  it("4 processes × 500 compare-and-swap increments of one item → exactly 2000", async () => {
    const path = join(dir, "cas.db");
    const results = (await raceWorkers(Array.from({ length: 4 }, () => ["sqlite", path, "cas", "500"]))) as { conflicts: number }[];
    const store = new SqliteStore({ path });
    try {
      expect((await store.get(["mp", "cas"], "counter"))?.value).toBe(2000);
      console.log(`sqlite CAS: 2000 increments, ${results.reduce((n, r) => n + r.conflicts, 0)} conflicts retried`);
    } finally {
      store.close();
    }
  }, 60_000);

  it("4 processes opening one new database at once all open it (3 rounds)", async () => {
    for (let round = 0; round < 3; round++) {
      const path = join(dir, `open-${round}.db`);
      await openAtOnce(path);
      const store = new SqliteStore({ path });
      try {
        expect((await store.list(["mp", "open"])).items).toHaveLength(4);
      } finally {
        store.close();
      }
    }
  }, 120_000);

  it("4 processes opening one database of schema 3 at once: migrated once, every item kept", async () => {
    const path = join(dir, "upgrade.db");
    const old = databaseOfSchema(path, 3);
    fillSchema3(old, 2000);
    old.close();
    await openAtOnce(path);
    const store = new SqliteStore({ path });
    try {
      expect(store.database.prepare("SELECT version FROM engram_migrations ORDER BY version").pluck().all()).toEqual(
        Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1),
      );
      expect((await store.list(["mp", "open"])).items).toHaveLength(4);
      expect((await store.list(["fs", "old"], { values: false })).items).toHaveLength(2000);
      expect((await store.get(["fs", "old"], "/d10/f1999.md"))?.revision).toBe("2000");
    } finally {
      store.close();
    }
  }, 60_000);

  it("a process killed while migrating a large schema 3 database leaves it whole: the next open migrates it", async () => {
    const rand = prng(11);
    let killedMidway = 0;
    // Filled once (seconds of work), copied for each round: closed, the database is its one file.
    const template = join(dir, "killed-upgrade-template.db");
    const old = databaseOfSchema(template, 3);
    fillSchema3(old, 30_000);
    old.close();
    for (let round = 0; round < 4; round++) {
      const path = join(dir, `killed-upgrade-${round}.db`);
      copyFileSync(template, path);
      const child = await Child.start(WORKER, ["sqlite", path, "open"]);
      await child.waitFor((l) => l === '"ready"');
      child.send("go");
      // The migration takes about half a second: even rounds kill inside it, odd ones after.
      await new Promise((r) => setTimeout(r, round % 2 === 0 ? 20 + rand() * 250 : 900 + rand() * 600));
      child.kill();
      await child.exited;
      const db = new Database(path);
      expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
      const version = db.prepare("SELECT max(version) FROM engram_migrations").pluck().get();
      if (version === 3) killedMidway++;
      db.close();
      const store = new SqliteStore({ path });
      try {
        const items = (await store.list(["fs", "old"], { values: false })).items;
        expect(items).toHaveLength(30_000);
        expect(await store.get(["fs", "old"], "/d8/f29999.md")).toMatchObject({ revision: "30000", value: { n: 29999 } });
      } finally {
        store.close();
      }
    }
    console.log(`sqlite upgrade: 4 openers killed, ${killedMidway} before the migration committed`);
  }, 180_000);

  it("2 processes × 100 fact saves for one user through StoreMemoryStorage → all 200 present", async () => {
    const path = join(dir, "facts.db");
    await raceWorkers([
      ["sqlite", path, "facts", "u1", "100", "a"],
      ["sqlite", path, "facts", "u1", "100", "b"],
    ]);
    const store = new SqliteStore({ path });
    try {
      const { memory } = await new StoreMemoryStorage({ store }).load("u1");
      expect(memory.facts.length).toBe(200);
      expect(new Set(memory.facts.map((f) => f.id)).size).toBe(200);
    } finally {
      store.close();
    }
  }, 60_000);

  it("3 processes × 100 edits of one file through StoreBackend → no edit lost", async () => {
    const path = join(dir, "edits.db");
    const store = new SqliteStore({ path });
    try {
      await new StoreBackend({ store, namespace: ["mp", "edits"] }).write("/shared.md", "a:0\nb:0\nc:0\n");
      const results = (await raceWorkers(["a", "b", "c"].map((tag) => ["sqlite", path, "edits", "100", tag]))) as { conflicts: number }[];
      const read = await new StoreBackend({ store, namespace: ["mp", "edits"] }).read("/shared.md");
      expect(read.content).toBe("a:100\nb:100\nc:100");
      console.log(
        `sqlite edits: 300 through StoreBackend, ${results.reduce((n, r) => n + r.conflicts, 0)} refused with conflict and retried`,
      );
    } finally {
      store.close();
    }
  }, 60_000);

  it("2 processes × 25 agent runs on one thread → every run's messages and files kept", async () => {
    const path = join(dir, "thread.db");
    const results = (await raceWorkers([
      ["sqlite", path, "thread", "shared", "25", "a"],
      ["sqlite", path, "thread", "shared", "25", "b"],
    ])) as { conflicts: number }[];
    const checkpointer = new SqliteCheckpointer({ path });
    try {
      await threadIntact(checkpointer, "shared", ["a", "b"], 25);
      console.log(`sqlite thread: 50 runs saved, ${results.reduce((n, r) => n + r.conflicts, 0)} refused with conflict and retried`);
    } finally {
      checkpointer.close();
    }
  }, 60_000);

  it("a writer killed with SIGKILL at random points leaves some committed state that opens cleanly", async () => {
    const path = join(dir, "kill.db");
    const rand = prng(7);
    for (let round = 0; round < 4; round++) {
      const child = await Child.start(WORKER, ["sqlite", path, "churn"]);
      await child.waitFor((l) => l === '"ready"');
      child.send("go");
      await child.waitFor((l) => /^\d+$/.test(l));
      await new Promise((r) => setTimeout(r, 20 + rand() * 300));
      child.kill();
      await child.exited;
      const lastReported = Math.max(0, ...child.lines.filter((l) => /^\d+$/.test(l)).map(Number));
      const db = new Database(path);
      expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
      db.close();
      const store = new SqliteStore({ path });
      try {
        const items = (await store.list<{ i: number }>(["mp", "churn"])).items;
        expect(items.length).toBe(10);
        const values = new Set(items.map((i) => i.value.i));
        expect(values.size).toBe(1); // every transaction wrote all ten keys: never a torn state
        expect([...values][0] as number).toBeGreaterThanOrEqual(lastReported);
      } finally {
        store.close();
      }
    }
  }, 60_000);
});
