//! The token estimator against a real BPE tokenizer: each sample class under
//! `tests/fixtures/tokens/` must be estimated within 10% of its `cl100k_base` count
//! (`reference.json`, written by `reference.mjs` with js-tiktoken; the TypeScript suite
//! checks that those counts still match the tokenizer).

use std::collections::BTreeMap;
use std::path::PathBuf;

use engram_core::tokens::estimate_tokens;

#[derive(serde::Deserialize)]
struct Reference {
    cl100k: usize,
    o200k: usize,
}

fn samples() -> Vec<(String, String, Reference)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tokens");
    let reference: BTreeMap<String, Reference> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("reference.json")).unwrap()).unwrap();
    assert!(reference.len() >= 15, "the sample set is complete");
    reference
        .into_iter()
        .map(|(name, r)| {
            let text = std::fs::read_to_string(dir.join(format!("{name}.txt"))).unwrap();
            (name, text, r)
        })
        .collect()
}

fn error(estimate: usize, real: usize) -> f64 {
    (estimate as f64 - real as f64) / real as f64 * 100.0
}

#[test]
fn estimate_tokens_within_ten_percent_of_cl100k_per_sample_class() {
    let mut failures = Vec::new();
    println!(
        "{:<16} {:>6} {:>7} {:>7} {:>8} {:>8} {:>8}",
        "sample", "chars", "cl100k", "o200k", "estimate", "vs cl100k", "vs o200k"
    );
    for (name, text, r) in samples() {
        let estimate = estimate_tokens(&text);
        let (e_cl, e_o) = (error(estimate, r.cl100k), error(estimate, r.o200k));
        println!(
            "{name:<16} {:>6} {:>7} {:>7} {estimate:>8} {e_cl:>+8.1}% {e_o:>+8.1}%",
            text.chars().count(),
            r.cl100k,
            r.o200k
        );
        if e_cl.abs() > 10.0 {
            failures.push(format!("{name}: {estimate} estimated, {} in cl100k_base ({e_cl:+.1}%)", r.cl100k));
        }
    }
    assert!(failures.is_empty(), "estimates more than 10% off:\n{}", failures.join("\n"));
}
