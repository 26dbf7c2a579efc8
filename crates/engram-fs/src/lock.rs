//! The writers' lock: an exclusive `flock` on the directory that holds the file being replaced.
//!
//! The kernel releases it when its holder exits or is killed, so a writer that dies can never
//! leave a lock behind, and every handle opens its own description of the directory, so threads
//! of one process exclude each other exactly like separate processes do. Nothing is created on
//! disk for it.

use crate::contain::sys;
use crate::write::TEMP_PREFIX;
use engram_core::{CoreError, CoreResult, ErrorCode};
use rustix::fs::{flock, unlinkat, AtFlags, Dir, FlockOperation};
use rustix::io::Errno;
use std::os::fd::{AsFd, BorrowedFd};
use std::time::{Duration, Instant};

/// Held while alive; unlocks on drop.
pub(crate) struct DirLock<'a> {
    fd: BorrowedFd<'a>,
}

impl Drop for DirLock<'_> {
    fn drop(&mut self) {
        let _ = flock(self.fd, FlockOperation::Unlock);
    }
}

/// Takes the lock of `dir`, waiting up to `timeout` for another writer (`busy` after that).
pub(crate) fn lock_dir<'a>(dir: BorrowedFd<'a>, timeout: Duration, subject: &str) -> CoreResult<DirLock<'a>> {
    let start = Instant::now();
    let mut pause = Duration::from_micros(200);
    loop {
        match flock(dir, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => return Ok(DirLock { fd: dir }),
            Err(Errno::INTR) => continue,
            Err(Errno::WOULDBLOCK) => {
                if start.elapsed() >= timeout {
                    return Err(lock_timeout(subject, timeout));
                }
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(10));
            }
            Err(e) => return Err(sys(e, subject)),
        }
    }
}

/// The `busy` error of a writer that waited `timeout` for the lock.
pub(crate) fn lock_timeout(subject: &str, timeout: Duration) -> CoreError {
    CoreError::new(ErrorCode::Busy, subject, format_args!("waited {} ms", timeout.as_millis()))
}

/// Removes every temp file in `dir`. Only called with the directory's lock held: every writer
/// creates its temp file under that lock and renames or removes it before letting go, so any
/// temp file seen here belongs to a writer that died.
pub(crate) fn remove_orphan_temps(dir: BorrowedFd<'_>) {
    let Ok(entries) = Dir::read_from(dir.as_fd()) else { return };
    for entry in entries.flatten() {
        if entry.file_name().to_bytes().starts_with(TEMP_PREFIX.as_bytes()) {
            let _ = unlinkat(dir, entry.file_name(), AtFlags::empty());
        }
    }
}
