//! A pids cgroup per command: the bound on processes for root, whom the kernel exempts from
//! `RLIMIT_NPROC`.

use std::ffi::CString;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

/// Where a pids controller can be: cgroup v1's own hierarchy, or the v2 unified root.
const HIERARCHIES: &[&str] = &["/sys/fs/cgroup/pids", "/sys/fs/cgroup"];

pub(crate) struct PidsCgroup {
    dir: PathBuf,
    /// `<dir>/cgroup.procs`, written with "0" by the child to enter it.
    pub(crate) procs: CString,
}

impl PidsCgroup {
    /// A new cgroup allowing at most `max` processes, or `None` where none can be made.
    pub(crate) fn create(max: u64) -> Option<Self> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let name = format!("engram-sandbox-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        HIERARCHIES.iter().find_map(|base| {
            let base = PathBuf::from(base);
            if !base.join("cgroup.procs").exists() {
                return None;
            }
            let dir = base.join(&name);
            std::fs::create_dir(&dir).ok()?;
            // Dropped (and so removed) if the pids controller is not enabled here.
            let cgroup = PidsCgroup {
                procs: CString::new(dir.join("cgroup.procs").into_os_string().into_encoded_bytes()).ok()?,
                dir,
            };
            std::fs::write(cgroup.dir.join("pids.max"), max.to_string()).ok()?;
            Some(cgroup)
        })
    }
}

impl Drop for PidsCgroup {
    fn drop(&mut self) {
        // Empty once the command's processes are reaped; the kernel may take a moment.
        for _ in 0..100 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}
