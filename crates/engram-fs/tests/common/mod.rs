//! Shared test helpers: a root directory, an outside sentinel directory next to it, and tree
//! snapshots to prove that nothing outside the root changed.
#![allow(dead_code)]

use engram_fs::{FsOptions, RootedFs};
use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

pub const SECRET: &str = "SENTINEL-SECRET-0451 do not leak\n";

/// `base/root` is the rooted directory; `base/outside` holds a sentinel file.
pub struct Sandbox {
    pub base: tempfile::TempDir,
    pub root: PathBuf,
    pub outside: PathBuf,
    pub fs: RootedFs,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        Sandbox::with(|_| {})
    }

    pub fn with(tweak: impl FnOnce(&mut FsOptions)) -> Sandbox {
        let base = scratch_dir();
        let base_path = fs::canonicalize(base.path()).unwrap();
        let root = base_path.join("root");
        let outside = base_path.join("outside");
        fs::create_dir(&root).unwrap();
        fs::create_dir(&outside).unwrap();
        fs::write(outside.join("secret.txt"), SECRET).unwrap();
        let mut opts = FsOptions { root: root.clone(), ..FsOptions::default() };
        tweak(&mut opts);
        let fs = RootedFs::open(opts).unwrap();
        Sandbox { base, root, outside, fs }
    }

    /// Creates a file (and its parents) directly on the host.
    pub fn put(&self, rel: &str, data: impl AsRef<[u8]>) {
        let p = self.root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, data).unwrap();
    }

    pub fn host(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }
}

/// A temp directory, on tmpfs when `/dev/shm` is available: creating thousands of files on some
/// CI disks costs milliseconds each, which would dominate the large-tree tests.
pub fn scratch_dir() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    let on_shm = shm.is_dir().then(|| tempfile::Builder::new().prefix("engram-fs-").tempdir_in(shm).ok()).flatten();
    on_shm.unwrap_or_else(|| tempfile::tempdir().unwrap())
}

/// Every entry below `dir` (links not followed): relative path → (kind, size, mtime ns, bytes).
pub fn snapshot(dir: &Path) -> BTreeMap<String, (char, u64, i128, Vec<u8>)> {
    let mut out = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let m = fs::symlink_metadata(e.path()).unwrap();
            let rel = e.path().strip_prefix(dir).unwrap().to_string_lossy().into_owned();
            let mtime = i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec());
            let (kind, bytes) = if m.is_dir() {
                pending.push(e.path());
                ('d', Vec::new())
            } else if m.file_type().is_symlink() {
                ('l', fs::read_link(e.path()).unwrap().into_os_string().into_encoded_bytes())
            } else {
                ('f', fs::read(e.path()).unwrap())
            };
            out.insert(rel, (kind, m.len(), mtime, bytes));
        }
    }
    out
}

/// Temp files a write may leave behind if it were not cleaning up.
pub fn temp_files(dir: &Path) -> Vec<String> {
    snapshot(dir).into_keys().filter(|k| k.contains(".engram-tmp")).collect()
}

/// Whether permission bits are enforced for this process (they are not for root).
pub fn permissions_enforced() -> bool {
    let dir = tempfile::tempdir().unwrap();
    let locked = dir.path().join("locked");
    fs::create_dir(&locked).unwrap();
    fs::set_permissions(&locked, std::os::unix::fs::PermissionsExt::from_mode(0o000)).unwrap();
    let enforced = fs::read_dir(&locked).is_err();
    fs::set_permissions(&locked, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    enforced
}
