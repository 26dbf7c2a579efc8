//! Base64 that decodes to text holding a secret (`echo -n sk-… | base64`, a key in a Kubernetes
//! secret): the decoded text is searched like any text (base64 in it too: each decoding shrinks
//! the text by a quarter, so nesting ends), and the encoded run is the secret.

use super::find;

/// True when `value`, decoded as base64 (either alphabet, padded or not), is text in which a rule
/// finds a secret.
pub(super) fn holds_secret(value: &str) -> bool {
    let Some(bytes) = decode(value) else { return false };
    let Ok(decoded) = String::from_utf8(bytes) else { return false };
    let printable = decoded.chars().all(|c| !c.is_control() || matches!(c, '\n' | '\r' | '\t'));
    printable && !find(&decoded).is_empty()
}

/// Lenient base64: both alphabets, padding optional, leftover bits ignored. Hand-written rather
/// than the `base64` crate, which added 4.4 KB to the WASM module for the same result
/// (docs/decisions/2026-11-29-redaction-normalisation.md); the tests check it against the crate.
fn decode(value: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(value.len() * 3 / 4);
    let (mut bits, mut pending) = (0u32, 0);
    for c in value.trim_end_matches('=').bytes() {
        bits = (bits << 6) | sextet(c)?;
        pending += 6;
        if pending >= 8 {
            pending -= 8;
            out.push((bits >> pending) as u8);
        }
    }
    Some(out)
}

fn sextet(c: u8) -> Option<u32> {
    let v = match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' | b'-' => 62,
        b'/' | b'_' => 63,
        _ => return None,
    };
    Some(u32::from(v))
}

#[cfg(test)]
mod tests {
    use super::decode;
    use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
    use base64::Engine;

    #[test]
    fn decodes_as_the_base64_crate_does() {
        let bytes: Vec<u8> = (0..=255u8).cycle().take(600).collect();
        for n in 0..bytes.len() {
            let data = &bytes[n / 3..n];
            assert_eq!(decode(&STANDARD.encode(data)).as_deref(), Some(data));
            assert_eq!(decode(&URL_SAFE_NO_PAD.encode(data)).as_deref(), Some(data));
        }
        assert_eq!(decode("c2stcHJv*"), None);
    }
}
