//! Virtual path → an open directory handle plus a final name, resolved from the root's handle one
//! component at a time.
//!
//! Every step is an `openat(dir, name, O_DIRECTORY | O_NOFOLLOW)` on the handle obtained by the
//! previous step, so a concurrent rename or symlink swap can change *which* directory inside the
//! root a path lands in, but never lead it outside: the kernel never follows a link for us. A
//! symbolic link met in the parent chain is read (`readlinkat`) and its target resolved by the
//! same walk, on the same stack of handles (`..` pops our own stack, an absolute target must name
//! a place under the root), so a link is only ever followed after we vetted it. The final
//! component is only inspected with `fstatat(AT_SYMLINK_NOFOLLOW)` and opened with `O_NOFOLLOW`.

use crate::durable::Syncer;
use crate::error::{escape, io_error, is_directory, link_refused, not_found, not_regular};
use crate::Durability;
use engram_core::{path, CoreError, CoreResult, ErrorCode};
use rustix::fs::{mkdirat, openat, readlinkat, statat, AtFlags, FileType, Mode, OFlags, Stat};
use rustix::io::Errno;
use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path, PathBuf};

/// Longest virtual path accepted, in bytes (longer input is `invalid_path` before any I/O).
pub const MAX_PATH_BYTES: usize = 2048;
/// Most components a virtual path may have.
pub const MAX_PATH_DEPTH: usize = 128;
/// Most symbolic links one resolution follows before judging it a loop (`path_escape`).
const MAX_LINK_HOPS: usize = 40;
/// Retries when a concurrent change keeps undoing a step (a directory created then removed).
const MAX_RETRIES: usize = 64;

/// Flags of every directory step: never follow a final link, never inherit into children.
pub(crate) const DIR_FLAGS: OFlags =
    OFlags::RDONLY.union(OFlags::DIRECTORY).union(OFlags::NOFOLLOW).union(OFlags::CLOEXEC);
/// Flags of every file open for reading: no link following, no blocking on a FIFO.
pub(crate) const READ_FLAGS: OFlags =
    OFlags::RDONLY.union(OFlags::NOFOLLOW).union(OFlags::NONBLOCK).union(OFlags::CLOEXEC);

/// The root's handle and canonical path (the path is only used to judge absolute link targets),
/// and the syncs of the handle's durability (parents created on the way are synced here).
#[derive(Debug)]
pub(crate) struct Jail {
    root: PathBuf,
    fd: OwnedFd,
    pub(crate) sync: Syncer,
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

pub(crate) fn kind_of(st: &Stat) -> Kind {
    match FileType::from_raw_mode(st.st_mode as _) {
        FileType::Symlink => Kind::Symlink,
        FileType::Directory => Kind::Dir,
        FileType::RegularFile => Kind::File,
        _ => Kind::Other,
    }
}

/// A resolved virtual path: the directory handle holding its final component, and that name.
#[derive(Debug)]
pub(crate) struct Target {
    pub vpath: String,
    /// The directory holding the final component (the root itself for `/`); `None` when the
    /// parent chain does not exist (then `kind` is `Missing`).
    pub dir: Option<OwnedFd>,
    /// The final component; `.` for the root.
    pub name: OsString,
    pub kind: Kind,
    /// `lstat` of the final component, when it exists.
    pub stat: Option<Stat>,
    /// Whether a symbolic link in the parent chain was followed.
    pub via_link: bool,
}

impl Target {
    pub fn is_root(&self) -> bool {
        self.vpath == "/"
    }

    /// The parent handle; only absent for a missing chain, which callers have ruled out.
    pub fn dir(&self) -> CoreResult<BorrowedFd<'_>> {
        self.dir.as_ref().map(AsFd::as_fd).ok_or_else(|| not_found(&self.vpath))
    }
}

/// Where a walk down a chain of directories ended.
pub(crate) enum Descent {
    Dir {
        fd: OwnedFd,
        via_link: bool,
    },
    Missing,
    /// A non-directory stands in the chain: its virtual path, and how many components were left.
    NotDir {
        shown: String,
        left: usize,
    },
}

/// Maps a rustix error on `subject` to a [`CoreError`].
pub(crate) fn sys(e: Errno, subject: &str) -> CoreError {
    io_error(&std::io::Error::from(e), subject)
}

/// Checks the size and depth bounds of raw input before it is parsed.
pub(crate) fn check_bounds(input: &str) -> CoreResult<()> {
    if input.len() > MAX_PATH_BYTES {
        return Err(CoreError::new(
            ErrorCode::InvalidPath,
            "path",
            format_args!("{} bytes; the limit is {MAX_PATH_BYTES}", input.len()),
        ));
    }
    let depth = input.split('/').filter(|s| !s.is_empty() && *s != ".").count();
    if depth > MAX_PATH_DEPTH {
        return Err(CoreError::new(
            ErrorCode::InvalidPath,
            "path",
            format_args!("{depth} components; the limit is {MAX_PATH_DEPTH}"),
        ));
    }
    Ok(())
}

/// Normalises agent input after checking its bounds.
pub(crate) fn normalize(input: &str) -> CoreResult<String> {
    check_bounds(input)?;
    path::normalize(input)
}

impl Jail {
    /// Opens the root directory; `root` must already be canonical.
    pub fn open(root: PathBuf, shown: &str, durability: Durability) -> CoreResult<Jail> {
        let fd = rustix::fs::open(&root, DIR_FLAGS, Mode::empty()).map_err(|e| match e {
            Errno::NOTDIR => CoreError::new(ErrorCode::InvalidPath, shown, "the root is not a directory"),
            e => sys(e, shown),
        })?;
        Ok(Jail { root, fd, sync: Syncer::new(durability) })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// A fresh handle on the root (its own open file description: locks are per description).
    pub fn root_fd(&self, subject: &str) -> CoreResult<OwnedFd> {
        openat(&self.fd, ".", DIR_FLAGS, Mode::empty()).map_err(|e| sys(e, subject))
    }

    /// Normalises `input` and resolves its parent chain without creating anything; the final
    /// component is inspected, never followed. A final symbolic link is refused (see
    /// [`Jail::link_error`]).
    pub fn resolve(&self, input: &str) -> CoreResult<Target> {
        let vpath = normalize(input)?;
        self.resolve_normal(vpath)
    }

    pub fn resolve_normal(&self, vpath: String) -> CoreResult<Target> {
        if vpath == "/" {
            let fd = self.root_fd(&vpath)?;
            let stat = rustix::fs::fstat(&fd).map_err(|e| sys(e, &vpath))?;
            return Ok(Target {
                vpath,
                dir: Some(fd),
                name: ".".into(),
                kind: Kind::Dir,
                stat: Some(stat),
                via_link: false,
            });
        }
        let (parents, name) = split(&vpath);
        let name = OsString::from(name);
        let (dir, via_link) = match self.descend(&parents, false, &vpath)? {
            Descent::Dir { fd, via_link } => (fd, via_link),
            Descent::Missing | Descent::NotDir { .. } => {
                return Ok(Target { vpath, dir: None, name, kind: Kind::Missing, stat: None, via_link: false })
            }
        };
        let stat = match statat(&dir, name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Some(st),
            Err(Errno::NOENT) => None,
            Err(e) => return Err(sys(e, &vpath)),
        };
        let kind = stat.as_ref().map_or(Kind::Missing, kind_of);
        let target = Target { vpath, dir: Some(dir), name, kind, stat, via_link };
        if kind == Kind::Symlink {
            // One rule for every operation: a link named directly is never used, whether to
            // read through, write over, list, stat or delete it.
            return Err(self.link_error(&target));
        }
        Ok(target)
    }

    /// The directory that will hold `vpath`, created (`mkdir -p`, one `mkdirat` per missing level)
    /// when missing. `invalid_path` when a non-directory stands in the chain.
    pub fn parent_for_create(&self, vpath: &str) -> CoreResult<(OwnedFd, OsString)> {
        let (parents, name) = split(vpath);
        match self.descend(&parents, true, vpath)? {
            Descent::Dir { fd, .. } => Ok((fd, OsString::from(name))),
            Descent::NotDir { shown, .. } => {
                Err(CoreError::new(ErrorCode::InvalidPath, vpath, format_args!("'{shown}' is a file")))
            }
            Descent::Missing => Err(not_found(vpath)),
        }
    }

    /// Walks `comps` from the root, each step an `openat(O_DIRECTORY | O_NOFOLLOW)` on the
    /// previous handle. Links met on the way are read and resolved on the same stack; a link
    /// whose target is missing (dangling), climbs above the root, names an absolute place
    /// outside it, or loops is `path_escape`.
    pub fn descend<S: AsRef<OsStr>>(&self, comps: &[S], create: bool, subject: &str) -> CoreResult<Descent> {
        let mut fds: Vec<OwnedFd> = vec![self.root_fd(subject)?];
        let mut names: Vec<OsString> = Vec::new();
        // (component, came from a link target)
        let mut pending: VecDeque<(OsString, bool)> =
            comps.iter().map(|c| (c.as_ref().to_os_string(), false)).collect();
        let (mut hops, mut retries, mut via_link) = (0usize, 0usize, false);
        let busy = |retries: &mut usize| {
            *retries += 1;
            if *retries > MAX_RETRIES {
                Err(CoreError::new(ErrorCode::Conflict, subject, "the directory kept changing"))
            } else {
                Ok(())
            }
        };
        while let Some((name, from_link)) = pending.pop_front() {
            let bytes = name.as_bytes();
            if bytes.is_empty() || bytes == b"." {
                continue;
            }
            if bytes == b".." {
                if fds.len() == 1 {
                    return Err(escape(subject));
                }
                fds.pop();
                names.pop();
                continue;
            }
            let top = fds.last().expect("the root is never popped");
            match openat(top, name.as_os_str(), DIR_FLAGS, Mode::empty()) {
                Ok(fd) => {
                    fds.push(fd);
                    names.push(name);
                }
                Err(Errno::NOENT) => {
                    if from_link {
                        return Err(escape(subject));
                    }
                    if !create {
                        return Ok(Descent::Missing);
                    }
                    match mkdirat(top, name.as_os_str(), Mode::from_raw_mode(0o777)) {
                        // The new entry survives a power loss only once its parent is synced.
                        Ok(()) => self.sync.dir(top),
                        Err(Errno::EXIST) => {}
                        Err(e) => return Err(sys(e, subject)),
                    }
                    busy(&mut retries)?;
                    pending.push_front((name, from_link));
                }
                Err(Errno::LOOP) | Err(Errno::NOTDIR) => {
                    let st = match statat(top, name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW) {
                        Ok(st) => st,
                        Err(Errno::NOENT) => {
                            busy(&mut retries)?;
                            pending.push_front((name, from_link));
                            continue;
                        }
                        Err(e) => return Err(sys(e, subject)),
                    };
                    match kind_of(&st) {
                        Kind::Symlink => {
                            hops += 1;
                            if hops > MAX_LINK_HOPS {
                                return Err(escape(subject));
                            }
                            via_link = true;
                            let target = match readlinkat(top, name.as_os_str(), Vec::new()) {
                                Ok(t) => OsString::from_vec(t.into_bytes()),
                                Err(Errno::NOENT) | Err(Errno::INVAL) => {
                                    busy(&mut retries)?;
                                    pending.push_front((name, from_link));
                                    continue;
                                }
                                Err(e) => return Err(sys(e, subject)),
                            };
                            let target = PathBuf::from(target);
                            let rel: &Path = if target.is_absolute() {
                                match target.strip_prefix(&self.root) {
                                    Ok(rel) => {
                                        fds.truncate(1);
                                        names.clear();
                                        rel
                                    }
                                    Err(_) => return Err(escape(subject)),
                                }
                            } else {
                                &target
                            };
                            for c in rel.components().rev() {
                                match c {
                                    Component::Normal(s) => pending.push_front((s.to_os_string(), true)),
                                    Component::ParentDir => pending.push_front(("..".into(), true)),
                                    _ => {}
                                }
                            }
                        }
                        // Swapped back to a directory meanwhile: try again.
                        Kind::Dir => {
                            busy(&mut retries)?;
                            pending.push_front((name, from_link));
                        }
                        _ => {
                            let mut shown = String::new();
                            for n in names.iter().chain(std::iter::once(&name)) {
                                shown.push('/');
                                shown.push_str(&n.to_string_lossy());
                            }
                            return Ok(Descent::NotDir { shown, left: pending.len() });
                        }
                    }
                }
                Err(e) => return Err(sys(e, subject)),
            }
        }
        Ok(Descent::Dir { fd: fds.pop().expect("the root is never popped"), via_link })
    }

    /// The error for naming a symbolic link where its target would be used: `path_escape` when
    /// it leads outside the root, nowhere, or round in a loop; `permission_denied` when it
    /// resolves to something inside.
    pub fn link_error(&self, t: &Target) -> CoreError {
        let (parents, name) = split(&t.vpath);
        let mut comps: Vec<OsString> = parents.iter().map(OsString::from).collect();
        comps.push(name.into());
        match self.descend(&comps, false, &t.vpath) {
            // The whole chain (the link's target included) resolved: a directory, or a
            // non-directory as the very last component.
            Ok(Descent::Dir { .. }) | Ok(Descent::NotDir { left: 0, .. }) => link_refused(&t.vpath),
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
}

/// `/a/b/c` → (`["a", "b"]`, `"c"`); the path must be normalised and not `/`.
pub(crate) fn split(vpath: &str) -> (Vec<&str>, &str) {
    let rel = vpath.trim_start_matches('/');
    let mut parts: Vec<&str> = rel.split('/').collect();
    let name = parts.pop().unwrap_or("");
    (parts, name)
}

/// Whether `name` is a segment a caller could name (UTF-8, and already in normal form).
pub(crate) fn virtual_name(dir_vpath: &str, name: &OsStr) -> Option<String> {
    let name = name.to_str()?;
    let child = path::join(dir_vpath, name);
    (path::normalize(&child).ok()? == child).then_some(child)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::symlink;

    fn jail() -> (tempfile::TempDir, Jail) {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        let j = Jail::open(root, "root", Durability::Full).unwrap();
        (dir, j)
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
    fn links_in_the_chain_are_resolved_on_our_own_handles() {
        let (_d, j) = jail();
        let outside = tempfile::tempdir().unwrap();
        fs::create_dir(j.root().join("real")).unwrap();
        symlink(j.root().join("real"), j.root().join("in")).unwrap();
        symlink("real", j.root().join("in_rel")).unwrap();
        symlink(outside.path(), j.root().join("out")).unwrap();
        symlink(j.root().join("nowhere"), j.root().join("dangling")).unwrap();
        symlink(j.root().join("loop"), j.root().join("loop")).unwrap();
        symlink("..", j.root().join("real/up")).unwrap();
        symlink("../..", j.root().join("real/up2")).unwrap();
        let t = j.resolve("/in/x").unwrap();
        assert_eq!((t.kind, t.via_link), (Kind::Missing, true));
        assert_eq!(j.resolve("/in_rel/up/real").unwrap().kind, Kind::Dir);
        for p in ["/out/x", "/out/a/b", "/dangling/x", "/loop/x", "/real/up2/x", "/real/up/real/up2"] {
            assert_eq!(j.resolve(p).unwrap_err().code, ErrorCode::PathEscape, "{p}");
        }
        assert_eq!(j.resolve("/out").unwrap_err().code, ErrorCode::PathEscape);
        assert_eq!(j.resolve("/in").unwrap_err().code, ErrorCode::PermissionDenied);
    }

    #[test]
    fn oversized_and_absurdly_deep_paths_are_refused_before_any_io() {
        let (_d, j) = jail();
        let long = format!("/{}", "a".repeat(4096));
        assert_eq!(j.resolve(&long).unwrap_err().code, ErrorCode::InvalidPath);
        let deep = "/a".repeat(MAX_PATH_DEPTH + 1);
        assert_eq!(j.resolve(&deep).unwrap_err().code, ErrorCode::InvalidPath);
        assert_eq!(j.resolve(&"/a".repeat(MAX_PATH_DEPTH)).unwrap().kind, Kind::Missing);
    }
}
