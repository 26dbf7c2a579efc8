//! Rooted, symlink-safe file access for Engram's `FilesystemBackend` (native only).
//!
//! A [`RootedFs`] is bound to one host directory. Callers speak Engram *virtual* paths
//! (`/a/b.txt`, normalised by [`engram_core::path::normalize`]) and get virtual paths back; the
//! host layout never leaks into results or error messages.
//!
//! Guarantees:
//! - **Containment on the real path.** The existing part of every path's parent chain is
//!   canonicalised and must stay under the canonical root (`path_escape` otherwise), so a
//!   symlinked directory pointing outside is caught, and symlink loops fail instead of hanging.
//! - **Final components are never followed.** Files are opened with `O_NOFOLLOW`; a symbolic link
//!   named directly is refused by every operation (read, write, edit, delete, ls, stat, grep,
//!   glob): `path_escape` when it leads outside the root (or nowhere), `permission_denied` when it
//!   leads inside. Listings show links as non-directories; walks never follow them.
//! - **Atomic writes.** Temp file in the same directory, fsync, rename over the target, fsync of
//!   the directory; an optional compare-and-swap on the version string.
//! - **Bounded memory.** Paginated reads stream the file; whole-file operations are capped at
//!   [`FsOptions::max_file_bytes`].
//!
//! Search results are byte-for-byte those of the in-memory [`engram_core::FileTable`] for the
//! same files: both use engram-core's per-file `Searcher` and path-ordered `Collector`.
//!
//! Choices and limits:
//! - `stat`/`ls` report a symbolic link as itself (`isDir: false`, its own size, mtime and
//!   version); `glob` and `grep` skip links; `write` replaces a link, `delete` removes it.
//! - Ignore rules are those of the rooted tree (walks start at the root and are pruned to the
//!   searched directory), so an ignored directory stays invisible even when searched directly;
//!   a file named directly in `grep` is always searched. Only `.gitignore`/`.ignore` files
//!   inside the root apply (no global excludes, no `.git/info/exclude`, no parent directories).
//! - Names with no virtual form (non-UTF-8, backslashes, control characters, a leading `~`)
//!   are not listed or searched.
//! - Compare-and-swap is exact between writers in one process (a lock per real path). Writers
//!   in other processes still never corrupt a file (atomic rename) but can race a version
//!   check.
//! - Checks and uses are separate system calls: a process that can create symbolic links
//!   inside the root concurrently could race a walk. Single-file opens are re-verified through
//!   `/proc/self/fd` on Linux; walks and the file count of a directory `delete` are not (the
//!   removal itself uses std's link-safe `remove_dir_all`).
//! - A write's temp file (`.engram-tmp.<pid>.<n>`, beside its target) is visible to a
//!   concurrent listing while the write runs, and removed if the write fails.
//! - Unix only.
#![forbid(unsafe_code)]

#[cfg(not(unix))]
compile_error!("engram-fs supports Unix hosts only (it relies on O_NOFOLLOW and Unix metadata)");

pub mod api;
mod contain;
mod delete;
mod error;
mod list;
mod meta;
mod read;
mod search;
mod walk;
mod write;

use contain::Jail;
use engram_core::{CoreError, CoreResult, ErrorCode};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// Default cap on whole-file operations: 10 MiB.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 10 << 20;

/// How to open a [`RootedFs`].
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct FsOptions {
    /// Host directory that becomes the virtual `/`. Canonicalised by [`RootedFs::open`];
    /// defaults to the current directory.
    pub root: PathBuf,
    /// Largest file that `read_bytes`, `edit`, `write` and `grep` handle, and the most content one
    /// `read` call returns. Default [`DEFAULT_MAX_FILE_BYTES`].
    pub max_file_bytes: u64,
    /// Honour `.gitignore` and `.ignore` files in `grep` and `glob` (default `true`). `.git/` is
    /// skipped either way.
    pub respect_gitignore: bool,
}

impl Default for FsOptions {
    fn default() -> Self {
        FsOptions { root: PathBuf::from("."), max_file_bytes: DEFAULT_MAX_FILE_BYTES, respect_gitignore: true }
    }
}

/// A file-access handle confined to one host directory. Cheap to share: `Send + Sync`, every
/// method takes `&self`.
#[derive(Debug)]
pub struct RootedFs {
    jail: Jail,
    max_file_bytes: u64,
    respect_gitignore: bool,
    threads: usize,
}

impl RootedFs {
    /// Opens a handle on `opts.root`, which must exist and be a directory (`file_not_found`,
    /// or `invalid_path` for a non-directory).
    pub fn open(opts: FsOptions) -> CoreResult<RootedFs> {
        // The root is the embedder's configuration, not agent input, so naming it is safe.
        let shown = opts.root.to_string_lossy().into_owned();
        let root = std::fs::canonicalize(&opts.root).map_err(|e| error::io_error(&e, &shown))?;
        let is_dir = std::fs::metadata(&root).map_err(|e| error::io_error(&e, &shown))?.is_dir();
        if !is_dir {
            return Err(CoreError::new(ErrorCode::InvalidPath, &shown, "the root is not a directory"));
        }
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        Ok(RootedFs {
            jail: Jail::new(root),
            max_file_bytes: opts.max_file_bytes,
            respect_gitignore: opts.respect_gitignore,
            threads,
        })
    }

    /// The canonical host directory this handle is confined to.
    pub fn root(&self) -> &Path {
        self.jail.root()
    }

    fn too_large(&self, vpath: &str, size: u64) -> CoreError {
        CoreError::new(ErrorCode::TooLarge, vpath, format_args!("{size} bytes; the limit is {}", self.max_file_bytes))
    }
}
