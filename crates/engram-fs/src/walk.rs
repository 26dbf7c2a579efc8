//! The parallel tree walk shared by `grep` and `glob`, over directory handles.
//!
//! Every directory is opened with `openat(parent, name, O_DIRECTORY | O_NOFOLLOW)` from the
//! handle of its parent and every file with `O_NOFOLLOW` from its directory's handle, so a
//! concurrent swap of a directory for a symbolic link makes that entry fail to open; it can never
//! make the walk list or read anything outside the root. Links are never followed.
//!
//! The walk starts at the root and descends to the requested directory, so ignore rules are
//! those of the rooted tree whatever directory is searched: a subdirectory search returns exactly
//! the matching part of a whole-tree search. Hidden files are included, `.git` is always skipped,
//! as are temp files of writes in progress; unreadable entries are skipped (and reported).

use crate::contain::{kind_of, virtual_name, Kind, DIR_FLAGS};
use crate::write::TEMP_PREFIX;
use crate::RootedFs;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::Match;
use rustix::fs::{openat, statat, AtFlags, Dir, FileType, Mode};
use rustix::io::Errno;
use std::collections::BTreeMap;
use std::ffi::{CStr, OsStr, OsString};
use std::io::Read;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};

/// Per-thread scratch buffer handed to the visitor (reused across files).
pub(crate) type Scratch = Vec<u8>;

/// Deepest directory a walk enters (deeper ones are reported as skipped).
pub const MAX_WALK_DEPTH: usize = 256;
/// Most skipped entries a result reports (those with the smallest paths).
pub const MAX_SKIPPED: usize = engram_core::format::SKIPPED_KEPT;
/// Largest ignore file read.
const MAX_IGNORE_FILE: u64 = 1 << 20;

/// A file or directory a search could not look into, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skip {
    pub path: String,
    /// `too_large`, `permission_denied`, `too_deep`, `unreadable` or `invalid_name` (a name no
    /// virtual path can hold: not UTF-8, a control character or backslash, a leading `~`, a
    /// drive letter; `path` then shows it escaped).
    pub reason: &'static str,
}

/// An entry whose name no virtual path can hold, as a skipped entry shows it: invalid UTF-8 as
/// U+FFFD, control characters and backslashes escaped.
pub(crate) fn shown_name(dir_vpath: &str, name: &[u8]) -> String {
    let name: String = String::from_utf8_lossy(name).escape_debug().collect();
    engram_core::path::join(dir_vpath, &name)
}

/// The skipped entries of one walk, bounded to [`MAX_SKIPPED`].
#[derive(Default)]
pub(crate) struct Skipped(Mutex<BTreeMap<String, &'static str>>);

impl Skipped {
    pub fn add(&self, path: &str, reason: &'static str) {
        let mut m = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if m.len() >= MAX_SKIPPED {
            match m.last_key_value() {
                Some((last, _)) if last.as_str() > path => {
                    m.pop_last();
                }
                _ => return,
            }
        }
        m.insert(path.to_string(), reason);
    }

    pub fn into_vec(self) -> Vec<Skip> {
        let m = self.0.into_inner().unwrap_or_else(|e| e.into_inner());
        m.into_iter().map(|(path, reason)| Skip { path, reason }).collect()
    }
}

/// Ignore rules in force in one directory: its own files (`.ignore` before `.gitignore`), then
/// its ancestors'.
struct Ignores {
    parent: Option<Arc<Ignores>>,
    matchers: Vec<Gitignore>,
}

fn ignored(mut node: Option<&Arc<Ignores>>, vpath: &str, is_dir: bool) -> bool {
    while let Some(n) = node {
        for m in &n.matchers {
            match m.matched(vpath, is_dir) {
                Match::Ignore(_) => return true,
                Match::Whitelist(_) => return false,
                Match::None => {}
            }
        }
        node = n.parent.as_ref();
    }
    false
}

/// One file met by the walk.
pub(crate) struct FileRef<'a> {
    pub vpath: &'a str,
    pub dir: BorrowedFd<'a>,
    pub name: &'a CStr,
}

/// A directory waiting to be read.
struct Job {
    src: Src,
    vpath: String,
    ignores: Option<Arc<Ignores>>,
    depth: usize,
}

enum Src {
    Open(OwnedFd),
    /// Opened when its turn comes, so a wide tree never holds a descriptor per pending directory.
    At(Arc<OwnedFd>, OsString),
}

struct Queue {
    jobs: Vec<Job>,
    active: usize,
    done: bool,
}

pub(crate) struct Walk<'a> {
    pub cancel: Option<&'a AtomicBool>,
    pub skipped: &'a Skipped,
}

impl Walk<'_> {
    pub fn cancelled(&self) -> bool {
        self.cancel.is_some_and(|c| c.load(Ordering::Relaxed))
    }
}

impl RootedFs {
    fn load_ignores(&self, dir: BorrowedFd<'_>, vpath: &str, parent: Option<Arc<Ignores>>) -> Option<Arc<Ignores>> {
        if !self.respect_gitignore {
            return None;
        }
        let mut matchers = Vec::new();
        for file in [".ignore", ".gitignore"] {
            let Ok(fd) = openat(dir, file, crate::contain::READ_FLAGS, Mode::empty()) else { continue };
            let Ok(st) = rustix::fs::fstat(&fd) else { continue };
            if kind_of(&st) != Kind::File {
                continue;
            }
            let mut text = Vec::new();
            if std::fs::File::from(fd).take(MAX_IGNORE_FILE).read_to_end(&mut text).is_err() {
                continue;
            }
            let mut builder = GitignoreBuilder::new(vpath);
            for line in String::from_utf8_lossy(&text).lines() {
                let _ = builder.add_line(None, line);
            }
            if let Ok(gi) = builder.build() {
                if !gi.is_empty() {
                    matchers.push(gi);
                }
            }
        }
        if matchers.is_empty() {
            parent
        } else {
            Some(Arc::new(Ignores { parent, matchers }))
        }
    }

    /// Calls `visit` for every regular file at or below `base` (a normalised virtual path whose
    /// chain holds no link) from the walker threads. A `base` that is itself a file is visited
    /// alone (if not ignored).
    pub(crate) fn walk_files<F>(&self, base: &str, ctl: &Walk<'_>, visit: F)
    where
        F: Fn(&FileRef<'_>, &mut Scratch) + Sync,
    {
        let Ok(mut fd) = self.jail.root_fd(base) else { return };
        let mut ignores = self.load_ignores(fd.as_fd(), "/", None);
        let mut vpath = String::from("/");
        let comps: Vec<&str> = base.split('/').filter(|s| !s.is_empty()).collect();
        for (i, comp) in comps.iter().enumerate() {
            let child = engram_core::path::join(&vpath, comp);
            if *comp == ".git" {
                return;
            }
            match openat(&fd, *comp, DIR_FLAGS, Mode::empty()) {
                Ok(next) => {
                    if ignored(ignores.as_ref(), &child, true) {
                        return;
                    }
                    fd = next;
                    vpath = child;
                    ignores = self.load_ignores(fd.as_fd(), &vpath, ignores);
                }
                Err(Errno::NOTDIR) if i + 1 == comps.len() => {
                    let Ok(st) = statat(&fd, *comp, AtFlags::SYMLINK_NOFOLLOW) else { return };
                    if kind_of(&st) == Kind::File && !ignored(ignores.as_ref(), &child, false) {
                        let name = std::ffi::CString::new(*comp).unwrap_or_default();
                        visit(&FileRef { vpath: &child, dir: fd.as_fd(), name: &name }, &mut Vec::new());
                    }
                    return;
                }
                Err(_) => return,
            }
        }
        let depth = comps.len();
        let queue =
            Mutex::new(Queue { jobs: vec![Job { src: Src::Open(fd), vpath, ignores, depth }], active: 0, done: false });
        let ready = Condvar::new();
        std::thread::scope(|s| {
            for _ in 0..self.threads {
                s.spawn(|| self.worker(&queue, &ready, ctl, &visit));
            }
        });
    }

    fn worker<F>(&self, queue: &Mutex<Queue>, ready: &Condvar, ctl: &Walk<'_>, visit: &F)
    where
        F: Fn(&FileRef<'_>, &mut Scratch) + Sync,
    {
        let mut scratch = Scratch::new();
        loop {
            let job = {
                let mut q = queue.lock().unwrap_or_else(|e| e.into_inner());
                loop {
                    if q.done {
                        return;
                    }
                    if let Some(job) = q.jobs.pop() {
                        q.active += 1;
                        break job;
                    }
                    if q.active == 0 {
                        q.done = true;
                        ready.notify_all();
                        return;
                    }
                    q = ready.wait(q).unwrap_or_else(|e| e.into_inner());
                }
            };
            let children = if ctl.cancelled() { Vec::new() } else { self.read_dir(job, ctl, visit, &mut scratch) };
            let mut q = queue.lock().unwrap_or_else(|e| e.into_inner());
            q.jobs.extend(children);
            q.active -= 1;
            if ctl.cancelled() || (q.active == 0 && q.jobs.is_empty()) {
                q.done = true;
            }
            ready.notify_all();
        }
    }

    /// Reads one directory: visits its files, returns its subdirectories as jobs.
    fn read_dir<F>(&self, job: Job, ctl: &Walk<'_>, visit: &F, scratch: &mut Scratch) -> Vec<Job>
    where
        F: Fn(&FileRef<'_>, &mut Scratch) + Sync,
    {
        let fd = match job.src {
            Src::Open(fd) => fd,
            Src::At(parent, name) => match openat(&*parent, name.as_os_str(), DIR_FLAGS, Mode::empty()) {
                Ok(fd) => fd,
                Err(Errno::ACCESS) | Err(Errno::PERM) => {
                    ctl.skipped.add(&job.vpath, "permission_denied");
                    return Vec::new();
                }
                // Replaced by a link or a file, or gone, since it was listed: not a directory
                // of the tree any more.
                Err(_) => return Vec::new(),
            },
        };
        let ignores = self.load_ignores(fd.as_fd(), &job.vpath, job.ignores);
        let entries = match Dir::read_from(&fd) {
            Ok(d) => d,
            Err(_) => {
                ctl.skipped.add(&job.vpath, "unreadable");
                return Vec::new();
            }
        };
        let fd = Arc::new(fd);
        let mut children = Vec::new();
        for entry in entries {
            if ctl.cancelled() {
                break;
            }
            let Ok(entry) = entry else {
                ctl.skipped.add(&job.vpath, "unreadable");
                break;
            };
            let name = entry.file_name();
            let bytes = name.to_bytes();
            if bytes == b"." || bytes == b".." || bytes == b".git" || bytes.starts_with(TEMP_PREFIX.as_bytes()) {
                continue;
            }
            let ft = match entry.file_type() {
                FileType::Unknown => match statat(&*fd, name, AtFlags::SYMLINK_NOFOLLOW) {
                    Ok(st) => FileType::from_raw_mode(st.st_mode as _),
                    Err(_) => continue,
                },
                ft => ft,
            };
            let is_dir = ft == FileType::Directory;
            if is_dir && job.depth + 1 > MAX_WALK_DEPTH {
                // Checked before the name: past this depth no virtual path could hold it anyway.
                let shown = shown_name(&job.vpath, bytes);
                if !ignored(ignores.as_ref(), &shown, true) {
                    ctl.skipped.add(&shown, "too_deep");
                }
                continue;
            }
            let Some(child) = virtual_name(&job.vpath, OsStr::from_bytes(bytes)) else {
                // A file or directory the walk would have entered, unless an ignore rule
                // leaves it out (links and other entries are never searched anyway).
                if is_dir || ft == FileType::RegularFile {
                    let shown = shown_name(&job.vpath, bytes);
                    if !ignored(ignores.as_ref(), &shown, is_dir) {
                        ctl.skipped.add(&shown, "invalid_name");
                    }
                }
                continue;
            };
            match ft {
                FileType::Directory => {
                    if ignored(ignores.as_ref(), &child, true) {
                        continue;
                    }
                    children.push(Job {
                        src: Src::At(fd.clone(), OsStr::from_bytes(bytes).to_os_string()),
                        vpath: child,
                        ignores: ignores.clone(),
                        depth: job.depth + 1,
                    });
                }
                FileType::RegularFile if !ignored(ignores.as_ref(), &child, false) => {
                    visit(&FileRef { vpath: &child, dir: fd.as_fd(), name }, scratch);
                }
                _ => {}
            }
        }
        // Visit in path order within a directory; later jobs are popped first.
        children.reverse();
        children
    }
}
