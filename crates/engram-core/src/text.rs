//! Byte-level line helpers shared by grep, read and edit. Lines end with `\n`; a final `\n`
//! does not start another line; a `\r` before it belongs to the terminator.

/// Bytes inspected for a NUL when deciding that a file is binary (as git and ripgrep do).
const BINARY_PROBE_BYTES: usize = 8192;

pub fn is_binary(data: &[u8]) -> bool {
    memchr::memchr(0, &data[..data.len().min(BINARY_PROBE_BYTES)]).is_some()
}

/// The line holding byte `at`: `(start, end)` with the `\n` excluded.
pub fn line_bounds(data: &[u8], at: usize) -> (usize, usize) {
    let start = memchr::memrchr(b'\n', &data[..at]).map_or(0, |i| i + 1);
    let end = memchr::memchr(b'\n', &data[at..]).map_or(data.len(), |i| at + i);
    (start, end)
}

/// Number of lines: an empty file has none; a trailing newline ends the last line.
pub fn count_lines(data: &[u8]) -> usize {
    let newlines = memchr::memchr_iter(b'\n', data).count();
    newlines + usize::from(data.last().is_some_and(|&b| b != b'\n'))
}

/// Where the `n`-th `\n` of `data` is (0-based), or `Err` with how many there are when fewer.
/// Whole blocks are counted with memchr's vectorised count and only the block holding the
/// answer is walked newline by newline: skipping 5,000 short lines costs ~6 µs instead of ~24
/// (one `memchr` call per line).
pub fn nth_newline(data: &[u8], mut n: usize) -> Result<usize, usize> {
    const BLOCK: usize = 4096;
    let mut seen = 0;
    for (k, block) in data.chunks(BLOCK).enumerate() {
        let count = memchr::memchr_iter(b'\n', block).count();
        if count > n {
            let at = memchr::memchr_iter(b'\n', block).nth(n).expect("counted above");
            return Ok(k * BLOCK + at);
        }
        n -= count;
        seen += count;
    }
    Err(seen)
}

/// Byte offset at which every line starts.
pub fn line_starts(data: &[u8]) -> Vec<usize> {
    let mut starts = vec![0];
    starts.extend(memchr::memchr_iter(b'\n', data).map(|i| i + 1).filter(|&s| s < data.len()));
    starts
}

/// Byte range of line `i` (0-based) given [`line_starts`], terminator excluded.
pub fn nth_line(data: &[u8], starts: &[usize], i: usize) -> (usize, usize) {
    let s = starts[i];
    let e = match starts.get(i + 1) {
        Some(&next) => next - 1,
        None => data.len() - usize::from(data.last() == Some(&b'\n')),
    };
    (s, e)
}

/// A line as text: a trailing `\r` dropped, invalid UTF-8 replaced by U+FFFD.
pub fn lossy_line(bytes: &[u8]) -> String {
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    String::from_utf8_lossy(bytes).into_owned()
}

/// Length of `s` in UTF-16 code units.
pub(crate) fn utf16_len(s: &str) -> usize {
    if s.is_ascii() {
        return s.len();
    }
    s.chars().map(char::len_utf16).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn nth_newline_is_the_nth_of_all_newlines(
            // Up to 200 lines of 0..300 bytes (~30 KB): answers inside, at the edges of and past
            // several 4 KiB blocks.
            lines in proptest::collection::vec(0usize..300, 0..200),
            unterminated in any::<bool>(),
            n in 0usize..220,
        ) {
            let mut data = Vec::new();
            for len in &lines {
                data.extend(std::iter::repeat_n(b'x', *len));
                data.push(b'\n');
            }
            if unterminated {
                data.extend_from_slice(b"tail");
            }
            let all: Vec<usize> = memchr::memchr_iter(b'\n', &data).collect();
            let want = all.get(n).copied().ok_or(all.len());
            prop_assert_eq!(nth_newline(&data, n), want);
        }
    }

    #[test]
    fn counts_lines_like_wc_plus_unterminated_last_line() {
        assert_eq!(count_lines(b""), 0);
        assert_eq!(count_lines(b"a"), 1);
        assert_eq!(count_lines(b"a\n"), 1);
        assert_eq!(count_lines(b"a\nb"), 2);
        assert_eq!(count_lines(b"\n\n"), 2);
    }

    #[test]
    fn line_starts_and_nth_line_agree_with_count() {
        for data in [&b"a\nbb\r\nccc"[..], b"a\n", b"\n\nx\n", b"x"] {
            let starts = line_starts(data);
            assert_eq!(starts.len(), count_lines(data));
            let rebuilt: Vec<&[u8]> = (0..starts.len())
                .map(|i| {
                    let (s, e) = nth_line(data, &starts, i);
                    &data[s..e]
                })
                .collect();
            let expected: Vec<&[u8]> = data.strip_suffix(b"\n").unwrap_or(data).split(|&b| b == b'\n').collect();
            assert_eq!(rebuilt, expected);
        }
    }

    #[test]
    fn binary_and_lossy() {
        assert!(is_binary(b"ab\0c"));
        assert!(!is_binary("héllo".as_bytes()));
        assert_eq!(lossy_line(b"x\xff\r"), "x\u{FFFD}");
    }
}
