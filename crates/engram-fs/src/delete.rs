//! `delete`: files, links (as links) and whole directories, never following a link.

use crate::contain::Kind;
use crate::error::{io_error, not_found};
use crate::RootedFs;
use engram_core::{CoreError, CoreResult, ErrorCode};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

impl RootedFs {
    /// Deletes a file (returns 1) or a directory with everything beneath it (returns how many
    /// non-directory entries went). Naming a symbolic link is refused; links inside a deleted
    /// directory are removed as links, their targets never touched. Deleting `/` is `permission_denied`; a missing path is `file_not_found`.
    pub fn delete(&self, vpath: &str) -> CoreResult<usize> {
        let t = self.jail.resolve(vpath)?;
        if t.vpath == "/" {
            return Err(CoreError::new(ErrorCode::PermissionDenied, &t.vpath, "the root cannot be deleted"));
        }
        match t.kind {
            Kind::Missing => Err(not_found(&t.vpath)),
            Kind::Dir => {
                let count = count_entries(&t.host).map_err(|e| io_error(&e, &t.vpath))?;
                // std's remove_dir_all works on directory descriptors and never follows links,
                // even if a directory is swapped for a link while it runs.
                fs::remove_dir_all(&t.host).map_err(|e| io_error(&e, &t.vpath))?;
                Ok(count)
            }
            Kind::File | Kind::Symlink | Kind::Other => {
                fs::remove_file(&t.host).map_err(|e| io_error(&e, &t.vpath))?;
                Ok(1)
            }
        }
    }
}

/// Non-directory entries beneath `dir`, links not followed.
fn count_entries(dir: &Path) -> io::Result<usize> {
    let mut pending: Vec<PathBuf> = vec![dir.to_path_buf()];
    let mut count = 0;
    while let Some(d) = pending.pop() {
        for entry in fs::read_dir(&d)? {
            let entry = entry?;
            if entry.file_type()?.is_dir() {
                pending.push(entry.path());
            } else {
                count += 1;
            }
        }
    }
    Ok(count)
}
