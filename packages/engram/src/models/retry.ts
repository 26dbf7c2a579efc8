/**
 * Retries with exponential backoff and jitter, shared by the HTTP and AI SDK adapters: only
 * retryable failures (`rate_limited`, `server`, `network`, `timeout`) are tried again, a
 * provider's `Retry-After` wins over the computed delay, and a stream is never restarted once
 * the caller has seen its output (unless the caller allows it).
 * @module
 */
import { sleep } from "./abort.js";
import { isRetryable } from "./classify.js";
import type { ModelError } from "./types.js";

/** One retry about to happen, for {@link RetryOptions.onRetry}. */
export interface RetryInfo {
  /** 1 for the first retry. */
  attempt: number;
  /** The wait before it, in ms. */
  delayMs: number;
  /** The failure being retried. */
  error: ModelError;
}

/** How a model retries failed calls. */
export interface RetryOptions {
  /** Retries after the first attempt (so at most `maxRetries + 1` requests). `0` disables. Default: `2`. */
  maxRetries?: number;
  /** Base of the exponential backoff: attempt n waits `retryDelayMs × 2^(n-1)`, scaled by a random
   * jitter factor in [0.5, 1]. Default: `500`. */
  retryDelayMs?: number;
  /** Cap on one wait, in ms. A `Retry-After` longer than this is not waited for: the error is
   * thrown at once (its `retryAfterMs` says how long the provider asked for). Default: `60000`. */
  maxRetryDelayMs?: number;
  /** Restart a stream that failed after some of its output reached the caller (the caller then
   * sees the new attempt's output from the start). Default: `false`: such a failure is thrown. */
  retryAfterOutput?: boolean;
  /** Called before each retry's wait. Default: none. */
  onRetry?: (info: RetryInfo) => void;
}

/** {@link RetryOptions} with defaults applied. */
export interface RetryPolicy {
  maxRetries: number;
  retryDelayMs: number;
  maxRetryDelayMs: number;
  retryAfterOutput: boolean;
  onRetry?: (info: RetryInfo) => void;
}

/** Applies the defaults of {@link RetryOptions}. */
export function retryPolicy(options: RetryOptions = {}): RetryPolicy {
  const policy: RetryPolicy = {
    maxRetries: Math.max(0, Math.floor(options.maxRetries ?? 2)),
    retryDelayMs: Math.max(0, options.retryDelayMs ?? 500),
    maxRetryDelayMs: Math.max(0, options.maxRetryDelayMs ?? 60_000),
    retryAfterOutput: options.retryAfterOutput ?? false,
  };
  if (options.onRetry) policy.onRetry = options.onRetry;
  return policy;
}

/**
 * The wait before retry number `attempt` (1-based) after `error`, or `undefined` when it must
 * not be retried (not retryable, retries used up, or a `Retry-After` beyond the cap).
 */
export function retryDelay(error: ModelError, attempt: number, policy: RetryPolicy): number | undefined {
  if (attempt > policy.maxRetries || !isRetryable(error)) return undefined;
  if (error.retryAfterMs !== undefined) return error.retryAfterMs <= policy.maxRetryDelayMs ? error.retryAfterMs : undefined;
  const base = policy.retryDelayMs * 2 ** (attempt - 1);
  return Math.min(policy.maxRetryDelayMs, Math.round(base * (0.5 + Math.random() / 2)));
}

/** Waits before retry `attempt`, or rethrows `error` when it must not be retried. */
export async function backoff(error: ModelError, attempt: number, policy: RetryPolicy, signal?: AbortSignal): Promise<void> {
  const delayMs = retryDelay(error, attempt, policy);
  if (delayMs === undefined) throw error;
  policy.onRetry?.({ attempt, delayMs, error });
  await sleep(delayMs, signal);
}

/** Runs `attempt` until it succeeds or fails with an error that must not be retried. */
export async function withRetries<T>(
  policy: RetryPolicy,
  signal: AbortSignal | undefined,
  attempt: () => Promise<T>,
  toError: (e: unknown) => ModelError,
): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (e) {
      await backoff(toError(e), n, policy, signal);
    }
  }
}

/** Streams `attempt`'s events, restarting it on a retryable failure — but never once the caller
 * has seen output, unless the policy allows it. */
export async function* withStreamRetries<E>(
  policy: RetryPolicy,
  signal: AbortSignal | undefined,
  attempt: () => AsyncIterable<E>,
  toError: (e: unknown) => ModelError,
): AsyncGenerator<E> {
  for (let n = 1; ; n++) {
    let shown = false;
    try {
      for await (const event of attempt()) {
        shown = true;
        yield event;
      }
      return;
    } catch (e) {
      const error = toError(e);
      if (shown && !policy.retryAfterOutput) throw error;
      await backoff(error, n, policy, signal);
    }
  }
}
