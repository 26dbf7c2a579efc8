/** What a run stops with when its `signal` aborts it. @module */

/** The signal's reason when it is an error, else an `AbortError`. */
export function abortError(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : Object.assign(new Error("the run was aborted"), { name: "AbortError" });
}
