//! Throughput of `tokens::estimate_tokens` on the token samples (characters per microsecond):
//! `cargo run --release -p engram-core --example tokens_bench`.
use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

fn main() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tokens");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".txt"))
        .collect();
    names.sort();
    let mut all = String::new();
    for name in &names {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        let chars = text.chars().count();
        let rate = rate(&text, chars);
        println!("{:<16} {rate:>8.0} chars/µs", name.trim_end_matches(".txt"));
        all.push_str(&text);
    }
    let big = all.repeat(50);
    println!("{:<16} {:>8.0} chars/µs ({} MB)", "all ×50", rate(&big, big.chars().count()), big.len() / 1_000_000);
}

fn rate(text: &str, chars: usize) -> f64 {
    let rounds = (20_000_000 / text.len().max(1)).clamp(3, 20_000);
    let mut best = f64::MAX;
    for _ in 0..5 {
        let start = Instant::now();
        for _ in 0..rounds {
            black_box(engram_core::tokens::estimate_tokens(black_box(text)));
        }
        best = best.min(start.elapsed().as_secs_f64() / rounds as f64);
    }
    chars as f64 / (best * 1e6)
}
