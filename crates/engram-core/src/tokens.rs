//! Token estimates without a tokenizer download, good enough for budgets (summarization
//! thresholds, memory injection, long-term fact packing), not for billing.
//!
//! The heuristic, per Unicode scalar value:
//! - ASCII and Latin (below U+0370): ¼ token, i.e. ~4 characters per token;
//! - CJK (Han, kana, Hangul, Bopomofo, CJK symbols, fullwidth forms): 1 token each;
//! - astral code points (emoji, CJK Extension B and beyond): 2 tokens each;
//! - everything else in the BMP (Greek, Cyrillic, Arabic, Indic, general punctuation): ½ token.
//!
//! The sum is rounded up, so any non-empty text is at least 1 token.

/// True for the CJK blocks counted as one token per character.
fn is_cjk(c: u32) -> bool {
    (0x2e80..=0x9fff).contains(&c)
        || (0x1100..=0x11ff).contains(&c)
        || (0xa960..=0xa97f).contains(&c)
        || (0xac00..=0xd7ff).contains(&c)
        || (0xf900..=0xfaff).contains(&c)
        || (0xfe30..=0xfe4f).contains(&c)
        || (0xff00..=0xffef).contains(&c)
}

/// Estimated token count of `text`. Linear in the length, no allocation. `""` → 0.
pub fn estimate_tokens(text: &str) -> usize {
    let mut quarters = 0usize;
    for ch in text.chars() {
        let c = ch as u32;
        quarters += if c < 0x370 {
            1
        } else if c > 0xffff {
            8
        } else if is_cjk(c) {
            4
        } else {
            2
        };
    }
    quarters.div_ceil(4)
}

#[cfg(test)]
mod tests {
    use super::estimate_tokens;

    #[test]
    fn empty_and_short() {
        assert_eq!(estimate_tokens(""), 0);
        assert_eq!(estimate_tokens("a"), 1);
        assert_eq!(estimate_tokens("abcd"), 1);
        assert_eq!(estimate_tokens("abcde"), 2);
    }
}
