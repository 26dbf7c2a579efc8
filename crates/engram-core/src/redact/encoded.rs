//! Base64 that decodes to text holding a secret (`echo -n sk-… | base64`, a key in a Kubernetes
//! secret): the decoded text is searched like any text (base64 in it too: each decoding shrinks
//! the text by a quarter, so nesting ends), and the encoded run is the secret.

use super::find;
use base64::alphabet::{STANDARD, URL_SAFE};
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine;

const LENIENT: GeneralPurposeConfig = GeneralPurposeConfig::new()
    .with_decode_padding_mode(DecodePaddingMode::Indifferent)
    .with_decode_allow_trailing_bits(true);
const BASE64: GeneralPurpose = GeneralPurpose::new(&STANDARD, LENIENT);
const BASE64_URL: GeneralPurpose = GeneralPurpose::new(&URL_SAFE, LENIENT);

/// True when `value`, decoded as base64 (either alphabet, padded or not), is text in which a rule
/// finds a secret.
pub(super) fn holds_secret(value: &str) -> bool {
    let engine = if value.contains(['-', '_']) { BASE64_URL } else { BASE64 };
    let Ok(bytes) = engine.decode(value) else { return false };
    let Ok(decoded) = String::from_utf8(bytes) else { return false };
    let printable = decoded.chars().all(|c| !c.is_control() || matches!(c, '\n' | '\r' | '\t'));
    printable && !find(&decoded).is_empty()
}
