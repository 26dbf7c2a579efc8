/**
 * Cancellation helpers: every model turns a fired `AbortSignal` into a {@link ModelError} with
 * code `aborted`, whatever the underlying API threw.
 * @module
 */
import { ModelError } from "./types.js";

/** The error a model rejects with once `signal` has fired. */
export function abortedError(signal?: AbortSignal): ModelError {
  const reason: unknown = signal?.reason;
  const detail = reason instanceof Error ? `: ${reason.message}` : typeof reason === "string" ? `: ${reason}` : "";
  return new ModelError("aborted", `The model call was aborted${detail}`, reason === undefined ? {} : { cause: reason });
}

/** Throws {@link abortedError} when `signal` has fired. */
export function throwIfAborted(signal?: AbortSignal): void {
  if (signal?.aborted) throw abortedError(signal);
}

/** True for the errors `fetch`, streams and AI SDK providers throw on abort. */
export function isAbortError(error: unknown): boolean {
  return error instanceof Error && (error.name === "AbortError" || error.name === "TimeoutError");
}

/** Resolves after `ms` milliseconds, or rejects with {@link abortedError} as soon as `signal` fires. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortedError(signal));
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortedError(signal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Settles like `promise`, or rejects with {@link abortedError} as soon as `signal` fires — for
 * providers that do not honour the signal themselves.
 */
export function raceAbort<T>(promise: PromiseLike<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return Promise.resolve(promise);
  if (signal.aborted) return Promise.reject(abortedError(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortedError(signal));
    signal.addEventListener("abort", onAbort, { once: true });
    Promise.resolve(promise).then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}
