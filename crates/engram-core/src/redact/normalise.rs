//! The text a secret hides in, with the hiding undone: JSON/JS escapes and percent-encoding
//! decoded, full-width forms folded to ASCII, invisible format characters removed. The rules run
//! on this normalised text, and every finding is mapped back to the original bytes it came from,
//! so one rule covers every encoding and the redaction replaces exactly the encoded secret.
//!
//! The folding is the part of NFKC that can disguise an ASCII secret (full-width ASCII and the
//! ideographic space), not the full normalisation tables (docs/decisions/
//! 2026-11-29-redaction-normalisation.md).

use std::ops::Range;

/// One unit of the original text (an escape, a folded or a removed character) and what it became.
struct Edit {
    normalised: Range<usize>,
    original: Range<usize>,
}

/// The normalised text and where its bytes came from.
pub(super) struct Normalised {
    text: String,
    /// In order; between two edits the text is copied unchanged.
    edits: Vec<Edit>,
}

impl Normalised {
    pub(super) fn text(&self) -> &str {
        &self.text
    }

    /// The original position of a span starting at `pos`: a span never starts inside a unit, nor
    /// takes in a removed character before it.
    pub(super) fn start_in_original(&self, pos: usize) -> usize {
        let i = self.edits.partition_point(|e| e.normalised.start <= pos);
        match i.checked_sub(1).map(|i| &self.edits[i]) {
            None => pos,
            Some(e) if pos < e.normalised.end => e.original.start,
            Some(e) => e.original.end + (pos - e.normalised.end),
        }
    }

    /// The original position of a span ending at `pos`: a span never ends inside a unit, nor
    /// takes in a removed character after it.
    pub(super) fn end_in_original(&self, pos: usize) -> usize {
        let i = self.edits.partition_point(|e| e.normalised.start < pos);
        match i.checked_sub(1).map(|i| &self.edits[i]) {
            None => pos,
            Some(e) if pos <= e.normalised.end => e.original.end,
            Some(e) => e.original.end + (pos - e.normalised.end),
        }
    }
}

/// `text` normalised, or `None` when normalising would not change it (most text: ASCII with no
/// backslash or percent sign is decided without looking at each character).
pub(super) fn normalise(text: &str) -> Option<Normalised> {
    let b = text.as_bytes();
    if text.is_ascii() && memchr::memchr2(b'\\', b'%', b).is_none() {
        return None;
    }
    let mut out = String::new();
    let mut edits = Vec::new();
    let (mut i, mut copied) = (0, 0);
    while i < b.len() {
        match b[i..].iter().position(|&c| MAY_START_CHANGE[usize::from(c)]) {
            Some(skip) => i += skip,
            None => break,
        }
        let (c, len) = match b[i] {
            b'\\' => unescape(b, i).unwrap_or(('\\', 1)),
            b'%' => percent_decode(b, i).unwrap_or(('%', 1)),
            _ => text[i..].chars().next().map(|c| (c, c.len_utf8())).unwrap_or(('\0', 1)),
        };
        let folded = fold(c);
        if len != c.len_utf8() || folded != Some(c) {
            if out.capacity() == 0 {
                out.reserve(text.len());
            }
            out.push_str(&text[copied..i]);
            let at = out.len();
            out.extend(folded);
            edits.push(Edit { normalised: at..out.len(), original: i..i + len });
            copied = i + len;
        }
        i += len;
    }
    if edits.is_empty() {
        return None;
    }
    out.push_str(&text[copied..]);
    Some(Normalised { text: out, edits })
}

/// The character a JSON or JavaScript escape at `i` stands for, and the escape's length:
/// `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`, `\uXXXX` (surrogate pairs joined), `\xXX`.
pub(super) fn unescape(b: &[u8], i: usize) -> Option<(char, usize)> {
    let simple = match *b.get(i + 1)? {
        c @ (b'"' | b'\\' | b'/') => c as char,
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'x' => return char::from_u32(hex(b, i + 2, 2)?).map(|c| (c, 4)),
        b'u' => return unescape_utf16(b, i),
        _ => return None,
    };
    Some((simple, 2))
}

fn unescape_utf16(b: &[u8], i: usize) -> Option<(char, usize)> {
    let unit = hex(b, i + 2, 4)?;
    if let Some(c) = char::from_u32(unit) {
        return Some((c, 6));
    }
    // A high surrogate joins with the low surrogate escaped right after it.
    let low = (b.get(i + 6..i + 8) == Some(b"\\u")).then(|| hex(b, i + 8, 4)).flatten()?;
    char::decode_utf16([unit as u16, low as u16]).next()?.ok().map(|c| (c, 12))
}

fn hex(b: &[u8], from: usize, digits: usize) -> Option<u32> {
    let s = b.get(from..from + digits)?;
    s.iter()
        .all(u8::is_ascii_hexdigit)
        .then(|| s.iter().fold(0, |n, &d| n * 16 + (d as char).to_digit(16).unwrap_or(0)))
}

/// The character a percent-encoding at `i` stands for (`%3D`; `%E2%80%8B`, one UTF-8
/// character in several escapes) and the escapes' length.
fn percent_decode(b: &[u8], i: usize) -> Option<(char, usize)> {
    let byte = |k: usize| (b.get(i + 3 * k) == Some(&b'%')).then(|| hex(b, i + 3 * k + 1, 2)).flatten();
    let lead = byte(0)? as u8;
    let width = match lead {
        0x00..=0x7f => 1,
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => return None,
    };
    let mut utf8 = [lead, 0, 0, 0];
    for (k, slot) in utf8.iter_mut().enumerate().take(width).skip(1) {
        *slot = byte(k)? as u8;
    }
    let c = std::str::from_utf8(&utf8[..width]).ok()?.chars().next()?;
    Some((c, 3 * width))
}

/// The bytes at which a unit that normalising changes may start: an escape, or the first UTF-8
/// byte of a character that [`fold`] changes (most non-ASCII text is skipped byte by byte).
const MAY_START_CHANGE: [bool; 256] = {
    let starts = [b'\\', b'%', 0xc2, 0xcd, 0xd8, 0xdb, 0xdc, 0xe0, 0xe1, 0xe2, 0xe3, 0xef, 0xf0, 0xf3];
    let mut table = [false; 256];
    let mut i = 0;
    while i < starts.len() {
        table[starts[i] as usize] = true;
        i += 1;
    }
    table
};

/// The ASCII a full-width form stands for; `None` for a character that shows nothing.
fn fold(c: char) -> Option<char> {
    match c {
        '\u{ff01}'..='\u{ff5e}' => char::from_u32(c as u32 - 0xfee0),
        '\u{3000}' => Some(' '),
        c if is_invisible(c) => None,
        c => Some(c),
    }
}

/// Format characters (general category Cf: zero-width spaces and joiners, bidi controls, the
/// byte-order mark, soft hyphen, tags) and the other characters that render as nothing
/// (variation selectors, Hangul fillers, the combining grapheme joiner).
#[rustfmt::skip]
fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{ad}' | '\u{34f}' | '\u{600}'..='\u{605}' | '\u{61c}' | '\u{6dd}' | '\u{70f}' | '\u{890}'..='\u{891}'
        | '\u{8e2}' | '\u{115f}'..='\u{1160}' | '\u{17b4}'..='\u{17b5}' | '\u{180b}'..='\u{180f}'
        | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{206f}'
        | '\u{3164}' | '\u{fe00}'..='\u{fe0f}' | '\u{feff}' | '\u{ffa0}' | '\u{fff9}'..='\u{fffb}'
        | '\u{110bd}' | '\u{110cd}' | '\u{13430}'..='\u{1343f}' | '\u{1bca0}'..='\u{1bca3}'
        | '\u{1d173}'..='\u{1d17a}' | '\u{e0001}' | '\u{e0020}'..='\u{e007f}' | '\u{e0100}'..='\u{e01ef}')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(text: &str) -> String {
        normalise(text).map_or_else(|| text.to_string(), |n| n.text)
    }

    #[test]
    fn plain_text_is_not_copied() {
        assert!(normalise("password=hunter2; 50% off").is_none());
        assert!(normalise("用户喜欢喝咖啡 — “quoted”").is_none());
        assert!(normalise(r"C:\Users\q").is_none());
    }

    #[test]
    fn every_character_fold_changes_starts_with_a_byte_that_is_looked_at() {
        let mut utf8 = [0; 4];
        for c in (0..=0x10ffff).filter_map(char::from_u32).filter(|&c| fold(c) != Some(c)) {
            assert!(MAY_START_CHANGE[usize::from(c.encode_utf8(&mut utf8).as_bytes()[0])], "{c:?}");
        }
    }

    #[test]
    fn encodings_are_undone() {
        assert_eq!(norm("sk-pro\u{200b}j-ab\u{feff}c"), "sk-proj-abc");
        assert_eq!(norm("ｓｋ－ｐｒｏｊ\u{3000}x"), "sk-proj x");
        assert_eq!(norm(r"https:\/\/hooks.slack.com\/x\u0041\ud83d\ude00"), "https://hooks.slack.com/xA\u{1f600}");
        assert_eq!(norm("https%3A%2F%2Fa%E2%80%8Bb%zz%"), "https://ab%zz%");
        assert_eq!(norm(r#"{\"k\":\"v\\n\"}\q"#), "{\"k\":\"v\\n\"}\\q");
    }

    #[test]
    fn spans_map_to_whole_original_units() {
        let text = "a%3Db\u{200b}c\\u0064e";
        let n = normalise(text).unwrap();
        assert_eq!(n.text, "a=bcde");
        let original = |s: usize, e: usize| &text[n.start_in_original(s)..n.end_in_original(e)];
        assert_eq!(original(0, 6), text);
        assert_eq!(original(1, 2), "%3D");
        assert_eq!(original(2, 3), "b");
        assert_eq!(original(3, 4), "c");
        assert_eq!(original(2, 4), "b\u{200b}c");
        assert_eq!(original(3, 5), "c\\u0064");
        assert_eq!(original(5, 6), "e");
    }
}
