//! Okapi BM25 relevance of short documents (long-term memory facts) to a query.
//!
//! Tokens: text is lower-cased, then split into words — maximal runs of letters, digits and
//! `_`, where one `'`, `’` or `.` between two such characters stays inside the word (`don't`,
//! `3.14`, `node.js`), approximating Unicode word boundaries (UAX #29) without tables.
//! Characters of CJK scripts (Han, kana, Hangul, Bopomofo, CJK compatibility forms) have no
//! spaces between words, so each one is a token of its own and also ends a surrounding word.
//!
//! Scoring is standard BM25 with `k1 = 1.2`, `b = 0.75` and the non-negative IDF
//! `ln(1 + (N − n + 0.5) / (n + 0.5))`, summed over the query's tokens (a repeated query token
//! counts each time). Documents without a query token score `0`.

/// Term-frequency saturation.
pub const K1: f64 = 1.2;
/// Length normalisation.
pub const B: f64 = 0.75;

/// True for characters of scripts written without spaces between words, tokenised one by one.
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x2E80..=0x2FDF      // CJK radicals, Kangxi radicals
        | 0x3040..=0x30FF    // hiragana, katakana
        | 0x3100..=0x312F    // Bopomofo
        | 0x3130..=0x318F    // Hangul compatibility jamo
        | 0x31A0..=0x31FF    // Bopomofo extended, katakana phonetic extensions
        | 0x3400..=0x4DBF    // CJK extension A
        | 0x4E00..=0x9FFF    // CJK unified ideographs
        | 0x1100..=0x11FF    // Hangul jamo
        | 0xA960..=0xA97F    // Hangul jamo extended-A
        | 0xAC00..=0xD7FF    // Hangul syllables, jamo extended-B
        | 0xF900..=0xFAFF    // CJK compatibility ideographs
        | 0xFF66..=0xFF9F    // halfwidth katakana
        | 0x20000..=0x3134F  // CJK extensions B–G, compatibility supplement
    )
}

fn is_word_char(c: char) -> bool {
    (c.is_alphanumeric() || c == '_') && !is_cjk(c)
}

/// The tokens of `text`, in order (see the module comment for the rules).
pub fn tokenize(text: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    for_each_token(&text.to_lowercase(), |t| tokens.push(t.to_string()));
    tokens
}

/// Calls `f` with each token of `lower` (already lower-cased), in order: every token is a slice
/// of it (a word is a contiguous run; a CJK character stands alone), so nothing is allocated.
fn for_each_token(lower: &str, mut f: impl FnMut(&str)) {
    let mut word_start: Option<usize> = None;
    let mut chars = lower.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if is_word_char(c) {
            word_start.get_or_insert(i);
            continue;
        }
        let joins = matches!(c, '\'' | '’' | '.')
            && word_start.is_some()
            && chars.peek().is_some_and(|&(_, n)| is_word_char(n));
        if joins {
            continue;
        }
        if let Some(start) = word_start.take() {
            f(&lower[start..i]);
        }
        if is_cjk(c) {
            f(&lower[i..i + c.len_utf8()]);
        }
    }
    if let Some(start) = word_start {
        f(&lower[start..]);
    }
}

/// BM25 score of each document against `query`, in document order. Every score is finite and
/// `>= 0`; an empty query or an empty corpus gives zeros. Only the query's tokens are counted
/// in each document (one pass, no per-document table).
pub fn rank(query: &str, documents: &[String]) -> Vec<f64> {
    rank_by(query, documents)
}

/// [`rank`] of documents given as any string type.
pub fn rank_by<S: AsRef<str>>(query: &str, documents: &[S]) -> Vec<f64> {
    let query_tokens = tokenize(query);
    // The distinct query tokens; `slot[k]` is the distinct index of query token `k`.
    let mut distinct: Vec<&str> = Vec::new();
    let slot: Vec<usize> = query_tokens
        .iter()
        .map(|t| {
            distinct.iter().position(|d| *d == t.as_str()).unwrap_or_else(|| {
                distinct.push(t.as_str());
                distinct.len() - 1
            })
        })
        .collect();
    let width = distinct.len();
    // Per document: its length in tokens, and how often each distinct query token occurs.
    let mut tf = vec![0u32; documents.len() * width];
    let mut lengths = Vec::with_capacity(documents.len());
    for (d, doc) in documents.iter().enumerate() {
        let counts = &mut tf[d * width..(d + 1) * width];
        let mut len = 0u32;
        for_each_token(&doc.as_ref().to_lowercase(), |t| {
            len += 1;
            if let Some(k) = distinct.iter().position(|q| *q == t) {
                counts[k] += 1;
            }
        });
        lengths.push(f64::from(len));
    }
    if query_tokens.is_empty() || documents.is_empty() {
        return vec![0.0; documents.len()];
    }
    let n = documents.len() as f64;
    let avgdl = (lengths.iter().sum::<f64>() / n).max(1.0);
    let idf: Vec<f64> = (0..width)
        .map(|k| {
            let df = (0..documents.len()).filter(|d| tf[d * width + k] > 0).count() as f64;
            (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
        })
        .collect();
    lengths
        .iter()
        .enumerate()
        .map(|(d, &len)| {
            slot.iter()
                .map(|&k| {
                    let tf = f64::from(tf[d * width + k]);
                    if tf == 0.0 {
                        return 0.0;
                    }
                    idf[k] * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * len / avgdl))
                })
                .sum()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn docs(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn words_are_lowercased_runs_with_inner_apostrophes_and_dots() {
        assert_eq!(tokenize("Hello, World!"), ["hello", "world"]);
        assert_eq!(
            tokenize("don't use snake_case in Node.js 3.14."),
            ["don't", "use", "snake_case", "in", "node.js", "3.14"]
        );
        assert_eq!(tokenize("'quoted' -- a.b. c"), ["quoted", "a.b", "c"]);
        assert_eq!(tokenize("Ünïcödé ΑΒΓ"), ["ünïcödé", "αβγ"]);
        assert!(tokenize("  ... !!! ").is_empty());
    }

    #[test]
    fn cjk_characters_are_single_tokens() {
        assert_eq!(tokenize("用户喜欢Rust语言"), ["用", "户", "喜", "欢", "rust", "语", "言"]);
        assert_eq!(tokenize("カタカナ と 한국어"), ["カ", "タ", "カ", "ナ", "と", "한", "국", "어"]);
        assert_eq!(tokenize("，。"), Vec::<String>::new());
    }

    #[test]
    fn matches_a_hand_computed_score() {
        // N = 2, avgdl = 2; "rust" is in one document: idf = ln(1 + 1.5 / 1.5) = ln 2.
        let s = rank("rust", &docs(&["likes rust", "likes go"]));
        let expected = 2f64.ln() * (K1 + 1.0) / (1.0 + K1);
        assert!((s[0] - expected).abs() < 1e-12, "{s:?}");
        assert_eq!(s[1], 0.0);
    }

    #[test]
    fn rarer_terms_weigh_more_and_shorter_documents_win_ties() {
        let d =
            docs(&["the user prefers tabs", "the user likes rust", "the user likes rust and also many other things"]);
        let s = rank("user rust", &d);
        assert!(s[0] < s[1], "{s:?}");
        assert!(s[1] > s[2], "shorter document with the same match ranks higher: {s:?}");
        let common = rank("the", &d);
        let rare = rank("tabs", &d);
        assert!(rare[0] > common[0]);
    }

    #[test]
    fn term_frequency_saturates() {
        let d = docs(&["rust", "rust rust", "rust rust rust rust rust rust rust rust", "go"]);
        let s = rank("rust", &d);
        assert!(s[0] < s[1] && s[1] < s[2], "more occurrences score higher: {s:?}");
        let idf = (1.0 + (4.0 - 3.0 + 0.5) / (3.0 + 0.5f64)).ln();
        assert!(s[2] < idf * (K1 + 1.0), "but a term never contributes more than idf·(k1+1): {s:?}");
        assert!((s[2] - s[1]) / 6.0 < s[1] - s[0], "with diminishing returns per occurrence: {s:?}");
    }

    #[test]
    fn chinese_queries_match_per_character() {
        let d = docs(&["用户喜欢喝咖啡", "用户在北京工作", "the user writes Rust"]);
        let s = rank("他在哪里工作？", &d);
        assert!(s[1] > s[0] && s[0] == 0.0 && s[2] == 0.0, "{s:?}");
    }

    #[test]
    fn empty_inputs_give_zeros() {
        assert_eq!(rank("", &docs(&["a", "b"])), [0.0, 0.0]);
        assert_eq!(rank("a", &[]), Vec::<f64>::new());
        assert_eq!(rank("a", &docs(&["", ""])), [0.0, 0.0]);
        assert!(rank("x", &docs(&["x", ""])).iter().all(|v| v.is_finite() && *v >= 0.0));
    }

    /// The first implementation (a token table per document), kept as the reference the
    /// one-pass [`rank`] must equal bit for bit.
    fn rank_with_tables(query: &str, documents: &[String]) -> Vec<f64> {
        use std::collections::HashMap;
        let query_tokens = tokenize(query);
        let docs: Vec<HashMap<String, u32>> = documents
            .iter()
            .map(|d| {
                let mut counts = HashMap::new();
                for t in tokenize(d) {
                    *counts.entry(t).or_insert(0) += 1;
                }
                counts
            })
            .collect();
        let lengths: Vec<f64> = docs.iter().map(|d| f64::from(d.values().sum::<u32>())).collect();
        if query_tokens.is_empty() || docs.is_empty() {
            return vec![0.0; docs.len()];
        }
        let n = docs.len() as f64;
        let avgdl = (lengths.iter().sum::<f64>() / n).max(1.0);
        let idf: HashMap<&str, f64> = query_tokens
            .iter()
            .map(|t| {
                let df = docs.iter().filter(|d| d.contains_key(t)).count() as f64;
                (t.as_str(), (1.0 + (n - df + 0.5) / (df + 0.5)).ln())
            })
            .collect();
        docs.iter()
            .zip(&lengths)
            .map(|(counts, &len)| {
                query_tokens
                    .iter()
                    .map(|t| {
                        let tf = f64::from(counts.get(t).copied().unwrap_or(0));
                        if tf == 0.0 {
                            return 0.0;
                        }
                        idf[t.as_str()] * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * len / avgdl))
                    })
                    .sum()
            })
            .collect()
    }

    proptest::proptest! {
        #[test]
        fn one_pass_ranking_equals_the_table_ranking(
            query in "([a-c]{1,3}|用|Σ|don't|x\\.y| |\\.){0,8}",
            documents in proptest::collection::vec("([a-c]{1,3}|用户|ΣΑΣ|don't|x\\.y|'| |\\.|\\n){0,12}", 0..12),
        ) {
            let fast: Vec<u64> = rank(&query, &documents).iter().map(|v| v.to_bits()).collect();
            let slow: Vec<u64> = rank_with_tables(&query, &documents).iter().map(|v| v.to_bits()).collect();
            proptest::prop_assert_eq!(fast, slow);
        }
    }
}
