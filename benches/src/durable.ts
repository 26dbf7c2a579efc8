/**
 * Durable runs: what committing one step costs (a tool result joining the thread, written as a
 * run step by the agent's step log) on SQLite and PostgreSQL, for a thread of 10 and of 1,000
 * messages. A step writes what changed, so the two lengths must cost the same: their ratio is the
 * check. Run alone: `tsx benches/src/durable.ts [--quick]`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { PostgresCheckpointer } from "@engram/postgres";
import { SqliteCheckpointer } from "@engram/sqlite";
import type { Message } from "engram";
import pg from "pg";
import { StepLog } from "../../packages/engram/src/agent/step-log.js";
import type { StepOperations } from "../../packages/engram/src/agent/run-steps.js";
import { PG_URL, postgresUnavailable } from "./databases.js";
import { summary } from "./measure.js";
import type { WorkloadResult } from "./results.js";

/** The thread lengths of the rows. */
const LENGTHS = [10, 1000] as const;

/** A message as a run makes them: a tool result of a few hundred characters. */
const message = (i: number): Message => ({
  role: i % 2 === 0 ? "assistant" : "tool",
  content: `step ${i}: ${"the agent read the file and found what it was looking for. ".repeat(5)}`,
  ...(i % 2 === 1 && { toolCallId: `call-${i}` }),
});

/** Median milliseconds per committed step: `steps` steps of one new message each (after `warm`
 * untimed ones), on a thread that already holds `length` messages. */
async function stepCost(ops: StepOperations, threadId: string, length: number, steps: number, warm: number): Promise<number[]> {
  const state = { messages: Array.from({ length }, (_, i) => message(i)), data: { summarizations: 0 } };
  const log = new StepLog(ops, threadId, 0, state, undefined);
  const perStep: number[] = [];
  for (let i = 0; i < warm + steps; i++) {
    state.messages.push(message(length + i));
    const t0 = performance.now();
    await log.record(state);
    if (i >= warm) perStep.push(performance.now() - t0);
  }
  await log.discard();
  return perStep;
}

/** The rows: `durable.step-commit-<sqlite|postgres>-<10|1000>`. */
export async function durableRows(wanted: (id: string) => boolean, quick: boolean): Promise<WorkloadResult[]> {
  if (!wanted("durable.step-commit")) return [];
  const [steps, warm] = quick ? [50, 10] : [400, 50];
  const rows: WorkloadResult[] = [];
  const measure = async (store: "sqlite" | "postgres", ops: StepOperations) => {
    for (const length of LENGTHS) {
      const perStep = await stepCost(ops, `bench-${store}-${length}`, length, steps, warm);
      rows.push({
        id: `durable.step-commit-${store}-${length}`,
        title: `durable run: commit one step (a new message) on ${store === "sqlite" ? "SQLite" : "PostgreSQL"}, thread of ${length.toLocaleString("en-US")} messages`,
        kind: "core",
        outcomes: { "ours-native": { label: `engram (${store})`, ok: true, timing: summary(perStep, 1) } },
        maxRssKb: process.resourceUsage().maxRSS,
      });
    }
  };
  const dir = mkdtempSync(join(tmpdir(), "engram-bench-durable-"));
  const sqlite = new SqliteCheckpointer({ path: join(dir, "steps.db") });
  try {
    await measure("sqlite", sqlite);
  } finally {
    sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const why = await postgresUnavailable();
  if (why) return rows;
  const schema = `bench_durable_${process.pid}`;
  const postgres = new PostgresCheckpointer({ connectionString: PG_URL, schema });
  try {
    await measure("postgres", postgres);
  } finally {
    await postgres.close();
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
  }
  return rows;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const rows = await durableRows(() => true, process.argv.includes("--quick"));
  for (const r of rows) {
    const t = r.outcomes["ours-native"]?.timing;
    console.log(`${r.id}\t${t?.medianMs.toFixed(3)} ms (min ${t?.minMs.toFixed(3)}, max ${t?.maxMs.toFixed(3)}, n=${t?.samples})`);
  }
}
