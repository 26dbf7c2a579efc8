/**
 * Recall of past threads: one user's search of 1,000 threads of two users (20 messages each),
 * answered by each checkpointer's own search — the core's BM25 over the threads in memory
 * (InMemory), FTS5 (SQLite), a `tsvector` GIN index whose matches the core's BM25 ranks
 * (PostgreSQL) — next to the fallback every checkpointer has: listing and loading the threads
 * and ranking them with the core's BM25 (the "floor" column). And what the index costs a save.
 * Each answer is checked (the planted decision comes first) before it is timed.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PostgresCheckpointer } from "@engram/postgres";
import { SqliteCheckpointer } from "@engram/sqlite";
import { type Checkpoint, type Checkpointer, type Core, InMemoryCheckpointer, type Message, searchPastThreads } from "engram";
import { prng } from "engram/testing";
import pg from "pg";
import { PG_URL, postgresUnavailable } from "./databases.js";
import { type Checked, QUICK, STEADY, timeChecked } from "./measure.js";
import type { WorkloadResult } from "./results.js";

const THREADS = 1000;
const MESSAGES = 20;
const USERS = ["ada", "bob"] as const;
const QUERY = "billing database migration decided";
/** The thread holding the decision the query looks for (one of ada's). */
const PLANTED = "thread-500";
const COMMON = "the we to and a of it is that for on with this be about did what should can our".split(" ");
const TOPICS = (
  "deploy release tests rust typescript postgres cli oncall reviews api cache queue worker schema index " +
  "latency budget design docs bench memory tokens model prompt agent tool sandbox files search backup " +
  "metrics alerts logs trace config secrets keys users threads facts summary window retry timeout error"
).split(" ");

function threadMessages(i: number, random: () => number): Message[] {
  const pick = (list: readonly string[]) => list[Math.floor(random() * list.length)] as string;
  return Array.from({ length: MESSAGES }, (_, m) => {
    const words = Array.from({ length: 24 }, () => (random() < 0.6 ? pick(COMMON) : pick(TOPICS)));
    // A few decoys mention one of the query's rarer words.
    if (i % 37 === 0 && m === 3) words.push("billing");
    if (`thread-${i}` === PLANTED && m === 11) words.push("we decided the billing database migration goes to PostgreSQL 16 in March");
    return { role: m % 2 === 0 ? "user" : "assistant", content: words.join(" ") };
  });
}

/** The 1,000 threads, users interleaved. */
function threads(): [string, Checkpoint][] {
  const random = prng(39);
  return Array.from({ length: THREADS }, (_, i) => [
    `thread-${i}`,
    { messages: threadMessages(i, random), data: {}, savedAt: 1_700_000_000_000 + i, userId: USERS[i % 2] as string },
  ]);
}

async function fill(cp: Checkpointer): Promise<void> {
  for (const [id, checkpoint] of threads()) await cp.put(id, checkpoint);
}

/** A search of ada's threads through `search`, checked once: the planted thread first. */
async function checkedSearch(label: string, search: () => Promise<{ threadId: string }[]>): Promise<Checked> {
  const call = async () => (await search())[0]?.threadId === PLANTED;
  try {
    return (await call()) ? { label, call } : { label, note: `wrong answer: ${(await search())[0]?.threadId} first` };
  } catch (e) {
    return { label, note: `failed: ${(e as Error).message}` };
  }
}

const ask = { userId: "ada", query: QUERY, excludeThreadId: "thread-998", limit: 5 };
/** The fallback: list, load and rank with the core's BM25. */
const loaded = (cp: Checkpointer, core: Core) => () =>
  searchPastThreads({ get: (id) => cp.get(id), list: (o) => (cp.list as NonNullable<Checkpointer["list"]>)(o) }, core, ask);

/** Saves of one 40-message thread whose last two messages alternate, with a user (so its
 * messages are indexed) or without (nothing indexed). */
function saves(cp: Checkpointer, userId: string | undefined): () => Promise<boolean> {
  const random = prng(7);
  const base = [...threadMessages(1, random), ...threadMessages(2, random)].slice(0, 38);
  const tails = [0, 1].map((k) => threadMessages(3 + k, random).slice(0, 2));
  const id = `save-${userId ?? "nobody"}`;
  let turn = 0;
  return async () => {
    const messages = [...base, ...(tails[turn++ % 2] as Message[])];
    return (await cp.put(id, { messages, data: {}, savedAt: turn, ...(userId !== undefined && { userId }) })) !== undefined;
  };
}

type Row = { id: string; title: string; subjects: [role: keyof WorkloadResult["outcomes"], Promise<Checked>][] };

async function measure(rows: Row[], quick: boolean, results: WorkloadResult[], log: (m: string) => void): Promise<void> {
  for (const row of rows) {
    const checked = await Promise.all(row.subjects.map(([, c]) => c));
    const timed = await timeChecked(checked, quick ? QUICK : STEADY);
    const outcomes: WorkloadResult["outcomes"] = {};
    row.subjects.forEach(([role], i) => {
      outcomes[role] = timed[i];
    });
    results.push({ id: row.id, title: row.title, kind: "core", outcomes, maxRssKb: process.resourceUsage().maxRSS });
    log(`${row.id}: ${timed.map((o) => `${o.label} ${o.ok ? `${o.timing?.medianMs.toFixed(3)} ms` : o.note}`).join(" · ")}`);
  }
}

const searchTitle = (how: string) =>
  `recall: one user's search of ${THREADS.toLocaleString("en-US")} threads of two users (${MESSAGES} messages each), ${how}`;
const saveTitle = (db: string) =>
  `recall: ${db} save of a 40-message thread whose last 2 messages changed, with a user (re-indexed) vs without (floor: no index)`;

/** The recall rows, for `run.ts`. */
export async function recallRows(
  cores: { native: Core; wasm: Core },
  wanted: (id: string) => boolean,
  quick: boolean,
  log: (m: string) => void,
): Promise<WorkloadResult[]> {
  const results: WorkloadResult[] = [];
  const { native, wasm } = cores;
  if (wanted("memory.recall-inmemory")) {
    const [n, w] = [new InMemoryCheckpointer({ core: native }), new InMemoryCheckpointer({ core: wasm })];
    await fill(n);
    await fill(w);
    await measure(
      [
        {
          id: "memory.recall-inmemory",
          title: searchTitle("InMemoryCheckpointer: the core's BM25 over the threads it holds"),
          subjects: [
            ["ours-native", checkedSearch("engram (native)", () => n.searchMessages(ask))],
            ["ours-wasm", checkedSearch("engram (wasm)", () => w.searchMessages(ask))],
          ],
        },
      ],
      quick,
      results,
      log,
    );
  }
  if (wanted("memory.recall-sqlite") || wanted("memory.recall-save-sqlite")) {
    const dir = mkdtempSync(join(tmpdir(), "engram-bench-recall-"));
    const cp = new SqliteCheckpointer({ path: join(dir, "engram.db") });
    try {
      await fill(cp);
      const rows: Row[] = [];
      if (wanted("memory.recall-sqlite"))
        rows.push({
          id: "memory.recall-sqlite",
          title: searchTitle("SQLite: FTS5 (BM25) vs listing, loading and ranking with the core's BM25 (floor)"),
          subjects: [
            ["ours-native", checkedSearch("SqliteCheckpointer.searchMessages (FTS5)", () => cp.searchMessages(ask))],
            ["floor", checkedSearch("list + get + core BM25 (native)", loaded(cp, native))],
          ],
        });
      if (wanted("memory.recall-save-sqlite"))
        rows.push({
          id: "memory.recall-save-sqlite",
          title: saveTitle("SQLite"),
          subjects: [
            ["ours-native", checkedSaves("with a user (indexed)", saves(cp, "ada"))],
            ["floor", checkedSaves("without a user", saves(cp, undefined))],
          ],
        });
      await measure(rows, quick, results, log);
    } finally {
      cp.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  if (wanted("memory.recall-postgres") || wanted("memory.recall-save-postgres")) {
    const down = await postgresUnavailable();
    if (down) {
      log(`memory.recall-postgres: skipped: ${down}`);
      return results;
    }
    const schema = `bench_recall_${process.pid}`;
    const drop = async () => {
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).finally(() => client.end());
    };
    await drop();
    const n = new PostgresCheckpointer({ connectionString: PG_URL, schema, core: native });
    const w = new PostgresCheckpointer({ connectionString: PG_URL, schema, core: wasm });
    try {
      await fill(n);
      const rows: Row[] = [];
      if (wanted("memory.recall-postgres"))
        rows.push({
          id: "memory.recall-postgres",
          title: searchTitle("PostgreSQL: tsvector (GIN) matches ranked by the core's BM25 vs listing, loading and ranking (floor)"),
          subjects: [
            ["ours-native", checkedSearch("PostgresCheckpointer.searchMessages (tsvector, native)", () => n.searchMessages(ask))],
            ["ours-wasm", checkedSearch("PostgresCheckpointer.searchMessages (tsvector, wasm)", () => w.searchMessages(ask))],
            ["floor", checkedSearch("list + get + core BM25 (native)", loaded(n, native))],
          ],
        });
      if (wanted("memory.recall-save-postgres"))
        rows.push({
          id: "memory.recall-save-postgres",
          title: saveTitle("PostgreSQL"),
          subjects: [
            ["ours-native", checkedSaves("with a user (indexed)", saves(n, "ada"))],
            ["floor", checkedSaves("without a user", saves(n, undefined))],
          ],
        });
      await measure(rows, quick, results, log);
    } finally {
      await n.close();
      await w.close();
      await drop();
    }
  }
  return results;
}

async function checkedSaves(label: string, save: () => Promise<boolean>): Promise<Checked> {
  return (await save()) ? { label, call: save } : { label, note: "the save reported no revision" };
}
