/** Durable runs on PostgreSQL across real processes: SIGKILL at random moments, racing
 * resumers, a stopped owner (see store-sqlite/test/durable.ts). */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe } from "vitest";
import { PostgresCheckpointer } from "@engram/postgres";
import { durableRunSuite } from "../../store-sqlite/test/durable.js";
import { PG_URL, dropSchema, pgAvailable, testSchema } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "engram-pg-durable-"));
const databases = ["crash", "race", "stopped"] as const;
const schemaOf = (db: (typeof databases)[number]) => testSchema(`durable_${db}`);
const available = await pgAvailable();

describe.skipIf(!available || process.env.ENGRAM_CORE === "wasm")("durable runs on PostgreSQL (processes)", () => {
  const dropAll = () => Promise.all(databases.map((db) => dropSchema(schemaOf(db))));
  beforeAll(dropAll);
  afterAll(dropAll);
  durableRunSuite(
    "pg",
    dir,
    (db) => `${PG_URL}#${schemaOf(db)}`,
    (target) => {
      const [url, s] = target.split("#");
      return new PostgresCheckpointer({ connectionString: url as string, schema: s as string });
    },
  );
});
