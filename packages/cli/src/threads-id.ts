/**
 * Thread ids the command creates: sortable by time, short enough to type.
 * @module
 */
import { randomBytes } from "node:crypto";
import { checkThreadId, validateNamespace } from "engram";

/** `t-20250101-120000-a1b2c3` (UTC time, then 6 random hex digits). */
export function newThreadId(now: Date = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  return `t-${stamp}-${randomBytes(3).toString("hex")}`;
}

/** Why `id` (a `--thread` value) cannot name a thread of the command, whose files live in a
 * store namespace of their own; `undefined` when it can (or is not given). */
export function threadIdProblem(id: string | undefined): string | undefined {
  if (id === undefined) return undefined;
  try {
    checkThreadId(id);
    validateNamespace(["engram", "threads", id, "files"]);
    return undefined;
  } catch (e) {
    return `--thread: ${(e as Error).message}`;
  }
}
