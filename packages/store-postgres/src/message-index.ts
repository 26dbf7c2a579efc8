/**
 * The searchable messages of each thread saved with a user, in `engram_thread_messages` with a
 * `tsvector` per message and a GIN index: a save re-indexes only the messages that changed (a
 * thread mostly grows at its end); a search takes the user's messages sharing a word with the
 * query from the index (the best by `ts_rank_cd`, at most {@link MAX_CANDIDATES}) and ranks
 * them with the core's BM25, which weighs rare words over common ones (`ts_rank_cd` does not).
 * @module
 */
import {
  type CheckedSearch,
  type Core,
  type Message,
  type MessageSearchHit,
  queryWords,
  rankCandidates,
  searchableMessages,
} from "engram/kit";
import type pg from "pg";

/** The most messages a search ranks. */
export const MAX_CANDIDATES = 2000;

/** Makes the thread's index rows those of `messages` (none without a user), inside the save's
 * transaction, in one round trip: rows of messages no longer there are deleted, changed ones
 * rewritten, unchanged ones left alone (not written, their tsvector not computed again). `table` is the
 * schema-qualified table name. */
export async function indexThread(
  client: pg.PoolClient,
  table: string,
  threadId: string,
  userId: string | undefined,
  messages: readonly Message[],
): Promise<void> {
  const wanted = userId === undefined ? [] : searchableMessages(messages);
  await client.query(
    `WITH gone AS (DELETE FROM ${table} WHERE thread_id = $1 AND NOT (seq = ANY($3::int[]))) ` +
      `INSERT INTO ${table} AS t (thread_id, user_id, seq, role, text) SELECT $1, $2, w.* FROM unnest($3::int[], $4::text[], $5::text[]) AS w(seq, role, text) ` +
      // Unchanged rows are left out here, not merely skipped by the update: a conflicting row is
      // locked (a write) even when its update does nothing.
      `WHERE NOT EXISTS (SELECT 1 FROM ${table} o WHERE o.thread_id = $1 AND o.seq = w.seq AND o.user_id = $2 AND o.role = w.role AND o.text = w.text) ` +
      "ON CONFLICT (thread_id, seq) DO UPDATE SET user_id = excluded.user_id, role = excluded.role, text = excluded.text",
    [threadId, userId ?? null, wanted.map((m) => m.index), wanted.map((m) => m.role), wanted.map((m) => m.text)],
  );
}

/** A tsquery matching any of `words` (letters and digits only, so quoting cannot break). */
function anyOf(words: readonly string[]): string {
  return words.map((w) => `'${w}'`).join(" | ");
}

/** The user's best-matching threads (see `Checkpointer.searchMessages`). `S.` in the SQL is
 * the schema. */
export async function searchIndex(
  query: <R extends pg.QueryResultRow>(text: string, values: unknown[]) => Promise<pg.QueryResult<R>>,
  schema: string,
  core: Pick<Core, "rankBm25">,
  search: CheckedSearch,
): Promise<MessageSearchHit[]> {
  const words = queryWords(search.query);
  if (words.length === 0) return [];
  const r = await query<{ thread_id: string; seq: number; role: "user" | "assistant"; text: string; saved_at: string }>(
    `SELECT m.thread_id, m.seq, m.role, m.text, c.saved_at FROM ${schema}.engram_thread_messages m ` +
      `JOIN ${schema}.engram_checkpoints c ON c.thread_id = m.thread_id, to_tsquery('simple', $3) q ` +
      "WHERE m.user_id = $1 AND m.thread_id <> $2 AND m.words @@ q ORDER BY ts_rank_cd(m.words, q) DESC LIMIT $4",
    [search.userId, search.excludeThreadId ?? "", anyOf(words), MAX_CANDIDATES],
  );
  return rankCandidates(
    core,
    search,
    r.rows.map((row) => ({
      threadId: row.thread_id,
      savedAt: Number(row.saved_at),
      message: { index: row.seq, role: row.role, text: row.text },
    })),
  );
}
