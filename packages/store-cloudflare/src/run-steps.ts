/**
 * The steps of durable runs in a Durable Object's SQLite storage (see `Checkpointer.putStep`).
 * A run that uses this storage runs inside the object, and an object runs in one place at a
 * time: the object's process is the owner's liveness, so claims are held in its memory.
 * @module
 */
import { type HistoryStep, type RunStep, type StepKey, checkRunStep, historyOrder, stepConflict } from "engram/kit";
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

/** Which steps: those under way (`kept_at` unset), or the history points. */
const LIVE = "kept_at IS NULL";
const KEPT = "kept_at IS NOT NULL";

/** The thread's steps under way, by run and `seq`. */
export function getRunSteps(storage: DurableObjectSqlStorage, threadId: string): RunStep[] {
  return readSteps(storage, threadId, LIVE).map(({ keptAt: _, ...step }) => step);
}

/** The thread's history points, in history order. */
export function getHistorySteps(storage: DurableObjectSqlStorage, threadId: string): HistoryStep[] {
  return readSteps(storage, threadId, KEPT).sort(historyOrder);
}

function readSteps(storage: DurableObjectSqlStorage, threadId: string, which: typeof LIVE | typeof KEPT): HistoryStep[] {
  const { sql } = storage;
  const heads = rows<{ run_id: string; seq: number; base_revision: number; saved_at: number; has_files: number; kept_at: number | null }>(
    sql,
    `SELECT run_id, seq, base_revision, saved_at, has_files, kept_at FROM engram_run_steps WHERE thread_id = ? AND ${which} ORDER BY run_id, seq`,
    threadId,
  );
  const parts = new Map<string, { doc: string[]; files: ArrayBuffer[] }>();
  for (const r of rows<{ run_id: string; seq: number; kind: number; text: string | null; bytes: ArrayBuffer | null }>(
    sql,
    "SELECT run_id, seq, kind, text, bytes FROM engram_run_step_parts WHERE thread_id = ? AND (run_id, seq) IN " +
      `(SELECT run_id, seq FROM engram_run_steps WHERE thread_id = ? AND ${which}) ORDER BY run_id, seq, kind, part`,
    threadId,
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
      keptAt: h.kept_at ?? 0,
    };
  });
}

/** Drops one run's steps under way, or every step of the thread under way (`runId`
 * undefined). Call inside a transaction when it goes with other writes. */
export function deleteRunSteps(storage: DurableObjectSqlStorage, threadId: string, runId?: string): void {
  const run = runId === undefined ? "" : " AND run_id = ?";
  const args = runId === undefined ? [threadId] : [threadId, runId];
  storage.sql.exec(
    `DELETE FROM engram_run_step_parts WHERE thread_id = ?${run} AND (run_id, seq) IN (SELECT run_id, seq FROM engram_run_steps WHERE thread_id = ? AND ${LIVE})`,
    ...args,
    threadId,
  );
  storage.sql.exec(`DELETE FROM engram_run_steps WHERE thread_id = ?${run} AND ${LIVE}`, ...args);
}

/** Every step of the thread, history included (a delete of the thread). */
export function dropAllSteps(storage: DurableObjectSqlStorage, threadId: string): void {
  for (const table of ["engram_run_steps", "engram_run_step_parts"]) storage.sql.exec(`DELETE FROM ${table} WHERE thread_id = ?`, threadId);
}

/** In a save: keeps the steps of run `runId` extending `revision` as history points kept at `next`. */
export function keepRunSteps(storage: DurableObjectSqlStorage, threadId: string, runId: string, revision: number, next: number): void {
  storage.sql.exec(
    `UPDATE engram_run_steps SET kept_at = ? WHERE thread_id = ? AND run_id = ? AND base_revision = ? AND ${LIVE}`,
    next,
    threadId,
    runId,
    revision,
  );
}

/** Drops the listed history points. */
export function deleteHistorySteps(storage: DurableObjectSqlStorage, threadId: string, points: readonly StepKey[]): void {
  storage.transactionSync(() => {
    for (const p of points) {
      if (
        !first(
          storage.sql,
          `SELECT 1 AS found FROM engram_run_steps WHERE thread_id = ? AND run_id = ? AND seq = ? AND ${KEPT}`,
          threadId,
          p.runId,
          p.seq,
        )
      )
        continue;
      for (const table of ["engram_run_steps", "engram_run_step_parts"])
        storage.sql.exec(`DELETE FROM ${table} WHERE thread_id = ? AND run_id = ? AND seq = ?`, threadId, p.runId, p.seq);
    }
  });
}
