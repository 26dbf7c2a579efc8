/**
 * Stops a model that keeps making the same failing call: small local models can loop on one
 * failing call until the conversation outgrows the model. A call is the same when its tool and
 * its arguments (as JSON, keys in any order) are. After `limit` failures of one call with no
 * successful call in between, the model is told firmly not to repeat it; the next time it asks
 * for that call anyway, the level stops (`stopReason: "repeated_tool_failure"`).
 * @module
 */
import type { Message, ToolCall } from "../models/types.js";

/** JSON of the call with object keys sorted, so that key order does not make two calls differ. */
function signature(call: ToolCall): string {
  const sorted = (_key: string, value: unknown) =>
    value !== null && typeof value === "object" && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : value;
  return JSON.stringify([call.name, call.args], sorted);
}

/** Failures of each call since the last call that succeeded, for one level's run. */
export class RepeatedFailures {
  readonly #failures = new Map<string, number>();

  constructor(readonly limit: number) {}

  /** Whether `call` already failed `limit` times in a row: the level stops instead of running it. */
  exhausted(call: ToolCall): boolean {
    return (this.#failures.get(signature(call)) ?? 0) >= this.limit;
  }

  /** Records the outcome of a call (in the order the model made them); answers the note to add
   * to its result when this failure is the one that reaches the limit. */
  record(call: ToolCall, failed: boolean): string | undefined {
    if (!failed) {
      this.#failures.clear();
      return undefined;
    }
    const key = signature(call);
    const count = (this.#failures.get(key) ?? 0) + 1;
    this.#failures.set(key, count);
    if (count !== this.limit) return undefined;
    return `\n\nThis exact call (${call.name} with these arguments) has now failed ${count} times in a row. Do not make it again: change the arguments, do something else, or answer with what you have. Making the same call again ends your work.`;
  }

  /** The answers to a turn that is not run because `repeated`, one of its calls, is exhausted. */
  notRun(calls: ToolCall[], repeated: ToolCall): Message[] {
    return calls.map((call) => ({
      role: "tool",
      toolCallId: call.id,
      content:
        call === repeated
          ? `Error: not run: ${call.name} failed ${this.limit} times in a row with these arguments; the run stopped.`
          : "Error: not run: the run stopped on a repeated failing call.",
    }));
  }
}
