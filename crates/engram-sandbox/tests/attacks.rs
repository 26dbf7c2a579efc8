//! Each way out of the sandbox, tried by a real command. Every test needs the kernel's
//! Landlock and namespaces; where they are missing, `execute` must refuse, which is checked
//! instead.
#![cfg(target_os = "linux")]

use std::net::TcpListener;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use engram_sandbox::{execute, support, Outcome, Policy, SandboxError};

fn run(policy: &Policy, command: &str) -> Option<Outcome> {
    match execute(command, policy, &AtomicBool::new(false)) {
        Ok(outcome) => Some(outcome),
        Err(SandboxError::Unsupported(what)) => {
            assert!(support().missing.is_some(), "refused although the probe found everything: {what}");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

fn project() -> (tempfile::TempDir, Policy) {
    let dir = tempfile::tempdir().unwrap();
    let policy = Policy { timeout: Duration::from_secs(20), ..Policy::new(dir.path()) };
    (dir, policy)
}

#[test]
fn a_command_runs_in_the_root_and_reports_its_exit_code() {
    let (dir, policy) = project();
    let Some(out) = run(&policy, "echo hello > made.txt && cat made.txt && pwd && exit 3") else { return };
    let root = dir.path().canonicalize().unwrap();
    assert_eq!(out.output, format!("hello\n{}\n", root.display()));
    assert_eq!(out.exit_code, Some(3));
    assert!(!out.timed_out && !out.truncated);
    assert_eq!(std::fs::read_to_string(dir.path().join("made.txt")).unwrap(), "hello\n");
}

#[test]
fn a_read_only_root_is_read_and_run_but_not_changed() {
    let (dir, mut policy) = project();
    policy.write_root = false;
    std::fs::write(dir.path().join("kept.txt"), "kept\n").unwrap();
    std::fs::write(dir.path().join("run.sh"), "echo ran\n").unwrap();
    let command = "cat kept.txt; sh run.sh; echo x > new.txt; echo x >> kept.txt; rm kept.txt; mkdir d; \
                   echo scratch > $TMPDIR/s && cat $TMPDIR/s";
    let Some(out) = run(&policy, command) else { return };
    assert!(out.output.starts_with("kept\nran\n"), "{}", out.output);
    assert!(out.output.contains("Permission denied"), "{}", out.output);
    assert!(out.output.ends_with("scratch\n"), "{}", out.output);
    let mut names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    names.sort();
    assert_eq!(names, ["kept.txt", "run.sh"]);
    assert_eq!(std::fs::read_to_string(dir.path().join("kept.txt")).unwrap(), "kept\n");
}

#[test]
fn writes_outside_the_root_fail() {
    let (_dir, policy) = project();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("escaped");
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let home_target = Path::new(&home).join(format!("engram-sandbox-escape-{}", std::process::id()));
    let command = format!(
        "echo x > {t}; echo x > {h}; mkdir {t}.d; ln -s /etc {t}.l; echo done",
        t = target.display(),
        h = home_target.display()
    );
    let Some(out) = run(&policy, &command) else { return };
    assert!(out.output.ends_with("done\n"), "{}", out.output);
    assert!(out.output.contains("Permission denied"), "{}", out.output);
    assert!(std::fs::read_dir(outside.path()).unwrap().next().is_none());
    assert!(!home_target.exists());
}

#[test]
fn reads_outside_the_root_and_the_system_fail_even_through_a_symlink() {
    let (dir, policy) = project();
    let secret_dir = tempfile::tempdir().unwrap();
    std::fs::write(secret_dir.path().join("id_ed25519"), "PRIVATE KEY").unwrap();
    std::os::unix::fs::symlink(secret_dir.path(), dir.path().join("link")).unwrap();
    let command =
        format!("cat {}/id_ed25519; cat link/id_ed25519; echo x > link/planted; ls link", secret_dir.path().display());
    let Some(out) = run(&policy, &command) else { return };
    assert!(!out.output.contains("PRIVATE KEY"), "{}", out.output);
    assert!(!secret_dir.path().join("planted").exists());
}

#[test]
fn no_environment_variable_of_the_agent_is_inherited_or_readable_through_proc() {
    let (_dir, policy) = project();
    std::env::set_var("ENGRAM_TEST_API_KEY", "sk-sandbox-inherited-secret");
    // A process of the agent's user whose environment holds a key, as the agent's own does.
    let mut neighbour = std::process::Command::new("sleep")
        .arg("30")
        .env("OPENAI_API_KEY", "sk-sandbox-neighbour-secret")
        .spawn()
        .unwrap();
    let command = format!("env; cat /proc/{}/environ; echo; echo end", neighbour.id());
    let out = run(&policy, &command);
    neighbour.kill().unwrap();
    neighbour.wait().unwrap();
    let Some(out) = out else { return };
    assert!(out.output.ends_with("end\n"), "{}", out.output);
    assert!(!out.output.contains("sk-sandbox-"), "{}", out.output);
    assert!(out.output.contains("PATH="));
}

#[test]
fn no_network_a_local_server_sees_no_connection() {
    let (_dir, policy) = project();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let node = "require('net').connect(Number(process.argv[1]),'127.0.0.1').on('connect',()=>{console.log('CONNECTED');process.exit(0)}).on('error',e=>{console.log('refused',e.code);process.exit(0)})";
    let command = format!("node -e \"{node}\" {port}; getent hosts example.com || echo no-dns");
    let Some(out) = run(&policy, &command) else { return };
    assert!(!out.output.contains("CONNECTED"), "{}", out.output);
    assert!(out.output.contains("refused"), "{}", out.output);
    assert!(out.output.contains("no-dns"), "{}", out.output);
    assert!(listener.accept().is_err(), "the server saw a connection");
}

/// The processes whose command line holds `marker`.
fn processes_with(marker: &str) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(marker))
        .collect()
}

#[test]
fn the_timeout_kills_every_process_of_the_command() {
    let (_dir, mut policy) = project();
    policy.timeout = Duration::from_millis(500);
    let start = Instant::now();
    let Some(out) = run(&policy, "sleep 611 & (setsid sleep 612 &) ; sleep 613") else { return };
    assert!(out.timed_out);
    assert!(start.elapsed() < Duration::from_secs(10));
    std::thread::sleep(Duration::from_millis(200));
    for marker in ["sleep 611", "sleep 612", "sleep 613"] {
        assert_eq!(processes_with(marker), Vec::<String>::new());
    }
}

#[test]
fn a_cancel_kills_the_command() {
    let (_dir, policy) = project();
    let cancel = AtomicBool::new(false);
    let start = Instant::now();
    std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(300));
            cancel.store(true, std::sync::atomic::Ordering::Relaxed);
        });
        match execute("sleep 614", &policy, &cancel) {
            Ok(out) => assert!(out.cancelled && out.signal == Some(libc_sigkill())),
            Err(SandboxError::Unsupported(_)) => {}
            Err(e) => panic!("{e}"),
        }
    });
    assert!(start.elapsed() < Duration::from_secs(5));
    assert_eq!(processes_with("sleep 614"), Vec::<String>::new());
}

fn libc_sigkill() -> i32 {
    9
}

#[test]
fn a_fork_bomb_is_bounded_and_leaves_nothing() {
    let (_dir, mut policy) = project();
    policy.timeout = Duration::from_secs(3);
    policy.limits.processes = 64;
    let Some(out) = run(&policy, "b() { b | b & }; b; sleep 615") else { return };
    assert!(out.timed_out || out.exit_code.is_some());
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(processes_with("sleep 615"), Vec::<String>::new());
}

#[test]
fn huge_output_is_capped_head_and_tail() {
    let (_dir, mut policy) = project();
    policy.output_cap = 1000;
    let Some(out) = run(&policy, "echo first; head -c 200000000 /dev/zero | tr '\\0' x; echo; echo last") else {
        return;
    };
    assert!(out.truncated);
    assert!(out.output.starts_with("first\n"));
    assert!(out.output.ends_with("\nlast\n"));
    assert!(out.output.contains("bytes of output omitted"));
    assert!(out.output.len() < 1100);
}

#[test]
fn a_file_over_the_size_limit_cannot_be_written() {
    let (dir, mut policy) = project();
    policy.limits.file_bytes = 1 << 20;
    let Some(out) = run(&policy, "head -c 5000000 /dev/zero > big; echo status $?") else { return };
    assert!(!out.output.contains("status 0"), "{}", out.output);
    assert!(std::fs::metadata(dir.path().join("big")).unwrap().len() <= 1 << 20);
}

#[test]
fn a_cwd_outside_the_root_is_refused() {
    let (_dir, mut policy) = project();
    policy.cwd = Some(std::env::temp_dir());
    match execute("true", &policy, &AtomicBool::new(false)) {
        Err(SandboxError::InvalidPolicy(why)) => assert!(why.contains("beneath the root")),
        other => panic!("{other:?}"),
    }
}
