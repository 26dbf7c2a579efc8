//! Glob matching with `globset`: `*` and `?` never cross `/`; `**`, `[...]`, `{a,b}`; dotfiles
//! match like any other name. Relative patterns are matched against the path below the search
//! directory; a pattern starting with `/` is anchored at the root.

use crate::error::{CoreError, CoreResult, ErrorCode};
use crate::limits::MAX_PATTERN_BYTES;
use crate::path;
use globset::{GlobBuilder, GlobSet};

const META: &[char] = &['*', '?', '[', ']', '{', '}', '\\'];

/// A compiled glob. The shapes most calls use are matched directly: for `**/*.ts`, `globset`
/// spent ~28 ns a path building its candidate and hashing the extension, this a suffix
/// compare. The rest is a set of one glob rather than a `GlobMatcher`: the set matches other
/// common shapes without a regex (building one costs ~0.4 µs instead of ~10 µs). Every form
/// agrees with the glob's regex on every normalised path (tests/fuzz.rs checks it; the set and
/// the regex differ on a bare `..`, which no normalised path holds).
enum Matcher {
    /// `**/*SUFFIX` (SUFFIX not empty, without `/` or a metacharacter): a path whose name ends
    /// with SUFFIX, at any depth.
    SuffixAnyDepth(String),
    /// `*SUFFIX`: a top-level name ending with SUFFIX.
    Suffix(String),
    /// `**/NAME`: a file of that exact name at any depth.
    NameAnyDepth(String),
    /// No metacharacter: exactly this path.
    Literal(String),
    Set(GlobSet),
}

impl Matcher {
    fn is_match(&self, rel: &str) -> bool {
        match self {
            Matcher::SuffixAnyDepth(suffix) => ends_with(rel, suffix),
            Matcher::Suffix(suffix) => ends_with(rel, suffix) && !rel.contains('/'),
            Matcher::NameAnyDepth(name) => {
                rel.strip_suffix(name.as_str()).is_some_and(|dir| dir.is_empty() || dir.ends_with('/'))
            }
            Matcher::Literal(literal) => rel == literal,
            Matcher::Set(set) => set.is_match(rel),
        }
    }
}

/// `str::ends_with` for the short suffixes of globs, compared from the last byte inline (most
/// names differ there) rather than by a call to `memcmp` per path.
fn ends_with(rel: &str, suffix: &str) -> bool {
    rel.len() >= suffix.len() && rel.bytes().rev().zip(suffix.bytes().rev()).all(|(a, b)| a == b)
}

fn compile(pattern: &str) -> CoreResult<Matcher> {
    if pattern.len() > MAX_PATTERN_BYTES {
        let shown: String = pattern.chars().take(200).collect();
        return Err(CoreError::new(
            ErrorCode::InvalidPattern,
            &shown,
            format_args!("{} bytes; the limit is {MAX_PATTERN_BYTES}", pattern.len()),
        ));
    }
    let plain = |s: &str| !s.is_empty() && !s.contains(META) && !s.contains('/');
    if let Some(suffix) = pattern.strip_prefix("**/*").filter(|s| plain(s)) {
        return Ok(Matcher::SuffixAnyDepth(suffix.to_string()));
    }
    if let Some(suffix) = pattern.strip_prefix('*').filter(|s| plain(s)) {
        return Ok(Matcher::Suffix(suffix.to_string()));
    }
    if let Some(name) = pattern.strip_prefix("**/").filter(|s| plain(s)) {
        return Ok(Matcher::NameAnyDepth(name.to_string()));
    }
    if !pattern.is_empty() && !pattern.contains(META) {
        return Ok(Matcher::Literal(pattern.to_string()));
    }
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .and_then(|g| GlobSet::builder().add(g).build())
        .map(Matcher::Set)
        .map_err(|e| CoreError::new(ErrorCode::InvalidPattern, pattern, e.kind()))
}

/// A compiled glob bound to a search directory.
pub struct Glob {
    matcher: Matcher,
    anchored: bool,
    /// Directory holding every possible match (literal leading segments), to narrow the scan.
    base: String,
}

impl Glob {
    pub fn new(pattern: &str, root: &str) -> CoreResult<Glob> {
        if pattern.is_empty() {
            return Err(CoreError::new(ErrorCode::InvalidPattern, pattern, "empty pattern"));
        }
        let anchored = pattern.starts_with('/');
        let body = pattern.trim_start_matches('/');
        let matcher = compile(body)?;
        let mut base = if anchored { "/".to_string() } else { root.to_string() };
        let segments: Vec<&str> = body.split('/').collect();
        for seg in &segments[..segments.len() - 1] {
            if seg.is_empty() || *seg == "." || *seg == ".." || seg.contains(META) {
                break;
            }
            base = path::join(&base, seg);
        }
        Ok(Glob { matcher, anchored, base })
    }

    /// The directory below which all matches lie.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// Whether a normalised file path under `root` matches.
    pub fn is_match(&self, full: &str, root: &str) -> bool {
        let candidate = if self.anchored { Some(&full[1..]) } else { path::strip_dir(full, root) };
        candidate.is_some_and(|c| !c.is_empty() && self.matcher.is_match(c))
    }
}

/// `grep`'s file filter: a pattern without `/` matches the file name at any depth (like
/// `rg -g`); with `/` it matches the path below the search directory.
pub struct PathFilter {
    matcher: Matcher,
    by_name: bool,
}

impl PathFilter {
    pub fn new(pattern: &str) -> CoreResult<PathFilter> {
        let by_name = !pattern.contains('/');
        Ok(PathFilter { matcher: compile(pattern.trim_start_matches('/'))?, by_name })
    }

    /// Whether the file at normalised `full` passes, searching from `root`: its path below
    /// `root`, or its file name when `root` is the file itself.
    pub fn admits(&self, full: &str, root: &str) -> bool {
        self.is_match(path::strip_dir(full, root).filter(|r| !r.is_empty()).unwrap_or_else(|| path::file_name(full)))
    }

    /// `rel` is the path below the search directory (the file name when searching one file).
    pub fn is_match(&self, rel: &str) -> bool {
        if self.by_name {
            self.matcher.is_match(path::file_name(rel))
        } else {
            self.matcher.is_match(rel)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, root: &str, full: &str) -> bool {
        Glob::new(pattern, root).unwrap().is_match(full, root)
    }

    #[test]
    fn star_does_not_cross_separators() {
        assert!(matches("*.ts", "/", "/a.ts"));
        assert!(!matches("*.ts", "/", "/src/a.ts"));
        assert!(matches("**/*.ts", "/", "/a.ts"));
        assert!(matches("**/*.ts", "/", "/src/deep/a.ts"));
        assert!(matches("src/?.ts", "/", "/src/a.ts"));
        assert!(!matches("src/?.ts", "/", "/src/ab.ts"));
    }

    #[test]
    fn suffixes_are_compared_whole() {
        for (pattern, yes, no) in [
            ("**/*.test.ts", "/a/b.test.ts", "/a/b.best.ts"),
            ("**/*.ts", "/a/x.ts", "/a/xts"),
            ("*.md", "/x.md", "/xxmd"),
            ("**/*.d.ts", "/x.d.ts", "/x.e.ts"),
        ] {
            assert!(matches(pattern, "/", yes), "{pattern} {yes}");
            assert!(!matches(pattern, "/", no), "{pattern} {no}");
        }
        assert!(!matches("**/*.test.ts", "/", "/st.ts"), "shorter than the suffix");
    }

    #[test]
    fn classes_alternation_and_dotfiles() {
        assert!(matches("[ab].md", "/", "/a.md"));
        assert!(!matches("[ab].md", "/", "/c.md"));
        assert!(matches("*.{ts,js}", "/", "/x.js"));
        assert!(matches("*", "/", "/.env"));
        assert!(matches("**/.git*", "/", "/a/.gitignore"));
    }

    #[test]
    fn relative_to_search_dir_and_anchored_at_root() {
        assert!(matches("*.md", "/docs", "/docs/a.md"));
        assert!(!matches("*.md", "/docs", "/a.md"));
        assert!(matches("/docs/*.md", "/", "/docs/a.md"));
        assert!(matches("/docs/*.md", "/docs", "/docs/a.md"));
        assert_eq!(Glob::new("src/lib/**/*.rs", "/p").unwrap().base(), "/p/src/lib");
        assert_eq!(Glob::new("/a/*/b", "/p").unwrap().base(), "/a");
        assert_eq!(Glob::new("*.rs", "/p").unwrap().base(), "/p");
    }

    #[test]
    fn bad_patterns_are_invalid_pattern() {
        assert_eq!(Glob::new("[", "/").err().unwrap().code, ErrorCode::InvalidPattern);
        assert_eq!(Glob::new("a{b", "/").err().unwrap().code, ErrorCode::InvalidPattern);
        assert_eq!(Glob::new("", "/").err().unwrap().code, ErrorCode::InvalidPattern);
    }

    #[test]
    fn path_filter_by_name_or_path() {
        let by_name = PathFilter::new("*.ts").unwrap();
        assert!(by_name.is_match("deep/x/a.ts"));
        let by_path = PathFilter::new("src/*.ts").unwrap();
        assert!(by_path.is_match("src/a.ts"));
        assert!(!by_path.is_match("src/deep/a.ts"));
    }
}
