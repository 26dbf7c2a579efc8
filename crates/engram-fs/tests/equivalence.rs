//! The filesystem search answers exactly as engram-core's in-memory `FileTable` over the same
//! files: a generated 10,000-file tree queried in every output mode, plus random small trees.

mod common;

use common::Sandbox;
use engram_core::grep::{GrepOptions, OutputMode};
use engram_core::ops::GlobOptions;
use engram_core::FileTable;
use engram_fs::RootedFs;
use proptest::prelude::*;

/// A small deterministic generator (64-bit LCG) so the tree is identical on every run.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const WORDS: &[&str] = &["alpha", "beta", "gamma", "foo.bar", "Needle", "x+y", "fn", "let", "é", "  "];

fn content(rng: &mut Lcg) -> Vec<u8> {
    let lines = rng.below(40);
    let eol: &[u8] = if rng.below(5) == 0 { b"\r\n" } else { b"\n" };
    let mut out = Vec::new();
    for _ in 0..lines {
        for _ in 0..rng.below(8) {
            out.extend_from_slice(rng.pick(WORDS).as_bytes());
            out.push(b' ');
        }
        if rng.below(60) == 0 {
            out.extend_from_slice(b"needle");
        }
        if rng.below(200) == 0 {
            out.extend_from_slice(b"\xff\xfe");
        }
        out.extend_from_slice(eol);
    }
    match rng.below(50) {
        0 => out.insert(out.len() / 2, 0),              // binary
        1 => out.truncate(out.len().saturating_sub(1)), // no trailing newline
        _ => {}
    }
    out
}

fn tree(files: usize) -> Vec<(String, Vec<u8>)> {
    let mut rng = Lcg(0x5eed);
    let tops = ["src", "lib", "docs", ".hidden", "a b", "ünï"];
    let exts = ["ts", "js", "md", "txt", "rs"];
    let mut out = Vec::with_capacity(files);
    for i in 0..files {
        let depth = rng.below(4);
        let mut p = format!("/{}", rng.pick(&tops));
        for _ in 0..depth {
            p.push_str(&format!("/d{}", rng.below(12)));
        }
        p.push_str(&format!("/f{i}.{}", rng.pick(&exts)));
        out.push((p, content(&mut rng)));
    }
    out
}

fn load(files: &[(String, Vec<u8>)]) -> (Sandbox, FileTable) {
    let s = Sandbox::new();
    let mut t = FileTable::new();
    for (p, data) in files {
        s.put(&p[1..], data);
        t.write(p, data.clone(), 0.0, None).unwrap();
    }
    (s, t)
}

fn assert_same_grep(fs: &RootedFs, t: &FileTable, o: &GrepOptions) {
    let on_disk = fs.grep(o);
    let in_memory = t.grep(o);
    assert_eq!(on_disk, in_memory, "options {o:?}");
}

fn assert_same_glob(fs: &RootedFs, t: &FileTable, o: &GlobOptions) {
    let paths =
        |r: engram_core::ops::GlobResult| (r.files.into_iter().map(|f| f.path).collect::<Vec<_>>(), r.truncated);
    assert_eq!(fs.glob(o).map(paths), t.glob(o).map(paths), "options {o:?}");
}

#[test]
fn ten_thousand_files_search_like_the_file_table() {
    let files = tree(10_000);
    let (s, t) = load(&files);
    let single = files[17].0.clone();
    let mut queries = Vec::new();
    // Every mode with every pattern kind, unfiltered and uncapped...
    for mode in [OutputMode::Content, OutputMode::FilesWithMatches, OutputMode::Count] {
        for (pattern, regex, ignore_case) in [
            ("needle", false, false),
            ("needle", false, true),
            ("foo.bar", false, false),
            (r"^alpha\s+be", true, false),
        ] {
            queries.push(GrepOptions {
                pattern: pattern.into(),
                regex,
                ignore_case,
                output_mode: mode,
                ..Default::default()
            });
        }
        // ...then glob filters and caps (0, 1, and one that truncates mid-file) in each mode.
        for (glob, max_count) in
            [(Some("*.ts"), None), (Some("src/**/*.md"), Some(3)), (None, Some(0)), (None, Some(1)), (None, Some(37))]
        {
            queries.push(GrepOptions {
                pattern: "alpha".into(),
                glob: glob.map(str::to_string),
                max_count,
                output_mode: mode,
                ..Default::default()
            });
        }
    }
    for (path, context, max_count) in [
        ("/src", 2, Some(50)),
        ("/ünï", 1, None),
        ("/a b/d3", 3, Some(5)),
        (single.as_str(), 2, None),
        ("/", 1, Some(1000)),
    ] {
        queries.push(GrepOptions {
            pattern: "needle".into(),
            path: Some(path.into()),
            context,
            max_count,
            ..Default::default()
        });
    }
    for q in &queries {
        assert_same_grep(&s.fs, &t, q);
    }
    let truncated =
        s.fs.grep(&GrepOptions { pattern: "alpha".into(), max_count: Some(37), ..Default::default() }).unwrap();
    assert!(truncated.truncated && truncated.matches.unwrap().len() == 37);

    for (pattern, path, max_results) in [
        ("**/*.ts", None, None),
        ("*.md", Some("/docs"), None),
        ("src/**", None, Some(100)),
        ("/lib/*/*.rs", Some("/src"), None),
        ("**/.hidden/**", None, None),
        ("{src,lib}/**/d1/*.{ts,js}", None, Some(3)),
        ("**", Some("/ünï/d2"), None),
    ] {
        let o = GlobOptions { pattern: pattern.into(), path: path.map(str::to_string), max_results };
        assert_same_glob(&s.fs, &t, &o);
    }
}

fn small_tree() -> impl Strategy<Value = Vec<(String, Vec<u8>)>> {
    let name = prop::sample::select(vec!["a", "b", ".c", "d.ts", "e.md"]);
    let path = prop::collection::vec(name, 1..4).prop_map(|segs| format!("/{}", segs.join("/")));
    let byte = prop::sample::select(vec![b'x', b'y', b'\n', b'\r', b' ', 0xff]);
    prop::collection::vec((path, prop::collection::vec(byte, 0..60)), 0..12)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn random_trees_search_like_the_file_table(
        files in small_tree(),
        pattern in prop::sample::select(vec!["x", "xy", "y y", "^x", "x$"]),
        regex in any::<bool>(),
        mode in prop::sample::select(vec![OutputMode::Content, OutputMode::FilesWithMatches, OutputMode::Count]),
        max_count in prop::option::of(0usize..6),
        context in 0usize..3,
        glob in prop::option::of(prop::sample::select(vec!["*.ts", "a/*", "**/b"])),
    ) {
        // Keep only a consistent set: no path may be both a file and a directory.
        let mut kept: Vec<(String, Vec<u8>)> = Vec::new();
        for (p, d) in files {
            let clash = kept.iter().any(|(q, _)| q == &p || q.starts_with(&format!("{p}/")) || p.starts_with(&format!("{q}/")));
            if !clash {
                kept.push((p, d));
            }
        }
        let (s, t) = load(&kept);
        let o = GrepOptions {
            pattern: pattern.into(), regex, output_mode: mode, max_count, context,
            glob: glob.map(str::to_string), ..Default::default()
        };
        prop_assert_eq!(s.fs.grep(&o), t.grep(&o));
        let g = GlobOptions { pattern: glob.unwrap_or("**").into(), path: None, max_results: max_count };
        let paths = |r: engram_core::ops::GlobResult| (r.files.into_iter().map(|f| f.path).collect::<Vec<_>>(), r.truncated);
        prop_assert_eq!(s.fs.glob(&g).map(paths), t.glob(&g).map(paths));
    }
}
