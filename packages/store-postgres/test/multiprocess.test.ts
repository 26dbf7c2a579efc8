/** PostgreSQL shared by real processes: CAS increments, fact saves, killed writers, change notices. */
import { PostgresCheckpointer, PostgresStore } from "@engram/postgres";
import { StoreBackend, StoreMemoryStorage } from "engram";
import { prng } from "engram/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Child, WORKER, raceWorkers, threadIntact } from "../../store-sqlite/test/helpers.js";
import { PG_URL, dropSchema, pgAvailable, testSchema } from "./helpers.js";

const available = await pgAvailable();
const schema = testSchema("pg_mp");
const target = `${PG_URL}#${schema}`;
let store: PostgresStore;

// These tests do not touch the core: they run once (native project), not once per core.
describe.skipIf(!available || process.env.ENGRAM_CORE === "wasm")("PostgreSQL across processes", () => {
  beforeAll(async () => {
    await dropSchema(schema);
    store = new PostgresStore({ connectionString: PG_URL, schema });
    await store.get(["mp"], "warm-up");
  });
  afterAll(async () => {
    await store?.close();
    await dropSchema(schema);
  });

  it("4 processes × 500 compare-and-swap increments of one item → exactly 2000", async () => {
    const results = (await raceWorkers(Array.from({ length: 4 }, () => ["pg", target, "cas", "500"]))) as { conflicts: number }[];
    expect((await store.get(["mp", "cas"], "counter"))?.value).toBe(2000);
    console.log(`postgres CAS: 2000 increments, ${results.reduce((n, r) => n + r.conflicts, 0)} conflicts retried`);
  }, 60_000);

  it("2 processes × 100 fact saves for one user through StoreMemoryStorage → all 200 present", async () => {
    await raceWorkers([
      ["pg", target, "facts", "u1", "100", "a"],
      ["pg", target, "facts", "u1", "100", "b"],
    ]);
    const { memory } = await new StoreMemoryStorage({ store }).load("u1");
    expect(memory.facts.length).toBe(200);
    expect(new Set(memory.facts.map((f) => f.id)).size).toBe(200);
  }, 60_000);

  it("3 processes × 100 edits of one file through StoreBackend → no edit lost", async () => {
    await new StoreBackend({ store, namespace: ["mp", "edits"] }).write("/shared.md", "a:0\nb:0\nc:0\n");
    const results = (await raceWorkers(["a", "b", "c"].map((tag) => ["pg", target, "edits", "100", tag]))) as { conflicts: number }[];
    const read = await new StoreBackend({ store, namespace: ["mp", "edits"] }).read("/shared.md");
    expect(read.content).toBe("a:100\nb:100\nc:100");
    console.log(
      `postgres edits: 300 through StoreBackend, ${results.reduce((n, r) => n + r.conflicts, 0)} refused with conflict and retried`,
    );
  }, 60_000);

  it("2 processes × 25 agent runs on one thread → every run's messages and files kept", async () => {
    const results = (await raceWorkers([
      ["pg", target, "thread", "shared", "25", "a"],
      ["pg", target, "thread", "shared", "25", "b"],
    ])) as { conflicts: number }[];
    const checkpointer = new PostgresCheckpointer({ connectionString: PG_URL, schema });
    try {
      await threadIntact(checkpointer, "shared", ["a", "b"], 25);
      console.log(`postgres thread: 50 runs saved, ${results.reduce((n, r) => n + r.conflicts, 0)} refused with conflict and retried`);
    } finally {
      await checkpointer.close();
    }
  }, 60_000);

  it("a writer killed with SIGKILL mid-transaction leaves some committed state", async () => {
    const rand = prng(11);
    for (let round = 0; round < 4; round++) {
      const child = await Child.start(WORKER, ["pg", target, "churn"]);
      await child.waitFor((l) => l === '"ready"');
      child.send("go");
      await child.waitFor((l) => /^\d+$/.test(l));
      await new Promise((r) => setTimeout(r, 20 + rand() * 300));
      child.kill();
      await child.exited;
      const lastReported = Math.max(0, ...child.lines.filter((l) => /^\d+$/.test(l)).map(Number));
      const items = (await store.list<{ i: number }>(["mp", "churn"])).items;
      expect(items.length).toBe(10);
      const values = new Set(items.map((i) => i.value.i));
      expect(values.size).toBe(1);
      expect([...values][0] as number).toBeGreaterThanOrEqual(lastReported);
    }
  }, 60_000);

  it("another process hears each change at once by NOTIFY (latency reported, not asserted)", async () => {
    const child = await Child.start(WORKER, ["pg", target, "notice"]);
    try {
      await child.waitFor((l) => l === '"ready"');
      child.send("go");
      const latencies: number[] = [];
      for (let i = 0; i < 20; i++) {
        await store.put(["notice", `n${i}`], "memory", { i });
        const committed = performance.timeOrigin + performance.now();
        const line = await child.waitFor((l) => l.includes(`"notice/n${i}"`), 10_000);
        latencies.push((JSON.parse(line) as { at: number }).at - committed);
      }
      latencies.sort((a, b) => a - b);
      console.log(
        `postgres NOTIFY latency (commit → other process's listener): median ${latencies[10]?.toFixed(2)} ms, max ${latencies.at(-1)?.toFixed(2)} ms`,
      );
      expect(latencies.length).toBe(20);
      child.send("stop");
      expect((await child.exited).code).toBe(0);
    } finally {
      if (child.proc.exitCode === null) child.kill();
    }
  }, 60_000);
});
