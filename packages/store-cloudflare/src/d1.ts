/**
 * The part of a D1 binding the D1 store uses, typed here (`@cloudflare/workers-types`'
 * `D1Database` fits), and opening Engram's schema in a D1 database.
 * @module
 */
import { EngramError } from "engram/kit";
import { MIGRATIONS, SCHEMA_VERSION } from "./schema.js";
import { storeError } from "./sql.js";

/** A prepared D1 statement. */
export interface D1PreparedStatement {
  bind(...values: unknown[]): D1PreparedStatement;
  all<T = Record<string, unknown>>(): Promise<{ results: T[] }>;
}

/** A D1 database binding (`env.DB`). */
export interface D1Database {
  prepare(query: string): D1PreparedStatement;
  /** Runs the statements in order in one transaction: all of them or none. */
  batch<T = Record<string, unknown>>(statements: D1PreparedStatement[]): Promise<{ results: T[] }[]>;
}

/** Runs `fn`, turning a D1 failure into a `store_error` {@link EngramError}. */
export async function d1Guard<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw storeError(e, "d1");
  }
}

/** The rows of `query`. */
export async function d1Rows<T>(db: D1Database, query: string, ...bindings: unknown[]): Promise<T[]> {
  return d1Guard(
    async () =>
      (
        await db
          .prepare(query)
          .bind(...bindings)
          .all<T>()
      ).results,
  );
}

/** Creates or migrates Engram's tables in `db`. Each migration and its record commit together
 * (one batch); when two isolates migrate at once, the loser's batch fails whole and it finds the
 * schema done. */
export async function openD1Schema(db: D1Database): Promise<void> {
  const version = async () => {
    await d1Rows(db, "CREATE TABLE IF NOT EXISTS engram_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)");
    return (await d1Rows<{ v: number | null }>(db, "SELECT max(version) AS v FROM engram_migrations"))[0]?.v ?? 0;
  };
  let current = await version();
  if (current > SCHEMA_VERSION) {
    throw new EngramError(
      "store_error",
      `the D1 schema (version ${current}) is newer than this Engram understands (${SCHEMA_VERSION}): upgrade Engram`,
    );
  }
  for (; current < SCHEMA_VERSION; current++) {
    const statements = (MIGRATIONS[current] as string)
      .split(";")
      .map((s) => s.trim())
      .filter((s) => s.length > 0)
      .map((s) => db.prepare(s));
    statements.push(db.prepare("INSERT INTO engram_migrations (version, applied_at) VALUES (?, ?)").bind(current + 1, Date.now()));
    try {
      await db.batch(statements);
    } catch (e) {
      if ((await version()) <= current) throw storeError(e, "d1");
    }
  }
}
