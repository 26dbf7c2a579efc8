//! Paginated reads by line and `cat -n` formatting (DESIGN §4 "read").

use crate::text::{count_lines, nth_newline, utf16_len};
use serde::Serialize;

/// Longest line shown on one row; longer lines continue on rows `N.1`, `N.2`, ...
pub const MAX_LINE_CHARS: usize = 5000;

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadResult {
    /// The requested lines, raw (no numbers), joined by their original terminators; the last
    /// line's terminator is dropped. Invalid UTF-8 becomes U+FFFD.
    pub content: String,
    pub total_lines: usize,
    /// 0-based index of the first returned line (the requested offset).
    pub offset: usize,
    /// How many lines `content` holds.
    pub lines: usize,
}

/// Lines `offset .. offset + limit` of `data` (all remaining lines when `limit` is `None`).
/// An offset past the end yields empty content, not an error; the tool adds a note.
pub fn read_lines(data: &[u8], offset: usize, limit: Option<usize>) -> ReadResult {
    let total_lines = count_lines(data);
    let start = byte_of_line(data, offset);
    let wanted = limit.unwrap_or(usize::MAX);
    let (end, lines) = match start {
        None => (data.len(), 0),
        Some(s) => end_after_lines(data, s, wanted),
    };
    let start = start.unwrap_or(data.len());
    let mut slice = &data[start..end];
    slice = slice.strip_suffix(b"\n").unwrap_or(slice);
    slice = slice.strip_suffix(b"\r").unwrap_or(slice);
    ReadResult { content: String::from_utf8_lossy(slice).into_owned(), total_lines, offset, lines }
}

/// Byte offset where 0-based line `n` starts, `None` when the file has fewer lines.
fn byte_of_line(data: &[u8], n: usize) -> Option<usize> {
    if n == 0 {
        return (!data.is_empty()).then_some(0);
    }
    let nl = nth_newline(data, n - 1).ok()?;
    (nl + 1 < data.len()).then_some(nl + 1)
}

/// End byte (exclusive, terminator included) after at most `n` lines from `start`, and how
/// many lines that was.
fn end_after_lines(data: &[u8], start: usize, n: usize) -> (usize, usize) {
    if n == 0 {
        return (start, 0);
    }
    match nth_newline(&data[start..], n - 1) {
        Ok(i) => (start + i + 1, n),
        // Unterminated last line (if any bytes remain) counts as one more.
        Err(taken) => (data.len(), taken + usize::from(data.len() > start && data.last() != Some(&b'\n'))),
    }
}

/// Formats raw lines `cat -n` style: the 1-based number right-aligned in 6 columns, a tab, the
/// line. Lines over [`MAX_LINE_CHARS`] characters are split into rows numbered `N.1`, `N.2`, ...
pub fn format_numbered(content: &str, first_line: usize) -> String {
    format_numbered_until(content, first_line, usize::MAX)
}

/// [`format_numbered`], stopping after the first row that takes the output past `max_units`
/// UTF-16 code units (a caller that caps its output there needs nothing more).
pub fn format_numbered_until(content: &str, first_line: usize, max_units: usize) -> String {
    if content.is_empty() {
        return String::new();
    }
    let mut out = String::with_capacity((content.len() + content.len() / 16 + 8).min(max_units.saturating_mul(3)));
    let mut units = 0usize;
    for (i, line) in content.split('\n').enumerate() {
        if units > max_units {
            break;
        }
        let line = line.strip_suffix('\r').unwrap_or(line);
        let n = first_line + i;
        // Bytes bound characters: a line this short in bytes needs no count.
        if line.len() <= MAX_LINE_CHARS || line.chars().nth(MAX_LINE_CHARS).is_none() {
            units += push_row(&mut out, itoa::Buffer::new().format(n), line);
            continue;
        }
        let mut rest = line;
        let mut part = 1;
        while !rest.is_empty() && units <= max_units {
            let cut = rest.char_indices().nth(MAX_LINE_CHARS).map_or(rest.len(), |(b, _)| b);
            units += push_row(&mut out, &format!("{n}.{part}"), &rest[..cut]);
            rest = &rest[cut..];
            part += 1;
        }
    }
    out.pop();
    out
}

/// Appends one row and its newline (`label` right-aligned in six columns, as `{label:>6}`);
/// returns its length in UTF-16 code units. `label` is ASCII.
fn push_row(out: &mut String, label: &str, text: &str) -> usize {
    const PAD: &str = "      ";
    out.push_str(&PAD[label.len().min(6)..]);
    out.push_str(label);
    out.push('\t');
    out.push_str(text);
    out.push('\n');
    label.len().max(6) + 2 + utf16_len(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_right_aligned_in_six_columns_like_format() {
        for label in ["1", "42", "999999", "1000000", "12345678901", "7.2", "123456.10"] {
            for text in ["", "x", "tab\there", "é😀"] {
                let mut out = String::new();
                let units = push_row(&mut out, label, text);
                let expected = format!("{label:>6}\t{text}\n");
                assert_eq!(out, expected);
                assert_eq!(units, expected.encode_utf16().count(), "{label} {text}");
            }
        }
        assert_eq!(format_numbered("a\nb", 999_999), "999999\ta\n1000000\tb");
    }

    #[test]
    fn paginates_by_line() {
        let data = b"l0\nl1\r\nl2\nl3";
        let r = read_lines(data, 1, Some(2));
        assert_eq!((r.content.as_str(), r.total_lines, r.lines), ("l1\r\nl2", 4, 2));
        let tail = read_lines(data, 3, Some(10));
        assert_eq!((tail.content.as_str(), tail.lines), ("l3", 1));
        let all = read_lines(data, 0, None);
        assert_eq!(all.content, "l0\nl1\r\nl2\nl3");
    }

    #[test]
    fn offset_past_end_and_empty_file() {
        let r = read_lines(b"a\nb\n", 2, Some(5));
        assert_eq!((r.content.as_str(), r.total_lines, r.lines), ("", 2, 0));
        let e = read_lines(b"", 0, Some(5));
        assert_eq!((e.content.as_str(), e.total_lines, e.lines), ("", 0, 0));
    }

    #[test]
    fn blank_lines_are_lines() {
        let r = read_lines(b"\n\nx\n", 0, Some(2));
        assert_eq!((r.content.as_str(), r.lines, r.total_lines), ("\n", 2, 3));
    }

    #[test]
    fn invalid_utf8_is_replaced_not_fatal() {
        assert_eq!(read_lines(b"ok\n\xff\xfe\n", 1, Some(1)).content, "\u{FFFD}\u{FFFD}");
    }

    #[test]
    fn cat_n_format() {
        assert_eq!(format_numbered("a\nb", 1), "     1\ta\n     2\tb");
        assert_eq!(format_numbered("x\r\ny", 99), "    99\tx\n   100\ty");
        assert_eq!(format_numbered("", 1), "");
    }

    #[test]
    fn long_lines_split_on_char_boundaries() {
        let long = "é".repeat(MAX_LINE_CHARS * 2 + 3);
        let out = format_numbered(&format!("short\n{long}"), 7);
        let rows: Vec<&str> = out.split('\n').collect();
        assert_eq!(rows.len(), 4);
        assert!(rows[1].starts_with("   8.1\t"));
        assert!(rows[3].starts_with("   8.3\t"));
        assert_eq!(rows[3].split('\t').nth(1).unwrap().chars().count(), 3);
    }
}
