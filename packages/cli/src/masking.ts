/**
 * Credentials the command prints masked: the password of a URL (`http://user:pass@host/v1`, as a
 * `baseUrl`, in a model string's `@http://…` suffix or in an error message) and the API key.
 * @module
 */

/**
 * `scheme:` + slashes + `userinfo@`, written any way a URL parser reads it. WHATWG URLs (what
 * `fetch` uses) take `http:/user:pass@host`, `http:\\user:pass@host` and even
 * `http:user:pass@host` for `http://user:pass@host` (special schemes need no `//`, `\` counts as
 * `/`), and drop tabs and newlines anywhere. So: any scheme followed by at least one slash or
 * backslash, and the special schemes by none; the user information runs to the last `@` before
 * the path.
 */
const GAP = "[\\t\\n\\r]*";
const SLASHES = `${GAP}[/\\\\][/\\\\\\t\\n\\r]*`;
const SCHEME = `[a-z][a-z0-9+.-]*:${SLASHES}|(?:https?|wss?|ftp):`;
const USERINFO = "(?:[^\\s/\\\\?#]|[\\t\\n\\r])*";
const URL_USERINFO = new RegExp(`\\b(${SCHEME})(${USERINFO})@`, "gi");

/**
 * `text` with the credentials of every URL in it masked: `http://user:pass@host/v1` becomes
 * `http://user:***@host/v1`, and a user name alone (often a token: `https://TOKEN@host`) becomes
 * `***`.
 */
export function maskUrlCredentials(text: string): string {
  return text.replace(URL_USERINFO, (_, scheme: string, info: string) => {
    const colon = info.indexOf(":");
    return `${scheme}${colon >= 0 ? `${info.slice(0, colon)}:***` : "***"}@`;
  });
}

/** An API key as printed: its length, and its first three characters (`sk-`) only when the key
 * is long enough for them to give nothing away. */
export function maskApiKey(key: string): string {
  return key.length >= 16 ? `${key.slice(0, 3)}…(${key.length} chars)` : `***(${key.length} chars)`;
}
