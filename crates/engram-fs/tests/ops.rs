//! Behaviour of each operation: listings, metadata, atomic writes, compare-and-swap, edits,
//! deletes, search skip rules and error codes.

mod common;

use common::{permissions_enforced, temp_files, Sandbox};
use engram_core::grep::{GrepOptions, OutputMode};
use engram_core::ops::{EditOptions, GlobOptions};
use engram_core::ErrorCode;
use engram_fs::{FsOptions, RootedFs};
use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

fn paths(v: &[engram_core::FileInfo]) -> Vec<&str> {
    v.iter().map(|f| f.path.as_str()).collect()
}

fn grep(fs: &RootedFs, pattern: &str, path: &str) -> Vec<String> {
    let opts = GrepOptions {
        pattern: pattern.into(),
        path: Some(path.into()),
        output_mode: OutputMode::FilesWithMatches,
        ..Default::default()
    };
    fs.grep(&opts).unwrap().files.unwrap()
}

fn glob(fs: &RootedFs, pattern: &str) -> Vec<String> {
    let r = fs.glob(&GlobOptions { pattern: pattern.into(), ..Default::default() }).unwrap();
    r.files.into_iter().map(|f| f.path).collect()
}

#[test]
fn handle_is_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<RootedFs>();
}

#[test]
fn open_requires_an_existing_directory() {
    let s = Sandbox::new();
    s.put("file", "x");
    let missing = RootedFs::open(FsOptions { root: s.host("nope"), ..FsOptions::default() });
    assert_eq!(missing.unwrap_err().code, ErrorCode::FileNotFound);
    let file = RootedFs::open(FsOptions { root: s.host("file"), ..FsOptions::default() });
    assert_eq!(file.unwrap_err().code, ErrorCode::InvalidPath);
    assert_eq!(s.fs.root(), s.root.as_path());
}

#[test]
fn ls_lists_one_level_sorted_with_directory_slashes() {
    let s = Sandbox::new();
    for p in ["b.txt", "a/x.md", "a/y/z.md", "a.txt", "c/d/e", ".hidden"] {
        s.put(p, p);
    }
    symlink("a", s.host("link")).unwrap();
    let root = s.fs.ls("/").unwrap();
    assert_eq!(paths(&root), vec!["/.hidden", "/a.txt", "/a/", "/b.txt", "/c/", "/link"]);
    assert!(root[2].is_dir && root[2].size.is_none());
    assert!(!root[5].is_dir, "links are listed as non-directories");
    assert_eq!(root[1].size, Some(5));
    assert_eq!(paths(&s.fs.ls("/a").unwrap()), vec!["/a/x.md", "/a/y/"]);
    assert_eq!(paths(&s.fs.ls("/a/./y/../x.md").unwrap()), vec!["/a/x.md"]);
    assert_eq!(s.fs.ls("/nope").unwrap_err().code, ErrorCode::FileNotFound);
    assert_eq!(s.fs.ls("/a.txt/x").unwrap_err().code, ErrorCode::FileNotFound);
}

#[test]
fn names_without_a_virtual_path_are_left_out() {
    use std::os::unix::ffi::OsStrExt;
    let s = Sandbox::new();
    s.put("ok.txt", "needle");
    s.put("back\\slash.txt", "needle");
    fs::write(s.root.join(std::ffi::OsStr::from_bytes(b"bad\xff.txt")), "needle").unwrap();
    assert_eq!(paths(&s.fs.ls("/").unwrap()), vec!["/ok.txt"]);
    assert_eq!(grep(&s.fs, "needle", "/"), vec!["/ok.txt"]);
    assert_eq!(glob(&s.fs, "**"), vec!["/ok.txt"]);
}

#[test]
fn stat_reports_versions_for_files_and_slashes_for_directories() {
    let s = Sandbox::new();
    s.put("d/f.txt", "hello");
    let f = s.fs.stat("/d/f.txt").unwrap();
    assert_eq!((f.is_dir, f.size), (false, Some(5)));
    let v = f.version.unwrap();
    let (nanos, size) = v.split_once('-').unwrap();
    assert_eq!(size, "5");
    let ms = f.modified_at.unwrap();
    assert!((nanos.parse::<f64>().unwrap() / 1e6 - ms).abs() < 1.0);
    assert!(ms > 1.6e12, "milliseconds since the epoch");
    let d = s.fs.stat("/d").unwrap();
    assert_eq!((d.path.as_str(), d.is_dir, d.version), ("/d/", true, None));
    assert_eq!(s.fs.stat("/").unwrap().path, "/");
    assert_eq!(s.fs.stat("/missing").unwrap_err().code, ErrorCode::FileNotFound);
}

#[test]
fn read_matches_read_lines_on_the_same_bytes() {
    use engram_core::read::read_lines;
    let s = Sandbox::new();
    // Lines straddling the 64 KiB stream-buffer boundaries, multi-byte characters cut by them.
    let big: Vec<u8> = (0..20_000).flat_map(|i| format!("line {i} {}\r\n", "é".repeat(i % 7)).into_bytes()).collect();
    let cases: Vec<&[u8]> = vec![
        b"",
        b"a",
        b"a\n",
        b"\n\n\n",
        b"l0\nl1\r\nl2\nl3",
        b"one\r\ntwo\r\n",
        b"no newline at the end",
        b"tail\r",
        b"ok\n\xff\xfe\n\xe6\x96",
        &big,
    ];
    for (i, data) in cases.iter().enumerate() {
        let p = format!("/f{i}");
        s.fs.write(&p, data, None).unwrap();
        for offset in [0, 1, 2, 3, 10, 4_000, 19_999, 20_000, 25_000] {
            for limit in [None, Some(0), Some(1), Some(2), Some(3_333)] {
                assert_eq!(
                    s.fs.read(&p, offset, limit).unwrap(),
                    read_lines(data, offset, limit),
                    "{p} {offset} {limit:?}"
                );
            }
        }
    }
}

#[test]
fn read_errors_and_caps() {
    let s = Sandbox::with(|o| o.max_file_bytes = 16);
    s.put("d/small.txt", "a\nb\nc");
    s.put("big.txt", "0123456789\n0123456789\n0123456789\n");
    assert_eq!(s.fs.read("/d", 0, None).unwrap_err().code, ErrorCode::IsDirectory);
    assert_eq!(s.fs.read("/nope", 0, None).unwrap_err().code, ErrorCode::FileNotFound);
    assert_eq!(s.fs.read("/d/small.txt", 1, Some(1)).unwrap().content, "b");
    // A read stays within the cap when it asks for few enough lines, even of a big file.
    let page = s.fs.read("/big.txt", 2, Some(1)).unwrap();
    assert_eq!((page.content.as_str(), page.total_lines), ("0123456789", 3));
    assert_eq!(s.fs.read("/big.txt", 0, None).unwrap_err().code, ErrorCode::TooLarge);
    assert_eq!(s.fs.read_bytes("/big.txt").unwrap_err().code, ErrorCode::TooLarge);
    assert_eq!(s.fs.read_bytes("/d/small.txt").unwrap(), b"a\nb\nc");
    assert_eq!(s.fs.read_bytes("/d").unwrap_err().code, ErrorCode::IsDirectory);
}

#[test]
fn fifos_are_refused_without_blocking() {
    let s = Sandbox::new();
    let fifo = s.host("pipe");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|st| st.success()) {
        eprintln!("mkfifo unavailable; skipping");
        return;
    }
    assert_eq!(s.fs.read("/pipe", 0, None).unwrap_err().code, ErrorCode::Unsupported);
    assert_eq!(s.fs.read_bytes("/pipe").unwrap_err().code, ErrorCode::Unsupported);
    assert!(grep(&s.fs, "x", "/").is_empty());
    assert!(!s.fs.stat("/pipe").unwrap().is_dir);
}

#[test]
fn write_creates_parents_and_refuses_bad_targets() {
    let s = Sandbox::with(|o| o.max_file_bytes = 8);
    let info = s.fs.write("/a/b/c.txt", b"hi", None).unwrap();
    assert_eq!((info.path.as_str(), info.size), ("/a/b/c.txt", Some(2)));
    assert_eq!(fs::read(s.host("a/b/c.txt")).unwrap(), b"hi");
    assert_eq!(info, s.fs.stat("/a/b/c.txt").unwrap());
    assert_eq!(s.fs.write("/a", b"x", None).unwrap_err().code, ErrorCode::IsDirectory);
    assert_eq!(s.fs.write("/", b"x", None).unwrap_err().code, ErrorCode::IsDirectory);
    let e = s.fs.write("/a/b/c.txt/d/e", b"x", None).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidPath);
    assert!(e.message.contains("'/a/b/c.txt' is a file"), "{}", e.message);
    assert!(!s.host("a/b/c.txt/d").exists());
    assert_eq!(s.fs.write("/big", b"123456789", None).unwrap_err().code, ErrorCode::TooLarge);
    assert!(!s.host("big").exists());
    assert!(temp_files(&s.root).is_empty());
}

#[test]
fn write_through_an_inside_directory_link_lands_in_its_target() {
    let s = Sandbox::new();
    fs::create_dir(s.host("real")).unwrap();
    symlink("real", s.host("alias")).unwrap();
    s.fs.write("/alias/new/f.txt", b"x", None).unwrap();
    assert_eq!(fs::read(s.host("real/new/f.txt")).unwrap(), b"x");
    s.put("plain", "x");
    symlink("plain", s.host("file_alias")).unwrap();
    assert_eq!(s.fs.write("/file_alias/f", b"x", None).unwrap_err().code, ErrorCode::InvalidPath);
}

#[test]
fn write_keeps_the_mode_of_the_replaced_file() {
    let s = Sandbox::new();
    s.put("run.sh", "#!/bin/sh\n");
    fs::set_permissions(s.host("run.sh"), fs::Permissions::from_mode(0o750)).unwrap();
    s.fs.write("/run.sh", b"#!/bin/sh\necho\n", None).unwrap();
    assert_eq!(fs::metadata(s.host("run.sh")).unwrap().permissions().mode() & 0o777, 0o750);
}

#[test]
fn compare_and_swap_on_versions() {
    let s = Sandbox::new();
    let v1 = s.fs.write("/m.md", b"1", Some("0")).unwrap().version.unwrap();
    assert_eq!(s.fs.write("/m.md", b"x", Some("0")).unwrap_err().code, ErrorCode::Conflict);
    let v2 = s.fs.write("/m.md", b"2", Some(&v1)).unwrap().version.unwrap();
    assert_ne!(v1, v2);
    assert_eq!(s.fs.write("/m.md", b"3", Some(&v1)).unwrap_err().code, ErrorCode::Conflict);
    assert_eq!(s.fs.read_bytes("/m.md").unwrap(), b"2");
    assert_eq!(s.fs.write("/other", b"x", Some("123-1")).unwrap_err().code, ErrorCode::Conflict);
    assert_eq!(s.fs.stat("/m.md").unwrap().version.unwrap(), v2);
}

#[test]
fn same_size_rewrites_always_change_the_version() {
    let s = Sandbox::new();
    let mut seen = std::collections::HashSet::new();
    for i in 0..200u32 {
        let v = s.fs.write("/v", format!("{:04}", i % 2).as_bytes(), None).unwrap().version.unwrap();
        assert!(seen.insert(v), "version repeated on write {i}");
    }
}

#[test]
fn concurrent_compare_and_swap_loses_no_update() {
    let s = Sandbox::new();
    s.fs.write("/counter", b"0", None).unwrap();
    let threads = 4;
    let per_thread = 25;
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                for _ in 0..per_thread {
                    loop {
                        let version = s.fs.stat("/counter").unwrap().version.unwrap();
                        let n: u32 = String::from_utf8(s.fs.read_bytes("/counter").unwrap()).unwrap().parse().unwrap();
                        match s.fs.write("/counter", (n + 1).to_string().as_bytes(), Some(&version)) {
                            Ok(_) => break,
                            Err(e) => assert_eq!(e.code, ErrorCode::Conflict),
                        }
                    }
                }
            });
        }
    });
    assert_eq!(s.fs.read_bytes("/counter").unwrap(), (threads * per_thread).to_string().as_bytes());
}

#[test]
fn readers_never_see_a_half_written_file() {
    let s = Sandbox::new();
    let size = 512 << 10;
    s.fs.write("/f", &vec![b'a'; size], None).unwrap();
    let done = Arc::new(AtomicBool::new(false));
    std::thread::scope(|scope| {
        scope.spawn(|| {
            for i in 0..40 {
                let byte = if i % 2 == 0 { b'b' } else { b'a' };
                s.fs.write("/f", &vec![byte; size], None).unwrap();
            }
            done.store(true, Ordering::SeqCst);
        });
        let mut reads = 0;
        while !done.load(Ordering::SeqCst) || reads == 0 {
            let data = s.fs.read_bytes("/f").unwrap();
            assert_eq!(data.len(), size);
            assert!(data.iter().all(|&b| b == data[0]), "mixed content observed");
            reads += 1;
        }
    });
    assert!(temp_files(&s.root).is_empty());
}

#[test]
fn edit_replaces_keeps_crlf_and_checks_versions() {
    let s = Sandbox::new();
    s.put("crlf.txt", "one\r\ntwo\r\nthree\r\n");
    let before = s.fs.stat("/crlf.txt").unwrap().version.unwrap();
    let opts = EditOptions {
        path: "/crlf.txt".into(),
        old_string: "one\ntwo".into(),
        new_string: "uno\ndos".into(),
        ..Default::default()
    };
    let r = s.fs.edit(&opts).unwrap();
    assert_eq!((r.path.as_str(), r.occurrences), ("/crlf.txt", 1));
    assert_ne!(r.version, before);
    assert_eq!(r.version, s.fs.stat("/crlf.txt").unwrap().version.unwrap());
    assert_eq!(s.fs.read_bytes("/crlf.txt").unwrap(), b"uno\r\ndos\r\nthree\r\n");
    let stale =
        EditOptions { old_string: "three".into(), new_string: "3".into(), if_version: Some(before), ..opts.clone() };
    assert_eq!(s.fs.edit(&stale).unwrap_err().code, ErrorCode::Conflict);
    let current = EditOptions { if_version: Some(r.version.clone()), ..stale };
    assert_eq!(s.fs.edit(&current).unwrap().occurrences, 1);
    assert_eq!(s.fs.edit(&opts).unwrap_err().code, ErrorCode::StringNotFound);
    let all = EditOptions { old_string: "\r\n".into(), new_string: "\n".into(), replace_all: true, ..opts.clone() };
    assert_eq!(
        s.fs.edit(&EditOptions { replace_all: false, ..all.clone() }).unwrap_err().code,
        ErrorCode::MultipleMatches
    );
    assert_eq!(s.fs.edit(&all).unwrap().occurrences, 3);
    let missing = EditOptions { path: "/nope".into(), ..opts.clone() };
    assert_eq!(s.fs.edit(&missing).unwrap_err().code, ErrorCode::FileNotFound);
    let dir = EditOptions { path: "/".into(), ..opts };
    assert_eq!(s.fs.edit(&dir).unwrap_err().code, ErrorCode::IsDirectory);
    assert!(temp_files(&s.root).is_empty());
}

#[test]
fn edit_respects_the_size_cap() {
    let s = Sandbox::with(|o| o.max_file_bytes = 10);
    s.put("f", "0123456789");
    s.put("g", "ab");
    let grow =
        EditOptions { path: "/g".into(), old_string: "a".into(), new_string: "x".repeat(20), ..Default::default() };
    assert_eq!(s.fs.edit(&grow).unwrap_err().code, ErrorCode::TooLarge);
    s.put("f", "01234567890");
    let big = EditOptions { path: "/f".into(), old_string: "0".into(), new_string: "x".into(), ..Default::default() };
    assert_eq!(s.fs.edit(&big).unwrap_err().code, ErrorCode::TooLarge);
    assert_eq!(fs::read(s.host("g")).unwrap(), b"ab");
}

#[test]
fn delete_files_directories_and_links() {
    let s = Sandbox::new();
    for p in ["d/a", "d/b", "d/e/f", "d/e/g/h", "keep/k"] {
        s.put(p, "x");
    }
    fs::create_dir(s.host("d/empty")).unwrap();
    symlink("../keep", s.host("d/link_to_keep")).unwrap();
    assert_eq!(s.fs.delete("/d/a").unwrap(), 1);
    assert_eq!(s.fs.delete("/d/a").unwrap_err().code, ErrorCode::FileNotFound);
    // b, f, h and the link: 4 non-directories; the link's target survives.
    assert_eq!(s.fs.delete("/d").unwrap(), 4);
    assert!(!s.host("d").exists());
    assert_eq!(fs::read(s.host("keep/k")).unwrap(), b"x");
    assert_eq!(s.fs.delete("/").unwrap_err().code, ErrorCode::PermissionDenied);
    assert_eq!(s.fs.delete("/missing/x").unwrap_err().code, ErrorCode::FileNotFound);
}

#[test]
fn gitignore_is_honoured_and_git_is_always_skipped() {
    let s = Sandbox::new();
    s.put(".gitignore", "ignored/\n*.log\n/build\n");
    s.put(".git/config", "needle");
    s.put(".git/objects/x", "needle");
    s.put("src/.ignore", "secret.txt\n");
    s.put("src/.gitignore", "!keep.log\n");
    for p in [
        "a.txt",
        ".env",
        "ignored/x.txt",
        "app.log",
        "build/out.txt",
        "src/build/kept.txt",
        "src/secret.txt",
        "src/keep.log",
        "src/drop.log",
        "src/main.ts",
    ] {
        s.put(p, "needle\n");
    }
    let honoured = vec!["/.env", "/a.txt", "/src/build/kept.txt", "/src/keep.log", "/src/main.ts"];
    assert_eq!(grep(&s.fs, "needle", "/"), honoured);
    assert_eq!(
        glob(&s.fs, "**"),
        vec![
            "/.env",
            "/.gitignore",
            "/a.txt",
            "/src/.gitignore",
            "/src/.ignore",
            "/src/build/kept.txt",
            "/src/keep.log",
            "/src/main.ts"
        ]
    );
    // A sub-directory search sees the same rules as a whole-tree search.
    assert_eq!(grep(&s.fs, "needle", "/src"), vec!["/src/build/kept.txt", "/src/keep.log", "/src/main.ts"]);
    assert!(grep(&s.fs, "needle", "/ignored").is_empty());
    // A file named directly is searched whatever the ignore rules say.
    assert_eq!(grep(&s.fs, "needle", "/app.log"), vec!["/app.log"]);

    let all =
        RootedFs::open(FsOptions { root: s.root.clone(), respect_gitignore: false, ..FsOptions::default() }).unwrap();
    let everything = grep(&all, "needle", "/");
    assert_eq!(everything.len(), 10);
    assert!(everything.iter().all(|p| !p.starts_with("/.git/")));
    assert!(glob(&all, "**").iter().all(|p| !p.starts_with("/.git/")));
    assert!(glob(&all, ".git/*").is_empty());
}

#[test]
fn grep_skips_binary_oversized_and_linked_files() {
    let s = Sandbox::with(|o| o.max_file_bytes = 64);
    s.put("text.txt", "needle\n");
    s.put("bin.dat", b"needle\0\x01\x02");
    s.put("huge.txt", format!("needle\n{}", "x".repeat(100)));
    symlink("text.txt", s.host("link.txt")).unwrap();
    assert_eq!(grep(&s.fs, "needle", "/"), vec!["/text.txt"]);
    assert!(grep(&s.fs, "needle", "/huge.txt").is_empty());
    assert_eq!(glob(&s.fs, "*.txt"), vec!["/huge.txt", "/text.txt"], "glob lists files of any size, never links");
}

#[test]
fn names_no_virtual_path_can_hold_are_reported_not_silently_missed() {
    use std::os::unix::ffi::OsStrExt;
    let s = Sandbox::new();
    s.put("ok.txt", "needle\n");
    s.put("a\nb.txt", "needle\n");
    s.put("~$draft.txt", "needle\n");
    s.put("sub/x\\y.txt", "needle\n");
    fs::write(s.host("sub").join(std::ffi::OsStr::from_bytes(b"\xff.txt")), "needle\n").unwrap();
    // Left out without a report: a name an ignore rule covers, and a link (never searched).
    s.put(".gitignore", "*.tmp\n");
    s.put("~$ignored.tmp", "needle\n");
    symlink("ok.txt", s.host("~link.txt")).unwrap();
    let report = s.fs.grep_report(&GrepOptions { pattern: "needle".into(), ..Default::default() }, None).unwrap();
    assert_eq!(report.result.matches.unwrap().iter().map(|m| m.path.as_str()).collect::<Vec<_>>(), ["/ok.txt"]);
    let skipped: Vec<(&str, &str)> = report.skipped.iter().map(|k| (k.path.as_str(), k.reason)).collect();
    assert_eq!(
        skipped,
        [
            ("/a\\nb.txt", "invalid_name"),
            ("/sub/x\\\\y.txt", "invalid_name"),
            ("/sub/\u{fffd}.txt", "invalid_name"),
            ("/~$draft.txt", "invalid_name"),
        ]
    );
    assert_eq!(glob(&s.fs, "**"), vec!["/.gitignore", "/ok.txt"]);
    let globbed = s.fs.glob_report(&GlobOptions { pattern: "**".into(), ..Default::default() }, None).unwrap();
    assert_eq!(globbed.skipped, report.skipped, "a glob's walk reports what a grep's does");
    let opts = GrepOptions { pattern: "needle".into(), ..Default::default() };
    let text = s.fs.grep_text(&opts, 10_000, None).unwrap();
    let note = "Note: not searched: /a\\nb.txt (invalid name), /sub/x\\\\y.txt (invalid name), /sub/\u{fffd}.txt (invalid name), /~$draft.txt (invalid name)";
    assert!(text.ends_with(&format!("\n\n{note}")), "{text}");
}

#[test]
fn directories_past_the_walk_depth_are_reported_too_deep() {
    use engram_fs::walk::MAX_WALK_DEPTH;
    let s = Sandbox::new();
    let levels = vec!["d"; MAX_WALK_DEPTH + 1].join("/");
    s.put(&format!("{levels}/lost.txt"), "needle\n");
    s.put("d/near.txt", "needle\n");
    let deepest = format!("/{levels}");
    let expected = vec![(deepest.as_str(), "too_deep")];
    let grep = s.fs.grep_report(&GrepOptions { pattern: "needle".into(), ..Default::default() }, None).unwrap();
    assert_eq!(grep.result.matches.unwrap().iter().map(|m| m.path.as_str()).collect::<Vec<_>>(), ["/d/near.txt"]);
    assert_eq!(grep.skipped.iter().map(|k| (k.path.as_str(), k.reason)).collect::<Vec<_>>(), expected);
    let globbed = s.fs.glob_report(&GlobOptions { pattern: "**/*.txt".into(), ..Default::default() }, None).unwrap();
    assert_eq!(globbed.result.files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(), ["/d/near.txt"]);
    assert_eq!(globbed.skipped.iter().map(|k| (k.path.as_str(), k.reason)).collect::<Vec<_>>(), expected);
    let text =
        s.fs.glob_text(&GlobOptions { pattern: "**/*.txt".into(), ..Default::default() }, 100_000, None).unwrap();
    assert_eq!(text, format!("/d/near.txt\n\nNote: not searched: {deepest} (too deep)"));
}

#[test]
fn grep_scope_errors() {
    let s = Sandbox::new();
    s.put("a/b.txt", "x\n");
    let missing = GrepOptions { pattern: "x".into(), path: Some("/nope".into()), ..Default::default() };
    assert_eq!(s.fs.grep(&missing).unwrap_err().code, ErrorCode::FileNotFound);
    let bad = GrepOptions { pattern: "(".into(), regex: true, ..Default::default() };
    assert_eq!(s.fs.grep(&bad).unwrap_err().code, ErrorCode::InvalidPattern);
    let one = GrepOptions { pattern: "x".into(), path: Some("/a/b.txt".into()), ..Default::default() };
    let r = s.fs.grep(&one).unwrap().matches.unwrap();
    assert_eq!((r.len(), r[0].path.as_str(), r[0].line), (1, "/a/b.txt", 1));
}

#[test]
fn glob_scoping_sorting_and_caps() {
    let s = Sandbox::new();
    for p in ["src/a.ts", "src/lib/b.ts", "src/lib/c.js", "README.md", "docs/x.md"] {
        s.put(p, "x");
    }
    assert_eq!(glob(&s.fs, "**/*.ts"), vec!["/src/a.ts", "/src/lib/b.ts"]);
    assert_eq!(glob(&s.fs, "*.md"), vec!["/README.md"]);
    assert_eq!(glob(&s.fs, "/docs/*.md"), vec!["/docs/x.md"]);
    assert_eq!(glob(&s.fs, "src"), Vec::<String>::new(), "directories are not listed");
    let scoped =
        s.fs.glob(&GlobOptions { pattern: "*.ts".into(), path: Some("/src/lib".into()), max_results: None }).unwrap();
    assert_eq!(paths(&scoped.files), vec!["/src/lib/b.ts"]);
    assert_eq!(scoped.files[0], s.fs.stat("/src/lib/b.ts").unwrap());
    let capped = s.fs.glob(&GlobOptions { pattern: "**".into(), max_results: Some(2), ..Default::default() }).unwrap();
    assert_eq!((paths(&capped.files), capped.truncated), (vec!["/README.md", "/docs/x.md"], true));
    let exact = s.fs.glob(&GlobOptions { pattern: "**".into(), max_results: Some(5), ..Default::default() }).unwrap();
    assert!(!exact.truncated);
    for missing in ["/missing", "/README.md"] {
        let none =
            s.fs.glob(&GlobOptions { pattern: "*".into(), path: Some(missing.into()), max_results: None }).unwrap();
        assert!(none.files.is_empty());
    }
    assert!(glob(&s.fs, "nope/deeper/*.ts").is_empty());
    assert!(glob(&s.fs, "~x/*.md").is_empty());
    let bad = s.fs.glob(&GlobOptions { pattern: "[".into(), ..Default::default() });
    assert_eq!(bad.unwrap_err().code, ErrorCode::InvalidPattern);
}

#[test]
fn unreadable_directories_are_skipped_not_fatal() {
    let s = Sandbox::new();
    s.put("open/a.txt", "needle\n");
    s.put("locked/b.txt", "needle\n");
    fs::set_permissions(s.host("locked"), fs::Permissions::from_mode(0o000)).unwrap();
    let found = grep(&s.fs, "needle", "/");
    let globbed = glob(&s.fs, "**/*.txt");
    let listed = s.fs.ls("/locked");
    fs::set_permissions(s.host("locked"), fs::Permissions::from_mode(0o755)).unwrap();
    assert!(found.contains(&"/open/a.txt".to_string()), "the search went on past the locked directory");
    assert!(globbed.contains(&"/open/a.txt".to_string()));
    // As root (uid 0) permission bits are not enforced, so the locked directory is readable and
    // these two assertions would not hold; everything above still proves the walk survives.
    if permissions_enforced() {
        assert_eq!(found, vec!["/open/a.txt"]);
        assert_eq!(listed.unwrap_err().code, ErrorCode::PermissionDenied);
    } else {
        eprintln!("running as root: permission bits are not enforced; skipping the locked-directory assertions");
    }
}

#[test]
fn tool_text_equals_the_core_formatting_of_the_answers() {
    use engram_core::format::{format_glob, format_grep_columns, format_ls, format_read};
    let s = Sandbox::new();
    for i in 0..30 {
        s.put(&format!("d/f{i:02}.txt"), format!("needle {i}\nother\nneedle again\n"));
    }
    // A name no virtual path can hold: skipped by both searches, and named in both notes.
    s.put("d/~$lock.txt", "needle\n");
    let skipped = [("/d/~$lock.txt", "invalid_name")];
    for cap in [80_000, 300, 40, 3] {
        for mode in [OutputMode::Content, OutputMode::FilesWithMatches, OutputMode::Count] {
            let o = GrepOptions {
                pattern: "needle".into(),
                output_mode: mode,
                context: 1,
                max_count: Some(25),
                ..Default::default()
            };
            let r = s.fs.grep(&o).unwrap();
            let (mut paths, mut numbers, mut texts) = (Vec::new(), Vec::new(), Vec::new());
            for m in r.matches.iter().flatten() {
                paths.push(m.path.clone());
                numbers.push(if m.context { -(m.line as i32) } else { m.line as i32 });
                texts.push(m.text.clone());
            }
            paths.extend(r.files.iter().flatten().cloned());
            for (p, n) in r.counts.iter().flatten() {
                paths.push(p.clone());
                numbers.push(*n as i32);
            }
            let expected = format_grep_columns("needle", mode, &paths, &numbers, &texts, r.truncated, &skipped, cap);
            assert_eq!(s.fs.grep_text(&o, cap, None).unwrap(), expected, "{mode:?} cap {cap}");
        }
        let g = GlobOptions { pattern: "**/*.txt".into(), path: None, max_results: Some(7) };
        let report = s.fs.glob_report(&g, None).unwrap();
        let shown: Vec<(&str, &str)> = report.skipped.iter().map(|k| (k.path.as_str(), k.reason)).collect();
        assert_eq!(shown, skipped);
        let r = report.result;
        let expected = format_glob(&g.pattern, r.files.iter().map(|f| f.path.as_str()), r.truncated, &skipped, cap);
        assert_eq!(s.fs.glob_text(&g, cap, None).unwrap(), expected);
        let listed = s.fs.ls_report("/d").unwrap();
        let shown: Vec<(&str, &str)> = listed.skipped.iter().map(|k| (k.path.as_str(), k.reason)).collect();
        assert_eq!(shown, skipped, "ls names what it cannot list as the searches do");
        let expected = format_ls("d", listed.entries.iter().map(|f| (f.path.as_str(), f.size)), &skipped, cap);
        assert_eq!(s.fs.ls_text("/d", "d", cap).unwrap(), expected);
        let r = s.fs.read("/d/f01.txt", 1, Some(1)).unwrap();
        assert_eq!(s.fs.read_text("/d/f01.txt", "x", 1, 1, cap).unwrap(), format_read("x", &r, 1, cap));
    }
    assert_eq!(s.fs.ls_text("/nope", "/nope", 100).unwrap_err().code, engram_core::ErrorCode::FileNotFound);
    let cancel = std::sync::atomic::AtomicBool::new(true);
    let o = GrepOptions { pattern: "needle".into(), ..Default::default() };
    assert!(s.fs.grep_text(&o, 100, Some(&cancel)).is_err(), "a cancelled search gives no text");
}

#[test]
fn durability_full_syncs_files_and_changed_directories_relaxed_none() {
    use engram_fs::{Durability, Syncs};
    assert_eq!(Durability::parse("full"), Ok(Durability::Full));
    assert_eq!(Durability::parse("relaxed"), Ok(Durability::Relaxed));
    assert_eq!(Durability::parse("FULL").unwrap_err().code, engram_core::ErrorCode::Unsupported);
    let full = Sandbox::new();
    full.fs.write("/a/b/c.txt", b"x", None).unwrap();
    // The file, its directory, and the two parents that gained an entry (/ and /a).
    assert_eq!(full.fs.syncs(), Syncs { files: 1, dirs: 3 });
    full.fs.write("/a/b/c.txt", b"y", None).unwrap();
    assert_eq!(full.fs.syncs(), Syncs { files: 2, dirs: 4 });
    full.fs.delete("/a").unwrap();
    assert_eq!(full.fs.syncs(), Syncs { files: 2, dirs: 5 });
    let relaxed = Sandbox::with(|o| o.durability = Durability::Relaxed);
    relaxed.fs.write("/a/b/c.txt", b"x", None).unwrap();
    relaxed.fs.rename("/a/b/c.txt", "/d.txt", None).unwrap();
    relaxed.fs.delete("/d.txt").unwrap();
    assert_eq!(relaxed.fs.syncs(), Syncs::default());
}
