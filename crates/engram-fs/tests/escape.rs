//! Table-driven escape attempts against every method. Each case runs in a fresh sandbox whose
//! neighbouring `outside/` directory holds a sentinel; after every case that directory must be
//! byte-for-byte and mtime-for-mtime unchanged, no temp file may remain, and no result or error
//! message may carry the secret or a host path.

mod common;

use common::{snapshot, temp_files, Sandbox, SECRET};
use engram_core::grep::GrepOptions;
use engram_core::ops::{EditOptions, GlobOptions};
use engram_core::{CoreResult, ErrorCode};
use engram_fs::RootedFs;
use std::fs;
use std::os::unix::fs::symlink;

fn setup() -> Sandbox {
    let s = Sandbox::new();
    s.put("inside.txt", "inside\n");
    s.put("dir/f.txt", "in dir\n");
    let r = &s.root;
    symlink("../outside", r.join("out_dir")).unwrap();
    symlink(&s.outside, r.join("out_abs")).unwrap();
    symlink(s.outside.join("secret.txt"), r.join("out_file")).unwrap();
    symlink("loop", r.join("loop")).unwrap();
    symlink("loopb", r.join("loopa")).unwrap();
    symlink("loopa", r.join("loopb")).unwrap();
    symlink("nowhere", r.join("dangling")).unwrap();
    symlink(s.outside.join("nowhere"), r.join("dangling_out")).unwrap();
    symlink("inside.txt", r.join("in_link")).unwrap();
    symlink("dir", r.join("in_dir_link")).unwrap();
    s
}

/// Results are rendered with `{:?}` and must never show the secret.
fn shown<T: std::fmt::Debug>(r: CoreResult<T>) -> CoreResult<()> {
    r.map(|v| {
        let text = format!("{v:?}");
        assert!(!text.contains("SENTINEL"), "secret leaked: {text}");
    })
}

fn grep_in(path: &str) -> GrepOptions {
    GrepOptions { pattern: "SENTINEL".into(), path: Some(path.into()), ..Default::default() }
}

fn glob_in(pattern: &str, path: &str) -> GlobOptions {
    GlobOptions { pattern: pattern.into(), path: Some(path.into()), max_results: None }
}

fn edit_of(path: &str) -> EditOptions {
    EditOptions { path: path.into(), old_string: "SENTINEL".into(), new_string: "PWNED".into(), ..Default::default() }
}

type Case = (&'static str, Option<ErrorCode>, fn(&RootedFs) -> CoreResult<()>);

use ErrorCode::{FileNotFound, InvalidPath, PathEscape, PermissionDenied};

fn cases() -> Vec<Case> {
    vec![
        // --- read
        ("read ../ relative", Some(PathEscape), |f| shown(f.read("../outside/secret.txt", 0, None))),
        ("read /../../etc/passwd", Some(PathEscape), |f| shown(f.read("/../../etc/passwd", 0, None))),
        ("read climb after descent", Some(PathEscape), |f| shown(f.read("/dir/../../outside/secret.txt", 0, None))),
        ("read dot-dot with slashes", Some(PathEscape), |f| shown(f.read("//..//outside/secret.txt", 0, None))),
        ("read ~ home", Some(InvalidPath), |f| shown(f.read("~/secret.txt", 0, None))),
        ("read ~user", Some(InvalidPath), |f| shown(f.read("/~root/.ssh/id_rsa", 0, None))),
        ("read NUL", Some(InvalidPath), |f| shown(f.read("/inside.txt\0/../../x", 0, None))),
        ("read backslashes", Some(InvalidPath), |f| shown(f.read("\\..\\outside\\secret.txt", 0, None))),
        ("read drive letter", Some(InvalidPath), |f| shown(f.read("C:/Windows/win.ini", 0, None))),
        ("read %2e%2e is a literal name", Some(FileNotFound), |f| shown(f.read("/%2e%2e/outside/secret.txt", 0, None))),
        ("read via linked dir (relative link)", Some(PathEscape), |f| shown(f.read("/out_dir/secret.txt", 0, None))),
        ("read via linked dir (absolute link)", Some(PathEscape), |f| shown(f.read("/out_abs/secret.txt", 0, None))),
        ("read link to outside file", Some(PathEscape), |f| shown(f.read("/out_file", 0, None))),
        ("read self loop", Some(PathEscape), |f| shown(f.read("/loop", 0, None))),
        ("read through self loop", Some(PathEscape), |f| shown(f.read("/loop/x", 0, None))),
        ("read two-link loop", Some(PathEscape), |f| shown(f.read("/loopa/x", 0, None))),
        ("read dangling link", Some(PathEscape), |f| shown(f.read("/dangling", 0, None))),
        ("read through dangling link", Some(PathEscape), |f| shown(f.read("/dangling_out/x", 0, None))),
        ("read link to inside file", Some(PermissionDenied), |f| shown(f.read("/in_link", 0, None))),
        // --- read_bytes
        ("read_bytes via linked dir", Some(PathEscape), |f| shown(f.read_bytes("/out_dir/secret.txt"))),
        ("read_bytes link to outside file", Some(PathEscape), |f| shown(f.read_bytes("/out_file"))),
        ("read_bytes link to inside file", Some(PermissionDenied), |f| shown(f.read_bytes("/in_link"))),
        ("read_bytes backslash dot-dot", Some(InvalidPath), |f| shown(f.read_bytes("..\\outside\\secret.txt"))),
        ("read_bytes inside through inside dir link", None, |f| {
            assert_eq!(f.read_bytes("/in_dir_link/f.txt")?, b"in dir\n");
            Ok(())
        }),
        // --- write
        ("write via linked dir", Some(PathEscape), |f| shown(f.write("/out_dir/new.txt", b"x", None))),
        ("write mkdir -p via linked dir", Some(PathEscape), |f| shown(f.write("/out_abs/a/b/new.txt", b"x", None))),
        ("write climbing", Some(PathEscape), |f| shown(f.write("/../outside/secret.txt", b"x", None))),
        ("write through dangling link", Some(PathEscape), |f| shown(f.write("/dangling_out/x", b"x", None))),
        ("write through loop", Some(PathEscape), |f| shown(f.write("/loop/x", b"x", None))),
        ("write ~", Some(InvalidPath), |f| shown(f.write("/~/x", b"x", None))),
        ("write %2e%2e stays inside", None, |f| {
            f.write("/%2e%2e/outside/new.txt", b"x", None)?;
            assert!(f.root().join("%2e%2e/outside/new.txt").is_file());
            Ok(())
        }),
        ("write onto a link to an outside file", Some(PathEscape), |f| shown(f.write("/out_file", b"x", None))),
        ("write onto a link to an inside file", Some(PermissionDenied), |f| shown(f.write("/in_link", b"x", None))),
        // --- edit
        ("edit link to outside file", Some(PathEscape), |f| shown(f.edit(&edit_of("/out_file")))),
        ("edit via linked dir", Some(PathEscape), |f| shown(f.edit(&edit_of("/out_dir/secret.txt")))),
        ("edit link to inside file", Some(PermissionDenied), |f| shown(f.edit(&edit_of("/in_link")))),
        ("edit climbing", Some(PathEscape), |f| shown(f.edit(&edit_of("/dir/../../outside/secret.txt")))),
        // --- delete
        ("delete via linked dir", Some(PathEscape), |f| shown(f.delete("/out_dir/secret.txt"))),
        ("delete climbing", Some(PathEscape), |f| shown(f.delete("/.."))),
        ("delete the root", Some(PermissionDenied), |f| shown(f.delete("/"))),
        ("delete the root spelled oddly", Some(PermissionDenied), |f| shown(f.delete("/dir/..//."))),
        ("delete a link to an outside dir", Some(PathEscape), |f| shown(f.delete("/out_abs"))),
        ("delete a link to an outside file", Some(PathEscape), |f| shown(f.delete("/out_file"))),
        ("delete a link to an inside file", Some(PermissionDenied), |f| shown(f.delete("/in_link"))),
        // --- ls
        ("ls via linked dir", Some(PathEscape), |f| shown(f.ls("/out_dir/sub"))),
        ("ls climbing", Some(PathEscape), |f| shown(f.ls("/../"))),
        ("ls of a link to an outside dir", Some(PathEscape), |f| shown(f.ls("/out_dir"))),
        ("ls / shows links as non-directories", None, |f| {
            let entries = f.ls("/")?;
            assert!(entries.iter().filter(|e| e.path.contains("out")).all(|e| !e.is_dir));
            shown(Ok(entries))
        }),
        // --- stat
        ("stat via linked dir", Some(PathEscape), |f| shown(f.stat("/out_dir/secret.txt"))),
        ("stat drive letter", Some(InvalidPath), |f| shown(f.stat("/D:/x"))),
        ("stat of a link to an outside file", Some(PathEscape), |f| shown(f.stat("/out_file"))),
        ("stat of a loop does not hang", Some(PathEscape), |f| shown(f.stat("/loop"))),
        // --- grep
        ("grep path via linked dir", Some(PathEscape), |f| shown(f.grep(&grep_in("/out_dir")))),
        ("grep path inside linked dir", Some(PathEscape), |f| shown(f.grep(&grep_in("/out_abs/secret.txt")))),
        ("grep path link to outside file", Some(PathEscape), |f| shown(f.grep(&grep_in("/out_file")))),
        ("grep path link to inside dir", Some(PermissionDenied), |f| shown(f.grep(&grep_in("/in_dir_link")))),
        ("grep path climbing", Some(PathEscape), |f| shown(f.grep(&grep_in("/dir/../..")))),
        ("grep path backslash", Some(InvalidPath), |f| shown(f.grep(&grep_in("\\")))),
        ("grep / never follows links", None, |f| {
            let r = f.grep(&grep_in("/"))?;
            assert_eq!(r.matches.as_deref().map(<[_]>::len), Some(0));
            Ok(())
        }),
        // --- glob
        ("glob path via linked dir", Some(PathEscape), |f| shown(f.glob(&glob_in("*", "/out_dir")))),
        ("glob path climbing", Some(PathEscape), |f| shown(f.glob(&glob_in("*", "/..")))),
        ("glob base through linked dir", Some(PathEscape), |f| shown(f.glob(&glob_in("out_abs/sub/*.txt", "/")))),
        ("glob ** never follows links", None, |f| {
            let r = f.glob(&glob_in("**", "/"))?;
            let paths: Vec<&str> = r.files.iter().map(|i| i.path.as_str()).collect();
            assert_eq!(paths, vec!["/dir/f.txt", "/inside.txt"]);
            Ok(())
        }),
        ("glob under a linked dir", Some(PathEscape), |f| shown(f.glob(&glob_in("out_dir/**", "/")))),
    ]
}

#[test]
fn escape_attempts_are_refused_and_leave_the_outside_untouched() {
    let table = cases();
    assert!(table.len() >= 30);
    for (name, expected, run) in table {
        let s = setup();
        let before = snapshot(&s.outside);
        let result = run(&s.fs);
        match (&result, expected) {
            (Ok(()), None) => {}
            (Err(e), Some(code)) => {
                assert_eq!(e.code, code, "{name}: {e}");
                let base = s.base.path().to_string_lossy().into_owned();
                assert!(!e.message.contains(&base) && !e.message.contains("SENTINEL"), "{name}: {e}");
            }
            _ => panic!("{name}: expected {expected:?}, got {result:?}"),
        }
        assert_eq!(snapshot(&s.outside), before, "{name}: the outside directory changed");
        assert_eq!(fs::read_to_string(s.outside.join("secret.txt")).unwrap(), SECRET, "{name}");
        assert!(temp_files(&s.root).is_empty(), "{name}: temp files left behind");
    }
}
