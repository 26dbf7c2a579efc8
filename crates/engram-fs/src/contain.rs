//! Virtual path → host path, with containment checked on the real path.
//!
//! The parent chain of a target is checked by canonicalising its deepest existing ancestor
//! (symlinked directories included); the final component is only ever inspected with `lstat`,
//! never followed. The operations then open files with `O_NOFOLLOW`.

use crate::error::{escape, io_error, is_directory, link_refused, not_found, not_regular};
use engram_core::path;
use engram_core::CoreResult;
use std::fs::{self, File, Metadata};
use std::path::{Path, PathBuf};

/// The canonical root every host path must stay under.
#[derive(Debug)]
pub(crate) struct Jail {
    root: PathBuf,
}

/// What the final component of a path is, seen without following it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Missing,
    File,
    Dir,
    Symlink,
    /// FIFO, socket or device node.
    Other,
}

/// A normalised virtual path whose parent chain has passed the containment check.
#[derive(Debug)]
pub(crate) struct Target {
    pub vpath: String,
    pub host: PathBuf,
    pub kind: Kind,
    /// `lstat` of the final component, when it exists.
    pub meta: Option<Metadata>,
}

pub(crate) fn kind_of(m: &Metadata) -> Kind {
    let t = m.file_type();
    if t.is_symlink() {
        Kind::Symlink
    } else if t.is_dir() {
        Kind::Dir
    } else if t.is_file() {
        Kind::File
    } else {
        Kind::Other
    }
}

impl Jail {
    /// `root` must already be canonical.
    pub fn new(root: PathBuf) -> Jail {
        Jail { root }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether a canonical host path lies at or under the root (component-wise).
    pub fn contains(&self, real: &Path) -> bool {
        real.starts_with(&self.root)
    }

    /// The host path of a normalised virtual path (lexical; no check).
    pub fn host(&self, vpath: &str) -> PathBuf {
        match vpath.strip_prefix('/') {
            Some("") | None => self.root.clone(),
            Some(rel) => self.root.join(rel),
        }
    }

    /// The virtual path of a host path under the root, if it is one a caller could name: UTF-8
    /// and already in normal form (a file called `a\b` or `~x` has no virtual path).
    pub fn vpath_of(&self, host: &Path) -> Option<String> {
        let rel = host.strip_prefix(&self.root).ok()?.to_str()?;
        let v = format!("/{rel}");
        (path::normalize(&v).ok()? == v).then_some(v)
    }

    /// Normalises `input`, checks its parent chain and inspects (without following) its final
    /// component.
    pub fn resolve(&self, input: &str) -> CoreResult<Target> {
        let vpath = path::normalize(input)?;
        let host = self.host(&vpath);
        if vpath != "/" {
            self.check_parents(&vpath, &host)?;
        }
        let meta = match fs::symlink_metadata(&host) {
            Ok(m) => Some(m),
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT) | Some(libc::ENOTDIR)) => None,
            Err(e) => return Err(io_error(&e, &vpath)),
        };
        let kind = meta.as_ref().map_or(Kind::Missing, kind_of);
        let target = Target { vpath, host, kind, meta };
        if kind == Kind::Symlink {
            // One rule for every operation: a link named directly is never used, whether to
            // read through, write over, list, stat or delete it.
            return Err(self.link_error(&target));
        }
        Ok(target)
    }

    /// The deepest existing ancestor of `host` must canonicalise to a path under the root.
    fn check_parents(&self, vpath: &str, host: &Path) -> CoreResult<()> {
        let mut dir = host.parent().unwrap_or(&self.root);
        loop {
            match fs::canonicalize(dir) {
                Ok(real) => return if self.contains(&real) { Ok(()) } else { Err(escape(vpath)) },
                Err(e) => match e.raw_os_error() {
                    // `dir` exists but does not resolve: a dangling link (or one into a missing
                    // place). Its target is unknowable, so it is not contained.
                    Some(libc::ENOENT) if fs::symlink_metadata(dir).is_ok() => return Err(escape(vpath)),
                    // Missing, or a file in the chain: look further up. The operation itself
                    // then reports `file_not_found` / `invalid_path`.
                    Some(libc::ENOENT) | Some(libc::ENOTDIR) => {}
                    Some(libc::ELOOP) => return Err(escape(vpath)),
                    _ => return Err(io_error(&e, vpath)),
                },
            }
            if dir == self.root {
                // The root itself vanished.
                return Err(not_found(vpath));
            }
            dir = dir.parent().unwrap_or(&self.root);
        }
    }

    /// The error for naming a symbolic link where its target would be used: `path_escape` when
    /// it leads outside the root or does not resolve, `permission_denied` when it stays inside.
    pub fn link_error(&self, t: &Target) -> engram_core::CoreError {
        match fs::canonicalize(&t.host) {
            Ok(real) if self.contains(&real) => link_refused(&t.vpath),
            _ => escape(&t.vpath),
        }
    }

    /// Requires the target to be an existing regular file.
    pub fn require_file(&self, t: &Target) -> CoreResult<()> {
        match t.kind {
            Kind::File => Ok(()),
            Kind::Missing => Err(not_found(&t.vpath)),
            Kind::Dir => Err(is_directory(&t.vpath)),
            Kind::Symlink => Err(self.link_error(t)),
            Kind::Other => Err(not_regular(&t.vpath)),
        }
    }

    /// Whether the host path reaches its target without passing through any symbolic link
    /// (walks start from the root and never follow links, so only such paths are reachable).
    pub fn is_link_free(&self, host: &Path) -> bool {
        fs::canonicalize(host).is_ok_and(|real| real == host)
    }

    /// Defence in depth against a parent directory swapped for a symlink between the check and
    /// the open: the kernel's view of an open file's path must still lie under the root. Where
    /// `/proc` is unavailable the check is skipped.
    pub fn verify_open(&self, file: &File, vpath: &str) -> CoreResult<()> {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            if let Ok(real) = fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())) {
                if !self.contains(&real) {
                    return Err(escape(vpath));
                }
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = (file, vpath);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engram_core::ErrorCode;
    use std::os::unix::fs::symlink;

    fn jail() -> (tempfile::TempDir, Jail) {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        (dir, Jail::new(root))
    }

    #[test]
    fn host_and_vpath_round_trip() {
        let (_d, j) = jail();
        assert_eq!(j.host("/"), j.root());
        assert_eq!(j.host("/a/b"), j.root().join("a/b"));
        assert_eq!(j.vpath_of(&j.root().join("a/b")).as_deref(), Some("/a/b"));
        assert_eq!(j.vpath_of(&j.root().join("a\\b")), None);
        assert_eq!(j.vpath_of(&j.root().join("~x")), None);
        assert_eq!(j.vpath_of(Path::new("/elsewhere")), None);
    }

    #[test]
    fn missing_chain_and_file_in_chain_resolve_as_missing() {
        let (_d, j) = jail();
        fs::write(j.root().join("f"), b"x").unwrap();
        assert_eq!(j.resolve("/no/such/deep/path").unwrap().kind, Kind::Missing);
        assert_eq!(j.resolve("/f/under/file").unwrap().kind, Kind::Missing);
        assert_eq!(j.resolve("/f").unwrap().kind, Kind::File);
        assert_eq!(j.resolve("/").unwrap().kind, Kind::Dir);
    }

    #[test]
    fn links_in_the_chain_are_judged_by_their_real_path() {
        let (_d, j) = jail();
        let outside = tempfile::tempdir().unwrap();
        fs::create_dir(j.root().join("real")).unwrap();
        symlink(j.root().join("real"), j.root().join("in")).unwrap();
        symlink(outside.path(), j.root().join("out")).unwrap();
        symlink(j.root().join("nowhere"), j.root().join("dangling")).unwrap();
        symlink(j.root().join("loop"), j.root().join("loop")).unwrap();
        assert_eq!(j.resolve("/in/x").unwrap().kind, Kind::Missing);
        for p in ["/out/x", "/out/a/b", "/dangling/x", "/loop/x"] {
            assert_eq!(j.resolve(p).unwrap_err().code, ErrorCode::PathEscape, "{p}");
        }
        assert_eq!(j.resolve("/out").unwrap_err().code, ErrorCode::PathEscape);
        assert_eq!(j.resolve("/in").unwrap_err().code, ErrorCode::PermissionDenied);
        assert!(j.is_link_free(&j.root().join("real")));
        assert!(!j.is_link_free(&j.root().join("in")));
    }
}
