/**
 * Whether a thread's last run died under way (a crash, a kill, a lost machine): its committed
 * steps wait to be resumed. A run still going in another process is `running`.
 * @module
 */
import type { Checkpointer } from "engram";
import { hasStepOperations, runStatus } from "engram/kit";

/** Where the thread's runs stand (see `runStatus`); undefined when no run is under way or dead,
 * or the checkpointer keeps no steps. */
export async function runState(
  checkpointer: Checkpointer,
  key: string,
  revision: number | undefined,
): Promise<{ state: "interrupted" | "running"; step: number } | undefined> {
  if (!hasStepOperations(checkpointer)) return undefined;
  return runStatus(checkpointer, key, revision);
}

/** The line that tells the user about it. */
export function runStateNote(run: { state: "interrupted" | "running"; step: number }): string {
  return run.state === "interrupted"
    ? `interrupted at step ${run.step} (its process ended)`
    : `a run is under way in another process (step ${run.step})`;
}
