/**
 * One classification of model failures, used by every adapter, before and during a stream:
 * an HTTP status (plus the provider's error text), a provider's in-band error object, or a
 * thrown transport error becomes a {@link ModelError} with one of the pinned codes.
 * @module
 */
import { isPlainObject } from "./normalize.js";
import { ModelError, type ModelErrorCode } from "./types.js";

/** Provider messages that mean "the prompt does not fit the context window". */
const CONTEXT_LENGTH =
  /context[_ -]?(length|window|size)|maximum context|prompt is too long|too many (input )?tokens|input is too long|reduce the length|exceeds? the (available |maximum )?context|n_ctx/i;

/** True when a provider's error text says the request does not fit the context window. */
export function isContextLengthMessage(text: string): boolean {
  return CONTEXT_LENGTH.test(text);
}

/**
 * The code of an HTTP error status: 401/403 `auth`, 408 `timeout`, 429 `rate_limited`, a 4xx
 * whose text is about the context window `context_length`, other 4xx `bad_request`, 5xx
 * `server`, anything else `http_error`.
 */
export function codeForStatus(status: number, text = ""): ModelErrorCode {
  if (status === 401 || status === 403) return "auth";
  if (status === 408) return "timeout";
  if (status === 429) return "rate_limited";
  if (status >= 400 && status < 500) return isContextLengthMessage(text) ? "context_length" : "bad_request";
  if (status >= 500 && status < 600) return "server";
  return "http_error";
}

/**
 * `Retry-After` in ms: delta-seconds (`"3"`, `"1.5"`) or an HTTP date (a past date gives 0);
 * `undefined` when absent or unreadable. Also reads `retry-after-ms` (OpenAI) when given.
 */
export function parseRetryAfter(value: string | null | undefined, valueMs?: string | null, now = Date.now()): number | undefined {
  if (valueMs != null && valueMs.trim() !== "") {
    const ms = Number(valueMs);
    if (Number.isFinite(ms) && ms >= 0) return ms;
  }
  if (value == null || value.trim() === "") return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Reads a header from a `Headers` object or a plain record (any case). */
export function headerValue(headers: unknown, name: string): string | undefined {
  if (!headers) return undefined;
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined;
  if (isPlainObject(headers)) {
    const lower = name.toLowerCase();
    for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === lower && typeof v === "string") return v;
  }
  return undefined;
}

/** The error of an HTTP response with a non-2xx `status`, with `Retry-After` when the headers carry it. */
export function errorFromStatus(status: number, text: string, where: string, headers?: unknown): ModelError {
  const retryAfterMs = parseRetryAfter(headerValue(headers, "retry-after"), headerValue(headers, "retry-after-ms"));
  const detail = excerpt(providerMessage(text)) || `HTTP ${status}`;
  return new ModelError(codeForStatus(status, text), `HTTP ${status} from ${where}: ${detail}`, {
    status,
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
  });
}

/**
 * The error of an in-band error object (`{ error: { message, type, code } }` in a body or a
 * stream chunk): a numeric `code`/`status` is treated as an HTTP status; else the `type` or
 * `code` words decide (rate limit, context length, auth, overloaded/server); else `server`
 * (a provider failing mid-answer).
 */
export function errorFromWire(raw: unknown, where: string): ModelError {
  const message = describeWireError(raw);
  const obj = isPlainObject(raw) ? raw : {};
  const numeric = [obj.status, obj.code, obj.status_code].find((v) => typeof v === "number") as number | undefined;
  if (numeric !== undefined && numeric >= 400 && numeric < 600) {
    return new ModelError(codeForStatus(numeric, message), `${where} reported an error: ${message}`, { status: numeric });
  }
  const words = [obj.type, obj.code, obj.status].filter((v) => typeof v === "string").join(" ");
  let code: ModelErrorCode = "server";
  if (/rate.?limit|too.?many.?requests|quota/i.test(words)) code = "rate_limited";
  else if (/context|exceed_context_size/i.test(words) || isContextLengthMessage(message)) code = "context_length";
  else if (/auth|permission|api.?key/i.test(words)) code = "auth";
  else if (/invalid.?request|bad.?request|not.?found/i.test(words)) code = "bad_request";
  return new ModelError(code, `${where} reported an error: ${message}`);
}

/** Describes a provider's `error` value for a message. */
export function describeWireError(raw: unknown): string {
  if (isPlainObject(raw) && typeof raw.message === "string") return raw.message;
  if (typeof raw === "string") return raw;
  try {
    return JSON.stringify(raw) ?? String(raw);
  } catch {
    return String(raw);
  }
}

/** Error codes that name a connection that failed or timed out (Node, undici). */
const TIMEOUT_CODES = new Set(["ETIMEDOUT", "UND_ERR_CONNECT_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"]);

/**
 * The error of a thrown transport failure (not an abort): `timeout` for connection or read
 * timeouts, `network` for everything else `fetch` or a body read throws (refused, reset, DNS,
 * "terminated" streams).
 */
export function errorFromTransport(error: unknown, where: string): ModelError {
  if (error instanceof ModelError) return error;
  const codes: string[] = [];
  const messages: string[] = [];
  let e: unknown = error;
  for (let depth = 0; e && depth < 5; depth++) {
    if (isPlainObject(e) || e instanceof Error) {
      const rec = e as { code?: unknown; message?: unknown; cause?: unknown };
      if (typeof rec.code === "string") codes.push(rec.code);
      if (typeof rec.message === "string" && rec.message) messages.push(rec.message);
      e = rec.cause;
    } else {
      messages.push(String(e));
      break;
    }
  }
  const code: ModelErrorCode = codes.some((c) => TIMEOUT_CODES.has(c)) ? "timeout" : "network";
  const reason = [...new Set(messages)].join(": ") || String(error);
  const tag = codes.length > 0 ? ` (${codes.join(", ")})` : "";
  return new ModelError(code, `Request to ${where} failed: ${reason}${tag}`, { cause: error });
}

/** Codes worth another attempt: the provider or the network may well answer next time. */
const RETRYABLE: ReadonlySet<ModelErrorCode> = new Set(["rate_limited", "server", "network", "timeout"]);

/** True for `rate_limited`, `server`, `network` and `timeout`. */
export function isRetryable(error: ModelError): boolean {
  return RETRYABLE.has(error.code);
}

/** Longest excerpt of a provider's error text quoted in a message. */
const EXCERPT_CHARS = 300;

/** The provider's message inside an error body (`{ error: { message } }`), else the text. */
function providerMessage(text: string): string {
  try {
    const body: unknown = JSON.parse(text);
    if (isPlainObject(body)) {
      if (body.error !== undefined) return describeWireError(body.error);
      if (typeof body.message === "string") return body.message;
    }
  } catch {
    // Not JSON: quote the text.
  }
  return text;
}

/** The first {@link EXCERPT_CHARS} characters of `text`, whitespace collapsed. */
export function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > EXCERPT_CHARS ? `${flat.slice(0, EXCERPT_CHARS)}…` : flat;
}
