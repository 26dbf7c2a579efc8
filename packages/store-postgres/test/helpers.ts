/** The PostgreSQL server of the tests: ENGRAM_PG_URL, else the one scripts/setup.sh --test starts. */
import pg from "pg";

export const PG_URL = process.env.ENGRAM_PG_URL ?? "postgres://engram:engram@127.0.0.1:5432/engram";

/** Whether the server answers. Under CI its absence is a failure, never a skip. */
export async function pgAvailable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query("SELECT 1");
    return true;
  } catch (e) {
    if (process.env.CI) throw new Error(`CI is set but PostgreSQL is not reachable at ${PG_URL}: ${e instanceof Error ? e.message : e}`);
    console.warn(`skipping PostgreSQL tests: no server at ${PG_URL} (run scripts/setup.sh --test, or set ENGRAM_PG_URL)`);
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/** A schema name unique to this test file, core and process, so parallel files never collide. */
export function testSchema(label: string): string {
  return `t_${label}_${process.env.ENGRAM_CORE ?? "x"}_${process.pid}`.toLowerCase().replace(/[^a-z0-9_]/g, "_");
}

/** Drops a test schema. */
export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}
