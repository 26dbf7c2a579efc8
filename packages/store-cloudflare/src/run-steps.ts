/**
 * The steps of durable runs in a Durable Object's SQLite storage (see `Checkpointer.putStep`).
 * A run that uses this storage runs inside the object, and an object runs in one place at a
 * time: the object's process is the owner's liveness, so claims are held in its memory.
 * @module
 */
import { type RunStep, checkRunStep, stepConflict } from "engram/kit";
import { type DurableObjectSqlStorage, blobParts, first, joinBlobs, rows, textParts } from "./sql.js";

const DOC = 0;
const FILES = 1;

/** Stores `step` (a second step with the same run and `seq` is a `conflict`). */
export function putRunStep(storage: DurableObjectSqlStorage, threadId: string, step: RunStep): void {
  const s = checkRunStep(step);
  const { sql } = storage;
  storage.transactionSync(() => {
    if (first(sql, "SELECT 1 AS found FROM engram_run_steps WHERE thread_id = ? AND run_id = ? AND seq = ?", threadId, s.runId, s.seq)) {
      throw stepConflict(threadId, s.runId, s.seq);
    }
    sql.exec(
      "INSERT INTO engram_run_steps (thread_id, run_id, seq, base_revision, saved_at, has_files) VALUES (?, ?, ?, ?, ?, ?)",
      threadId,
      s.runId,
      s.seq,
      s.baseRevision,
      s.savedAt,
      s.files ? 1 : 0,
    );
    const addPart = (kind: number, part: number, text: string | null, bytes: ArrayBuffer | null) =>
      sql.exec(
        "INSERT INTO engram_run_step_parts (thread_id, run_id, seq, kind, part, text, bytes) VALUES (?, ?, ?, ?, ?, ?, ?)",
        threadId,
        s.runId,
        s.seq,
        kind,
        part,
        text,
        bytes,
      );
    for (const [part, text] of textParts(s.doc).entries()) addPart(DOC, part, text, null);
    if (s.files) for (const [part, bytes] of blobParts(s.files).entries()) addPart(FILES, part, null, bytes);
  });
}

/** The thread's steps, by run and `seq`. */
export function getRunSteps(storage: DurableObjectSqlStorage, threadId: string): RunStep[] {
  const { sql } = storage;
  const heads = rows<{ run_id: string; seq: number; base_revision: number; saved_at: number; has_files: number }>(
    sql,
    "SELECT run_id, seq, base_revision, saved_at, has_files FROM engram_run_steps WHERE thread_id = ? ORDER BY run_id, seq",
    threadId,
  );
  const parts = new Map<string, { doc: string[]; files: ArrayBuffer[] }>();
  for (const r of rows<{ run_id: string; seq: number; kind: number; text: string | null; bytes: ArrayBuffer | null }>(
    sql,
    "SELECT run_id, seq, kind, text, bytes FROM engram_run_step_parts WHERE thread_id = ? ORDER BY run_id, seq, kind, part",
    threadId,
  )) {
    const key = `${r.run_id}\u0000${r.seq}`;
    const entry = parts.get(key) ?? { doc: [], files: [] };
    if (r.kind === DOC) entry.doc.push(r.text ?? "");
    else entry.files.push(r.bytes ?? new ArrayBuffer(0));
    parts.set(key, entry);
  }
  return heads.map((h) => {
    const p = parts.get(`${h.run_id}\u0000${h.seq}`) ?? { doc: [], files: [] };
    return {
      runId: h.run_id,
      seq: h.seq,
      baseRevision: h.base_revision,
      savedAt: h.saved_at,
      doc: p.doc.join(""),
      ...(h.has_files === 1 && { files: joinBlobs(p.files) }),
    };
  });
}

/** Drops one run's steps, or every step of the thread (`runId` undefined). Call inside a
 * transaction when it goes with other writes. */
export function deleteRunSteps(storage: DurableObjectSqlStorage, threadId: string, runId?: string): void {
  for (const table of ["engram_run_steps", "engram_run_step_parts"]) {
    if (runId === undefined) storage.sql.exec(`DELETE FROM ${table} WHERE thread_id = ?`, threadId);
    else storage.sql.exec(`DELETE FROM ${table} WHERE thread_id = ? AND run_id = ?`, threadId, runId);
  }
}
