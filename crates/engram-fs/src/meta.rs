//! [`FileInfo`] and version strings from host metadata.

use engram_core::FileInfo;
use rustix::fs::Stat;

/// Modification time in nanoseconds since the epoch (negative before 1970).
// `Stat`'s field types differ between platforms: the casts are not redundant everywhere.
#[allow(clippy::unnecessary_cast)]
pub(crate) fn mtime_nanos(st: &Stat) -> i128 {
    i128::from(st.st_mtime as i64) * 1_000_000_000 + i128::from(st.st_mtime_nsec as i64)
}

/// The version string of a file: `"{mtime_nanos}-{size}"`. Writes through [`crate::RootedFs`]
/// always move the mtime forward (under the directory's lock), so the version changes on every
/// such write.
#[allow(clippy::unnecessary_cast)]
pub(crate) fn version(st: &Stat) -> String {
    format!("{}-{}", mtime_nanos(st), st.st_size)
}

/// Metadata of a non-directory entry (a symbolic link reports its own `lstat`).
#[allow(clippy::unnecessary_cast)]
pub(crate) fn file_info(vpath: &str, st: &Stat) -> FileInfo {
    FileInfo {
        path: vpath.to_string(),
        is_dir: false,
        size: Some(st.st_size as u64),
        modified_at: Some(mtime_nanos(st) as f64 / 1e6),
        version: Some(version(st)),
    }
}

/// A directory entry: its path ends with `/` (the root stays `/`).
pub(crate) fn dir_info(vpath: &str) -> FileInfo {
    let shown = if vpath == "/" { "/".to_string() } else { format!("{vpath}/") };
    FileInfo { path: shown, is_dir: true, size: None, modified_at: None, version: None }
}
