//! `grep` and `glob` over the host tree, answering exactly as engram-core's in-memory
//! `FileTable` does for the same files.

use crate::contain::Kind;
use crate::error::{link_refused, not_found};
use crate::meta::file_info;
use crate::read::{open_nofollow, read_capped};
use crate::walk::Scratch;
use crate::RootedFs;
use engram_core::glob::Glob;
use engram_core::grep::{Collector, FileHits, GrepOptions, GrepResult, OutputMode, Searcher};
use engram_core::ops::{GlobOptions, GlobResult};
use engram_core::{CoreResult, ErrorCode, FileInfo};
use std::path::Path;

impl RootedFs {
    /// Searches file contents (see [`GrepOptions`]). `opts.path` may name a directory (walked in
    /// parallel) or a single file; a missing path is `file_not_found`, a symbolic link is
    /// refused as in [`RootedFs::read`], and so is a directory reached through one (walks do
    /// not follow links).
    ///
    /// Skipped silently: binary files, files over `max_file_bytes`, unreadable files and
    /// directories, `.git/`, and (when `respect_gitignore`) ignored paths. Results are in path
    /// order and equal the in-memory search over the same files.
    pub fn grep(&self, opts: &GrepOptions) -> CoreResult<GrepResult> {
        let t = self.jail.resolve(opts.path.as_deref().unwrap_or("/"))?;
        match t.kind {
            Kind::Missing => return Err(not_found(&t.vpath)),
            Kind::Symlink => return Err(self.jail.link_error(&t)),
            Kind::Dir if !self.jail.is_link_free(&t.host) => return Err(link_refused(&t.vpath)),
            _ => {}
        }
        let searcher = Searcher::new(opts, &t.vpath)?;
        let limit = match opts.output_mode {
            OutputMode::Content => opts.max_count.map_or(usize::MAX, |m| m.saturating_add(1)),
            _ => usize::MAX,
        };
        let mut hits: Vec<FileHits> = match t.kind {
            Kind::Dir => self.walk_files(&t.host, |vpath, entry, scratch| {
                if !searcher.wants(vpath) || !self.load(entry.path(), scratch) {
                    return None;
                }
                searcher.search(vpath, scratch, limit)
            }),
            Kind::File => {
                let mut scratch = Vec::new();
                let wanted = searcher.wants(&t.vpath) && self.load(&t.host, &mut scratch);
                wanted.then(|| searcher.search(&t.vpath, &scratch, limit)).flatten().into_iter().collect()
            }
            // A FIFO, socket or device holds no searchable text.
            _ => Vec::new(),
        };
        hits.sort_unstable_by(|a, b| a.path.cmp(&b.path));
        let mut collector = Collector::new(opts);
        for h in hits {
            if collector.is_full() {
                break;
            }
            collector.push(h);
        }
        Ok(collector.finish())
    }

    /// Files (not directories, not symbolic links) matching a glob, sorted by path, at most
    /// `max_results` (then `truncated`). Only the glob's literal base directory is walked; a
    /// missing base matches nothing. Same skip rules as [`RootedFs::grep`].
    pub fn glob(&self, opts: &GlobOptions) -> CoreResult<GlobResult> {
        let root = self.jail.resolve(opts.path.as_deref().unwrap_or("/"))?;
        let glob = Glob::new(&opts.pattern, &root.vpath)?;
        let empty = GlobResult { files: Vec::new(), truncated: false };
        match root.kind {
            Kind::Symlink => return Err(self.jail.link_error(&root)),
            Kind::Dir => {}
            _ => return Ok(empty),
        }
        let base = match self.jail.resolve(glob.base()) {
            Ok(b) => b,
            // The base comes from literal pattern segments; one that is not a valid path
            // names nothing, but an escape attempt is still reported.
            Err(e) if e.code == ErrorCode::PathEscape => return Err(e),
            Err(_) => return Ok(empty),
        };
        if !matches!(base.kind, Kind::Dir | Kind::File) || !self.jail.is_link_free(&base.host) {
            return Ok(empty);
        }
        let mut files: Vec<FileInfo> = self.walk_files(&base.host, |vpath, entry, _| {
            if !glob.is_match(vpath, &root.vpath) {
                return None;
            }
            entry.metadata().ok().map(|m| file_info(vpath, &m))
        });
        files.sort_unstable_by(|a, b| a.path.cmp(&b.path));
        let cap = opts.max_results.unwrap_or(usize::MAX);
        let truncated = files.len() > cap;
        files.truncate(cap);
        Ok(GlobResult { files, truncated })
    }

    /// Loads a walked file into `buf`: regular, not a link, within the size cap, readable.
    fn load(&self, host: &Path, buf: &mut Scratch) -> bool {
        let Ok(file) = open_nofollow(host) else { return false };
        let Ok(meta) = file.metadata() else { return false };
        if !meta.is_file() || meta.len() > self.max_file_bytes {
            return false;
        }
        read_capped(&file, meta.len(), self.max_file_bytes, buf).is_ok() && buf.len() as u64 <= self.max_file_bytes
    }
}
