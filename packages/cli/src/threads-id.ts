/**
 * Thread ids the command creates: sortable by time, short enough to type.
 * @module
 */
import { randomBytes } from "node:crypto";

/** `t-20250101-120000-a1b2c3` (UTC time, then 6 random hex digits). */
export function newThreadId(now: Date = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  return `t-${stamp}-${randomBytes(3).toString("hex")}`;
}
