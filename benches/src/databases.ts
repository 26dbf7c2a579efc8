/**
 * The database-backed Store subjects: Engram's `SqliteStore` and `PostgresStore` under its
 * `StoreBackend`, and the peer's StoreBackend over LangGraph's own `PostgresStore`. Every
 * subject gets a database of its own (an SQLite file, a PostgreSQL schema) and drops it when closed.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PostgresStore } from "@engram/postgres";
import { SqliteStore } from "@engram/sqlite";
import { PostgresStore as PeerPostgresStore } from "@langchain/langgraph-checkpoint-postgres/store";
import type { Store } from "engram";
import pg from "pg";

export type DbKind = "store-sqlite" | "store-postgres";

export function isDbKind(kind: string): kind is DbKind {
  return kind === "store-sqlite" || kind === "store-postgres";
}

/** The server of the PostgreSQL rows: ENGRAM_PG_URL, else the one scripts/setup.sh --test starts. */
export const PG_URL = process.env.ENGRAM_PG_URL ?? "postgres://engram:engram@127.0.0.1:5432/engram";

/** `undefined` when PostgreSQL answers, else why not. Under CI its absence throws: the rows must run there. */
export async function postgresUnavailable(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query("SELECT 1");
    await dropOrphans(client);
    return undefined;
  } catch (e) {
    const why = `PostgreSQL not reachable at ${PG_URL} (${e instanceof Error ? e.message : String(e)})`;
    if (process.env.CI) throw new Error(`CI is set but ${why}`);
    return why;
  } finally {
    await client.end().catch(() => {});
  }
}

/** Drops the schemas of bench runs killed before they cleaned up (their process is gone);
 * only on a server on this machine, where the process ids in the names are ours to check. */
async function dropOrphans(client: pg.Client): Promise<void> {
  const host = new URL(PG_URL).hostname;
  if (host !== "127.0.0.1" && host !== "localhost" && host !== "[::1]") return;
  const r = await client.query<{ name: string }>("SELECT nspname AS name FROM pg_namespace WHERE nspname ~ '^bench_[a-z0-9_]+_[0-9]+$'");
  for (const { name } of r.rows) {
    const pid = Number(name.slice(name.lastIndexOf("_") + 1));
    try {
      process.kill(pid, 0);
      continue; // alive: another run's
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ESRCH") continue;
    }
    await client.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
  }
}

async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

/** A schema name unique to this process and subject. */
function schemaName(label: string): string {
  return `bench_${label}_${process.pid}`.toLowerCase().replace(/[^a-z0-9_]/g, "_");
}

export interface OpenStore<S> {
  store: S;
  /** Closes the connections and deletes the database (file or schema). */
  close(): Promise<void>;
}

/** One of Engram's stores, in a database of its own. */
export async function openEngramStore(kind: DbKind, label: string): Promise<OpenStore<Store>> {
  if (kind === "store-sqlite") {
    const dir = mkdtempSync(join(tmpdir(), `engram-bench-sqlite-${label}-`));
    const store = new SqliteStore({ path: join(dir, "engram.db") });
    return {
      store,
      close: async () => {
        store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const schema = schemaName(`engram_${label}`);
  await dropSchema(schema);
  const store = new PostgresStore({ connectionString: PG_URL, schema });
  return {
    store,
    close: async () => {
      await store.close();
      await dropSchema(schema);
    },
  };
}

/** LangGraph's PostgresStore, in a schema of its own. */
export async function openPeerStore(label: string): Promise<OpenStore<PeerPostgresStore>> {
  const schema = schemaName(`peer_${label}`);
  await dropSchema(schema);
  const store = new PeerPostgresStore({ connectionOptions: PG_URL, schema });
  await store.setup();
  return {
    store,
    close: async () => {
      await store.stop();
      await dropSchema(schema);
    },
  };
}

/** Runs `task` over `items`, at most `concurrency` at a time (loading a corpus over the network). */
export async function forEachLimited<T>(items: readonly T[], concurrency: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await task(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}
