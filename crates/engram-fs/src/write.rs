//! Atomic writes (temp file + optional fsync + rename, by directory handle), contained
//! `mkdir -p`, compare-and-swap under the directory's lock, edit, rename.

use crate::contain::{kind_of, sys, Kind, Target};
use crate::error::{is_directory, not_found};
use crate::lock::lock_dir;
use crate::meta::{file_info, mtime_nanos, version};
use crate::RootedFs;
use engram_core::ops::{EditOptions, EditResult};
use engram_core::{CoreError, CoreResult, ErrorCode, FileInfo};
use rustix::fs::{openat, renameat, statat, unlinkat, AtFlags, Dir, Mode, OFlags, Stat};
use rustix::io::Errno;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::PermissionsExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

/// Prefix of the temp files a write creates next to its target. They exist only while the
/// directory's lock is held, are never listed or searched, and any found by a later writer
/// (a writer that was killed) are removed.
pub(crate) const TEMP_PREFIX: &str = ".engram-tmp.";

/// A temp file that is removed on drop unless it was renamed into place.
struct TempFile<'a> {
    dir: BorrowedFd<'a>,
    name: String,
    file: File,
    placed: bool,
}

impl<'a> TempFile<'a> {
    fn create(dir: BorrowedFd<'a>, subject: &str) -> CoreResult<TempFile<'a>> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        loop {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let name = format!("{TEMP_PREFIX}{}.{n}", std::process::id());
            match openat(dir, name.as_str(), flags, Mode::from_raw_mode(0o666)) {
                Ok(fd) => return Ok(TempFile { dir, name, file: File::from(fd), placed: false }),
                Err(Errno::EXIST) => continue,
                Err(e) => return Err(sys(e, subject)),
            }
        }
    }
}

impl Drop for TempFile<'_> {
    fn drop(&mut self) {
        if !self.placed {
            let _ = unlinkat(self.dir, self.name.as_str(), AtFlags::empty());
        }
    }
}

impl RootedFs {
    /// Creates or replaces a file, creating missing parent directories (by handle, one level at a
    /// time, inside the root). The replacement is atomic: readers see the old or the new content,
    /// never a mix, even if the writer is killed midway.
    ///
    /// `if_version` makes the write a compare-and-swap against [`RootedFs::stat`]'s version
    /// (`"0"`: the file must not exist), checked under the directory's lock, which every writer
    /// in every process takes: a mismatch is `conflict`, never a lost update. Errors:
    /// `is_directory` for a directory, `invalid_path` when a parent is a file, `too_large` over
    /// `max_file_bytes`, a symbolic link at the target is refused as by every operation.
    pub fn write(&self, vpath: &str, data: &[u8], if_version: Option<&str>) -> CoreResult<FileInfo> {
        let t = self.jail.resolve(vpath)?;
        if t.is_root() || t.kind == Kind::Dir {
            return Err(is_directory(&t.vpath));
        }
        if data.len() as u64 > self.max_file_bytes {
            return Err(self.too_large(&t.vpath, data.len() as u64));
        }
        let (dir, name) = match t.dir {
            Some(dir) => (dir, t.name),
            None => self.jail.parent_for_create(&t.vpath)?,
        };
        self.replace(dir.as_fd(), &name, &t.vpath, data, if_version)
    }

    /// Replaces one exact string in a file (see [`engram_core::edit::edit`]) and writes the
    /// result atomically. The write is a compare-and-swap against the version that was read,
    /// so a concurrent change (from any process) is a `conflict`, never a lost update;
    /// `opts.if_version`, when given, must equal that version too. `opts.modified_at` is
    /// ignored: the host clock sets the mtime.
    pub fn edit(&self, opts: &EditOptions) -> CoreResult<EditResult> {
        let t = self.jail.resolve(&opts.path)?;
        let (data, st) = self.read_target(&t)?;
        let seen = version(&st);
        if opts.if_version.as_deref().is_some_and(|v| v != seen) {
            return Err(CoreError::of(ErrorCode::Conflict, &t.vpath));
        }
        let (updated, occurrences) =
            engram_core::edit::edit(&t.vpath, &data, &opts.old_string, &opts.new_string, opts.replace_all)?;
        if updated.len() as u64 > self.max_file_bytes {
            return Err(self.too_large(&t.vpath, updated.len() as u64));
        }
        let info = self.replace(t.dir()?, &t.name, &t.vpath, &updated, Some(&seen))?;
        Ok(EditResult { path: t.vpath, occurrences, version: info.version.unwrap_or_default() })
    }

    /// Renames a file (never a directory or a link) within the root, replacing a file at `to`;
    /// `if_version` is checked against `from` under its directory's lock. Parents of `to` are
    /// created.
    pub fn rename(&self, from: &str, to: &str, if_version: Option<&str>) -> CoreResult<FileInfo> {
        let src = self.jail.resolve(from)?;
        self.jail.require_file(&src)?;
        let dst = self.jail.resolve(to)?;
        if dst.is_root() || dst.kind == Kind::Dir {
            return Err(is_directory(&dst.vpath));
        }
        let (dst_dir, dst_name) = match dst.dir {
            Some(dir) => (dir, dst.name),
            None => self.jail.parent_for_create(&dst.vpath)?,
        };
        let src_dir = src.dir()?;
        let _lock = lock_dir(src_dir, self.lock_timeout, &src.vpath)?;
        let now = self.current(src_dir, &src.name, &src.vpath)?;
        let Some(now) = now else { return Err(not_found(&src.vpath)) };
        if if_version.is_some_and(|v| v != version(&now)) {
            return Err(CoreError::of(ErrorCode::Conflict, &src.vpath));
        }
        renameat(src_dir, src.name.as_os_str(), &dst_dir, dst_name.as_os_str()).map_err(|e| sys(e, &src.vpath))?;
        self.jail.sync.dir(src_dir);
        self.jail.sync.dir(&dst_dir);
        Ok(file_info(&dst.vpath, &now))
    }

    /// `lstat` of `name` in `dir`: `None` when missing; a directory is `is_directory`, a symbolic
    /// link is refused as everywhere.
    pub(crate) fn current(&self, dir: BorrowedFd<'_>, name: &OsStr, vpath: &str) -> CoreResult<Option<Stat>> {
        match statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => match kind_of(&st) {
                Kind::Dir => Err(is_directory(vpath)),
                Kind::Symlink => Err(self.jail.link_error(&Target {
                    vpath: vpath.to_string(),
                    dir: None,
                    name: OsString::new(),
                    kind: Kind::Symlink,
                    stat: Some(st),
                    via_link: false,
                })),
                _ => Ok(Some(st)),
            },
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(sys(e, vpath)),
        }
    }

    /// Under the directory's lock: checks the version, writes `data` to a temp file beside the
    /// target, syncs it (per [`Durability`]), renames it over the target and syncs the directory.
    fn replace(
        &self,
        dir: BorrowedFd<'_>,
        name: &OsStr,
        vpath: &str,
        data: &[u8],
        if_version: Option<&str>,
    ) -> CoreResult<FileInfo> {
        let fail = |e: std::io::Error| crate::error::io_error(&e, vpath);
        let _lock = lock_dir(dir, self.lock_timeout, vpath)?;
        self.clean_once(dir);
        let current = self.current(dir, name, vpath)?;
        if let Some(expected) = if_version {
            let now = current.as_ref().map_or_else(|| "0".to_string(), version);
            if expected != now {
                return Err(CoreError::of(ErrorCode::Conflict, vpath));
            }
        }
        let mut tmp = TempFile::create(dir, vpath)?;
        tmp.file.write_all(data).map_err(fail)?;
        if let Some(old) = current.as_ref().filter(|st| kind_of(st) == Kind::File) {
            // Keep the mode of the file being replaced (e.g. an executable script stays one).
            #[allow(clippy::unnecessary_cast)]
            let mode = std::fs::Permissions::from_mode((old.st_mode & 0o7777) as u32);
            let _ = tmp.file.set_permissions(mode);
        }
        if let Some(old) = &current {
            advance_mtime(&tmp.file, old).map_err(fail)?;
        }
        self.jail.sync.file(&tmp.file).map_err(fail)?;
        renameat(dir, tmp.name.as_str(), dir, name).map_err(|e| sys(e, vpath))?;
        tmp.placed = true;
        // Makes the rename itself durable.
        self.jail.sync.dir(dir);
        let st = rustix::fs::fstat(&tmp.file).map_err(|e| sys(e, vpath))?;
        Ok(file_info(vpath, &st))
    }

    /// Removes orphaned temp files the first time this handle writes into a directory (the
    /// caller holds the directory's lock).
    fn clean_once(&self, dir: BorrowedFd<'_>) {
        let Ok(st) = rustix::fs::fstat(dir) else { return };
        #[allow(clippy::unnecessary_cast)]
        let key = (st.st_dev as u64, st.st_ino as u64);
        let mut seen = self.cleaned.lock().unwrap_or_else(|e| e.into_inner());
        if seen.len() > 100_000 {
            seen.clear();
        }
        if seen.insert(key) {
            remove_orphan_temps(dir);
        }
    }
}

/// Coarse filesystem clocks can give two quick writes of the same size the same mtime, hence
/// the same version. Moving the new file's mtime strictly past the old one keeps versions
/// unique per path, so a compare-and-swap can never be fooled by a same-size rewrite.
fn advance_mtime(file: &File, old: &Stat) -> std::io::Result<()> {
    let new = rustix::fs::fstat(file)?;
    let old_ns = mtime_nanos(old);
    if mtime_nanos(&new) > old_ns {
        return Ok(());
    }
    let Ok(next) = u64::try_from(old_ns + 1) else { return Ok(()) };
    file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_nanos(next))
}

/// Removes every temp file in `dir`. Only called with the directory's lock held: every writer
/// creates its temp file under that lock and renames or removes it before letting go, so any
/// temp file seen here belongs to a writer that died.
fn remove_orphan_temps(dir: BorrowedFd<'_>) {
    let Ok(entries) = Dir::read_from(dir.as_fd()) else { return };
    for entry in entries.flatten() {
        if entry.file_name().to_bytes().starts_with(TEMP_PREFIX.as_bytes()) {
            let _ = unlinkat(dir, entry.file_name(), AtFlags::empty());
        }
    }
}
