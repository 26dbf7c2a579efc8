//! Containment under races: a second thread swaps a directory inside the root with a symbolic
//! link to the outside (`renameat2(RENAME_EXCHANGE)` in a loop) while every operation runs in a
//! loop through the swapped path. Afterwards nothing outside was read, listed, created, changed
//! or deleted: canary files keep their content and mtimes, no outside name or content ever
//! appears in a result, and the outside tree is identical. Bounded in time (4 s).

mod common;

use common::{snapshot, Sandbox, SECRET};
use engram_core::grep::{GrepOptions, OutputMode};
use engram_core::ops::{EditOptions, GlobOptions};
use rustix::fs::{renameat_with, RenameFlags, CWD};
use std::fs;
use std::os::unix::fs::symlink;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

const RUN_FOR: Duration = Duration::from_secs(4);

#[test]
fn symlink_swaps_never_lead_an_operation_outside_the_root() {
    let s = Sandbox::new();
    // The victim directory `d` and a link `l -> outside`; the attacker exchanges them.
    s.put("d/victim.txt", "inside victim\n");
    s.put("d/sub/deep.txt", "inside deep\n");
    fs::create_dir_all(s.outside.join("sub")).unwrap();
    fs::write(s.outside.join("victim.txt"), SECRET).unwrap();
    fs::write(s.outside.join("sub/deep.txt"), SECRET).unwrap();
    symlink(&s.outside, s.root.join("l")).unwrap();
    let before = snapshot(&s.outside);

    let stop = AtomicBool::new(false);
    let swaps = AtomicU64::new(0);
    let ops = AtomicU64::new(0);
    let leaks = std::sync::Mutex::new(Vec::<String>::new());
    let (d, l) = (s.root.join("d"), s.root.join("l"));
    std::thread::scope(|scope| {
        scope.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                renameat_with(CWD, &d, CWD, &l, RenameFlags::EXCHANGE).unwrap();
                swaps.fetch_add(1, Ordering::Relaxed);
            }
        });
        for worker in 0..2 {
            let (f, ops, leaks) = (&s.fs, &ops, &leaks);
            scope.spawn(move || {
                let start = Instant::now();
                let mut i = 0u64;
                let check = |what: &str, text: String| {
                    if text.contains("SENTINEL") || text.contains("secret.txt") || text.contains("PWNED") {
                        leaks.lock().unwrap().push(format!("{what}: {text}"));
                    }
                };
                while start.elapsed() < RUN_FOR {
                    i += 1;
                    let name = format!("/d/new-{worker}-{i}.txt");
                    check("read", format!("{:?}", f.read("/d/victim.txt", 0, None)));
                    check("read_bytes", format!("{:?}", f.read_bytes("/d/sub/deep.txt").map(String::from_utf8)));
                    check("ls", format!("{:?}", f.ls("/d")));
                    check("ls sub", format!("{:?}", f.ls("/d/sub")));
                    check("stat", format!("{:?}", f.stat("/d/victim.txt")));
                    check("write", format!("{:?}", f.write(&name, b"PWNED", None)));
                    check("mkdir", format!("{:?}", f.write(&format!("/d/sub/m{worker}-{i}/x.txt"), b"PWNED", None)));
                    let edit = EditOptions {
                        path: "/d/victim.txt".into(),
                        old_string: "victim".into(),
                        new_string: "victim".into(),
                        ..Default::default()
                    };
                    check("edit", format!("{:?}", f.edit(&edit)));
                    check("delete file", format!("{:?}", f.delete(&name)));
                    check("delete dir", format!("{:?}", f.delete(&format!("/d/sub/m{worker}-{i}"))));
                    check("delete victim", format!("{:?}", f.delete("/d/sub/deep.txt")));
                    let _ = f.write("/d/sub/deep.txt", b"inside deep\n", None);
                    let grep = GrepOptions {
                        pattern: "SENTINEL".into(),
                        output_mode: OutputMode::Content,
                        ..Default::default()
                    };
                    check("grep", format!("{:?}", f.grep(&grep)));
                    let grep_d = GrepOptions { path: Some("/d".into()), ..grep.clone() };
                    check("grep /d", format!("{:?}", f.grep(&grep_d)));
                    let glob = GlobOptions { pattern: "**/*.txt".into(), path: None, max_results: None };
                    let found = f.glob(&glob);
                    check("glob", format!("{:?}", found));
                    if let Ok(g) = found {
                        // The outside tree has `secret.txt`: any path ending so came from there.
                        for file in g.files {
                            if file.path.ends_with("secret.txt") {
                                leaks.lock().unwrap().push(format!("glob listed {}", file.path));
                            }
                        }
                    }
                    ops.fetch_add(15, Ordering::Relaxed);
                }
            });
        }
        std::thread::sleep(RUN_FOR + Duration::from_millis(100));
        stop.store(true, Ordering::Relaxed);
    });
    let (swaps, ops) = (swaps.load(Ordering::Relaxed), ops.load(Ordering::Relaxed));
    eprintln!("race: {ops} operations attempted during {swaps} directory/symlink exchanges in {RUN_FOR:?}");
    assert!(swaps > 100 && ops > 100, "the race did not run: {swaps} swaps, {ops} operations");
    let leaks = leaks.into_inner().unwrap();
    assert!(leaks.is_empty(), "{} leaks, first: {}", leaks.len(), leaks[0]);
    assert_eq!(snapshot(&s.outside), before, "the outside directory changed");
    assert_eq!(fs::read_to_string(s.outside.join("secret.txt")).unwrap(), SECRET);
}
