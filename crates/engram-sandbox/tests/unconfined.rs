//! `Policy::unconfined`: the explicit opt-out runs the command as it is, with only the
//! environment scrubbed, the rlimits, the timeout and the output cap.
#![cfg(target_os = "linux")]

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use engram_sandbox::{execute, Policy};

#[test]
fn an_unconfined_run_reaches_outside_the_root_but_keeps_env_timeout_and_cap() {
    let root = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::env::set_var("ENGRAM_UNCONFINED_TEST_KEY", "sk-unconfined-test-secret");
    let policy = Policy { unconfined: true, output_cap: 200, ..Policy::new(root.path()) };
    let out = execute(
        &format!("echo reached > {}/written; env; head -c 5000 /dev/zero | tr '\\0' x", outside.path().display()),
        &policy,
        &AtomicBool::new(false),
    )
    .unwrap();
    assert_eq!(std::fs::read_to_string(outside.path().join("written")).unwrap(), "reached\n");
    assert!(!out.output.contains("sk-unconfined-test-secret"));
    assert!(out.truncated);

    let policy = Policy { unconfined: true, timeout: Duration::from_millis(300), ..Policy::new(root.path()) };
    let out = execute("sleep 619", &policy, &AtomicBool::new(false)).unwrap();
    assert!(out.timed_out);
}
