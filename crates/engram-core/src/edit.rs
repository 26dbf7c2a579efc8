//! Exact-string edits that keep a file's line endings (DESIGN §4 "edit").

use crate::error::{CoreError, CoreResult, ErrorCode};
use memchr::memmem;
use std::borrow::Cow;

/// The bytes of a search or replacement string: borrowed, or converted to CRLF line endings.
type Bytes<'a> = Cow<'a, [u8]>;

/// Replaces `old` with `new` in `data`. One occurrence is required unless `replace_all`.
/// In a CRLF file, LF-only `old`/`new` text is matched and written with CRLF endings.
/// Returns the new bytes and the number of replacements.
pub fn edit(path: &str, data: &[u8], old: &str, new: &str, replace_all: bool) -> CoreResult<(Vec<u8>, usize)> {
    if old.is_empty() {
        // Only an empty file can be "edited" from nothing: that sets its content.
        return if data.is_empty() {
            Ok((new.as_bytes().to_vec(), 1))
        } else {
            Err(CoreError::of(ErrorCode::StringNotFound, path))
        };
    }
    let crlf = memmem::find(data, b"\r\n").is_some();
    let (old_bytes, new_bytes) = (Cow::Borrowed(old.as_bytes()), Cow::Borrowed(new.as_bytes()));
    let candidates: Vec<(Bytes, Bytes)> = if crlf && old.contains('\n') {
        vec![(Cow::Owned(to_crlf(old)), Cow::Owned(to_crlf(new))), (old_bytes, new_bytes)]
    } else if crlf {
        vec![(old_bytes, Cow::Owned(to_crlf(new)))]
    } else {
        vec![(old_bytes, new_bytes)]
    };
    for (needle, replacement) in &candidates {
        let starts: Vec<usize> = memmem::find_iter(data, needle.as_ref()).collect();
        match starts.len() {
            0 => continue,
            n if n > 1 && !replace_all => return Err(CoreError::new(ErrorCode::MultipleMatches, path, n)),
            n => {
                let mut out = Vec::with_capacity(data.len() + n * replacement.len());
                let mut copied = 0;
                for s in starts {
                    out.extend_from_slice(&data[copied..s]);
                    out.extend_from_slice(replacement);
                    copied = s + needle.len();
                }
                out.extend_from_slice(&data[copied..]);
                return Ok((out, n));
            }
        }
    }
    Err(CoreError::of(ErrorCode::StringNotFound, path))
}

fn to_crlf(s: &str) -> Vec<u8> {
    s.replace("\r\n", "\n").replace('\n', "\r\n").into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unique_match_required_unless_replace_all() {
        let (out, n) = edit("/f", b"a b a", "b", "c", false).unwrap();
        assert_eq!((out.as_slice(), n), (&b"a c a"[..], 1));
        let e = edit("/f", b"a b a", "a", "x", false).unwrap_err();
        assert_eq!(e.code, ErrorCode::MultipleMatches);
        assert!(e.message.contains("2 times"));
        let (out, n) = edit("/f", b"a b a", "a", "x", true).unwrap();
        assert_eq!((out.as_slice(), n), (&b"x b x"[..], 2));
        assert_eq!(edit("/f", b"abc", "z", "y", false).unwrap_err().code, ErrorCode::StringNotFound);
    }

    #[test]
    fn crlf_files_keep_crlf() {
        let data = b"one\r\ntwo\r\nthree\r\n";
        let (out, _) = edit("/f", data, "one\ntwo", "uno\ndos\nmas", false).unwrap();
        assert_eq!(out, b"uno\r\ndos\r\nmas\r\nthree\r\n");
        let (out, _) = edit("/f", data, "two", "2\n2", false).unwrap();
        assert_eq!(out, b"one\r\n2\r\n2\r\nthree\r\n");
    }

    #[test]
    fn lf_files_untouched_elsewhere_and_invalid_utf8_preserved() {
        let data = b"\xff keep\nfix me\n\xfe";
        let (out, _) = edit("/f", data, "fix me", "fixed", false).unwrap();
        assert_eq!(out, b"\xff keep\nfixed\n\xfe");
    }

    #[test]
    fn overlapping_occurrences_count_once() {
        let (out, n) = edit("/f", b"aaa", "aa", "b", true).unwrap();
        assert_eq!((out.as_slice(), n), (&b"ba"[..], 1));
    }

    #[test]
    fn empty_old_string() {
        assert_eq!(edit("/f", b"", "", "new", false).unwrap(), (b"new".to_vec(), 1));
        assert_eq!(edit("/f", b"x", "", "new", false).unwrap_err().code, ErrorCode::StringNotFound);
    }
}
