/**
 * Secret redaction: long-term memory never stores credentials. Every text that can reach a
 * stored document — facts, summaries, correction notes — passes through {@link redactSecrets}
 * before it is saved, and conversations are redacted before the updater's model sees them.
 *
 * The rules live in the Rust core (`engram_core::redact`), so native and edge builds redact
 * exactly the same way; this module is their synchronous TypeScript face.
 * @module
 */
import { requireString } from "../../core/binding.js";
import { loadedCore } from "../../core/loader.js";

/** What a redacted secret is replaced with. */
export const REDACTED = "[REDACTED]";

/** `text` with every recognised secret replaced by {@link REDACTED}, labels kept
 * (`API key: [REDACTED]`): API keys and tokens of about 150 providers (OpenAI, Anthropic, AWS,
 * Google, GitHub, GitLab, Slack, Stripe, npm, SendGrid, Azure, Vault, DigitalOcean, Telegram,
 * …), private key blocks, JWTs, credentials in URLs and authorization headers, secret-like
 * assignments (`password=…`, `"api_key": "…"`, `.env` lines such as `STRIPE_KEY=…`), passwords
 * and passphrases stated in prose (also in Chinese), and random-looking tokens next to a secret
 * word. Idempotent.
 *
 * Synchronous: it uses the core {@link loadCore} loaded (in Node it loads the native addon itself
 * when needed). Throws {@link EngramError} `core_unavailable` on edge runtimes before
 * `loadCore()` has resolved, and `invalid_argument` when `text` is not a string. */
export function redactSecrets(text: string): string {
  requireString(text, "redactSecrets: text");
  return loadedCore().redactSecrets(text).text;
}

/** True when {@link redactSecrets} would change `text`. */
export function containsSecret(text: string): boolean {
  requireString(text, "containsSecret: text");
  return loadedCore().redactSecrets(text).count > 0;
}
