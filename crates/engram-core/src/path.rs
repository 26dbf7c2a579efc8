//! Virtual paths: the POSIX absolute paths the agent sees (DESIGN §4 "Paths").
//!
//! A normalised path starts with `/`, has no empty, `.` or `..` segments and no trailing `/`
//! (except the root itself). Relative input is taken relative to the root.

use crate::error::{CoreError, CoreResult, ErrorCode};

/// Longest path accepted, in bytes: a path of Linux `PATH_MAX` (4096) bytes or more is refused.
pub const MAX_PATH_BYTES: usize = 4095;
/// Most components (non-empty segments, `.` and `..` included) a path may have.
pub const MAX_PATH_COMPONENTS: usize = 256;

/// Normalises `input` into a canonical virtual path.
///
/// Errors: `invalid_path` for empty input, NUL or other control characters, backslashes, drive
/// letters, `~` segments, paths of [`MAX_PATH_BYTES`]` + 1` bytes or more and paths of more than
/// [`MAX_PATH_COMPONENTS`] components (both refused before any other work); `path_escape` when
/// `..` climbs above the root.
pub fn normalize(input: &str) -> CoreResult<String> {
    if is_normal(input) {
        // The common case (a path the core handed out before): one pass, one copy.
        return Ok(input.to_string());
    }
    normalize_slow(input)
}

/// Whether `input` is printable ASCII that [`normalize_slow`] returns unchanged: it starts
/// with `/`, has no empty, `.`, `..` or `~` segments, no trailing `/`, no backslash, no drive
/// letter and is within the byte and component limits. Anything else takes the general path.
fn is_normal(input: &str) -> bool {
    let b = input.as_bytes();
    if b == b"/" {
        return true;
    }
    if b.len() < 2 || b.len() > MAX_PATH_BYTES || b[0] != b'/' {
        return false;
    }
    let (mut components, mut start) = (0, 1);
    for i in 1..=b.len() {
        if i < b.len() && b[i] != b'/' {
            if !(0x20..0x7f).contains(&b[i]) || b[i] == b'\\' {
                return false;
            }
            continue;
        }
        let seg = &b[start..i];
        if seg.is_empty() || seg == b"." || seg == b".." || seg[0] == b'~' {
            return false;
        }
        if components == 0 && seg.len() >= 2 && seg[0].is_ascii_alphabetic() && seg[1] == b':' {
            return false;
        }
        components += 1;
        start = i + 1;
    }
    components <= MAX_PATH_COMPONENTS
}

fn normalize_slow(input: &str) -> CoreResult<String> {
    check_characters(input)?;
    let mut segments: Vec<&str> = Vec::new();
    for segment in input.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                if segments.pop().is_none() {
                    return Err(CoreError::of(ErrorCode::PathEscape, input));
                }
            }
            s if s.starts_with('~') => {
                return Err(invalid(input, "home-directory shorthand '~' is not allowed"));
            }
            s => segments.push(s),
        }
    }
    // Checked on the result, not the input: `x/../C:y` must not normalise to a drive path (and
    // a normalised path must normalise to itself).
    if let Some(first) = segments.first().map(|s| s.as_bytes()) {
        if first.len() >= 2 && first[0].is_ascii_alphabetic() && first[1] == b':' {
            return Err(invalid(input, "drive letters are not allowed"));
        }
    }
    let mut out = String::with_capacity(input.len() + 1);
    for s in &segments {
        out.push('/');
        out.push_str(s);
    }
    if out.is_empty() {
        out.push('/');
    }
    Ok(out)
}

/// Normalises a directory prefix and gives it a trailing `/` (the root stays `/`), the form the
/// router and prefix listings compare against.
pub fn normalize_dir(input: &str) -> CoreResult<String> {
    let mut p = normalize(input)?;
    if p != "/" {
        p.push('/');
    }
    Ok(p)
}

/// `path` as seen from the directory `dir` (both normalised); `None` when it is not inside.
/// The directory itself yields `Some("")`.
pub fn strip_dir<'a>(path: &'a str, dir: &str) -> Option<&'a str> {
    if dir == "/" {
        return Some(path.strip_prefix('/').unwrap_or(path));
    }
    let rest = path.strip_prefix(dir)?;
    if rest.is_empty() {
        Some("")
    } else {
        rest.strip_prefix('/')
    }
}

/// The parent directory of a normalised path (`/` for top-level entries and for `/` itself).
pub fn parent(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) | None => "/",
        Some(i) => &path[..i],
    }
}

/// The last segment of a normalised path (empty for `/`).
pub fn file_name(path: &str) -> &str {
    match path.rfind('/') {
        Some(i) => &path[i + 1..],
        None => path,
    }
}

/// Joins a normalised directory and a single segment.
pub fn join(dir: &str, name: &str) -> String {
    if dir == "/" {
        format!("/{name}")
    } else {
        format!("{dir}/{name}")
    }
}

fn check_characters(input: &str) -> CoreResult<()> {
    if input.is_empty() {
        return Err(invalid(input, "empty path"));
    }
    if input.len() > MAX_PATH_BYTES {
        return Err(invalid(input, format_args!("{} bytes; the limit is {MAX_PATH_BYTES}", input.len())));
    }
    let components = input.split('/').filter(|s| !s.is_empty()).count();
    if components > MAX_PATH_COMPONENTS {
        return Err(invalid(input, format_args!("{components} components; the limit is {MAX_PATH_COMPONENTS}")));
    }
    if input.contains('\0') {
        return Err(invalid(input, "contains a NUL byte"));
    }
    if input.chars().any(|c| c.is_control()) {
        return Err(invalid(input, "contains a control character"));
    }
    if input.contains('\\') {
        return Err(invalid(input, "backslashes are not path separators here"));
    }
    Ok(())
}

fn invalid(input: &str, why: impl std::fmt::Display) -> CoreError {
    // Keep the echoed subject short: a hostile 4 KB path should not flood a prompt.
    let shown: String = input.chars().take(200).collect();
    CoreError::new(ErrorCode::InvalidPath, &shown, why)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn code(input: &str) -> Option<ErrorCode> {
        normalize(input).err().map(|e| e.code)
    }

    #[test]
    fn normalises_separators_and_dots() {
        assert_eq!(normalize("/").unwrap(), "/");
        assert_eq!(normalize("//a///b/").unwrap(), "/a/b");
        assert_eq!(normalize("/a/./b/../c").unwrap(), "/a/c");
        assert_eq!(normalize("a/b").unwrap(), "/a/b");
        assert_eq!(normalize("/a..b/..c/c..").unwrap(), "/a..b/..c/c..");
        assert_eq!(normalize("/a/..").unwrap(), "/");
        assert_eq!(normalize("/%2e%2e/x").unwrap(), "/%2e%2e/x");
        assert_eq!(normalize("/文档/😀.md").unwrap(), "/文档/😀.md");
        assert_eq!(normalize("/a/b~").unwrap(), "/a/b~");
    }

    #[test]
    fn rejects_escapes_and_bad_characters() {
        assert_eq!(code("/.."), Some(ErrorCode::PathEscape));
        assert_eq!(code("../etc/passwd"), Some(ErrorCode::PathEscape));
        assert_eq!(code("/a/../../b"), Some(ErrorCode::PathEscape));
        assert_eq!(code(""), Some(ErrorCode::InvalidPath));
        assert_eq!(code("/a\0b"), Some(ErrorCode::InvalidPath));
        assert_eq!(code("/a\nb"), Some(ErrorCode::InvalidPath));
        assert_eq!(code("~/x"), Some(ErrorCode::InvalidPath));
        assert_eq!(code("/~root/x"), Some(ErrorCode::InvalidPath));
        assert_eq!(code("C:/Windows"), Some(ErrorCode::InvalidPath));
        assert_eq!(code("/c:/x"), Some(ErrorCode::InvalidPath));
        // Found by the fuzz step: a drive letter reached through `..` (was accepted, and its
        // result then refused: normalisation was not idempotent).
        assert_eq!(code("/x/../C:\u{202e}y"), Some(ErrorCode::InvalidPath));
        assert_eq!(normalize("/x/C:y").unwrap(), "/x/C:y");
        assert_eq!(code("/a\\..\\b"), Some(ErrorCode::InvalidPath));
        assert_eq!(code(&format!("/{}", "a".repeat(5000))), Some(ErrorCode::InvalidPath));
        assert_eq!(code(&format!("/{}", "a".repeat(4095))), Some(ErrorCode::InvalidPath));
        assert_eq!(normalize(&format!("/{}", "a".repeat(4094))).map(|p| p.len()), Ok(4095));
        assert_eq!(code(&"/a".repeat(257)), Some(ErrorCode::InvalidPath));
        assert!(normalize(&"/a".repeat(256)).is_ok());
        assert_eq!(code(&"/.".repeat(300)), Some(ErrorCode::InvalidPath));
    }

    #[test]
    fn dir_helpers() {
        assert_eq!(normalize_dir("/memories").unwrap(), "/memories/");
        assert_eq!(normalize_dir("/").unwrap(), "/");
        assert_eq!(strip_dir("/a/b/c", "/a"), Some("b/c"));
        assert_eq!(strip_dir("/a", "/a"), Some(""));
        assert_eq!(strip_dir("/ab/c", "/a"), None);
        assert_eq!(strip_dir("/a/b", "/"), Some("a/b"));
        assert_eq!(parent("/a/b"), "/a");
        assert_eq!(parent("/a"), "/");
        assert_eq!(file_name("/a/b.txt"), "b.txt");
        assert_eq!(join("/", "x"), "/x");
        assert_eq!(join("/a", "x"), "/a/x");
    }

    fn segment() -> impl Strategy<Value = String> {
        prop_oneof![Just("..".to_string()), Just(".".to_string()), Just("".to_string()), "[a-z.]{1,4}",]
    }

    proptest! {
        /// The fast path agrees with the general rules: what it accepts normalises to itself.
        #[test]
        fn fast_path_agrees_with_the_rules(input in "[/a.~:C\\\\é\t ]{0,12}") {
            prop_assert_eq!(normalize(&input), normalize_slow(&input));
            if is_normal(&input) {
                prop_assert_eq!(normalize_slow(&input), Ok(input.clone()));
            }
        }

        #[test]
        fn no_normalised_path_escapes_the_root(segs in prop::collection::vec(segment(), 0..12), lead in any::<bool>()) {
            let input = format!("{}{}", if lead { "/" } else { "" }, segs.join("/"));
            // Track the depth a real filesystem walk would reach.
            let mut depth: i64 = 0;
            let mut escaped = false;
            for s in &segs {
                match s.as_str() {
                    "" | "." => {}
                    ".." => { depth -= 1; if depth < 0 { escaped = true; break; } }
                    _ => depth += 1,
                }
            }
            match normalize(if input.is_empty() { "/" } else { &input }) {
                Ok(p) => {
                    prop_assert!(!escaped);
                    prop_assert!(p.starts_with('/'));
                    prop_assert!(p.split('/').all(|s| s != ".." && s != "."));
                    prop_assert!(!p.contains("//"));
                    prop_assert!(p == "/" || !p.ends_with('/'));
                    prop_assert_eq!(p.split('/').filter(|s| !s.is_empty()).count() as i64, depth);
                }
                Err(e) => {
                    prop_assert!(escaped);
                    prop_assert_eq!(e.code, ErrorCode::PathEscape);
                }
            }
        }

        #[test]
        fn normalisation_is_idempotent(s in "\\PC{0,40}") {
            if let Ok(p) = normalize(&s) {
                prop_assert_eq!(normalize(&p).unwrap(), p);
            }
        }
    }
}
