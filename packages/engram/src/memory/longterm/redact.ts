/**
 * Secret redaction: long-term memory never stores credentials. Every text that can reach a
 * stored document — facts, summaries, correction notes — passes through {@link redactSecrets}
 * before it is saved, and conversations are redacted before the updater's model sees them.
 * @module
 */

/** What a redacted secret is replaced with. */
export const REDACTED = "[REDACTED]";

/** Whole-match secrets: the match is replaced by {@link REDACTED}. */
const TOKENS: readonly RegExp[] = [
  // PEM private keys, including one cut off before its END line.
  /-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|$)/g,
  // JSON Web Tokens: base64url header (always `{"…` → `eyJ`), payload, signature.
  /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}/g,
  // OpenAI, Anthropic and similar `sk-…` keys.
  /\bsk-[A-Za-z0-9][A-Za-z0-9_-]{15,}/g,
  // Stripe-style live/test keys.
  /\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,}/g,
  // AWS access key ids.
  /\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA)[A-Z0-9]{16}\b/g,
  // GitHub tokens (classic and fine-grained).
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g,
  /\bgithub_pat_[A-Za-z0-9_]{20,}/g,
  // GitLab personal access tokens.
  /\bglpat-[A-Za-z0-9_-]{20,}/g,
  // Slack tokens and incoming webhooks.
  /\bxox[abposre]-[A-Za-z0-9-]{10,}/g,
  /https:\/\/hooks\.slack\.com\/services\/[A-Za-z0-9/_-]+/g,
  // Google API keys.
  /\bAIza[A-Za-z0-9_-]{30,}/g,
  // Hugging Face tokens.
  /\bhf_[A-Za-z0-9]{30,}/g,
];

/** Secrets that follow a label: the label is kept, the value replaced. */
const LABELLED: readonly RegExp[] = [
  // HTTP authorization schemes.
  /\b((?:Bearer|Basic|Token)\s+)[A-Za-z0-9\-._~+/]{8,}=*/gi,
  // key = value / key: value / "key": "value", for credential-like keys.
  /\b((?:[A-Za-z0-9]+[_-])*(?:password|passwd|pwd|passphrase|secret|api[_-]?key|apikey|access[_-]?key|secret[_-]?key|access[_-]?token|auth[_-]?token|refresh[_-]?token|client[_-]?secret|private[_-]?key|token|credentials?)["']?\s*[:=]\s*)(?:"[^"\n]*"|'[^'\n]*'|[^\s,;]+)/gi,
  // Prose: "my password is hunter2" (any value)…
  /\b((?:password|passphrase|passcode)\s+(?:is|was)\s+)(?:"[^"\n]*"|'[^'\n]*'|[^\s,;]+)/gi,
  // …"the API key is abc-123456" (only values that look generated, so "the token is expired" stays).
  /\b((?:api key|secret key|access key|access token|auth token|token)\s+(?:is|was)\s+)(?=[^\s,;]*[0-9_-])[^\s,;]{8,}/gi,
  // Chinese: 密码是… / 密码：… / 密钥为… / 令牌: …
  /((?:密码|口令|密钥|秘钥|令牌|私钥|访问令牌)\s*(?:是|为|：|:|=)\s*)[^\s，。,;；]+/g,
  // Credentials inside URLs: scheme://user:password@host
  /\b([a-z][a-z0-9+.-]*:\/\/[^\s/:@]+:)[^\s/@]+(?=@)/gi,
];

/** `text` with every recognised secret replaced by {@link REDACTED}: API keys (`sk-…`, AWS,
 * GitHub, GitLab, Slack, Google, Stripe, Hugging Face), bearer/basic tokens, credential
 * assignments (`password=…`, `api_key: …`, also in prose and Chinese), private key blocks,
 * JWTs and passwords in URLs. Idempotent. */
export function redactSecrets(text: string): string {
  let out = text;
  for (const re of TOKENS) out = out.replace(re, REDACTED);
  for (const re of LABELLED) {
    out = out.replace(re, (match: string, label: string) => {
      const value = match.slice(label.length);
      const quote = value[0] === '"' || value[0] === "'" ? value[0] : "";
      if (value.slice(quote.length).startsWith(REDACTED)) return match; // already redacted
      return `${label}${quote}${REDACTED}${quote}`;
    });
  }
  return out;
}

/** True when {@link redactSecrets} would change `text`. */
export function containsSecret(text: string): boolean {
  return redactSecrets(text) !== text;
}
