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

/**
 * The signal of one attempt of a model call: fires when the caller's `signal` does, or when
 * `timeoutMs` pass without {@link AttemptSignal.touch} (an idle timeout: each chunk received
 * restarts it). `timeoutMs` of `0` or `Infinity` means no timeout.
 */
export class AttemptSignal {
  readonly #controller = new AbortController();
  readonly #parent: AbortSignal | undefined;
  readonly #timeoutMs: number;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #timedOut = false;
  readonly #onParentAbort = () => this.#controller.abort(this.#parent?.reason);

  constructor(parent: AbortSignal | undefined, timeoutMs: number) {
    this.#parent = parent;
    this.#timeoutMs = timeoutMs;
    if (parent?.aborted) this.#controller.abort(parent.reason);
    else parent?.addEventListener("abort", this.#onParentAbort, { once: true });
    this.touch();
  }

  /** The signal to pass to `fetch` / the provider. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** True once the timeout fired (and not the caller's signal). */
  get timedOut(): boolean {
    return this.#timedOut && !this.#parent?.aborted;
  }

  /** Restarts the timeout (call on every chunk received). */
  touch(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    if (!(this.#timeoutMs > 0 && Number.isFinite(this.#timeoutMs)) || this.#controller.signal.aborted) return;
    this.#timer = setTimeout(() => {
      this.#timedOut = true;
      const reason = new Error(`No answer within ${this.#timeoutMs} ms`);
      reason.name = "TimeoutError";
      this.#controller.abort(reason);
    }, this.#timeoutMs);
  }

  /** Stops the timer and detaches from the caller's signal. */
  dispose(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#parent?.removeEventListener("abort", this.#onParentAbort);
  }
}
