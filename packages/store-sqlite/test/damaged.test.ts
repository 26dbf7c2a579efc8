/** SQLite rows whose value is not JSON: a typed error, and the row costs only itself. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { namespaceId } from "engram/kit";
import { afterAll, describe } from "vitest";
import { SqliteStore } from "@engram/sqlite";
import { damagedRowSuite } from "./damaged.js";

const dir = mkdtempSync(join(tmpdir(), "engram-sqlite-damaged-"));
const store = new SqliteStore({ path: join(dir, "damaged.db") });
afterAll(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("SqliteStore with damaged rows", () => {
  damagedRowSuite(() => ({
    store,
    async corrupt(namespace, key, text) {
      store.database.prepare("UPDATE engram_items SET value = ? WHERE ns = ? AND key = ?").run(text, namespaceId(namespace), key);
    },
  }));
});
