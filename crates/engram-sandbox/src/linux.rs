//! The Linux sandbox: Landlock, network and PID namespaces, rlimits, a timeout.
//!
//! Everything the child needs is prepared before `fork` (paths, maps, the Landlock ruleset's
//! descriptor): between `fork` and `exec` a child of a multi-threaded process may only make
//! async-signal-safe calls, so the code that runs there (`confine`) is raw system calls.

use std::ffi::CString;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use landlock::{
    path_beneath_rules, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr, RulesetCreatedAttr,
    Scope, ABI,
};

use crate::cgroup::PidsCgroup;
use crate::{scrubbed_env, HeadTail, Limits, Outcome, Policy, SandboxError, Support};

/// File rights need Landlock ABI 3 (truncation), TCP denial ABI 4.
const REQUIRED_ABI: i32 = 4;
const POLL_MS: i32 = 50;
const NO_PIDS_CGROUP: &str =
    "a writable pids cgroup to bound the command's processes (root is exempt from RLIMIT_NPROC)";

fn is_root() -> bool {
    // SAFETY: geteuid cannot fail.
    (unsafe { libc::geteuid() }) == 0
}

pub(crate) fn support() -> Support {
    let landlock_abi = landlock_abi();
    let namespaces = can_unshare();
    let missing = if landlock_abi < REQUIRED_ABI {
        Some(format!("Landlock ABI {REQUIRED_ABI} or later (found {landlock_abi}; Linux 6.7+ with Landlock enabled)"))
    } else if !namespaces {
        Some("network and PID namespaces (unprivileged user namespaces are disabled)".to_string())
    } else if is_root() && PidsCgroup::create(1).is_none() {
        Some(NO_PIDS_CGROUP.to_string())
    } else {
        None
    };
    Support { landlock_abi, namespaces, missing }
}

fn landlock_abi() -> i32 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: the documented version query: no attribute, size 0.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    v.max(0) as i32
}

fn namespace_flags() -> libc::c_int {
    libc::CLONE_NEWNET | libc::CLONE_NEWPID | libc::CLONE_NEWNS | if is_root() { 0 } else { libc::CLONE_NEWUSER }
}

/// Whether a child may create the namespaces (tried in a throwaway child).
fn can_unshare() -> bool {
    let flags = namespace_flags();
    // SAFETY: the child only calls unshare and _exit, both async-signal-safe.
    unsafe {
        match libc::fork() {
            -1 => false,
            0 => libc::_exit(if libc::unshare(flags) == 0 { 0 } else { 1 }),
            pid => {
                let mut status = 0;
                while libc::waitpid(pid, &mut status, 0) == -1
                    && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted
                {}
                libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
            }
        }
    }
}

/// What the child applies to itself, prepared before `fork`.
struct Confinement {
    /// `false` for an explicitly unconfined run: only the rlimits below apply.
    confined: bool,
    parent: libc::pid_t,
    flags: libc::c_int,
    /// `(path, contents)` written after `unshare` when a user namespace is made.
    id_maps: Vec<(CString, Vec<u8>)>,
    /// The pids cgroup to enter (root only).
    cgroup_procs: Option<CString>,
    limits: [(libc::__rlimit_resource_t, u64); 6],
    ruleset: RawFd,
}

pub(crate) fn execute(command: &str, policy: &Policy, cancel: &AtomicBool) -> Result<Outcome, SandboxError> {
    let (root, cwd) = resolve_dirs(policy)?;
    if !policy.unconfined {
        if let Some(missing) = support().missing {
            return Err(SandboxError::Unsupported(missing));
        }
    }
    let cgroup = if policy.unconfined {
        None
    } else if is_root() {
        let cgroup = PidsCgroup::create(policy.limits.processes);
        if cgroup.is_none() {
            return Err(SandboxError::Unsupported(NO_PIDS_CGROUP.into()));
        }
        cgroup
    } else {
        None
    };
    let scratch = Scratch::create()?;
    let ruleset = if policy.unconfined { None } else { Some(ruleset(policy, &root, &scratch.0)?) };
    let confinement = Confinement {
        confined: !policy.unconfined,
        // SAFETY: getpid/getuid/getgid cannot fail.
        parent: unsafe { libc::getpid() },
        flags: namespace_flags(),
        id_maps: id_maps(),
        cgroup_procs: cgroup.as_ref().map(|c| c.procs.clone()),
        limits: rlimits(&policy.limits),
        ruleset: ruleset.as_ref().map_or(-1, |r| r.as_raw_fd()),
    };

    let (reader, writer) = pipe()?;
    let mut env = scrubbed_env(&policy.env);
    let scratch_dir = scratch.0.to_string_lossy().into_owned();
    env.retain(|(n, _)| n != "HOME" && n != "TMPDIR");
    env.push(("HOME".into(), scratch_dir.clone()));
    env.push(("TMPDIR".into(), scratch_dir));

    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(command)
        .current_dir(&cwd)
        .env_clear()
        .envs(env)
        .stdin(Stdio::null())
        .stdout(Stdio::from(writer.try_clone().map_err(io_error)?))
        .stderr(Stdio::from(writer))
        .process_group(0);
    // SAFETY: `confine` makes only async-signal-safe system calls on data prepared above.
    unsafe { cmd.pre_exec(move || confine(&confinement)) };
    let mut child = cmd.spawn().map_err(|e| SandboxError::Io(format!("could not start /bin/sh: {e}")))?;
    drop(cmd);
    drop(ruleset);

    let deadline = Instant::now() + policy.timeout;
    let mut output = HeadTail::new(policy.output_cap);
    let mut ended_by: Option<Ending> = None;
    let group = child.id() as libc::pid_t;
    let stop = |ended_by: &mut Option<Ending>| {
        if ended_by.is_none() {
            let why = if cancel.load(Ordering::Relaxed) {
                Some(Ending::Cancelled)
            } else if Instant::now() >= deadline {
                Some(Ending::TimedOut)
            } else {
                None
            };
            if let Some(why) = why {
                // SAFETY: signals the command's process group; the PID namespace ends the rest.
                unsafe { libc::kill(-group, libc::SIGKILL) };
                *ended_by = Some(why);
            }
        }
    };
    drain(reader, &mut output, || stop(&mut ended_by))?;
    // The output ends as the shell exits, a moment before it can be reaped: wait 1 ms, then
    // twice as long each time up to the poll interval (a flat 50 ms wait was most of a short
    // command's time).
    let mut wait = Duration::from_millis(1);
    let status = loop {
        if let Some(status) = child.try_wait().map_err(io_error)? {
            break status;
        }
        stop(&mut ended_by);
        std::thread::sleep(wait);
        wait = (wait * 2).min(Duration::from_millis(POLL_MS as u64));
    };
    drop(cgroup);
    Ok(Outcome {
        truncated: output.truncated(),
        output: output.text(),
        exit_code: status.code(),
        signal: status.signal(),
        timed_out: ended_by == Some(Ending::TimedOut),
        cancelled: ended_by == Some(Ending::Cancelled),
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    TimedOut,
    Cancelled,
}

fn io_error(e: io::Error) -> SandboxError {
    SandboxError::Io(e.to_string())
}

fn resolve_dirs(policy: &Policy) -> Result<(PathBuf, PathBuf), SandboxError> {
    let root = policy
        .root
        .canonicalize()
        .map_err(|e| SandboxError::InvalidPolicy(format!("root {}: {e}", policy.root.display())))?;
    if !root.is_dir() {
        return Err(SandboxError::InvalidPolicy(format!("root {} is not a directory", root.display())));
    }
    let cwd = match &policy.cwd {
        None => root.clone(),
        Some(cwd) => {
            cwd.canonicalize().map_err(|e| SandboxError::InvalidPolicy(format!("cwd {}: {e}", cwd.display())))?
        }
    };
    if !cwd.starts_with(&root) || !cwd.is_dir() {
        return Err(SandboxError::InvalidPolicy(format!("cwd {} is not a directory beneath the root", cwd.display())));
    }
    Ok((root, cwd))
}

/// The Landlock ruleset: everything beneath the root and the scratch directory, reading and
/// executing beneath the system directories, the listed devices, and no TCP.
fn ruleset(policy: &Policy, root: &Path, scratch: &Path) -> Result<OwnedFd, SandboxError> {
    let required = ABI::V4;
    let failed =
        |e: landlock::RulesetError| SandboxError::Unsupported(format!("a Landlock feature the policy needs ({e})"));
    let created = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(required))
        .and_then(|r| r.handle_access(AccessNet::from_all(required)))
        .and_then(|r| r.set_compatibility(CompatLevel::BestEffort).handle_access(AccessFs::from_all(ABI::V5)))
        .and_then(|r| r.scope(Scope::from_all(ABI::V6)))
        .and_then(|r| r.create())
        .map_err(failed)?;
    let devices = AccessFs::from_read(ABI::V5) | AccessFs::WriteFile | AccessFs::IoctlDev;
    let created = created
        .set_compatibility(CompatLevel::BestEffort)
        .add_rules(path_beneath_rules([scratch], AccessFs::from_all(ABI::V5)))
        .and_then(|r| {
            let access = if policy.write_root { AccessFs::from_all(ABI::V5) } else { AccessFs::from_read(ABI::V5) };
            r.add_rules(path_beneath_rules([root], access))
        })
        .and_then(|r| r.add_rules(path_beneath_rules(&policy.read_only, AccessFs::from_read(ABI::V5))))
        .and_then(|r| r.add_rules(path_beneath_rules(&policy.devices, devices)))
        .map_err(failed)?;
    let fd: Option<OwnedFd> = created.into();
    fd.ok_or_else(|| SandboxError::Unsupported("Landlock".into()))
}

fn id_maps() -> Vec<(CString, Vec<u8>)> {
    // SAFETY: these cannot fail.
    let (uid, gid, euid) = unsafe { (libc::getuid(), libc::getgid(), libc::geteuid()) };
    if euid == 0 {
        return Vec::new();
    }
    let path = |p: &str| CString::new(p).expect("no NUL");
    vec![
        (path("/proc/self/setgroups"), b"deny".to_vec()),
        (path("/proc/self/uid_map"), format!("{uid} {uid} 1").into_bytes()),
        (path("/proc/self/gid_map"), format!("{gid} {gid} 1").into_bytes()),
    ]
}

fn rlimits(limits: &Limits) -> [(libc::__rlimit_resource_t, u64); 6] {
    [
        (libc::RLIMIT_CPU, limits.cpu_seconds),
        (libc::RLIMIT_DATA, limits.data_bytes),
        (libc::RLIMIT_FSIZE, limits.file_bytes),
        (libc::RLIMIT_NOFILE, limits.open_files),
        (libc::RLIMIT_NPROC, limits.processes),
        (libc::RLIMIT_CORE, 0),
    ]
}

/// Runs in the child between `fork` and `exec`. The child makes the namespaces, then forks
/// once more: the grandchild, the new PID namespace's first process, becomes the shell, and
/// the child waits for it and exits as it did.
fn confine(c: &Confinement) -> io::Result<()> {
    // SAFETY: async-signal-safe system calls only, on memory prepared before fork.
    unsafe {
        die_with_parent(c.parent)?;
        if c.confined {
            if let Some(procs) = &c.cgroup_procs {
                write_file(procs, b"0")?;
            }
            check(libc::unshare(c.flags))?;
            for (path, contents) in &c.id_maps {
                write_file(path, contents)?;
            }
            match libc::fork() {
                -1 => return Err(io::Error::last_os_error()),
                0 => {}
                shell => mirror_exit(shell),
            }
            check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0))?;
            private_proc()?;
        }
        for (resource, value) in c.limits {
            let limit = libc::rlimit { rlim_cur: value, rlim_max: value };
            check(libc::setrlimit(resource, &limit))?;
        }
        if !c.confined {
            return Ok(());
        }
        check(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1 as libc::c_ulong, 0, 0, 0))?;
        check(libc::syscall(libc::SYS_landlock_restrict_self, c.ruleset, 0u32) as libc::c_int)?;
        libc::close(c.ruleset);
    }
    Ok(())
}

/// A `/proc` of the new PID namespace only, so no process outside the sandbox (the agent's
/// own environment, its command line) is visible there. Mounts stay private to the sandbox.
unsafe fn private_proc() -> io::Result<()> {
    let none = std::ptr::null::<libc::c_char>();
    check(libc::mount(none, c"/".as_ptr(), none, libc::MS_REC | libc::MS_PRIVATE, std::ptr::null()))?;
    let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
    check(libc::mount(c"proc".as_ptr(), c"/proc".as_ptr(), c"proc".as_ptr(), flags, std::ptr::null()))
}

/// The child is killed when the agent's thread that started it ends (a SIGKILL of the agent).
unsafe fn die_with_parent(parent: libc::pid_t) -> io::Result<()> {
    check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0))?;
    if libc::getppid() != parent {
        libc::_exit(127);
    }
    Ok(())
}

/// Waits for the shell and ends this process the way the shell ended. Every descriptor is
/// closed first, so the output pipe reaches its end when the sandbox's processes close it.
unsafe fn mirror_exit(shell: libc::pid_t) -> ! {
    libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32);
    let mut status = 0;
    while libc::waitpid(shell, &mut status, 0) == -1 {
        if *libc::__errno_location() != libc::EINTR {
            libc::_exit(127);
        }
    }
    if libc::WIFSIGNALED(status) {
        let signal = libc::WTERMSIG(status);
        libc::signal(signal, libc::SIG_DFL);
        libc::kill(libc::getpid(), signal);
    }
    libc::_exit(libc::WEXITSTATUS(status))
}

unsafe fn write_file(path: &CString, contents: &[u8]) -> io::Result<()> {
    let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
    check(fd)?;
    let written = libc::write(fd, contents.as_ptr().cast(), contents.len());
    libc::close(fd);
    if written != contents.len() as isize {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn check(ret: libc::c_int) -> io::Result<()> {
    if ret == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

fn pipe() -> Result<(OwnedFd, OwnedFd), SandboxError> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two descriptors we then own.
    check(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }).map_err(io_error)?;
    // SAFETY: both descriptors were just opened and are owned by nothing else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Reads the output until its end, calling `tick` at least every poll interval.
fn drain(reader: OwnedFd, output: &mut HeadTail, mut tick: impl FnMut()) -> Result<(), SandboxError> {
    let mut file = std::fs::File::from(reader);
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let mut pfd = libc::pollfd { fd: file.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd.
        let ready = unsafe { libc::poll(&mut pfd, 1, POLL_MS) };
        tick();
        if ready <= 0 {
            continue;
        }
        match file.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => output.push(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io_error(e)),
        }
    }
}

/// A private directory for the command's `HOME` and `TMPDIR`, removed with everything in it.
struct Scratch(PathBuf);

impl Scratch {
    fn create() -> Result<Self, SandboxError> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        use std::os::unix::fs::DirBuilderExt;
        let name = format!("engram-sandbox-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        let dir = std::env::temp_dir().join(name);
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .map_err(|e| SandboxError::Io(format!("scratch directory {}: {e}", dir.display())))?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
