/**
 * The exit codes of the `engram` command, apart from the rest of `exit.ts` so that `--help`
 * and `--version` answer without loading the library.
 * @module
 */

/** Exit codes (also listed by `engram run --help`). */
export const EXIT = {
  /** The run finished (`stopReason: "done"`), or the command succeeded. */
  ok: 0,
  /** The run failed: a model, store or tool error. */
  error: 1,
  /** Bad usage or configuration: unknown flag, invalid value, no model configured. */
  usage: 2,
  /** The run hit `maxTurns`. */
  maxTurns: 3,
  /** The run hit its model-call budget. */
  maxModelCalls: 4,
  /** The run waits for a human review (rerun with `--yes` / `--deny`, or `engram threads resume`). */
  interrupted: 5,
  /** The model hit its output limit. */
  truncated: 6,
  /** Cancelled by Ctrl-C / SIGINT (128 + 2). */
  cancelled: 130,
} as const;
