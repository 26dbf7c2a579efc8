/**
 * Exit codes of the `engram` command, one per way a run can end.
 * @module
 */
import { ConfigError, EngramError, type StopReason } from "engram";
import { EXIT } from "./exit-codes.js";
import { maskUrlCredentials } from "./masking.js";

export { EXIT } from "./exit-codes.js";

/** The exit code of a run that ended with `stopReason`. */
export function exitCodeFor(stopReason: StopReason): number {
  switch (stopReason) {
    case "done":
      return EXIT.ok;
    case "max_turns":
      return EXIT.maxTurns;
    case "max_model_calls":
      return EXIT.maxModelCalls;
    case "interrupted":
      return EXIT.interrupted;
    case "truncated":
      return EXIT.truncated;
    case "cancelled":
      return EXIT.cancelled;
    default:
      return EXIT.error;
  }
}

/** The exit code for a thrown error: configuration errors are usage errors. */
export function exitCodeForError(e: unknown): number {
  if (e instanceof ConfigError) return EXIT.usage;
  if (e instanceof EngramError && e.code === "unknown_provider") return EXIT.usage;
  return EXIT.error;
}

/** One line describing an error (`code: message`), the password of any URL in it masked (a
 * request to `http://user:pass@host/v1` that failed names its URL). */
export function describeError(e: unknown): string {
  if (e instanceof ConfigError) return maskUrlCredentials(e.message);
  if (e instanceof EngramError) return maskUrlCredentials(`${e.code}: ${e.message}`);
  return maskUrlCredentials(e instanceof Error ? e.message : String(e));
}

/** Thrown by commands to exit with a code after printing `message`. */
export class ExitError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}
