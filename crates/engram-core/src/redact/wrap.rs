//! Keys wrapped across lines: the breaks that may split a token, and the secrets that span them.

use super::checks::{looks_generated, wordy};
use super::span::is_token_byte;
use super::{find_unwrapped, Finding};

/// Line breaks that may split a token (a key wrapped by a terminal, an editor or a model): a
/// `\n` or `\r\n`, with a wrap hyphen before it, between a run of 8+ token characters that is
/// not words and a next line that opens with a generated-looking run standing on its own.
pub(super) fn wrap_breaks(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let token = |c: &u8| is_token_byte(*c) || b"+/=".contains(c);
    let mut out = Vec::new();
    for nl in memchr::memchr_iter(b'\n', b) {
        let mut start = nl;
        if start > 0 && b[start - 1] == b'\r' {
            start -= 1;
        }
        if start > 0 && b[start - 1] == b'-' {
            start -= 1;
        }
        let before = b[..start].iter().rev().take(64).take_while(|c| token(c)).count();
        let after = b[nl + 1..].iter().take_while(|c| token(c) && **c != b'=').count();
        let next = &text[nl + 1..nl + 1 + after];
        let padding = b[nl + 1 + after..].iter().take_while(|&&c| c == b'=').count();
        let ends = b.get(nl + 1 + after + padding).is_none_or(|c| c.is_ascii_whitespace() || b"\"'`,;)]}.".contains(c));
        if before >= 8 && after >= 4 && ends && !wordy(&text[start - before..start]) && looks_generated(next) {
            out.push((start, nl + 1));
        }
    }
    out
}

/// Secrets that span one of `breaks`: found on the text with the breaks removed, mapped back.
pub(super) fn find_across_breaks(text: &str, breaks: &[(usize, usize)]) -> Vec<Finding> {
    let mut joined = String::with_capacity(text.len());
    // Where each break sits in `joined`, and how many bytes were removed up to and including it.
    let mut at = Vec::with_capacity(breaks.len());
    let (mut copied, mut removed) = (0, 0);
    for &(s, e) in breaks {
        joined.push_str(&text[copied..s]);
        removed += e - s;
        at.push((joined.len(), removed));
        copied = e;
    }
    joined.push_str(&text[copied..]);
    let to_text = |pos: usize, after_break: bool| {
        let shift = at.iter().take_while(|&&(j, _)| j < pos || (after_break && j == pos)).last().map_or(0, |&(_, r)| r);
        pos + shift
    };
    find_unwrapped(&joined)
        .into_iter()
        .filter(|f| at.iter().any(|&(j, _)| f.start < j && j < f.end))
        .map(|f| Finding { rule: f.rule, start: to_text(f.start, true), end: to_text(f.end, false) })
        .collect()
}
