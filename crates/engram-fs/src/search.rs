//! `grep` and `glob` over the host tree, answering exactly as engram-core's in-memory
//! `FileTable` does for the same files, with bounded memory: a search keeps only the hits that
//! can still appear in the (capped) answer.

use crate::contain::{kind_of, Kind, READ_FLAGS};
use crate::error::{link_refused, not_found};
use crate::meta::file_info;
use crate::read::read_capped;
use crate::walk::{FileRef, Scratch, Skip, Skipped, Walk};
use crate::RootedFs;
use engram_core::glob::Glob;
use engram_core::grep::{Collector, FileHits, GrepOptions, GrepResult, OutputMode, Searcher};
use engram_core::ops::{GlobOptions, GlobResult};
use engram_core::{CoreError, CoreResult, ErrorCode, FileInfo};
use rustix::fs::{openat, statat, AtFlags, Mode};
use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::Mutex;

/// A grep answer and what it could not look into.
#[derive(Debug, Clone, PartialEq)]
pub struct GrepReport {
    pub result: GrepResult,
    /// Files and directories skipped for a reason other than being binary or ignored (a file
    /// over `max_file_bytes`, an unreadable directory), at most [`crate::walk::MAX_SKIPPED`],
    /// smallest paths first.
    pub skipped: Vec<Skip>,
}

/// A glob answer and what its walk could not look into.
#[derive(Debug, Clone, PartialEq)]
pub struct GlobReport {
    pub result: GlobResult,
    /// As [`GrepReport::skipped`].
    pub skipped: Vec<Skip>,
}

/// The items of a search with the smallest paths, holding only as many as the capped answer
/// can use (`need` units: matches in content mode, files otherwise).
struct Smallest<T> {
    items: BTreeMap<String, (T, usize)>,
    units: usize,
    need: usize,
}

impl<T> Smallest<T> {
    fn new(need: usize) -> Self {
        Smallest { items: BTreeMap::new(), units: 0, need }
    }

    /// Whether an item at `path` could still be part of the answer.
    fn admits(&self, path: &str) -> bool {
        self.units < self.need || self.items.last_key_value().is_some_and(|(last, _)| path < last.as_str())
    }

    fn insert(&mut self, path: String, item: T, units: usize) {
        if !self.admits(&path) {
            return;
        }
        self.units += units;
        if let Some((_, old)) = self.items.insert(path, (item, units)) {
            self.units -= old;
        }
        while let Some((_, (_, last))) = self.items.last_key_value() {
            if self.units - last < self.need {
                break;
            }
            self.units -= last;
            self.items.pop_last();
        }
    }
}

fn cancelled(vpath: &str) -> CoreError {
    CoreError::new(ErrorCode::Unsupported, vpath, "cancelled")
}

impl RootedFs {
    /// The effective cap of a model-chosen count: never above `max_results`.
    fn clamp(&self, asked: Option<usize>) -> usize {
        asked.map_or(self.max_results, |m| m.min(self.max_results))
    }

    /// Searches file contents (see [`GrepOptions`]); [`RootedFs::grep_report`] without its
    /// skipped list or cancellation.
    pub fn grep(&self, opts: &GrepOptions) -> CoreResult<GrepResult> {
        self.grep_report(opts, None).map(|r| r.result)
    }

    /// Searches file contents. `opts.path` may name a directory (walked in parallel) or a single
    /// file; a missing path is `file_not_found`, a symbolic link is refused as in
    /// [`RootedFs::read`], and so is a directory reached through one (walks do not follow links).
    /// `max_count` is clamped to `max_results` (absent: `max_results`), with `truncated` set.
    ///
    /// Skipped silently: binary files, `.git/`, and (when `respect_gitignore`) ignored paths.
    /// Reported in `skipped`: files over `max_file_bytes`, unreadable files and directories,
    /// directories deeper than the walk's bound. Results are in path order and equal the
    /// in-memory search over the same files. Memory holds at most the hits of the answer (plus
    /// one file being searched per thread). When `cancel` becomes true the walk stops and the
    /// search fails (`unsupported`, "cancelled").
    pub fn grep_report(&self, opts: &GrepOptions, cancel: Option<&AtomicBool>) -> CoreResult<GrepReport> {
        let t = self.jail.resolve(opts.path.as_deref().unwrap_or("/"))?;
        match t.kind {
            Kind::Missing => return Err(not_found(&t.vpath)),
            Kind::Dir if t.via_link => return Err(link_refused(&t.vpath)),
            _ => {}
        }
        let cap = self.clamp(opts.max_count);
        let opts = GrepOptions { max_count: Some(cap), ..opts.clone() };
        let searcher = Searcher::new(&opts, &t.vpath)?;
        let content = opts.output_mode == OutputMode::Content;
        let limit = if content { cap.saturating_add(1) } else { usize::MAX };
        let skipped = Skipped::default();
        let best: Mutex<Smallest<FileHits>> = Mutex::new(Smallest::new(cap.saturating_add(1)));
        let add = |h: FileHits| {
            let units = if content { h.count } else { 1 };
            best.lock().unwrap_or_else(|e| e.into_inner()).insert(h.path.clone(), h, units);
        };
        match t.kind {
            Kind::Dir => {
                let ctl = Walk { cancel, skipped: &skipped };
                self.walk_files(&t.vpath, &ctl, |f: &FileRef<'_>, scratch: &mut Scratch| {
                    if !searcher.wants(f.vpath) || !best.lock().unwrap_or_else(|e| e.into_inner()).admits(f.vpath) {
                        return;
                    }
                    if self.load(f, scratch, &skipped) {
                        if let Some(h) = searcher.search(f.vpath, scratch, limit) {
                            add(h);
                        }
                    }
                    if scratch.capacity() > 1 << 20 {
                        *scratch = Vec::new();
                    }
                });
                if ctl.cancelled() {
                    return Err(cancelled(&t.vpath));
                }
            }
            Kind::File if searcher.wants(&t.vpath) => match self.read_target(&t) {
                Ok((data, _)) => {
                    if let Some(h) = searcher.search(&t.vpath, &data, limit) {
                        add(h);
                    }
                }
                Err(e) if e.code == ErrorCode::TooLarge => skipped.add(&t.vpath, "too_large"),
                Err(e) => return Err(e),
            },
            // A FIFO, socket or device holds no searchable text.
            _ => {}
        }
        let best = best.into_inner().unwrap_or_else(|e| e.into_inner());
        let mut collector = Collector::new(&opts);
        for (_, (h, _)) in best.items {
            if collector.is_full() {
                break;
            }
            collector.push(h);
        }
        Ok(GrepReport { result: collector.finish(), skipped: skipped.into_vec() })
    }

    /// Files matching a glob; [`RootedFs::glob_report`] without its skipped list or cancellation.
    pub fn glob(&self, opts: &GlobOptions) -> CoreResult<GlobResult> {
        self.glob_report(opts, None).map(|r| r.result)
    }

    /// Files (not directories, not symbolic links) matching a glob, sorted by path, at most
    /// `max_results` (clamped to the handle's `max_results`; then `truncated`). Only the glob's
    /// literal base directory is walked; a missing base matches nothing. Same skip rules as
    /// [`RootedFs::grep`], and as there, what the walk could not look into (an unreadable or too
    /// deep directory, an entry no virtual path can name) is reported in `skipped`: a glob that
    /// missed part of the tree says so. Stops with `cancelled` once `cancel` is set.
    pub fn glob_report(&self, opts: &GlobOptions, cancel: Option<&AtomicBool>) -> CoreResult<GlobReport> {
        let root = self.jail.resolve(opts.path.as_deref().unwrap_or("/"))?;
        let glob = Glob::new(&opts.pattern, &root.vpath)?;
        let empty = GlobReport { result: GlobResult { files: Vec::new(), truncated: false }, skipped: Vec::new() };
        if root.kind != Kind::Dir || root.via_link {
            return Ok(empty);
        }
        let base = match self.jail.resolve(glob.base()) {
            Ok(b) => b,
            // The base comes from literal pattern segments; one that is not a valid path
            // names nothing, but an escape attempt is still reported.
            Err(e) if e.code == ErrorCode::PathEscape => return Err(e),
            Err(_) => return Ok(empty),
        };
        if !matches!(base.kind, Kind::Dir | Kind::File) || base.via_link {
            return Ok(empty);
        }
        let cap = self.clamp(opts.max_results);
        let best: Mutex<Smallest<FileInfo>> = Mutex::new(Smallest::new(cap.saturating_add(1)));
        let skipped = Skipped::default();
        let ctl = Walk { cancel, skipped: &skipped };
        self.walk_files(&base.vpath, &ctl, |f: &FileRef<'_>, _: &mut Scratch| {
            if !glob.is_match(f.vpath, &root.vpath) {
                return;
            }
            let Ok(st) = statat(f.dir, f.name, AtFlags::SYMLINK_NOFOLLOW) else { return };
            if kind_of(&st) == Kind::File {
                best.lock().unwrap_or_else(|e| e.into_inner()).insert(f.vpath.to_string(), file_info(f.vpath, &st), 1);
            }
        });
        if ctl.cancelled() {
            return Err(cancelled(&root.vpath));
        }
        let best = best.into_inner().unwrap_or_else(|e| e.into_inner());
        let mut files: Vec<FileInfo> = best.items.into_values().map(|(f, _)| f).collect();
        let truncated = files.len() > cap;
        files.truncate(cap);
        Ok(GlobReport { result: GlobResult { files, truncated }, skipped: skipped.into_vec() })
    }

    /// Loads a walked file into `buf`: regular, not a link, within the size cap, readable.
    fn load(&self, f: &FileRef<'_>, buf: &mut Scratch, skipped: &Skipped) -> bool {
        let fd = match openat(f.dir, f.name, READ_FLAGS, Mode::empty()) {
            Ok(fd) => fd,
            Err(rustix::io::Errno::ACCESS) | Err(rustix::io::Errno::PERM) => {
                skipped.add(f.vpath, "permission_denied");
                return false;
            }
            Err(_) => return false,
        };
        let Ok(st) = rustix::fs::fstat(&fd) else { return false };
        if kind_of(&st) != Kind::File {
            return false;
        }
        let size = st.st_size as u64;
        if size > self.max_file_bytes {
            skipped.add(f.vpath, "too_large");
            return false;
        }
        let file = std::fs::File::from(fd);
        if read_capped(&file, size, self.max_file_bytes, buf).is_err() {
            skipped.add(f.vpath, "unreadable");
            return false;
        }
        if buf.len() as u64 > self.max_file_bytes {
            skipped.add(f.vpath, "too_large");
            return false;
        }
        true
    }
}
