use super::checks::entropy;
use super::rules::{expand, RULES};
use super::*;
use base64::Engine;

#[test]
fn every_rule_compiles_and_ids_are_unique() {
    let c = compiled();
    assert_eq!(c.rules.len(), RULES.len());
    let mut ids: Vec<&str> = rule_ids().collect();
    ids.sort_unstable();
    let n = ids.len();
    ids.dedup();
    assert_eq!(ids.len(), n, "duplicate rule id");
}

#[test]
fn expansion_keeps_classes_and_bare_digits_apart() {
    assert_eq!(expand(r"[\w-]{3}\d+\b\w"), r"[0-9A-Za-z_-]{3}[0-9]+(?-u:\b)[0-9A-Za-z_]");
    assert_eq!(expand(r"[\d\]]x\.\s"), r"[0-9\]]x\.\s");
}

#[test]
fn labels_are_kept_and_count_reported() {
    let r = redact("API key: sk-proj-AbCdEf0123456789xyzXYZ0123 and password=hunter22");
    assert_eq!(r.text, "API key: [REDACTED] and password=[REDACTED]");
    assert_eq!(r.count, 2);
    assert_eq!(redact(&r.text), Redacted { text: r.text.clone(), count: 0 });
}

#[test]
fn clean_text_is_borrowed_through_unchanged() {
    let r = redact("The user prefers tabs over spaces.");
    assert_eq!((r.text.as_str(), r.count), ("The user prefers tabs over spaces.", 0));
}

const KEY: &str = "sk-proj-A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0U1v2W3x4";

#[test]
fn the_separator_before_a_secret_is_kept() {
    assert_eq!(redact(&format!("key={KEY}")).text, "key=[REDACTED]");
    assert_eq!(redact(&format!("token%3D{KEY}")).text, "token%3D[REDACTED]");
    assert_eq!(redact(&format!("/cb?a=1&token%3D{KEY}&b=2")).text, "/cb?a=1&token%3D[REDACTED]&b=2");
    assert_eq!(redact(&format!("key: {KEY}")).text, "key: [REDACTED]");
    assert_eq!(redact(&format!("Authorization: Bearer {KEY}")).text, "Authorization: Bearer [REDACTED]");
}

#[test]
fn a_redaction_leaves_no_tail_of_the_token() {
    let json = r#"{"k":"sk-proj-A1b2C3d4E5f6\u00417h8I9j0K1l2M3n4O5p6Q7r8S9t0U1v2W3x4"}"#;
    assert_eq!(redact(json).text, r#"{"k":"[REDACTED]"}"#);
    let slash = r#"{"k":"sk-proj-A1b2C3d4E5f6\/7h8I9j0K1l2M3n4O5p6Q7r8S9t0U1v2W3x4\u0022, x"}"#;
    assert_eq!(redact(slash).text, r#"{"k":"[REDACTED]\u0022, x"}"#);
    assert_eq!(redact(&format!("{KEY}\\x41bc9 next")).text, "[REDACTED] next");
    // A fixed-length format followed by more of the token.
    assert_eq!(redact("npm_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5-x9Q2 ok").text, "[REDACTED] ok");
    // Sentence punctuation and the end of a JSON string are not part of the token.
    assert_eq!(redact(&format!("use {KEY}. Then")).text, "use [REDACTED]. Then");
    assert_eq!(redact(&format!(r#"["{KEY}\u0022"]"#)).text, r#"["[REDACTED]\u0022"]"#);
}

#[test]
fn a_key_wrapped_across_lines_is_redacted_whole() {
    let split = "my key is sk-proj-A1b2C3d4E5f6G7h8I\n9j0K1l2M3n4O5p6Q7r8S9t0U1v2W3x4";
    assert_eq!(redact(split).text, "my key is [REDACTED]");
    assert_eq!(redact("ghp_aB3dE5fG7hI9jK1l-\nM3nO5pQ7rS9tU1vW3xY5").text, "[REDACTED]");
    assert_eq!(
        redact("token:\r\nghp_aB3dE5fG7hI9jK1l-\r\nM3nO5pQ7rS9tU1vW3xY5\r\nbye").text,
        "token:\r\n[REDACTED]\r\nbye"
    );
    let three = "sk-proj-A1b2C3d4E5f6G7h8I\n9j0K1l2M3n4O5p\n6Q7r8S9t0U1v2W3x4 done";
    assert_eq!(redact(three).text, "[REDACTED] done");
}

#[test]
fn the_line_after_a_secret_is_not_joined_to_it_when_it_is_prose_or_code() {
    for next in ["The user prefers tabs.", "AWS_S3_BUCKET=x2", "x2 = 5", "retries: 3", "export FOO=1", "- next item"] {
        let text = format!("API key: {KEY}\n{next}");
        assert_eq!(redact(&text).text, format!("API key: [REDACTED]\n{next}"));
    }
    let prose = "We call fetchUserData2\nv2024abc then stop.\nThe configuration\nFile1234 is fine.";
    assert_eq!(redact(prose).text, prose);
}

#[test]
fn password_assignments_are_redacted_and_code_is_not() {
    assert_eq!(redact(r#"pass: "Tr0ub4dor&3xyz""#).text, r#"pass: "[REDACTED]""#);
    assert_eq!(redact("dbPass = Tr0ub4dor&3xyz").text, "dbPass = [REDACTED]");
    assert_eq!(redact("password = hunter2-ish").text, "password = [REDACTED]");
    assert_eq!(redact("password: Tr0ub4dor&3xyz").text, "password: [REDACTED]");
    assert_eq!(redact("/login?password=hunter22&user=bob").text, "/login?password=[REDACTED]&user=bob");
    for code in [
        "password: string",
        "pass: string;",
        "token = getToken()",
        "const pass = getPass(user);",
        "mountain pass: Stelvio",
        "bypass: abc123def",
        "passes: 3",
    ] {
        assert_eq!(redact(code).text, code);
    }
}

#[test]
fn entropy_is_bits_per_byte() {
    assert!(entropy("aaaa") < 0.01);
    assert!((entropy("abcd") - 2.0).abs() < 1e-9);
}

#[test]
fn a_nested_label_is_kept_and_its_value_redacted() {
    assert_eq!(redact("credentials: password: Xk9mP2vQ7w").text, "credentials: password: [REDACTED]");
    assert_eq!(redact("credentials:\n  password: hunter22\n").text, "credentials:\n  password: [REDACTED]\n");
    assert_eq!(redact("auth: {token: Xk9mP2vQ7wZ}").text, "auth: {token: [REDACTED]}");
    // A value that merely ends in a colon is still a value.
    assert_eq!(redact("password: hunter22:").text, "password: [REDACTED]");
}

#[test]
fn a_semicolon_ends_a_value_only_before_the_next_pair() {
    // Connection strings: `;` separates key=value pairs.
    assert_eq!(redact("Server=db;Password=abc;User Id=x").text, "Server=db;Password=[REDACTED];User Id=x");
    assert_eq!(redact("Password=abc;User=x").text, "Password=[REDACTED];User=x");
    // Anywhere else it is part of the secret.
    assert_eq!(redact("password=abc;XYZ").text, "password=[REDACTED]");
    assert_eq!(redact("password=abc;XYZ; next").text, "password=[REDACTED]; next");
    assert_eq!(redact("DB_PASSWORD=abc;XYZ").text, "DB_PASSWORD=[REDACTED]");
    assert_eq!(redact("dbPass = Tr0ub;4dor").text, "dbPass = [REDACTED]");
}

#[test]
fn secrets_named_in_longer_prose_are_redacted() {
    for (text, want) in [
        ("the password for the staging database is Tr0ub4dor", "the password for the staging database is [REDACTED]"),
        ("The password we use for the café wifi is hunter2.", "The password we use for the café wifi is [REDACTED]."),
        ("The token we use for deploys: d3pl0yT0k3n2024", "The token we use for deploys: [REDACTED]"),
        ("the key for the staging bucket is Zx81Qw72Er63", "the key for the staging bucket is [REDACTED]"),
    ] {
        assert_eq!(redact(text).text, want);
    }
    for ordinary in [
        "the password for the staging database is stored in the vault",
        "The token we use for deploys: see the runbook.",
        "The key for the front door is under the mat.",
        "The password hashing algorithm is argon2id.",
    ] {
        assert_eq!(redact(ordinary).text, ordinary);
    }
}

#[test]
fn an_aws_secret_beside_its_key_id_is_redacted() {
    let (id, secret) = ("AKIAZ3MX7QP2RT5WLK8N", "q8Zr3Xk/Jt5Vb2Nw7Pm+Ld4Hs9Gf6Ac1Ye0Uo3Ti");
    for sep in [" ", ",", ":", "\t", "\n", " | "] {
        assert_eq!(redact(&format!("{id}{sep}{secret} ok")).text, "[REDACTED] ok");
    }
}

#[test]
fn an_escaped_or_percent_encoded_webhook_url_is_redacted() {
    let json = r#"{"url":"https:\/\/hooks.slack.com\/services\/T0A1B2C3D\/B0A1B2C3D\/AbCdEfGhIjKlMnOpQrStUvWx"}"#;
    assert_eq!(redact(json).text, r#"{"url":"https:\/\/[REDACTED]"}"#);
    let percent = "https%3A%2F%2Fhooks.slack.com%2Fservices%2FT0A1B2C3D%2FB0A1B2C3D%2FAbCdEfGhIjKlMnOpQrStUvWx&x=1";
    assert_eq!(redact(percent).text, "https%3A%2F%2F[REDACTED]&x=1");
    let nested = r#"{"config": "{\"password\": \"hunter2x\"}"}"#;
    assert_eq!(redact(nested).text, r#"{"config": "{\"password\": \"[REDACTED]\"}"}"#);
}

#[test]
fn zero_width_and_full_width_characters_do_not_hide_a_key() {
    assert_eq!(redact(&format!("use {} now", KEY.replacen("proj", "pro\u{200b}j", 1))).text, "use [REDACTED] now");
    assert_eq!(
        redact(&format!("use {}\u{2060} now", KEY.replacen('-', "\u{feff}-", 2))).text,
        "use [REDACTED]\u{2060} now"
    );
    let full_width: String = KEY.chars().map(|c| char::from_u32(c as u32 + 0xfee0).unwrap()).collect();
    assert_eq!(redact(&format!("use {full_width}\u{3000}now")).text, "use [REDACTED]\u{3000}now");
}

#[test]
fn base64_of_a_key_is_redacted_and_base64_of_prose_is_not() {
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    assert_eq!(redact(&format!("OpenAI: {}", b64(KEY))).text, "OpenAI: [REDACTED]");
    let url_safe = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("token={KEY}"));
    assert_eq!(redact(&format!("{url_safe}.")).text, "[REDACTED].");
    let prose = b64("The user prefers tabs over spaces and short answers.");
    assert_eq!(redact(&format!("data: {prose}")).text, format!("data: {prose}"));
}
