//! Vetting a candidate value: placeholders, code and ordinary words are not secrets.

use super::rules::Check;
use super::REDACTED;

pub(super) fn accept(check: Check, value: &str, quoted: bool) -> bool {
    match check {
        Check::Always => true,
        Check::Assigned => assigned_value_is_secret(value, quoted),
        Check::Prose => prose_value_is_secret(value, quoted),
        Check::Generated => looks_generated(value),
        Check::Entropy => high_entropy(value),
        Check::Encoded => super::encoded::holds_secret(value),
    }
}

/// Words that follow "password:" or "token =" in docs and code but are not secrets.
#[rustfmt::skip]
const PLACEHOLDERS: &[&str] = &[
    "true", "false", "null", "nil", "none", "undefined", "string", "str", "number", "int", "integer", "bool",
    "boolean", "any", "object", "bytes", "optional", "required", "empty", "unset", "redacted", "hidden", "masked",
    "secret", "password", "token", "changeme", "the", "your", "this", "that", "see", "use", "and", "not", "yes", "no",
    "on", "off", "default", "env", "text", "value", "self", "new", "get", "set", "bearer", "basic", "digest", "await",
    "async", "yield", "typeof", "require", "import", "lambda", "function", "return", "const", "let", "var",
];

/// Code rather than a value: a call, an index, a block, or a dotted identifier path
/// (`cfg.password`, `process.env.API_KEY`).
fn is_code(v: &str) -> bool {
    v.contains(['(', '[', '{']) || (v.contains('.') && v.split('.').all(is_identifier))
}

/// Names that say what a value is rather than being it (`apiKey: apiKey`, `token = authToken`).
const NAMING_WORDS: &[&str] = &["key", "token", "secret", "pass", "pwd", "cred", "auth", "env", "config"];

fn is_identifier(s: &str) -> bool {
    let mut cs = s.chars();
    cs.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_') && cs.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn assigned_value_is_secret(value: &str, quoted: bool) -> bool {
    let v = value.trim();
    if v.is_empty() || (!quoted && v.chars().count() < 3) {
        return false;
    }
    let lower = v.to_ascii_lowercase();
    if PLACEHOLDERS.contains(&lower.as_str()) {
        return false;
    }
    // Variables, templates and expressions: `$X`, `${X}`, `{{ x }}`, `%X%`, `<your-key>`, `f(x)`,
    // masks (`****`), file paths and plain URLs.
    let first = v.chars().next().unwrap_or(' ');
    if v.starts_with(['$', '{', '<', '%', '!', '@', '*', '#', '&', '~'])
        || v.contains(['(', '[', '{'])
        || (!quoted && is_code(v))
        || v.chars().all(|c| c == first)
        || ((v.starts_with('/') || v.starts_with("./") || v.starts_with("../")) && v[1..].contains('/'))
        || ((lower.starts_with("http://") || lower.starts_with("https://")) && !v.contains('@'))
    {
        return false;
    }
    if !quoted {
        // An identifier naming the secret rather than holding it (`token = authToken`), or the
        // label of a nested value (`credentials: password: x`), which is vetted on its own.
        let name = v.strip_suffix(':').unwrap_or(v);
        if is_identifier(name) && NAMING_WORDS.iter().any(|w| lower.contains(w)) {
            return false;
        }
        // A small count (`token: 5`).
        if v.len() < 4 && v.chars().all(|c| c.is_ascii_digit()) {
            return false;
        }
    }
    true
}

/// Ordinary words that follow "the password is …" without being a password.
#[rustfmt::skip]
const PROSE_STOPWORDS: &[&str] = &[
    "a", "an", "the", "not", "no", "now", "still", "also", "too", "very", "being", "been", "in", "on", "at", "to",
    "by", "with", "from", "as", "for", "of", "my", "your", "our", "their", "his", "her", "its", "this", "that",
    "these", "those", "same", "different", "stored", "saved", "kept", "set", "reset", "changed", "required",
    "optional", "needed", "correct", "incorrect", "wrong", "right", "invalid", "valid", "expired", "missing", "empty",
    "weak", "strong", "secure", "insecure", "long", "short", "hidden", "secret", "private", "safe", "encrypted",
    "hashed", "case-sensitive", "unknown", "known", "written", "shown", "sent", "below", "above", "here", "there",
    "fine", "ok", "okay", "locked", "unlocked", "managed", "rotated", "generated", "random", "temporary", "protected",
    "shared", "used", "what", "which", "where", "how", "why", "who", "whatever", "something", "nothing", "anything",
    "one", "mandatory", "enforced", "disabled", "enabled", "so", "and", "or", "but", "if", "when", "then", "about",
    "it", "is", "was", "be", "same", "available", "unavailable", "needed", "asked", "requested", "prompted",
    "entered", "typed", "given", "provided", "updated", "working", "broken",
];

fn prose_value_is_secret(value: &str, quoted: bool) -> bool {
    let v = value.trim();
    if v.is_empty() || v.contains(REDACTED) {
        return false;
    }
    if quoted {
        return true;
    }
    let mut words =
        v.split_whitespace().map(|w| w.trim_matches(|c: char| !c.is_alphanumeric() && c != '-').to_lowercase());
    let first = words.next().unwrap_or_default();
    if first.is_empty() || is_code(v.split_whitespace().next().unwrap_or("")) {
        return false;
    }
    // "is wrong" / "is stored in the vault" are statements; "is correct horse battery" is a
    // passphrase that happens to start with an ordinary word.
    let stop = |w: &str| PROSE_STOPWORDS.contains(&w);
    !(stop(&first) && words.next().is_none_or(|second| stop(&second)))
}

/// True when most of the value is runs of 5+ lower-case letters: words and identifiers
/// (`fetchAccessTokenFromServer`), not random tokens.
pub(super) fn wordy(value: &str) -> bool {
    let mut in_runs = 0usize;
    let mut run = 0usize;
    for c in value.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_lowercase() {
            run += 1;
        } else {
            if run >= 5 {
                in_runs += run;
            }
            run = 0;
        }
    }
    in_runs * 2 > value.len()
}

/// Digits and letters together, or long with both cases, or base64 padding — and not words.
pub(super) fn looks_generated(value: &str) -> bool {
    let v = value.trim_end_matches('=');
    if v.is_empty() || wordy(v) || is_code(v) {
        return false;
    }
    let has = |f: fn(&char) -> bool| v.chars().any(|c| f(&c));
    let letters = has(char::is_ascii_alphabetic);
    let digits = has(char::is_ascii_digit);
    let upper = has(char::is_ascii_uppercase);
    let lower = has(char::is_ascii_lowercase);
    (letters && digits) || (upper && lower && v.len() >= 16) || (value.ends_with('=') && v.len() >= 12)
}

/// Shannon entropy of the bytes, in bits per byte.
pub(super) fn entropy(value: &str) -> f64 {
    let mut counts = [0u32; 256];
    for b in value.bytes() {
        counts[b as usize] += 1;
    }
    let n = value.len() as f64;
    counts.iter().filter(|&&c| c > 0).map(|&c| f64::from(c) / n).map(|p| -p * p.log2()).sum()
}

/// A random-looking token: letters and digits, at least 3.5 bits per character, not a hex
/// digest or UUID (git SHAs, sha256 sums), not an identifier made of words.
fn high_entropy(value: &str) -> bool {
    let letters = value.chars().any(|c| c.is_ascii_alphabetic());
    let digits = value.chars().any(|c| c.is_ascii_digit());
    let hex_or_uuid = value.chars().all(|c| c.is_ascii_hexdigit() || c == '-');
    value.len() >= 20 && letters && digits && !hex_or_uuid && !wordy(value) && entropy(value) >= 3.5
}
