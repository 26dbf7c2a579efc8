//! The fsyncs of [`Durability::Full`], in one place, counted (the counts are how tests see that
//! the option reaches the writes: a sync that stopped happening shows up as a count that stays
//! put).

use crate::Durability;
use std::fs::File;
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicU64, Ordering};

/// How many fsyncs a handle made since it was opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Syncs {
    /// Written files (each before its rename into place).
    pub files: u64,
    /// Directories whose entries changed (a rename into place, a created parent, a delete).
    pub dirs: u64,
}

/// Syncs per [`Durability`]: every call is a no-op under [`Durability::Relaxed`].
#[derive(Debug)]
pub(crate) struct Syncer {
    full: bool,
    files: AtomicU64,
    dirs: AtomicU64,
}

impl Syncer {
    pub fn new(durability: Durability) -> Syncer {
        Syncer { full: durability == Durability::Full, files: AtomicU64::new(0), dirs: AtomicU64::new(0) }
    }

    /// fsync of a file's data and metadata; its error fails the write.
    pub fn file(&self, f: &File) -> std::io::Result<()> {
        if self.full {
            f.sync_all()?;
            self.files.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }

    /// fsync of a directory, making the entries it gained or lost durable. Best effort: some
    /// filesystems refuse it on directories (then it is not counted).
    pub fn dir(&self, fd: impl AsFd) {
        if self.full && rustix::fs::fsync(fd).is_ok() {
            self.dirs.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub fn counts(&self) -> Syncs {
        Syncs { files: self.files.load(Ordering::Relaxed), dirs: self.dirs.load(Ordering::Relaxed) }
    }
}
