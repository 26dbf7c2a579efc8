//! `ls` and `stat`: metadata only, by directory handle, links never followed.

use crate::contain::{kind_of, sys, virtual_name, Kind, DIR_FLAGS};
use crate::error::not_found;
use crate::meta::{dir_info, file_info};
use crate::walk::{shown_name, Skip, Skipped};
use crate::write::TEMP_PREFIX;
use crate::RootedFs;
use engram_core::{CoreResult, FileInfo};
use rustix::fs::{openat, statat, AtFlags, Dir, Mode};

impl RootedFs {
    /// Metadata of a file or directory. Files carry `size`, `modifiedAt` (ms since the epoch)
    /// and `version` (`"{mtime_nanos}-{size}"`). Naming a symbolic link is refused (see the crate
    /// docs).
    pub fn stat(&self, vpath: &str) -> CoreResult<FileInfo> {
        let t = self.jail.resolve(vpath)?;
        match (&t.kind, &t.stat) {
            (Kind::Missing, _) | (_, None) => Err(not_found(&t.vpath)),
            (Kind::Dir, _) => Ok(dir_info(&t.vpath)),
            (_, Some(st)) => Ok(file_info(&t.vpath, st)),
        }
    }

    /// One level of a directory; [`RootedFs::ls_report`] without the entries it could not list.
    pub fn ls(&self, vpath: &str) -> CoreResult<Vec<FileInfo>> {
        self.ls_report(vpath).map(|r| r.entries)
    }

    /// One level of a directory, sorted by emitted path (byte order); directories end with `/`.
    /// `ls` of a file lists that entry. Symbolic links are listed as non-directories (their own
    /// `lstat`) and never followed. In-progress temp files are left out; names that are not
    /// valid virtual path segments (non-UTF-8, backslashes, control characters, a leading `~`)
    /// are reported in `skipped` as `invalid_name`, shown escaped (at most
    /// [`crate::walk::MAX_SKIPPED`], smallest first).
    pub fn ls_report(&self, vpath: &str) -> CoreResult<LsReport> {
        let t = self.jail.resolve(vpath)?;
        match (&t.kind, &t.stat) {
            (Kind::Dir, _) => {}
            (Kind::Missing, _) | (_, None) => return Err(not_found(&t.vpath)),
            (_, Some(st)) => return Ok(LsReport { entries: vec![file_info(&t.vpath, st)], skipped: Vec::new() }),
        }
        let fd = openat(t.dir()?, t.name.as_os_str(), DIR_FLAGS, Mode::empty()).map_err(|e| sys(e, &t.vpath))?;
        let mut out = Vec::new();
        let skipped = Skipped::default();
        for entry in Dir::read_from(&fd).map_err(|e| sys(e, &t.vpath))? {
            // An entry that vanished or cannot be inspected is simply not listed.
            let Ok(entry) = entry else { continue };
            let name = entry.file_name();
            let bytes = name.to_bytes();
            if bytes == b"." || bytes == b".." || bytes.starts_with(TEMP_PREFIX.as_bytes()) {
                continue;
            }
            let os = std::ffi::OsStr::from_bytes(bytes);
            let Some(child) = virtual_name(&t.vpath, os) else {
                skipped.add(&shown_name(&t.vpath, bytes), "invalid_name");
                continue;
            };
            let Ok(st) = statat(&fd, name, AtFlags::SYMLINK_NOFOLLOW) else { continue };
            if kind_of(&st) == Kind::Dir {
                out.push(dir_info(&child));
            } else {
                out.push(file_info(&child, &st));
            }
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(LsReport { entries: out, skipped: skipped.into_vec() })
    }
}

/// A directory's entries and those no virtual path can name.
#[derive(Debug, Clone, PartialEq)]
pub struct LsReport {
    pub entries: Vec<FileInfo>,
    /// As [`crate::GrepReport::skipped`]; here only `invalid_name`.
    pub skipped: Vec<Skip>,
}

use std::os::unix::ffi::OsStrExt;
