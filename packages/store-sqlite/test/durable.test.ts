/** Durable runs on SQLite across real processes: SIGKILL at random moments, racing resumers, a
 * stopped owner (see durable.ts). */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe } from "vitest";
import { SqliteCheckpointer } from "@engram/sqlite";
import { durableRunSuite } from "./durable.js";

const dir = mkdtempSync(join(tmpdir(), "engram-sqlite-durable-"));

// Real processes and a real file: once (native project), not once per core.
describe.skipIf(process.env.ENGRAM_CORE === "wasm")("durable runs on SQLite (processes)", () => {
  durableRunSuite(
    "sqlite",
    dir,
    (db) => join(dir, `${db}.db`),
    (path) => new SqliteCheckpointer({ path }),
  );
});
