/**
 * The searchable messages of each thread saved with a user, in `engram_thread_messages` with
 * an FTS5 index beside it: a save re-indexes only the messages that changed (a thread mostly
 * grows at its end), a search ranks with FTS5's BM25 and keeps each thread's best message.
 * @module
 */
import { type CheckedSearch, type Message, type MessageSearchHit, queryWords, searchableMessages, snippetAround } from "engram/kit";
import type { SqliteDatabase } from "./database.js";

/** Makes the thread's index rows those of `messages` (none without a user). Call inside the
 * save's transaction. */
export function indexThread(db: SqliteDatabase, threadId: string, userId: string | undefined, messages: readonly Message[]): void {
  const wanted = userId === undefined ? [] : searchableMessages(messages);
  const stored = db
    .prepare("SELECT id, seq, role, user_id, text FROM engram_thread_messages WHERE thread_id = ? ORDER BY seq")
    .all(threadId) as {
    id: number;
    seq: number;
    role: string;
    user_id: string;
    text: string;
  }[];
  const remove = db.prepare("DELETE FROM engram_thread_messages WHERE id = ?");
  const add = db.prepare("INSERT INTO engram_thread_messages (thread_id, user_id, seq, role, text) VALUES (?, ?, ?, ?, ?)");
  const kept = new Set<number>();
  const bySeq = new Map(stored.map((row) => [row.seq, row]));
  for (const m of wanted) {
    const row = bySeq.get(m.index);
    if (row && row.user_id === userId && row.role === m.role && row.text === m.text) kept.add(row.id);
    else add.run(threadId, userId, m.index, m.role, m.text);
  }
  for (const row of stored) if (!kept.has(row.id)) remove.run(row.id);
}

/** Drops the thread's index rows. */
export function unindexThread(db: SqliteDatabase, threadId: string): void {
  db.prepare("DELETE FROM engram_thread_messages WHERE thread_id = ?").run(threadId);
}

/** An FTS5 query matching a message with any of `words` (each a quoted string). */
function anyOf(words: readonly string[]): string {
  return words.map((w) => `"${w.replaceAll('"', '""')}"`).join(" OR ");
}

/** The user's best-matching threads (see `Checkpointer.searchMessages`). */
export function searchIndex(db: SqliteDatabase, search: CheckedSearch): MessageSearchHit[] {
  const words = queryWords(search.query);
  if (words.length === 0) return [];
  // FTS5's ranking cannot run inside an aggregate: the matches are ranked first, then each
  // thread keeps its best (SQLite takes the bare columns from the row of `min`).
  const rows = db
    .prepare(
      "WITH hits AS MATERIALIZED (SELECT rowid AS id, bm25(engram_message_search) AS score FROM engram_message_search WHERE engram_message_search MATCH ?) " +
        "SELECT m.thread_id, m.seq, m.role, m.text, min(h.score) AS score, c.saved_at FROM hits h " +
        "JOIN engram_thread_messages m ON m.id = h.id JOIN engram_checkpoints c ON c.thread_id = m.thread_id " +
        "WHERE m.user_id = ? AND m.thread_id <> ? GROUP BY m.thread_id ORDER BY score, c.saved_at DESC, m.thread_id LIMIT ?",
    )
    .all(anyOf(words), search.userId, search.excludeThreadId ?? "", search.limit) as {
    thread_id: string;
    seq: number;
    role: "user" | "assistant";
    text: string;
    score: number;
    saved_at: number;
  }[];
  return rows.map((r) => ({
    threadId: r.thread_id,
    savedAt: r.saved_at,
    role: r.role,
    messageIndex: r.seq,
    snippet: snippetAround(r.text, words, search.snippetChars),
    // FTS5's BM25 is lower-better.
    score: -r.score,
  }));
}
