/**
 * The one error family: every error Engram throws is an {@link EngramError} with a stable
 * `code`, so callers can write `if (e instanceof EngramError && e.code === "conflict")` — or
 * `EngramError.hasCode(e, "conflict")`, which also holds for another copy of the package.
 * Subclasses exist where callers branch on the kind of failure (configuration, resume, model).
 * Operations on files never throw: they return the same codes as `{ error }` data.
 * @module
 */
import type { ErrorCode, ErrorData } from "./core/types.js";

/** Pinned {@link ModelError} codes. */
export type ModelErrorCode =
  /** The provider answered something that is not a valid response (bad JSON, no choices, a truncated stream). */
  | "bad_response"
  /** The request failed with an HTTP status outside the classes below (see {@link ModelError.status}). */
  | "http_error"
  /** The request's `signal` fired. */
  | "aborted"
  /** A {@link FakeChatModel} was called more often than it has scripted turns. */
  | "script_exhausted"
  /** A model string names an unknown provider, is malformed, or its provider package is not installed. */
  | "unknown_provider"
  /** HTTP 429 or a provider's rate-limit error; retried (honouring `Retry-After`, see {@link ModelError.retryAfterMs}). */
  | "rate_limited"
  /** HTTP 401/403: the key is missing, wrong or lacks permission. Not retried. */
  | "auth"
  /** The request does not fit the model's context window (a 400 that says so). Not retried. */
  | "context_length"
  /** Any other 4xx: the provider rejected the request (unknown model, bad parameter). Not retried. */
  | "bad_request"
  /** HTTP 5xx or a provider's server/overloaded error; retried. */
  | "server"
  /** No connection, a reset or refused connection, or a stream cut by the network; retried. */
  | "network"
  /** No answer within the model's `timeoutMs` (or HTTP 408); retried. */
  | "timeout"
  /** The reply hit the output-token limit (`finishReason: "length"`) and the caller treats that as an error. */
  | "truncated";

/** Every code an {@link EngramError} can carry. */
export type EngramErrorCode =
  /** The codes backends return as data (DESIGN §4). */
  | ErrorCode
  /** Neither core could be loaded, or `ENGRAM_CORE` names one that cannot. */
  | "core_unavailable"
  /** An option of `createDeepAgent` (or of another constructor) is invalid: {@link ConfigError}. */
  | "invalid_config"
  /** A resume does not fit the thread: {@link ResumeError}. */
  | "invalid_resume"
  /** An argument of the wrong type or shape (a store key with NUL, a non-JSON value, `write(123)`). */
  | "invalid_argument"
  /** The model's final answer did not match the agent's `responseFormat`, even after it was
   * shown the validation errors once. */
  | "invalid_response"
  /** A store or checkpointer failed: the database is unreachable, its schema or a checkpoint is
   * newer than this version understands, or a stored record is damaged. */
  | "store_error"
  /** A model call failed: {@link ModelError}. */
  | ModelErrorCode;

/** Marks the family on every copy of the package (a registered symbol is the same in all). */
const FAMILY = Symbol.for("engram.EngramError");

/** The base of every error Engram throws. */
export class EngramError extends Error {
  override readonly name: string = "EngramError";
  constructor(
    /** Stable; see {@link EngramErrorCode}. */
    readonly code: EngramErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** The one mapping from an error the core returned as data to a thrown error. */
  static fromCore(error: ErrorData): EngramError {
    return new EngramError(error.code, error.message);
  }

  /**
   * Whether `e` is an Engram error with this `code`, by a mark every copy of the package sets:
   * an error from another copy (a store or checkpointer resolved against its own `engram`)
   * counts too, where `instanceof` would miss it.
   */
  static hasCode(e: unknown, code: EngramErrorCode): e is EngramError {
    return (
      typeof e === "object" && e !== null && (e as Record<symbol, unknown>)[FAMILY] === true && (e as { code?: unknown }).code === code
    );
  }
}
Object.defineProperty(EngramError.prototype, FAMILY, { value: true });

/** Thrown by `createDeepAgent` (and other constructors) for an invalid option. */
export class ConfigError extends EngramError {
  override readonly name: string = "ConfigError";
  declare readonly code: "invalid_config";
  constructor(
    /** The option at fault, as a path (`interruptOn.write_file`). */
    readonly option: string,
    message: string,
  ) {
    super("invalid_config", `${option}: ${message}`);
  }
}

/** Thrown by `invoke`/`stream` for a resume that does not fit the thread: no interrupted run,
 * a missing decision, or a decision the tool does not allow. */
export class ResumeError extends EngramError {
  override readonly name: string = "ResumeError";
  declare readonly code: "invalid_resume";
  constructor(message: string, options?: { cause?: unknown }) {
    super("invalid_resume", message, options);
  }
}

/** A model call failed. Thrown (rejected) by every `ChatModel` method. */
export class ModelError extends EngramError {
  override readonly name: string = "ModelError";
  declare readonly code: ModelErrorCode;
  /** The HTTP status, for errors that came with one (`auth`, `rate_limited`, `server`, …). */
  readonly status?: number;
  /** How long the provider asked to wait before retrying (`Retry-After`), in ms, when it said. */
  readonly retryAfterMs?: number;
  constructor(code: ModelErrorCode, message: string, options: { status?: number; retryAfterMs?: number; cause?: unknown } = {}) {
    super(code, message, options.cause === undefined ? undefined : { cause: options.cause });
    if (options.status !== undefined) this.status = options.status;
    if (options.retryAfterMs !== undefined) this.retryAfterMs = options.retryAfterMs;
  }
}
