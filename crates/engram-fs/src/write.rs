//! Atomic writes (temp file + fsync + rename), contained `mkdir -p`, compare-and-swap, edit.

use crate::contain::{kind_of, Kind, Target};
use crate::error::{escape, io_error, is_directory};
use crate::meta::{file_info, mtime_nanos, version};
use crate::read::open_nofollow;
use crate::RootedFs;
use engram_core::ops::{EditOptions, EditResult};
use engram_core::{path, CoreError, CoreResult, ErrorCode, FileInfo};
use std::fs::{self, File, Metadata, OpenOptions};
use std::hash::{Hash, Hasher};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

/// Prefix of the temp files a write creates next to its target (removed before it returns).
pub(crate) const TEMP_PREFIX: &str = ".engram-tmp.";

/// Serialises check-then-replace per target path within this process (striped by hash), so
/// two writers in one process cannot both pass the same version check. Writers in other
/// processes are not covered (see the crate docs).
static STRIPES: [Mutex<()>; 64] = [const { Mutex::new(()) }; 64];

fn lock_path(host: &Path) -> MutexGuard<'static, ()> {
    let mut h = std::hash::DefaultHasher::new();
    host.hash(&mut h);
    let stripe = &STRIPES[(h.finish() % STRIPES.len() as u64) as usize];
    // Nothing panics while holding the lock; a poisoned one is still a valid lock.
    stripe.lock().unwrap_or_else(|e| e.into_inner())
}

/// A temp file that is removed on drop unless it was renamed into place.
struct TempFile {
    path: PathBuf,
    file: File,
    placed: bool,
}

impl TempFile {
    fn create(dir: &Path) -> io::Result<TempFile> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        loop {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let path = dir.join(format!("{TEMP_PREFIX}{}.{n}", std::process::id()));
            let opened = OpenOptions::new().write(true).create_new(true).custom_flags(libc::O_NOFOLLOW).open(&path);
            match opened {
                Ok(file) => return Ok(TempFile { path, file, placed: false }),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if !self.placed {
            let _ = fs::remove_file(&self.path);
        }
    }
}

impl RootedFs {
    /// Creates or replaces a file, creating missing parent directories (each one checked to stay
    /// inside the root). The replacement is atomic: readers see the old or the new content,
    /// never a mix. A symbolic link at the target is replaced itself, never written through.
    ///
    /// `if_version` makes the write a compare-and-swap against [`RootedFs::stat`]'s version
    /// (`"0"`: the file must not exist), `conflict` on mismatch. Errors: `is_directory` for a
    /// directory, `invalid_path` when a parent is a file, `too_large` over `max_file_bytes`.
    pub fn write(&self, vpath: &str, data: &[u8], if_version: Option<&str>) -> CoreResult<FileInfo> {
        let t = self.jail.resolve(vpath)?;
        if t.vpath == "/" || t.kind == Kind::Dir {
            return Err(is_directory(&t.vpath));
        }
        if data.len() as u64 > self.max_file_bytes {
            return Err(self.too_large(&t.vpath, data.len() as u64));
        }
        self.make_parents(&t)?;
        self.replace(&t, data, if_version)
    }

    /// Replaces one exact string in a file (see [`engram_core::edit::edit`]) and writes the
    /// result atomically. The write is a compare-and-swap against the version that was read,
    /// so a concurrent change is a `conflict`, never a lost update; `opts.if_version`, when
    /// given, must equal that version too. `opts.modified_at` is ignored: the host clock sets
    /// the mtime.
    pub fn edit(&self, opts: &EditOptions) -> CoreResult<EditResult> {
        let t = self.jail.resolve(&opts.path)?;
        let (data, meta) = self.read_target(&t)?;
        let seen = version(&meta);
        if opts.if_version.as_deref().is_some_and(|v| v != seen) {
            return Err(CoreError::of(ErrorCode::Conflict, &t.vpath));
        }
        let (updated, occurrences) =
            engram_core::edit::edit(&t.vpath, &data, &opts.old_string, &opts.new_string, opts.replace_all)?;
        if updated.len() as u64 > self.max_file_bytes {
            return Err(self.too_large(&t.vpath, updated.len() as u64));
        }
        let info = self.replace(&t, &updated, Some(&seen))?;
        Ok(EditResult { path: t.vpath, occurrences, version: info.version.unwrap_or_default() })
    }

    /// `mkdir -p` of the target's parent, one level at a time; every existing level must be a
    /// directory (or a link resolving to one inside the root).
    fn make_parents(&self, t: &Target) -> CoreResult<()> {
        let parent_v = path::parent(&t.vpath);
        let mut host = self.jail.root().to_path_buf();
        let mut shown = String::new();
        for seg in parent_v.split('/').filter(|s| !s.is_empty()) {
            host.push(seg);
            shown.push('/');
            shown.push_str(seg);
            let a_file = || CoreError::new(ErrorCode::InvalidPath, &t.vpath, format_args!("'{shown}' is a file"));
            // Two rounds at most: a directory created concurrently is simply inspected again.
            for attempt in 0..2 {
                let m = match fs::symlink_metadata(&host) {
                    Ok(m) => m,
                    Err(e) if e.kind() == io::ErrorKind::NotFound && attempt == 0 => match fs::create_dir(&host) {
                        Ok(()) => continue,
                        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                        Err(e) => return Err(io_error(&e, &t.vpath)),
                    },
                    Err(e) => return Err(io_error(&e, &t.vpath)),
                };
                match kind_of(&m) {
                    Kind::Dir => break,
                    Kind::Symlink => match fs::canonicalize(&host) {
                        Ok(real) if self.jail.contains(&real) && real.is_dir() => break,
                        Ok(real) if self.jail.contains(&real) => return Err(a_file()),
                        _ => return Err(escape(&t.vpath)),
                    },
                    _ => return Err(a_file()),
                }
            }
        }
        // Belt and braces: the finished parent chain must still resolve inside the root.
        match fs::canonicalize(&host) {
            Ok(real) if self.jail.contains(&real) && real.is_dir() => Ok(()),
            Ok(real) if self.jail.contains(&real) => {
                Err(CoreError::new(ErrorCode::InvalidPath, &t.vpath, "a parent is not a directory"))
            }
            Ok(_) => Err(escape(&t.vpath)),
            Err(e) => Err(io_error(&e, &t.vpath)),
        }
    }

    /// Writes `data` to a temp file beside the target and renames it into place, after the
    /// version check (under the per-path lock).
    fn replace(&self, t: &Target, data: &[u8], if_version: Option<&str>) -> CoreResult<FileInfo> {
        let fail = |e: io::Error| io_error(&e, &t.vpath);
        let dir = t.host.parent().ok_or_else(|| is_directory(&t.vpath))?;
        // Lock on the real location, so aliases through in-root directory links share a lock.
        let real_dir = fs::canonicalize(dir).map_err(fail)?;
        let _guard = lock_path(&real_dir.join(t.host.file_name().unwrap_or_default()));
        let current = match fs::symlink_metadata(&t.host) {
            Ok(m) if m.is_dir() => return Err(is_directory(&t.vpath)),
            Ok(m) => Some(m),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(fail(e)),
        };
        if let Some(expected) = if_version {
            let now = current.as_ref().map_or_else(|| "0".to_string(), version);
            if expected != now {
                return Err(CoreError::of(ErrorCode::Conflict, &t.vpath));
            }
        }
        let mut tmp = TempFile::create(dir).map_err(fail)?;
        self.jail.verify_open(&tmp.file, &t.vpath)?;
        tmp.file.write_all(data).map_err(fail)?;
        if let Some(old) = current.as_ref().filter(|m| m.is_file()) {
            // Keep the mode of the file being replaced (e.g. an executable script stays one).
            let _ = tmp.file.set_permissions(old.permissions());
        }
        if let Some(old) = &current {
            advance_mtime(&tmp.file, old).map_err(fail)?;
        }
        tmp.file.sync_all().map_err(fail)?;
        fs::rename(&tmp.path, &t.host).map_err(fail)?;
        tmp.placed = true;
        // Make the rename itself durable; best effort (some filesystems refuse fsync on dirs).
        if let Ok(d) = open_nofollow(dir) {
            let _ = d.sync_all();
        }
        let meta = tmp.file.metadata().map_err(fail)?;
        Ok(file_info(&t.vpath, &meta))
    }
}

/// Coarse filesystem clocks can give two quick writes of the same size the same mtime, hence
/// the same version. Moving the new file's mtime strictly past the old one keeps versions
/// unique per path, so a compare-and-swap can never be fooled by a same-size rewrite.
fn advance_mtime(file: &File, old: &Metadata) -> io::Result<()> {
    let new = file.metadata()?;
    let old_ns = mtime_nanos(old);
    if mtime_nanos(&new) > old_ns {
        return Ok(());
    }
    let Ok(next) = u64::try_from(old_ns + 1) else { return Ok(()) };
    file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_nanos(next))
}
