/** PostgresStore and PostgresCheckpointer: the conformance suites plus PostgreSQL's own guarantees. */
import { PostgresCheckpointer, PostgresStore, SCHEMA_VERSION } from "@engram/postgres";
import { type Core, type Namespace, StoreBackend, loadCore } from "engram";
import { checkpointerConformance, storeConformance } from "engram/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PG_URL, dropSchema, pgAvailable, testSchema } from "./helpers.js";

const available = await pgAvailable();
const schema = testSchema("pg");
let store: PostgresStore;
let checkpointer: PostgresCheckpointer;

describe.skipIf(!available)("PostgreSQL", () => {
  beforeAll(async () => {
    await dropSchema(schema);
    store = new PostgresStore({ connectionString: PG_URL, schema });
    checkpointer = new PostgresCheckpointer({ connectionString: PG_URL, schema });
  });
  afterAll(async () => {
    await store?.close();
    await checkpointer?.close();
    await dropSchema(schema);
  });

  storeConformance("PostgresStore", { describe, it, expect }, () => store, { propertyRounds: 12 });
  checkpointerConformance("PostgresCheckpointer", { describe, it, expect }, () => checkpointer);

  describe("PostgresStore on a server", () => {
    it("records migrations and lets two instances migrate at once", async () => {
      const s2 = testSchema("pg_mig");
      await dropSchema(s2);
      const a = new PostgresStore({ connectionString: PG_URL, schema: s2, listen: false });
      const b = new PostgresStore({ connectionString: PG_URL, schema: s2, listen: false });
      try {
        await Promise.all([a.put(["m"], "a", 1), b.put(["m"], "b", 2)]);
        const r = await store.pool.query(`SELECT max(version) AS v FROM "${s2}".engram_migrations`);
        expect(r.rows[0].v).toBe(SCHEMA_VERSION);
        expect((await a.list(["m"])).items.map((i) => i.key)).toEqual(["a", "b"]);
      } finally {
        await a.close();
        await b.close();
        await dropSchema(s2);
      }
    });

    it("pushes a prefix down to an index scan on the primary key", async () => {
      const ns = "explain/ns";
      await store.pool.query(
        `INSERT INTO "${schema}".engram_items (ns, key, value, revision, updated_at)
         SELECT $1, '/d' || (g % 100) || '/f' || g, '{}', g, 0 FROM generate_series(1, 20000) g`,
        [ns],
      );
      await store.pool.query(`ANALYZE "${schema}".engram_items`);
      const plan = await store.pool.query(
        `EXPLAIN SELECT key, revision FROM "${schema}".engram_items WHERE ns = $1 AND key >= $2 AND key < $3 ORDER BY key LIMIT $4`,
        [ns, "/d42/", "/d420", 500],
      );
      const text = plan.rows.map((r) => r["QUERY PLAN"]).join("\n");
      expect(text).toMatch(/Index (Only )?Scan using engram_items_pkey/);
      expect(text).not.toMatch(/Seq Scan/);
      const listed = await store.list(ns.split("/") as unknown as Namespace, { prefix: "/d42/", values: false });
      expect(listed.items.length).toBe(200);
    });

    it("invalidates a cached change token on another instance's NOTIFY, without reading the table", async () => {
      const other = new PostgresStore({ connectionString: PG_URL, schema });
      try {
        const ns = ["notify", "t"];
        const heard: string[] = [];
        const off = store.subscribe((n) => heard.push(n.join("/")));
        expect(await store.listening()).toBe(true);
        const t0 = await store.changeToken(ns);
        // Served from memory while nothing changes: no query reaches the pool.
        const pool = store.pool;
        const query = pool.query;
        let queries = 0;
        pool.query = ((...args: Parameters<typeof query>) => {
          queries++;
          return (query as (...a: unknown[]) => unknown).apply(pool, args);
        }) as typeof query;
        try {
          for (let i = 0; i < 20; i++) expect(await store.changeToken(ns)).toBe(t0);
        } finally {
          pool.query = query;
        }
        expect(queries).toBe(0);
        await other.put(ns, "x", 1);
        for (let i = 0; i < 100 && !heard.includes("notify/t"); i++) await new Promise((r) => setTimeout(r, 10));
        expect(heard).toContain("notify/t");
        const t1 = await store.changeToken(ns);
        expect(t1).not.toBe(t0);
        expect(t1).toBe(await other.changeToken(ns));
        off();
      } finally {
        await other.close();
      }
    });

    it("serves StoreBackend, whose mirror follows another process's writes", async () => {
      const core: Core = await loadCore();
      const other = new PostgresStore({ connectionString: PG_URL, schema });
      try {
        const a = new StoreBackend({ store, namespace: ["fs", "shared"], core });
        const b = new StoreBackend({ store: other, namespace: ["fs", "shared"], core });
        await a.write("/notes/a.md", "needle one\n");
        expect((await b.grep("needle", { outputMode: "files_with_matches" })).files).toEqual(["/notes/a.md"]);
        // b learns of a's write by NOTIFY (asynchronous: wait for the notice, not a timer).
        const noticed = new Promise<void>((resolve) => {
          const off = other.subscribe(() => {
            off();
            resolve();
          });
        });
        await a.write("/notes/a.md", "changed\n");
        expect((await a.grep("needle")).matches).toEqual([]);
        await noticed;
        expect((await b.grep("needle")).matches).toEqual([]);
        expect((await b.read("/notes/a.md")).content).toBe("changed");
      } finally {
        await other.close();
      }
    });

    it("loads a legacy (version-less) checkpoint row and refuses a damaged one", async () => {
      const { readFileSync } = await import("node:fs");
      const { join } = await import("node:path");
      const legacy = readFileSync(join(import.meta.dirname, "../../engram/test/fixtures/stores/checkpoint-v0.json"), "utf8");
      // A schema of version 2 (no revisions) holding the row, opened by this version: migration
      // 3 gives the row a revision.
      const old = testSchema("pg_v2");
      await dropSchema(old);
      const seed = new PostgresCheckpointer({ connectionString: PG_URL, schema: old });
      await seed.get("warm-up");
      await store.pool.query(
        `DELETE FROM "${old}".engram_migrations WHERE version >= 3; DROP TABLE "${old}".engram_thread_messages;` +
          `DROP TABLE "${old}".engram_run_steps;` +
          `ALTER TABLE "${old}".engram_checkpoints DROP COLUMN revision;` +
          `INSERT INTO "${old}".engram_checkpoints VALUES ('legacy', 0, '${legacy.replaceAll("'", "''")}', NULL, 0, true)`,
      );
      await seed.close();
      const upgraded = new PostgresCheckpointer({ connectionString: PG_URL, schema: old });
      const cp = await upgraded.get("legacy");
      await upgraded.close();
      await dropSchema(old);
      expect(cp?.version).toBe(1);
      expect(cp?.revision).toBeGreaterThan(0);
      expect(Array.from(cp?.files ?? [])).toEqual([0, 1, 2, 253, 254, 255]);
      await store.pool.query(
        `INSERT INTO "${schema}".engram_checkpoints (thread_id, format, doc, files, saved_at, interrupted) VALUES ('bad', 1, '{', NULL, 0, false)`,
      );
      await expect(checkpointer.get("bad")).rejects.toMatchObject({ code: "store_error" });
    });

    it("reports an unreachable server as store_error", async () => {
      const dead = new PostgresStore({ connectionString: "postgres://engram:engram@127.0.0.1:1/engram", schema, listen: false });
      await expect(dead.get(["x"], "k")).rejects.toMatchObject({ name: "EngramError", code: "store_error" });
      await dead.close();
      expect(() => new PostgresStore({ connectionString: PG_URL, schema: "Bad-Schema" })).toThrow(
        expect.objectContaining({ code: "invalid_argument" }),
      );
    });
  });
});
