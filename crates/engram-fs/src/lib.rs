//! Rooted, symlink-safe file access for Engram's `FilesystemBackend` (native only).
//!
//! A [`RootedFs`] is bound to one host directory. Callers speak Engram *virtual* paths
//! (`/a/b.txt`, normalised by [`engram_core::path::normalize`]) and get virtual paths back; the
//! host layout never leaks into results or error messages.
//!
//! Guarantees:
//! - **Containment that holds under races.** Every operation resolves from an open handle of the
//!   root, one component at a time (`openat` with `O_DIRECTORY | O_NOFOLLOW`), and then acts by
//!   handle (`openat`, `fstatat`, `mkdirat`, `unlinkat`, `renameat`). The kernel never follows a
//!   symbolic link for us, so a concurrent rename or symlink swap (even `RENAME_EXCHANGE` in a
//!   loop) can change which place *inside* the root a path reaches, never make an operation read,
//!   list, create, change or delete anything outside it. Walks (`grep`, `glob`) descend by handle
//!   too. Paths longer than [`contain::MAX_PATH_BYTES`] bytes or deeper than
//!   [`contain::MAX_PATH_DEPTH`] components are `invalid_path` before any I/O.
//! - **The symlink rule.** A symbolic link *in the parent chain* is read and its target resolved
//!   by the same handle walk: one that stays inside the root is followed (`/alias/f.txt` with
//!   `alias -> dir` reads `dir/f.txt`); one that leads outside, climbs above the root, dangles or
//!   loops is `path_escape`. A link *named directly* is never used by any operation (read,
//!   read_bytes, write, edit, delete, rename, ls, stat, grep, glob): `path_escape` when it leads
//!   outside the root (or nowhere), `permission_denied` when it leads inside. `ls` lists links as
//!   non-directories with their own `lstat`; `grep` and `glob` never follow them and refuse a
//!   directory reached through one; deleting a directory removes links inside it as links.
//! - **Atomic writes, compare-and-swap across processes.** A write takes an exclusive `flock`
//!   on the directory that holds the file (released by the kernel if the writer dies), checks
//!   the optional version, writes a temp file beside the target, syncs it, renames it into place
//!   and syncs the directory ([`Durability::Full`]; [`Durability::Relaxed`] skips both syncs
//!   and stays atomic). A killed writer never leaves a torn file, only possibly a temp file,
//!   which the next writer in that directory removes. Temp files (`.engram-tmp.<pid>.<n>`) are
//!   never listed or searched.
//! - **Bounded work.** Paginated reads stream the file; whole-file operations are capped at
//!   [`FsOptions::max_file_bytes`]; model-chosen `max_count` / `max_results` are clamped to
//!   [`FsOptions::max_results`]; a search keeps only the hits that can appear in its answer;
//!   files it could not search (too large, unreadable) are reported, never silently dropped;
//!   searches can be cancelled.
//!
//! Search results are byte-for-byte those of the in-memory [`engram_core::FileTable`] for the
//! same files: both use engram-core's per-file `Searcher` and path-ordered `Collector`.
//!
//! Choices and limits:
//! - Ignore rules are those of the rooted tree (walks start at the root and descend to the
//!   searched directory), so an ignored directory stays invisible even when searched directly;
//!   a file named directly in `grep` is always searched. Only `.gitignore`/`.ignore` files
//!   inside the root apply (no global excludes, no `.git/info/exclude`, no parent directories).
//! - Names with no virtual form (non-UTF-8, backslashes, control characters, a leading `~`)
//!   are not listed or searched.
//! - The writers' lock is per directory: writes to different files of one directory take turns
//!   (each holds it for one write). Readers never lock.
//! - Unix only.
#![forbid(unsafe_code)]

#[cfg(not(unix))]
compile_error!("engram-fs supports Unix hosts only (it relies on openat, O_NOFOLLOW and flock)");

pub mod contain;
mod delete;
mod durable;
mod error;
mod list;
pub mod lock;
mod meta;
mod read;
mod search;
mod text;
pub mod walk;
mod write;

use contain::Jail;
pub use durable::Syncs;
use engram_core::{CoreError, CoreResult, ErrorCode};
pub use list::LsReport;
pub use search::{GlobReport, GrepReport};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;
pub use walk::Skip;

/// Default cap on whole-file operations: 10 MiB.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 10 << 20;

/// How to open a [`RootedFs`].
#[derive(Debug, Clone)]
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
    /// Ceiling of the model-chosen `maxCount` (grep) and `maxResults` (glob); also their value
    /// when absent. Default [`DEFAULT_MAX_RESULTS`].
    pub max_results: usize,
    /// Whether writes fsync. Default [`Durability::Full`].
    pub durability: Durability,
    /// How long a write waits for another writer's lock on the same directory before failing
    /// with `conflict`. Default 10 000 ms.
    pub lock_timeout_ms: u64,
}

/// Default ceiling of search results: 10 000 matches (grep) or files (glob).
pub const DEFAULT_MAX_RESULTS: usize = 10_000;

/// How hard a write works to survive a power loss. Both are atomic (readers and killed writers
/// never see or leave a torn file).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Durability {
    /// fsync the new file before the rename, and after it every directory whose entries the
    /// operation changed: the file's (rename), each parent a write created, the parent of a
    /// deleted entry (the default).
    #[default]
    Full,
    /// No fsync: a crash of the machine (not of the process) may lose the latest writes.
    Relaxed,
}

impl Durability {
    /// `"full"` or `"relaxed"`; anything else is `unsupported`.
    pub fn parse(name: &str) -> CoreResult<Durability> {
        match name {
            "full" => Ok(Durability::Full),
            "relaxed" => Ok(Durability::Relaxed),
            _ => Err(CoreError::new(ErrorCode::Unsupported, name, "durability must be \"full\" or \"relaxed\"")),
        }
    }
}

impl Default for FsOptions {
    fn default() -> Self {
        FsOptions {
            root: PathBuf::from("."),
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            respect_gitignore: true,
            max_results: DEFAULT_MAX_RESULTS,
            durability: Durability::Full,
            lock_timeout_ms: 10_000,
        }
    }
}

/// A file-access handle confined to one host directory. Cheap to share: `Send + Sync`, every
/// method takes `&self`.
#[derive(Debug)]
pub struct RootedFs {
    jail: Jail,
    max_file_bytes: u64,
    respect_gitignore: bool,
    max_results: usize,
    lock_timeout: Duration,
    threads: usize,
    /// Directories (device, inode) whose orphaned temp files this handle already removed.
    cleaned: Mutex<HashSet<(u64, u64)>>,
}

impl RootedFs {
    /// Opens a handle on `opts.root`, which must exist and be a directory (`file_not_found`,
    /// or `invalid_path` for a non-directory).
    pub fn open(opts: FsOptions) -> CoreResult<RootedFs> {
        // The root is the embedder's configuration, not agent input, so naming it is safe.
        let shown = opts.root.to_string_lossy().into_owned();
        let root = std::fs::canonicalize(&opts.root).map_err(|e| error::io_error(&e, &shown))?;
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 4);
        Ok(RootedFs {
            jail: Jail::open(root, &shown, opts.durability)?,
            max_file_bytes: opts.max_file_bytes,
            respect_gitignore: opts.respect_gitignore,
            max_results: opts.max_results,
            lock_timeout: Duration::from_millis(opts.lock_timeout_ms),
            threads,
            cleaned: Mutex::new(HashSet::new()),
        })
    }

    /// The canonical host directory this handle is confined to.
    pub fn root(&self) -> &Path {
        self.jail.root()
    }

    /// The fsyncs this handle made so far (all zero under [`Durability::Relaxed`]).
    pub fn syncs(&self) -> Syncs {
        self.jail.sync.counts()
    }

    fn too_large(&self, vpath: &str, size: u64) -> CoreError {
        CoreError::new(ErrorCode::TooLarge, vpath, format_args!("{size} bytes; the limit is {}", self.max_file_bytes))
    }
}
