//! `delete`: files and whole directories, by directory handle, never following a link.

use crate::contain::{sys, Kind, DIR_FLAGS};
use crate::error::not_found;
use crate::lock::lock_dir;
use crate::meta::version;
use crate::write::TEMP_PREFIX;
use crate::RootedFs;
use engram_core::{CoreError, CoreResult, ErrorCode};
use rustix::fs::{openat, statat, unlinkat, AtFlags, Dir, FileType, Mode};
use rustix::io::Errno;
use std::ffi::CStr;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;

/// Deepest directory tree `delete` removes (deeper is refused before anything is removed below
/// that depth, so descriptors stay bounded).
const MAX_DELETE_DEPTH: usize = 256;

impl RootedFs {
    /// Deletes a file (returns 1) or a directory with everything beneath it (returns how many
    /// non-directory entries went). Naming a symbolic link is refused (see the crate docs); links
    /// inside a deleted directory are removed as links, their targets never touched. Deleting
    /// `/` is `permission_denied`; a missing path is `file_not_found`.
    pub fn delete(&self, vpath: &str) -> CoreResult<usize> {
        self.delete_if(vpath, None)
    }

    /// [`RootedFs::delete`] of a file as a compare-and-swap: `if_version` must equal its
    /// current version (checked under the directory's lock), else `conflict`.
    pub fn delete_if(&self, vpath: &str, if_version: Option<&str>) -> CoreResult<usize> {
        let t = self.jail.resolve(vpath)?;
        if t.is_root() {
            return Err(CoreError::new(ErrorCode::PermissionDenied, &t.vpath, "the root cannot be deleted"));
        }
        let subject = t.vpath.as_str();
        match t.kind {
            Kind::Missing => Err(not_found(subject)),
            Kind::Dir => {
                if if_version.is_some() {
                    return Err(crate::error::is_directory(subject));
                }
                let dir = t.dir()?;
                let count = remove_tree(dir, t.name.as_bytes(), 0).map_err(|e| sys(e, subject))?;
                self.jail.sync.dir(dir);
                Ok(count)
            }
            _ => {
                let dir = t.dir()?;
                let _lock = match if_version {
                    Some(expected) => {
                        let lock = lock_dir(dir, self.lock_timeout, subject)?;
                        let now = self.current(dir, &t.name, subject)?.ok_or_else(|| not_found(subject))?;
                        if version(&now) != expected {
                            return Err(CoreError::of(ErrorCode::Conflict, subject));
                        }
                        Some(lock)
                    }
                    None => None,
                };
                unlinkat(dir, t.name.as_os_str(), AtFlags::empty()).map_err(|e| sys(e, subject))?;
                self.jail.sync.dir(dir);
                Ok(1)
            }
        }
    }
}

/// Removes `name` (a directory) in `parent` with everything beneath it, by handle. An entry
/// swapped for a link midway is removed as a link.
fn remove_tree(parent: BorrowedFd<'_>, name: &[u8], depth: usize) -> Result<usize, Errno> {
    if depth > MAX_DELETE_DEPTH {
        return Err(Errno::NAMETOOLONG);
    }
    let name = std::ffi::OsStr::from_bytes(name);
    let fd = match openat(parent, name, DIR_FLAGS, Mode::empty()) {
        Ok(fd) => fd,
        // No longer a directory: remove whatever it is now, as itself.
        Err(Errno::LOOP) | Err(Errno::NOTDIR) => {
            unlinkat(parent, name, AtFlags::empty())?;
            return Ok(1);
        }
        Err(e) => return Err(e),
    };
    let mut count = 0;
    let mut names: Vec<(Vec<u8>, bool)> = Vec::new();
    for entry in Dir::read_from(&fd)? {
        let entry = entry?;
        let n: &CStr = entry.file_name();
        if n.to_bytes() == b"." || n.to_bytes() == b".." {
            continue;
        }
        let is_dir = match entry.file_type() {
            FileType::Directory => true,
            FileType::Unknown => statat(&fd, n, AtFlags::SYMLINK_NOFOLLOW)
                .is_ok_and(|st| FileType::from_raw_mode(st.st_mode as _) == FileType::Directory),
            _ => false,
        };
        names.push((n.to_bytes().to_vec(), is_dir));
    }
    for (n, is_dir) in names {
        if is_dir {
            count += remove_tree(fd.as_fd(), &n, depth + 1)?;
        } else {
            match unlinkat(&fd, std::ffi::OsStr::from_bytes(&n), AtFlags::empty()) {
                // A temp file of a write in progress is not a user's file: not counted.
                Ok(()) => count += usize::from(!n.starts_with(TEMP_PREFIX.as_bytes())),
                Err(Errno::NOENT) => {}
                // Became a directory meanwhile.
                Err(Errno::ISDIR) | Err(Errno::PERM) => count += remove_tree(fd.as_fd(), &n, depth + 1)?,
                Err(e) => return Err(e),
            }
        }
    }
    unlinkat(parent, name, AtFlags::REMOVEDIR)?;
    Ok(count)
}
