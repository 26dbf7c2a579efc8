//! `ls` and `stat`: metadata only, links never followed.

use crate::contain::Kind;
use crate::error::{io_error, not_found};
use crate::meta::{dir_info, file_info};
use crate::RootedFs;
use engram_core::{path, CoreResult, FileInfo};
use std::fs;

impl RootedFs {
    /// Metadata of a file or directory. Files carry `size`, `modifiedAt` (ms since the epoch)
    /// and `version` (`"{mtime_nanos}-{size}"`). Naming a symbolic link is refused (see the crate
    /// docs).
    pub fn stat(&self, vpath: &str) -> CoreResult<FileInfo> {
        let t = self.jail.resolve(vpath)?;
        match (&t.kind, &t.meta) {
            (Kind::Dir, _) => Ok(dir_info(&t.vpath)),
            (_, Some(m)) => Ok(file_info(&t.vpath, m)),
            (_, None) => Err(not_found(&t.vpath)),
        }
    }

    /// One level of a directory, sorted by emitted path (byte order); directories end with `/`.
    /// `ls` of a file lists that entry. Symbolic links are listed as
    /// non-directories and never followed. Names that are not valid virtual path segments
    /// (non-UTF-8, backslashes, control characters, a leading `~`) are left out.
    pub fn ls(&self, vpath: &str) -> CoreResult<Vec<FileInfo>> {
        let t = self.jail.resolve(vpath)?;
        match (&t.kind, &t.meta) {
            (Kind::Dir, _) => {}
            (_, Some(m)) => return Ok(vec![file_info(&t.vpath, m)]),
            (_, None) => return Err(not_found(&t.vpath)),
        }
        let entries = fs::read_dir(&t.host).map_err(|e| io_error(&e, &t.vpath))?;
        let mut out = Vec::new();
        for entry in entries {
            // An entry that vanished or cannot be inspected is simply not listed.
            let Ok(entry) = entry else { continue };
            let Some(name) = entry.file_name().to_str().map(str::to_string) else { continue };
            let child = path::join(&t.vpath, &name);
            if path::normalize(&child).ok().as_deref() != Some(child.as_str()) {
                continue;
            }
            let Ok(ft) = entry.file_type() else { continue };
            if ft.is_dir() {
                out.push(dir_info(&child));
            } else if let Ok(m) = entry.metadata() {
                out.push(file_info(&child, &m));
            }
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }
}
