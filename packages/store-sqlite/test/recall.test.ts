/** Recall on SQLite: FTS5 answers around damaged and removed rows; a database of the schema
 * before recall migrates, its threads (saved without a user) are nobody's until saved again. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteCheckpointer } from "@engram/sqlite";
import { afterAll, describe, expect, it } from "vitest";
import { databaseOfSchema } from "./helpers.js";
import { recallDamageSuite } from "./recall.js";

const dir = mkdtempSync(join(tmpdir(), "engram-sqlite-recall-"));
const path = join(dir, "recall.db");
const checkpointer = new SqliteCheckpointer({ path });
afterAll(() => {
  checkpointer.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("SqliteCheckpointer recall", () => {
  recallDamageSuite(() => ({
    checkpointer,
    async corruptDoc(threadId, text) {
      const { default: Database } = await import("better-sqlite3");
      const db = new Database(path);
      db.prepare("UPDATE engram_checkpoints SET doc = ? WHERE thread_id = ?").run(text, threadId);
      db.close();
    },
    async dropCheckpointRow(threadId) {
      const { default: Database } = await import("better-sqlite3");
      const db = new Database(path);
      db.prepare("DELETE FROM engram_checkpoints WHERE thread_id = ?").run(threadId);
      db.close();
    },
    async indexRows(threadId) {
      const { default: Database } = await import("better-sqlite3");
      const db = new Database(path);
      const rows = db.prepare("SELECT seq, id FROM engram_thread_messages WHERE thread_id = ?").all(threadId) as {
        seq: number;
        id: number;
      }[];
      db.close();
      return new Map(rows.map((r) => [r.seq, String(r.id)]));
    },
  }));

  it("migrates a database saved before recall: old threads load, are nobody's, and are found once saved with a user", async () => {
    const old = join(dir, "schema4.db");
    const db = databaseOfSchema(old, 4);
    const doc = JSON.stringify({ version: 1, messages: [{ role: "user", content: "the legacy billing plan" }], data: {}, savedAt: 7 });
    db.prepare(
      "INSERT INTO engram_checkpoints (thread_id, format, saved_at, interrupted, revision, doc) VALUES ('old', 1, 7, 0, 1, ?)",
    ).run(doc);
    db.close();
    const upgraded = new SqliteCheckpointer({ path: old });
    try {
      const cp = await upgraded.get("old");
      expect(cp?.messages[0]?.content).toBe("the legacy billing plan");
      expect(cp?.userId).toBeUndefined();
      expect(await upgraded.searchMessages({ userId: "ada", query: "legacy billing" })).toEqual([]);
      await upgraded.put("old", { ...(cp as NonNullable<typeof cp>), userId: "ada" });
      expect((await upgraded.searchMessages({ userId: "ada", query: "legacy billing" })).map((h) => h.threadId)).toEqual(["old"]);
    } finally {
      upgraded.close();
    }
  });
});
