//! [`FileInfo`] and version strings from host metadata.

use engram_core::FileInfo;
use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;

/// Modification time in nanoseconds since the epoch (negative before 1970).
pub(crate) fn mtime_nanos(m: &Metadata) -> i128 {
    i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec())
}

/// The version string of a file: `"{mtime_nanos}-{size}"`. Writes through [`crate::RootedFs`]
/// always move the mtime forward, so the version changes on every such write.
pub(crate) fn version(m: &Metadata) -> String {
    format!("{}-{}", mtime_nanos(m), m.len())
}

/// Metadata of a non-directory entry (a symbolic link reports its own `lstat`).
pub(crate) fn file_info(vpath: &str, m: &Metadata) -> FileInfo {
    FileInfo {
        path: vpath.to_string(),
        is_dir: false,
        size: Some(m.len()),
        modified_at: Some(mtime_nanos(m) as f64 / 1e6),
        version: Some(version(m)),
    }
}

/// A directory entry: its path ends with `/` (the root stays `/`).
pub(crate) fn dir_info(vpath: &str) -> FileInfo {
    let shown = if vpath == "/" { "/".to_string() } else { format!("{vpath}/") };
    FileInfo { path: shown, is_dir: true, size: None, modified_at: None, version: None }
}
