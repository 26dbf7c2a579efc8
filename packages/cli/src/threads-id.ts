/**
 * Thread ids the command creates: sortable by time, short enough to type.
 * @module
 */
import { randomBytes } from "node:crypto";
import { UserThreads } from "./user-threads.js";

/** `t-20250101-120000-a1b2c3` (UTC time, then 6 random hex digits). */
export function newThreadId(now: Date = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  return `t-${stamp}-${randomBytes(3).toString("hex")}`;
}

/** Why `id` (a `--thread` value) cannot name a thread of `user` (see {@link UserThreads.problem});
 * `undefined` when it can (or is not given). */
export function threadIdProblem(id: string | undefined, user: string): string | undefined {
  const problem = id === undefined ? undefined : new UserThreads(user, false).problem(id);
  return problem === undefined ? undefined : `--thread: ${problem}`;
}
