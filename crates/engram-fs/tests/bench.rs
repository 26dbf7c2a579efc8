//! Timings over a generated 10,000-file (~20 MB) tree, compared with ripgrep when installed.
//! Not part of the normal run:
//!
//! ```text
//! cargo test -p engram-fs --release --test bench -- --ignored --nocapture
//! ```
//!
//! `ENGRAM_BENCH_DIR=/some/dir` builds the tree there instead of a temp dir (e.g. to compare a
//! disk with tmpfs).

use engram_core::grep::{GrepOptions, OutputMode};
use engram_core::ops::GlobOptions;
use engram_core::FileTable;
use engram_fs::{FsOptions, RootedFs};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const FILES: usize = 10_000;
const RARE: &str = "zqxjv_rare_token";

fn generate(root: &Path) -> (FileTable, u64) {
    let exts = ["ts", "ts", "ts", "js", "md", "json", "rs", "txt"];
    let mut table = FileTable::new();
    let mut bytes = 0u64;
    let mut seed = 0x9e3779b97f4a7c15u64;
    let mut rnd = |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    for i in 0..FILES {
        let dir = format!("pkg{}/src/mod{}/part{}", rnd(10), rnd(10), rnd(5));
        let name = format!("{dir}/file{i}.{}", exts[rnd(exts.len() as u64) as usize]);
        let lines = 10 + rnd(35) as usize;
        let mut text = String::with_capacity(lines * 40);
        for l in 0..lines {
            text.push_str(&format!("export function handler{l}(req: Request) {{ return compute(req.body, {i}); }}\n"));
        }
        if i % 2000 == 7 {
            text.push_str(&format!("// {RARE} marker\n"));
        }
        let path = root.join(&name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &text).unwrap();
        bytes += text.len() as u64;
        table.write(&format!("/{name}"), text.into_bytes(), 0.0, None).unwrap();
    }
    (table, bytes)
}

fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut last = None;
    for _ in 0..runs {
        let t = Instant::now();
        let out = f();
        best = best.min(t.elapsed());
        last = Some(out);
    }
    (best, last.unwrap())
}

/// What `glob` would cost on a single-threaded walk with the same rules (for the parallel vs
/// sequential choice).
fn sequential_glob(root: &Path) -> usize {
    let glob = engram_core::glob::Glob::new("**/*.ts", "/").unwrap();
    let mut files = Vec::new();
    let walk = ignore::WalkBuilder::new(root)
        .hidden(false)
        .parents(false)
        .git_global(false)
        .git_exclude(false)
        .require_git(false)
        .filter_entry(|e| e.file_name() != ".git")
        .build();
    for e in walk.flatten() {
        if !e.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let v = format!("/{}", e.path().strip_prefix(root).unwrap().to_str().unwrap());
        if glob.is_match(&v, "/") {
            files.push((v, e.metadata().unwrap().len()));
        }
    }
    files.sort();
    files.len()
}

fn rg(args: &[&str], root: &Path) -> Option<(Duration, usize)> {
    let run = || Command::new("rg").args(args).arg(root).output().ok();
    run()?;
    let (d, out) = best_of(10, run);
    let out = out?;
    Some((d, out.stdout.split(|&b| b == b'\n').filter(|l| !l.is_empty()).count()))
}

#[test]
#[ignore = "benchmark: run with --release --ignored --nocapture"]
fn bench_grep_and_glob_on_ten_thousand_files() {
    let holder = tempfile::tempdir_in(
        std::env::var("ENGRAM_BENCH_DIR").unwrap_or_else(|_| std::env::temp_dir().display().to_string()),
    )
    .unwrap();
    let root = holder.path().join("tree");
    let t = Instant::now();
    let (table, bytes) = generate(&root);
    eprintln!("generated {FILES} files, {:.1} MB in {:?} under {}", bytes as f64 / 1e6, t.elapsed(), root.display());
    let fs = RootedFs::open(FsOptions { root: root.clone(), ..FsOptions::default() }).unwrap();
    // Warm the page cache and dentry cache once.
    let _ = fs.grep(&GrepOptions { pattern: RARE.into(), ..Default::default() });

    let grep_opts = GrepOptions { pattern: RARE.into(), ..Default::default() };
    let (d, r) = best_of(10, || fs.grep(&grep_opts).unwrap());
    eprintln!("engram-fs grep literal rare   : {:>8.2?}  ({} matches)", d, r.matches.unwrap().len());
    let common = GrepOptions { pattern: "compute".into(), output_mode: OutputMode::Count, ..Default::default() };
    let (d, r) = best_of(10, || fs.grep(&common).unwrap());
    eprintln!("engram-fs grep literal common : {:>8.2?}  ({} files, count mode)", d, r.counts.unwrap().len());
    let (d, r) = best_of(10, || table.grep(&grep_opts).unwrap());
    eprintln!("FileTable grep literal rare   : {:>8.2?}  ({} matches, in memory)", d, r.matches.unwrap().len());
    let glob_opts = GlobOptions { pattern: "**/*.ts".into(), ..Default::default() };
    let (d, r) = best_of(10, || fs.glob(&glob_opts).unwrap());
    eprintln!("engram-fs glob **/*.ts        : {:>8.2?}  ({} files)", d, r.files.len());
    let (d, n) = best_of(10, || sequential_glob(&root));
    eprintln!("sequential walk, same glob    : {:>8.2?}  ({} files; the alternative to the parallel walk)", d, n);
    let narrow = GlobOptions { pattern: "pkg3/src/mod4/**/*.ts".into(), ..Default::default() };
    let (d, r) = best_of(10, || fs.glob(&narrow).unwrap());
    eprintln!("engram-fs glob pkg3/src/mod4/**/*.ts: {:>8.2?}  ({} files)", d, r.files.len());

    match rg(&["-F", "-n", "--hidden", RARE], &root) {
        Some((d, n)) => {
            eprintln!("rg -F (rare)                  : {d:>8.2?}  ({n} lines, process spawn included)");
            let (d, n) = rg(&["--files", "--hidden", "-g", "*.ts"], &root).unwrap();
            eprintln!("rg --files -g '*.ts'          : {d:>8.2?}  ({n} files, process spawn included)");
            let (d, _) = rg(&["--version"], Path::new("")).unwrap_or_default();
            eprintln!("rg --version (spawn baseline) : {d:>8.2?}");
        }
        None => eprintln!("rg not installed; no comparison"),
    }
}
