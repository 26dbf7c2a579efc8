import type { ErrorCode, ErrorData } from "./core/types.js";

/**
 * Thrown for misuse (invalid configuration, a core that cannot be loaded). Operations on
 * files never throw: they return `{ error }` data instead.
 */
export class EngramError extends Error {
  override readonly name: string = "EngramError";
  constructor(
    /** One of the pinned {@link ErrorCode}s, or `"core_unavailable"`. */
    readonly code: ErrorCode | "core_unavailable",
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** Rebuilds an error from the `{ error: { code, message } }` JSON text a core threw. */
  static fromCoreText(text: string): EngramError {
    try {
      const { error } = JSON.parse(text) as { error: ErrorData };
      return new EngramError(error.code, error.message);
    } catch {
      return new EngramError("unsupported", text);
    }
  }
}
