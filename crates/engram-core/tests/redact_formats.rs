//! The redactor's format table: one or more positive fixtures per rule (the secret must be
//! replaced exactly, its label kept) and a near-miss negative fixture (nothing may be redacted),
//! plus a false-positive check over ordinary text. Fixture secrets are generated from each
//! format's shape (prefix, alphabet, length), never copied from anywhere.

mod common;

use common::{rows, Encoding, Gen, B64, ENCODINGS, HEX};
use engram_core::redact::{find, redact, rule_ids, REDACTED};
use std::collections::BTreeSet;

#[test]
fn every_format_redacts_its_positive_and_ignores_its_negative() {
    let rows = rows();
    let mut failures = Vec::new();
    for (id, template, secret, negative) in &rows {
        let text = template.replace("{}", secret);
        let expected = template.replace("{}", REDACTED);
        let got = redact(&text);
        if got.text != expected {
            failures.push(format!("{id}: positive\n  in:   {text:?}\n  got:  {:?}\n  want: {expected:?}", got.text));
        }
        if !find(&text).iter().any(|f| f.rule == *id) {
            failures.push(format!("{id}: its own rule did not fire on {text:?}"));
        }
        let neg = find(negative);
        if !neg.is_empty() {
            failures.push(format!("{id}: negative {negative:?} redacted by {:?}", neg));
        }
        assert_eq!(redact(&got.text).text, got.text, "{id}: not idempotent");
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn no_encoding_hides_a_fixture_secret() {
    let mut failures = Vec::new();
    for (id, template, secret, _) in &rows() {
        let text = template.replace("{}", secret);
        for encoding in ENCODINGS {
            // Base64 is decoded where it decodes to ASCII text.
            if matches!(encoding, Encoding::Base64) && !text.is_ascii() {
                continue;
            }
            let encoded = encoding.encode(&text, secret, secret.len());
            let out = redact(&encoded).text;
            if encoding.decode(&out).contains(secret.as_str()) || !out.contains(REDACTED) {
                failures.push(format!("{id} {encoding:?}\n  in:  {encoded:?}\n  out: {out:?}"));
            }
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn every_rule_has_fixtures_and_there_are_at_least_120_formats() {
    let covered: BTreeSet<&str> = rows().iter().map(|r| r.0).collect();
    let all: BTreeSet<&str> = rule_ids().collect();
    let missing: Vec<&&str> = all.difference(&covered).collect();
    assert!(missing.is_empty(), "rules without fixtures: {missing:?}");
    let unknown: Vec<&&str> = covered.difference(&all).collect();
    assert!(unknown.is_empty(), "fixtures for unknown rules: {unknown:?}");
    assert!(all.len() >= 120, "only {} formats", all.len());
    println!("redaction formats: {} rules, {} fixture rows", all.len(), rows().len());
}

/// Ordinary text that must pass untouched: prose, code, identifiers, hashes, encodings, URLs.
fn ordinary_corpus() -> Vec<String> {
    let mut g = Gen(42);
    let mut lines: Vec<String> = [
        "The user prefers tabs over spaces.",
        "the token is expired",
        "max tokens 2000",
        "用户喜欢喝咖啡",
        "sk-learn is a library",
        "We deploy to Cloudflare Workers every Friday afternoon.",
        "The password policy requires twelve characters and a symbol.",
        "Rotate the API key every ninety days; the key is stored in the vault.",
        "My password is not something I share.",
        "The secret to good bread is patience.",
        "Use a bearer token for service-to-service calls.",
        "Basic functionality works out of the box.",
        "The key insight is that caching beats recomputation.",
        "Tokens are counted with a CJK-aware estimator.",
        "She keeps her passwords in a password manager.",
        "Authentication uses OAuth 2.0 with PKCE.",
        "Keyboard shortcuts: Ctrl+K opens the palette.",
        "The primary key of the users table is id.",
        "Remember that Alice likes green tea and dislikes meetings before 10am.",
        "The deploy failed because the token expired at 2024-05-01T10:00:00Z.",
        "Run `npm install --save-dev vitest` to add the test runner.",
        "Der Benutzer bevorzugt dunkles Design.",
        "L'utilisateur préfère le thé vert.",
        "ユーザーはダークモードを好みます。",
        "password reset links expire after one hour",
        "Set the secret in the dashboard, never in code.",
        "const token = await getToken();",
        "const apiKey = process.env.API_KEY;",
        "password: string;",
        "pass: string;",
        "const pass = getPass(user);",
        "The mountain pass: Stelvio, open from June.",
        "bypass: true",
        "token?: string | undefined;",
        "def login(username: str, password: str) -> bool:",
        "if (!secret) throw new Error('missing secret');",
        "let key = map.get(&id).unwrap_or_default();",
        "for key, value in sorted(items.items()):",
        "export const DEFAULT_MAX_OUTPUT_CHARS = 80_000;",
        "max_tokens: 4096",
        "apiKey: apiKey,",
        "auth: true",
        "secret: false",
        "token: null",
        "password = os.environ[\"DB_PASSWORD\"]",
        "api_key = config.get(\"api_key\")",
        "client_secret: ${{ secrets.CLIENT_SECRET }}",
        "token: \"{{ vault_token }}\"",
        "password: \"<your-password>\"",
        "credentials: ~/.aws/credentials",
        "token_url: https://oauth2.googleapis.com/token",
        "keyFile: ./certs/server.key",
        "PRIMARY_KEY_COLUMN=id",
        "DATABASE_HOST=db.internal",
        "NODE_ENV=production",
        "<input type=\"password\" name=\"password\" autocomplete=\"current-password\">",
        "SELECT id, email FROM users WHERE password_hash IS NOT NULL;",
        "git commit -m \"fix: token refresh race\"",
        "Authorization header missing",
        "curl -u admin https://api.example.com/health",
        "ssh git@github.com",
        "The bearer of this letter is a friend.",
        "fetchAccessTokenFromServerWithRetryPolicy(config)",
        "key_press_handler_for_the_main_window_loop",
        "The pin is connected to ground through a resistor.",
        "Tokenizer: byte-level BPE with 50257 merges.",
        "import { redactSecrets } from \"engram\";",
        "README.md CHANGELOG.md package.json tsconfig.json",
        "Error: EACCES: permission denied, open '/etc/shadow'",
        "user@example.com wrote on Tuesday",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for _ in 0..50 {
        lines.push(g.uuid());
        lines.push(format!("commit {}", g.s(HEX, 40)));
        lines.push(format!("sha256: {}", g.s(HEX, 64)));
        lines.push(format!("{}  dist/engram.tgz", g.s(HEX, 64)));
    }
    let words = ["hello world", "the quick brown fox", "memory file", "Engram agent", "green tea", "deploy now"];
    for w in words {
        lines.push(base64(w.as_bytes()));
        lines.push(format!("data: {}", base64(format!("{w} {w} {w}").as_bytes())));
    }
    for path in ["docs/api", "search?q=rust+regex&page=2", "a/b/c.html#top", "v1/users/42", "static/app.3f9a1c.js"] {
        lines.push(format!("https://example.com/{path}"));
        lines.push(format!("see http://localhost:8080/{path} for details"));
    }
    lines
}

fn base64(bytes: &[u8]) -> String {
    let a = B64.as_bytes();
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().fold(0u32, |acc, &b| (acc << 8) | u32::from(b)) << (8 * (3 - chunk.len()));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(a[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[test]
fn ordinary_text_is_left_alone() {
    let corpus = ordinary_corpus();
    let flagged: Vec<(String, Vec<&'static str>)> = corpus
        .iter()
        .filter_map(|line| {
            let f = find(line);
            (!f.is_empty()).then(|| (line.clone(), f.iter().map(|x| x.rule).collect()))
        })
        .collect();
    println!(
        "false positives: {} of {} lines ({:.2}%)",
        flagged.len(),
        corpus.len(),
        100.0 * flagged.len() as f64 / corpus.len() as f64
    );
    assert!(flagged.is_empty(), "false positives: {flagged:#?}");
}
