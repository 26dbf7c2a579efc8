/**
 * The argument checks every backend makes before any work: a call a program gets wrong (an
 * argument of the wrong type) rejects with an `invalid_argument` {@link EngramError} and changes
 * nothing (see {@link Backend}).
 * @module
 */
import { EngramError } from "../errors.js";
import type { Backend } from "./protocol.js";

function described(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : typeof value;
}

/** Throws `invalid_argument` unless `content` is a string or a `Uint8Array`. */
export function requireContent(content: unknown): asserts content is string | Uint8Array {
  if (typeof content !== "string" && !(content instanceof Uint8Array)) {
    throw new EngramError("invalid_argument", `content must be a string or a Uint8Array, got ${described(content)}`);
  }
}

/** The methods every backend has (the optional ones aside). */
const METHODS = ["ls", "read", "readBytes", "write", "edit", "grep", "glob", "delete", "stat"] as const;

/** Throws `invalid_argument` unless `value` has every method of a {@link Backend}. */
export function requireBackend(value: unknown, what: string): asserts value is Backend {
  if (typeof value !== "object" || value === null) {
    throw new EngramError("invalid_argument", `${what} must be a backend, got ${described(value)}`);
  }
  const missing = METHODS.filter((m) => typeof (value as Record<string, unknown>)[m] !== "function");
  if (missing.length > 0) {
    throw new EngramError("invalid_argument", `${what} must be a backend, got an object without ${missing.join(", ")}`);
  }
}
