//! Confined execution of one shell command (`/bin/sh -c`), the core of Engram's `execute` tool.
//!
//! [`execute`] runs a command under a [`Policy`] and returns its [`Outcome`]: exit code, the
//! output (stdout and stderr interleaved, capped head-and-tail), whether it was cut, whether
//! the timeout or a cancel killed it. [`support`] tells what this kernel offers; when the policy
//! needs something the kernel lacks, `execute` refuses with [`SandboxError::Unsupported`]
//! naming it: there is no silent fallback to an unconfined run.
//!
//! What confines the command (Linux):
//! - **Files:** Landlock. Read, write and execute beneath the root and a private scratch
//!   directory (its `HOME` and `TMPDIR`, removed afterwards); read and execute beneath the
//!   system directories of [`Policy::read_only`]; nothing else, symbolic links included (the
//!   kernel checks the path a link resolves to).
//! - **Network:** a new network namespace (no interface but a downed loopback), and Landlock
//!   denies TCP bind and connect as well.
//! - **Processes:** a new PID namespace whose first process is the shell: when it ends, is
//!   killed by the timeout, or loses its parent (the agent killed with SIGKILL), the kernel
//!   kills every process left in the namespace. Landlock scopes signals and abstract Unix
//!   sockets to the sandbox, and forbids tracing (so `/proc/<pid>/environ` of the agent is
//!   unreadable).
//! - **Resources:** rlimits on CPU time, data size, file size, open files and (for a user
//!   other than root, which the kernel exempts) processes; a wall-clock timeout.
//! - **Privileges:** `no_new_privs`; the environment holds only [`Policy::env`] plus a few
//!   harmless variables (never an inherited API key).

#[cfg(target_os = "linux")]
mod cgroup;
mod env;
mod error;
mod output;
mod policy;

#[cfg(target_os = "linux")]
mod linux;

pub use env::scrubbed_env;
pub use error::SandboxError;
pub(crate) use output::HeadTail;
pub use output::Outcome;
pub use policy::{Limits, Policy};

use std::sync::atomic::AtomicBool;

/// What this machine's kernel offers the sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Support {
    /// The Landlock ABI version (0: none).
    pub landlock_abi: i32,
    /// Whether a process can create network and PID namespaces (directly as root, or inside
    /// a new user namespace).
    pub namespaces: bool,
    /// What is missing for [`execute`], or `None` when it can run.
    pub missing: Option<String>,
}

/// Probes the kernel (cheap; no process is started).
pub fn support() -> Support {
    #[cfg(target_os = "linux")]
    {
        linux::support()
    }
    #[cfg(not(target_os = "linux"))]
    {
        Support { landlock_abi: 0, namespaces: false, missing: Some("a Linux kernel".into()) }
    }
}

/// Runs `command` with `/bin/sh -c` in `policy.cwd` (beneath the root) under the policy.
/// Setting `cancel` kills the command's processes within a poll interval (50 ms).
pub fn execute(command: &str, policy: &Policy, cancel: &AtomicBool) -> Result<Outcome, SandboxError> {
    #[cfg(target_os = "linux")]
    {
        linux::execute(command, policy, cancel)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (command, policy, cancel);
        Err(SandboxError::Unsupported("a Linux kernel (Landlock and namespaces)".into()))
    }
}
