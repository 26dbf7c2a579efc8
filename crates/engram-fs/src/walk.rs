//! The parallel tree walk shared by `grep` and `glob`.
//!
//! The walk always starts at the root and is pruned to the requested directory, so ignore
//! rules are those of the rooted tree whatever directory is searched: a subdirectory search
//! returns exactly the matching part of a whole-tree search. Hidden files are included,
//! `.git` is always skipped, links are never followed, unreadable entries are skipped.

use crate::RootedFs;
use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkBuilder, WalkState};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Per-thread scratch buffer handed to the visitor (reused across files).
pub(crate) type Scratch = Vec<u8>;

impl RootedFs {
    /// Calls `visit(vpath, entry, scratch)` for every regular file at or below `base` (a host
    /// path under the root reachable without links) from the walker threads, and returns
    /// what it produced, in no particular order.
    pub(crate) fn walk_files<T, F>(&self, base: &Path, visit: F) -> Vec<T>
    where
        T: Send,
        F: Fn(&str, &DirEntry, &mut Scratch) -> Option<T> + Sync,
    {
        let root = self.jail.root();
        let mut builder = WalkBuilder::new(root);
        builder
            .hidden(false)
            .parents(false)
            .ignore(self.respect_gitignore)
            .git_ignore(self.respect_gitignore)
            // Global and `.git/info/exclude` rules live outside the tree (or in a worktree's
            // external git dir); only ignore files inside the root count.
            .git_global(false)
            .git_exclude(false)
            .require_git(false)
            .follow_links(false)
            .threads(self.threads);
        let base: PathBuf = base.to_path_buf();
        let prune = base.as_path() != root;
        builder.filter_entry(move |e| {
            e.file_name() != ".git" && (!prune || e.path().starts_with(&base) || base.starts_with(e.path()))
        });
        let sink = Mutex::new(Vec::new());
        let mut visitors = Visitors { fs: self, visit: &visit, sink: &sink };
        builder.build_parallel().visit(&mut visitors);
        sink.into_inner().unwrap_or_else(|e| e.into_inner())
    }
}

struct Visitors<'a, T, F> {
    fs: &'a RootedFs,
    visit: &'a F,
    sink: &'a Mutex<Vec<T>>,
}

impl<'a, T, F> ParallelVisitorBuilder<'a> for Visitors<'a, T, F>
where
    T: Send,
    F: Fn(&str, &DirEntry, &mut Scratch) -> Option<T> + Sync,
{
    fn build(&mut self) -> Box<dyn ParallelVisitor + 'a> {
        Box::new(Visitor { fs: self.fs, visit: self.visit, sink: self.sink, found: Vec::new(), scratch: Vec::new() })
    }
}

/// One walker thread's state; its findings join the shared sink when the thread ends.
struct Visitor<'a, T, F> {
    fs: &'a RootedFs,
    visit: &'a F,
    sink: &'a Mutex<Vec<T>>,
    found: Vec<T>,
    scratch: Scratch,
}

impl<T, F> ParallelVisitor for Visitor<'_, T, F>
where
    T: Send,
    F: Fn(&str, &DirEntry, &mut Scratch) -> Option<T> + Sync,
{
    fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        // Errors (an unreadable directory, a vanished entry) skip that entry only.
        let Ok(entry) = entry else { return WalkState::Continue };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            return WalkState::Continue;
        }
        if let Some(vpath) = self.fs.jail.vpath_of(entry.path()) {
            if let Some(found) = (self.visit)(&vpath, &entry, &mut self.scratch) {
                self.found.push(found);
            }
        }
        WalkState::Continue
    }
}

impl<T, F> Drop for Visitor<'_, T, F> {
    fn drop(&mut self) {
        if !self.found.is_empty() {
            let mut sink = self.sink.lock().unwrap_or_else(|e| e.into_inner());
            sink.append(&mut self.found);
        }
    }
}
