//! Where a secret's span begins and ends: the group that holds it, the end of an assigned value,
//! and the rest of the token a match ends in.

use super::normalise::unescape;
use regex::Captures;

/// The secret's range: the first secret group that took part, else the whole match. `true`
/// when the value was quoted.
pub(super) fn secret_span(caps: &Captures<'_>) -> Option<(usize, usize, bool)> {
    for (name, quoted) in [("s", false), ("q1", true), ("q2", true), ("q3", true)] {
        if let Some(m) = caps.name(name) {
            return Some((m.start(), m.end(), quoted));
        }
    }
    caps.get(0).map(|m| (m.start(), m.end(), false))
}

/// An unquoted assigned value ends before the next pair of a query string, form body or connection
/// string (`&name=`, `;name=`), and before a `;` that ends it (`pass: string;`). Any other `&` or
/// `;` is part of it (`password: Tr0ub4dor&3`, `password=abc;XYZ`).
pub(super) fn assigned_value_end(text: &str, start: usize, end: usize) -> usize {
    let b = text.as_bytes();
    for i in memchr::memchr2_iter(b'&', b';', &b[start..end]).map(|i| start + i) {
        let ends_value = b[i] == b';' && i + 1 == end;
        if ends_value || starts_pair(&b[i + 1..], b[i] == b';') {
            return i;
        }
    }
    end
}

/// `name=` at the start of `rest`. Connection strings have names with spaces (`User Id=`).
fn starts_pair(rest: &[u8], spaces_in_name: bool) -> bool {
    let name_byte = |c: &&u8| c.is_ascii_alphanumeric() || b"_.-[]".contains(c) || (spaces_in_name && **c == b' ');
    let name = rest.iter().take_while(name_byte).count();
    name > 0 && rest[0] != b' ' && rest.get(name) == Some(&b'=')
}

pub(super) fn is_token_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'-'
}

/// Where the token a match ends in ends: a redaction never leaves a tail of the token. The match
/// runs on over letters, digits, `_` and `-`; over `+ / = . ~` when the match already holds that
/// character and a token character follows; and over JSON/JS escapes of those (`\u0041`, `\/`).
pub(super) fn token_end(text: &str, start: usize, end: usize) -> usize {
    let b = text.as_bytes();
    let matched = &b[start..end];
    let mut i = end;
    loop {
        let (c, len) = match b.get(i) {
            Some(b'\\') => match unescape(b, i) {
                Some((c, len)) if c.is_ascii() => (c as u8, len),
                _ => break,
            },
            Some(&c) => (c, 1),
            None => break,
        };
        let continues = is_token_byte(c)
            || (b"+/=.~".contains(&c)
                && (matched.contains(&c) || (c == b'/' && len == 2))
                && (b.get(i + len).is_some_and(|&n| is_token_byte(n) || n == b'\\') || c == b'='));
        if !continues {
            break;
        }
        i += len;
    }
    i
}
