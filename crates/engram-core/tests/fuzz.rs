//! Property tests at scale over hostile input: path normalisation, glob, edit, regex grep and the
//! redactor. `PROPTEST_CASES` sets the number of cases per property (default 256);
//! `scripts/test.sh` runs a larger bounded pass in release mode.

mod common;

use engram_core::edit::edit;
use engram_core::glob::{Glob, PathFilter};
use engram_core::grep::{GrepOptions, Matcher, MAX_COUNT};
use engram_core::path::{normalize, MAX_PATH_BYTES, MAX_PATH_COMPONENTS};
use engram_core::redact::{redact, REDACTED};
use engram_core::table::FileTable;
use engram_core::ErrorCode;
use proptest::prelude::*;
use std::sync::OnceLock;

fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(256);
    ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() }
}

/// Path-ish strings: separators, dots, `~`, backslashes, NUL, drive letters, long runs, Unicode.
fn hostile_path() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("/".to_string()),
        Just("..".to_string()),
        Just(".".to_string()),
        Just("~".to_string()),
        Just("\\".to_string()),
        Just("\0".to_string()),
        Just("C:".to_string()),
        Just("%2e%2e".to_string()),
        Just("\u{202e}".to_string()),
        "[a-z]{1,3}",
        "\\PC{1,4}",
        (1usize..40).prop_map(|n| "a/".repeat(n * 10)),
    ];
    prop::collection::vec(piece, 0..40).prop_map(|v| v.concat())
}

/// Glob-ish strings built from metacharacters and names.
fn hostile_glob() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("*".to_string()),
        Just("**".to_string()),
        Just("?".to_string()),
        Just("[".to_string()),
        Just("]".to_string()),
        Just("[!a-z]".to_string()),
        Just("{".to_string()),
        Just("}".to_string()),
        Just(",".to_string()),
        Just("/".to_string()),
        Just("\\".to_string()),
        Just("..".to_string()),
        "[a-z.]{1,4}",
        "\\PC{1,3}",
    ];
    prop::collection::vec(piece, 0..24).prop_map(|v| v.concat())
}

/// Globs and paths from the same few pieces, so they often match: the shapes matched directly
/// (`**/*.ts`, `*.ts`, `**/name`, literals), those `globset` matches without a regex
/// (extensions, prefixes, suffixes) and those it cannot.
fn glob_like() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("**/*"),
        Just("**/"),
        Just("é"),
        Just("*"),
        Just("**"),
        Just("?"),
        Just("/"),
        Just("."),
        Just(".ts"),
        Just("a"),
        Just("src"),
        Just("{a,b}"),
        Just("*.{ts,md}"),
        Just("[ab]"),
        Just("[!a]"),
        Just("\\*"),
    ];
    prop::collection::vec(piece, 0..8).prop_map(|v| v.concat())
}

/// Relative normalised paths: no empty, `.` or `..` segment (a bare `..` is where a glob set
/// and the glob's regex disagree; no normalised path has one).
fn path_like() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("a"),
        Just("b"),
        Just("src"),
        Just(".ts"),
        Just(".md"),
        Just("/"),
        Just("*"),
        Just("."),
        Just("é")
    ];
    prop::collection::vec(piece, 1..8)
        .prop_map(|v| v.concat())
        .prop_filter("normalised", |p| !p.split('/').any(|s| s.is_empty() || s == "." || s == ".."))
}

fn positive_secrets() -> &'static Vec<String> {
    static SECRETS: OnceLock<Vec<String>> = OnceLock::new();
    SECRETS.get_or_init(|| common::rows().into_iter().map(|r| r.1.replace("{}", &r.2)).collect())
}

/// The secret text of each fixture (what must never survive redaction).
fn secret_values() -> &'static Vec<String> {
    static SECRETS: OnceLock<Vec<String>> = OnceLock::new();
    SECRETS.get_or_init(|| common::rows().into_iter().map(|r| r.2).collect())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn normalised_paths_never_escape_and_are_canonical(input in hostile_path()) {
        match normalize(&input) {
            Ok(p) => {
                prop_assert!(p.starts_with('/'));
                prop_assert!(p.split('/').skip(1).all(|s| p == "/" || (!s.is_empty() && s != "." && s != "..")));
                prop_assert!(!p.contains('\0') && !p.contains('\\'));
                prop_assert!(p.len() <= MAX_PATH_BYTES + 1);
                prop_assert!(p.split('/').filter(|s| !s.is_empty()).count() <= MAX_PATH_COMPONENTS);
                prop_assert_eq!(normalize(&p).unwrap(), p);
            }
            Err(e) => prop_assert!(matches!(e.code, ErrorCode::InvalidPath | ErrorCode::PathEscape)),
        }
    }

    #[test]
    fn globs_compile_or_refuse_and_never_panic(pattern in hostile_glob(), path in hostile_path()) {
        if let Ok(g) = Glob::new(&pattern, "/") {
            if let Ok(p) = normalize(&path) {
                let _ = g.is_match(&p, "/");
                prop_assert!(p.starts_with(g.base()) || !g.is_match(&p, "/"));
            }
        }
        if let Ok(f) = PathFilter::new(&pattern) {
            let _ = f.is_match(path.trim_start_matches('/'));
        }
    }

    #[test]
    fn glob_filters_match_as_the_glob_regex_does(pattern in glob_like(), rel in path_like()) {
        let body = pattern.trim_start_matches('/');
        let regex = globset::GlobBuilder::new(body).literal_separator(true).backslash_escape(true).build();
        match (PathFilter::new(&pattern), regex) {
            (Ok(f), Ok(g)) => {
                let m = g.compile_matcher();
                let subject = if pattern.contains('/') { rel.as_str() } else { rel.rsplit('/').next().unwrap_or("") };
                prop_assert_eq!(f.is_match(&rel), m.is_match(subject), "{:?} on {:?}", pattern, rel);
            }
            (f, g) => prop_assert_eq!(f.is_ok(), g.is_ok()),
        }
    }

    #[test]
    fn globs_match_as_the_glob_regex_does(pattern in glob_like(), rel in path_like()) {
        let body = pattern.trim_start_matches('/');
        let regex = globset::GlobBuilder::new(body).literal_separator(true).backslash_escape(true).build();
        match (Glob::new(&pattern, "/"), regex) {
            (Ok(g), Ok(r)) => {
                let full = format!("/{rel}");
                prop_assert_eq!(g.is_match(&full, "/"), r.compile_matcher().is_match(&rel), "{:?} on {:?}", pattern, rel);
            }
            (g, r) => prop_assert_eq!(g.is_ok(), r.is_ok() && !pattern.is_empty(), "{:?}", pattern),
        }
    }

    #[test]
    fn edit_replaces_exactly_and_preserves_the_rest(
        data in "[ab\\n]{0,60}",
        old in "[ab]{1,3}",
        new in "[xyz\\n]{0,4}",
        all in any::<bool>(),
    ) {
        let occurrences = data.matches(&old).count();
        match edit("/f", data.as_bytes(), &old, &new, all) {
            Ok((out, n)) => {
                prop_assert!(occurrences == 1 || (all && occurrences > 0));
                prop_assert_eq!(n, occurrences);
                // Everything between occurrences is kept, in order.
                let pieces: Vec<&str> = data.split(old.as_str()).collect();
                prop_assert_eq!(String::from_utf8(out).unwrap(), pieces.join(&new));
            }
            Err(e) => {
                let expected = if occurrences == 0 { ErrorCode::StringNotFound } else { ErrorCode::MultipleMatches };
                prop_assert_eq!(e.code, expected);
            }
        }
    }

    #[test]
    fn edit_keeps_crlf_files_crlf(lines in prop::collection::vec("[a-c]{1,4}", 1..8), pick in any::<prop::sample::Index>()) {
        let data = lines.iter().map(|l| format!("{l}\r\n")).collect::<String>();
        let old = &lines[pick.index(lines.len())];
        if let Ok((out, _)) = edit("/f", data.as_bytes(), &format!("{old}\n"), "new\nline\n", true) {
            let text = String::from_utf8(out).unwrap();
            prop_assert!(!text.replace("\r\n", "").contains('\n'), "bare LF in {:?}", text);
        }
    }

    #[test]
    fn hostile_regexes_compile_or_refuse(pattern in "[a-z.()|*+?{}0-9,\\[\\]\\\\^$]{0,40}") {
        // Never a panic, and a refusal is always invalid_pattern.
        if let Err(e) = Matcher::new(&pattern, true, false) {
            prop_assert_eq!(e.code, ErrorCode::InvalidPattern);
        }
    }

    #[test]
    fn grep_never_returns_more_than_the_ceiling(lines in 1usize..400, max in prop::option::of(0usize..usize::MAX)) {
        let mut t = FileTable::new();
        t.write("/a.txt", "x\n".repeat(lines).into_bytes(), 0.0, None).unwrap();
        let r = t.grep(&GrepOptions { pattern: "x".into(), max_count: max, ..Default::default() }).unwrap();
        let n = r.matches.unwrap().len();
        prop_assert!(n <= MAX_COUNT && n <= max.unwrap_or(usize::MAX));
    }

    #[test]
    fn redacted_text_holds_no_fixture_secret_and_is_idempotent(
        noise in prop::collection::vec("\\PC{0,12}", 1..6),
        picks in prop::collection::vec(any::<prop::sample::Index>(), 1..4),
        seps in prop::collection::vec(prop_oneof![Just(" "), Just("\n"), Just(", "), Just(" and "), Just("\t")], 6),
    ) {
        let all = positive_secrets();
        let values = secret_values();
        let mut text = String::new();
        let mut planted = Vec::new();
        for (i, n) in noise.iter().enumerate() {
            text.push_str(n);
            text.push_str(seps[i % seps.len()]);
            if let Some(p) = picks.get(i) {
                let k = p.index(all.len());
                text.push_str(&all[k]);
                text.push_str(seps[(i + 1) % seps.len()]);
                planted.push(values[k].clone());
            }
        }
        let once = redact(&text);
        for secret in &planted {
            // Short prose secrets (a PIN, a single word) can legitimately occur in the noise.
            if secret.len() >= 8 {
                prop_assert!(!once.text.contains(secret.as_str()), "{:?} survived in {:?}", secret, once.text);
            }
        }
        prop_assert!(once.count >= 1 && once.text.contains(REDACTED));
        prop_assert_eq!(redact(&once.text).text, once.text);
    }

    #[test]
    fn no_encoding_hides_a_fixture_secret_among_noise(
        pick in any::<prop::sample::Index>(),
        encoding in prop::sample::select(common::ENCODINGS.to_vec()),
        seed in any::<usize>(),
        before in "[a-zA-Z0-9 .:,]{0,24}",
        after in "[a-zA-Z0-9 .:,]{0,24}",
    ) {
        let rows = common::rows();
        let (_, template, secret, _) = &rows[pick.index(rows.len())];
        let text = format!("{before}\n{}\n{after}", template.replace("{}", secret));
        // Base64 is decoded where it decodes to ASCII text.
        prop_assume!(text.is_ascii() || !matches!(encoding, common::Encoding::Base64));
        let out = redact(&encoding.encode(&text, secret, seed)).text;
        // Short prose secrets (a PIN, a single word) can legitimately occur in the noise.
        if secret.len() >= 8 {
            prop_assert!(!encoding.decode(&out).contains(secret.as_str()), "{:?} survived {:?} in {:?}", secret, encoding, out);
        }
        prop_assert_eq!(redact(&out).text, out);
    }

    #[test]
    fn redaction_of_arbitrary_text_is_idempotent(text in "\\PC{0,200}") {
        let once = redact(&text);
        prop_assert_eq!(redact(&once.text).text, once.text.clone());
        prop_assert_eq!(once.count == 0, once.text == text);
    }

    #[test]
    fn redaction_of_secret_shaped_noise_is_idempotent(
        text in "([a-zA-Z_]{1,12}(=|: |:|\\s)?[A-Za-z0-9+/=_.-]{0,40}[ \\n'\"]){0,8}"
    ) {
        let once = redact(&text);
        prop_assert_eq!(redact(&once.text).text, once.text);
    }
}
