use std::path::PathBuf;
use std::time::Duration;

/// Resource limits of one command (rlimits; they also bind every process it starts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// CPU seconds per process (`RLIMIT_CPU`).
    pub cpu_seconds: u64,
    /// Bytes of data segment and private writable mappings per process (`RLIMIT_DATA`;
    /// `RLIMIT_AS` would refuse runtimes such as V8 that reserve large address ranges).
    pub data_bytes: u64,
    /// The largest file a process may write (`RLIMIT_FSIZE`).
    pub file_bytes: u64,
    /// Open file descriptors per process (`RLIMIT_NOFILE`).
    pub open_files: u64,
    /// Processes of the user (`RLIMIT_NPROC`; the kernel exempts root from it).
    pub processes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { cpu_seconds: 600, data_bytes: 4 << 30, file_bytes: 1 << 30, open_files: 4096, processes: 1024 }
    }
}

/// What a command may do. Everything not granted here is denied.
#[derive(Debug, Clone)]
pub struct Policy {
    /// The only tree the command may write (and the tree it may read besides the system's).
    pub root: PathBuf,
    /// Whether the command may change files beneath `root`; when not, it may still read and
    /// execute them (its scratch `HOME` and `TMPDIR` stay writable). Default: `true`.
    pub write_root: bool,
    /// Working directory, beneath `root`. Default: `root`.
    pub cwd: Option<PathBuf>,
    /// Trees the command may read and execute but not change. Default: the system
    /// directories that exist among `/usr`, `/bin`, `/sbin`, `/lib`, `/lib32`, `/lib64`,
    /// `/etc`, `/opt`, `/proc`, `/sys`, `/dev` (where only the character devices of
    /// [`Policy::devices`] are writable).
    pub read_only: Vec<PathBuf>,
    /// Devices the command may read and write (`/dev/null` and the like).
    pub devices: Vec<PathBuf>,
    /// Variables the command gets besides the harmless ones [`crate::scrubbed_env`] keeps.
    pub env: Vec<(String, String)>,
    pub limits: Limits,
    /// Wall-clock time before every process of the command is killed.
    pub timeout: Duration,
    /// Bytes of output kept: the first and the last half of this, with a note of what was cut.
    pub output_cap: usize,
    /// Runs the command with no confinement at all: no Landlock, no namespaces, no pids
    /// cgroup — only the scrubbed environment, rlimits, the timeout (which then reaches the
    /// command's process group, not processes that leave it) and the output cap. For callers
    /// that say so explicitly and loudly (`sandbox: "none"`). Default: `false`.
    pub unconfined: bool,
}

const SYSTEM_DIRS: &[&str] =
    &["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc", "/opt", "/proc", "/sys", "/dev"];
const DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"];

impl Policy {
    /// The default policy for `root`: system directories readable, 2 minutes, 30 KB of output.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        let existing = |paths: &[&str]| paths.iter().map(PathBuf::from).filter(|p| p.exists()).collect();
        Policy {
            root: root.into(),
            write_root: true,
            cwd: None,
            read_only: existing(SYSTEM_DIRS),
            devices: existing(DEVICES),
            env: Vec::new(),
            limits: Limits::default(),
            timeout: Duration::from_secs(120),
            output_cap: 30_000,
            unconfined: false,
        }
    }
}
