/** PostgreSQL rows whose value is not JSON: a typed error, and the row costs only itself. */
import { PostgresStore } from "@engram/postgres";
import { namespaceId } from "engram/kit";
import { afterAll, beforeAll, describe } from "vitest";
import { damagedRowSuite } from "../../store-sqlite/test/damaged.js";
import { PG_URL, dropSchema, pgAvailable, testSchema } from "./helpers.js";

const available = await pgAvailable();
const schema = testSchema("pg_damaged");
let store: PostgresStore;

describe.skipIf(!available)("PostgresStore with damaged rows", () => {
  beforeAll(async () => {
    await dropSchema(schema);
    store = new PostgresStore({ connectionString: PG_URL, schema });
    await store.get(["warm"], "up");
  });
  afterAll(async () => {
    await store?.close();
    await dropSchema(schema);
  });

  damagedRowSuite(() => ({
    store,
    async corrupt(namespace, key, text) {
      await store.pool.query(`UPDATE "${schema}".engram_items SET value = $1 WHERE ns = $2 AND key = $3`, [
        text,
        namespaceId(namespace),
        key,
      ]);
    },
  }));
});
