//! The writers' lock: an exclusive `flock` on the directory that holds the file being replaced.
//!
//! The kernel releases it when its holder exits or is killed, so a writer that dies can never
//! leave a lock behind, and every handle opens its own description of the directory, so threads
//! of one process exclude each other exactly like separate processes do. Nothing is created on
//! disk for it.

use crate::contain::sys;
use engram_core::{CoreError, CoreResult, ErrorCode};
use rustix::fs::{flock, FlockOperation};
use rustix::io::Errno;
use std::os::fd::BorrowedFd;
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
