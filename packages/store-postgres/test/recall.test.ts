/** Recall on PostgreSQL: the tsvector index answers around damaged and removed rows. */
import { PostgresCheckpointer } from "@engram/postgres";
import { afterAll, beforeAll, describe } from "vitest";
import { recallDamageSuite } from "../../store-sqlite/test/recall.js";
import { PG_URL, dropSchema, pgAvailable, testSchema } from "./helpers.js";

const available = await pgAvailable();
const schema = testSchema("pg_recall");
let checkpointer: PostgresCheckpointer;

describe.skipIf(!available)("PostgresCheckpointer recall", () => {
  beforeAll(async () => {
    await dropSchema(schema);
    checkpointer = new PostgresCheckpointer({ connectionString: PG_URL, schema });
    await checkpointer.get("warm-up");
  });
  afterAll(async () => {
    await checkpointer?.close();
    await dropSchema(schema);
  });

  recallDamageSuite(() => ({
    checkpointer,
    async corruptDoc(threadId, text) {
      await checkpointer.pool.query(`UPDATE "${schema}".engram_checkpoints SET doc = $1 WHERE thread_id = $2`, [text, threadId]);
    },
    async dropCheckpointRow(threadId) {
      await checkpointer.pool.query(`DELETE FROM "${schema}".engram_checkpoints WHERE thread_id = $1`, [threadId]);
    },
    async indexRows(threadId) {
      // xmin: the transaction that wrote the row version.
      const r = await checkpointer.pool.query<{ seq: number; version: string }>(
        `SELECT seq, xmin::text AS version FROM "${schema}".engram_thread_messages WHERE thread_id = $1`,
        [threadId],
      );
      return new Map(r.rows.map((row) => [row.seq, row.version]));
    },
  }));
});
