//! The resident file table: files kept inside the core, updated incrementally, with a directory
//! index so `ls` of one directory touches only that directory's children.

use crate::error::{CoreError, CoreResult, ErrorCode};
use crate::path;
use crate::path_index::LazyPathIndex;
use bytes::Bytes;
use serde::Serialize;
use std::collections::btree_map::Entry;
use std::collections::BTreeMap;
use std::ops::Bound;

/// A hash map keyed by paths.
type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
/// A hash set of paths.
type HashSet<K> = std::collections::HashSet<K, foldhash::fast::RandomState>;

/// One stored file. `version` changes on every write; `modified_at` is supplied by the caller
/// (milliseconds since the epoch) because the core has no clock.
#[derive(Debug, Clone)]
pub struct FileEntry {
    /// The content. Files seeded together ([`FileTable::write_all`], a snapshot restore) are
    /// slices of one shared buffer rather than one allocation each; the buffer is freed with the
    /// last file that still points into it.
    pub data: Bytes,
    pub modified_at: f64,
    pub version: u64,
}

/// What `ls`, `glob` and `stat` report about a path. Directories end with `/`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileInfo {
    pub path: String,
    pub is_dir: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub modified_at: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Child {
    File,
    /// A directory; it disappears with its last child.
    Dir,
}

/// Files keyed by normalised virtual path, in path order.
#[derive(Debug, Default, Clone)]
pub struct FileTable {
    files: BTreeMap<String, FileEntry>,
    dirs: Dirs,
    last_version: u64,
    changes: u64,
    /// The length of every file's content, added up (see [`Self::content_bytes`]).
    content_bytes: u64,
    /// The paths side by side, for scans of every path; forgotten whenever a path comes or goes.
    path_index: LazyPathIndex,
}

impl FileTable {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Counts every change (write, append, edit, delete) since the table was created or
    /// restored: equal counts mean equal contents, so a checkpoint can skip an unchanged table.
    pub fn changes(&self) -> u64 {
        self.changes
    }

    /// How many bytes of content the files hold, added up: what keeps the table large, for a
    /// binding that tells its host's garbage collector (files of one batch share buffers, and
    /// count as their slices).
    pub fn content_bytes(&self) -> u64 {
        self.content_bytes
    }

    /// The newest version handed out: every write consumes one, a delete none (see
    /// `delta::Mark`).
    pub fn last_version(&self) -> u64 {
        self.last_version
    }

    pub fn get(&self, normalised: &str) -> Option<&FileEntry> {
        self.files.get(normalised)
    }

    pub fn is_dir(&self, normalised: &str) -> bool {
        normalised == "/" || self.dirs.contains_key(normalised)
    }

    /// Creates or replaces a file, creating its parent directories. `if_version` makes the write
    /// a compare-and-swap: it must equal the current version (`"0"` = the file must not exist).
    pub fn write(
        &mut self,
        input: &str,
        data: Vec<u8>,
        modified_at: f64,
        if_version: Option<&str>,
    ) -> CoreResult<String> {
        let p = path::normalize(input)?;
        if p == "/" || self.dirs.contains_key(&p) {
            return Err(CoreError::of(ErrorCode::IsDirectory, &p));
        }
        if let Some(expected) = if_version {
            let current = self.files.get(&p).map_or(0, |f| f.version);
            if expected != current.to_string() {
                return Err(CoreError::of(ErrorCode::Conflict, &p));
            }
        }
        self.check_no_file_ancestor(&p)?;
        self.put(p.clone(), data, modified_at);
        Ok(p)
    }

    /// Replaces the content of an existing file (`p` normalised), as [`Self::write`] would
    /// with the same `if_version`, without checking the path again. Returns the new version.
    pub(crate) fn replace(
        &mut self,
        p: &str,
        data: Vec<u8>,
        modified_at: f64,
        if_version: Option<&str>,
    ) -> CoreResult<u64> {
        let Some(f) = self.files.get_mut(p) else { return Err(CoreError::of(ErrorCode::FileNotFound, p)) };
        if if_version.is_some_and(|expected| expected != f.version.to_string()) {
            return Err(CoreError::of(ErrorCode::Conflict, p));
        }
        self.last_version += 1;
        self.changes += 1;
        self.content_bytes = self.content_bytes - f.data.len() as u64 + data.len() as u64;
        *f = FileEntry { data: data.into(), modified_at, version: self.last_version };
        Ok(self.last_version)
    }

    /// Stores a file at a checked, normalised path; returns the entry it replaced.
    fn put(&mut self, p: String, data: Vec<u8>, modified_at: f64) -> Option<FileEntry> {
        self.last_version += 1;
        self.changes += 1;
        self.content_bytes += data.len() as u64;
        let entry = FileEntry { data: data.into(), modified_at, version: self.last_version };
        match self.files.entry(p) {
            Entry::Occupied(mut o) => {
                let old = o.insert(entry);
                self.content_bytes -= old.data.len() as u64;
                Some(old)
            }
            Entry::Vacant(v) => {
                self.path_index.forget();
                index_insert_as(&mut self.dirs, v.key(), Child::File);
                v.insert(entry);
                None
            }
        }
    }

    /// Writes many files as one change: either every file is written or — at the first invalid
    /// path or write error, which is returned — none is (the table is left exactly as it was).
    /// A path given twice keeps its last content. Returns how many files were written.
    ///
    /// Every path is checked before anything changes, so nothing has to be undone; the files
    /// then go in sorted, which lets the map be built in one pass when the batch is large
    /// (seeding a thread with thousands of files) rather than by one search per file, and the
    /// directory index be extended once per run of files sharing a directory.
    pub fn write_all<'a, I>(&mut self, files: I) -> CoreResult<usize>
    where
        I: IntoIterator<Item = (&'a str, Bytes, f64)>,
    {
        let files = files.into_iter();
        let first = self.last_version + 1;
        // Versions follow the input order; among duplicates the last one (the newest) stays.
        let mut entries: Vec<(String, FileEntry)> = Vec::with_capacity(files.size_hint().0);
        for ((input, data, modified_at), version) in files.zip(first..) {
            entries.push((path::normalize(input)?, FileEntry { data, modified_at, version }));
        }
        let count = entries.len();
        // A batch already in strict path order (a snapshot, a sorted listing) has no duplicates.
        if !entries.is_sorted_by(|a, b| a.0 < b.0) {
            entries.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(a.1.version.cmp(&b.1.version)));
        }
        if !self.sorted_batch_is_clean(&entries) {
            // Some path fails: find the one a write in input order would meet first.
            entries.sort_unstable_by_key(|e| e.1.version);
            self.check_batch(entries.iter().map(|e| e.0.as_str()))?;
            entries.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(a.1.version.cmp(&b.1.version)));
        }
        self.last_version += count as u64;
        self.changes += count as u64;
        entries.dedup_by(|later, earlier| {
            let same = later.0 == earlier.0;
            if same {
                std::mem::swap(later, earlier);
            }
            same
        });
        // New files join their directory a run at a time: sorted paths sharing a directory come
        // together (their names in order), so each run costs one search of the index.
        // The table's files a batch replaces are found by walking both in path order when the
        // batch is large next to the table, else by one search each.
        let merge = entries.len() >= self.files.len() / 8;
        let start = entries.first().map_or("", |(p, _)| p.as_str());
        let mut table = self.files.range::<str, _>((Bound::Included(start), Bound::Unbounded)).peekable();
        let mut run_dir: &str = "";
        let mut run: Vec<(String, Child)> = Vec::new();
        for (p, f) in &entries {
            self.content_bytes += f.data.len() as u64;
            let old = if merge {
                while table.next_if(|(k, _)| k.as_str() < p.as_str()).is_some() {}
                table.next_if(|(k, _)| *k == p).map(|(_, old)| old)
            } else {
                self.files.get(p)
            };
            if let Some(old) = old {
                self.content_bytes -= old.data.len() as u64;
                continue;
            }
            let dir = path::parent(p);
            if dir != run_dir {
                index_insert_run(&mut self.dirs, run_dir, &mut run);
                run_dir = dir;
            }
            run.push((path::file_name(p).to_string(), Child::File));
        }
        index_insert_run(&mut self.dirs, run_dir, &mut run);
        drop(table);
        self.path_index.forget();
        if merge {
            let mut sorted: BTreeMap<String, FileEntry> = entries.into_iter().collect();
            self.files.append(&mut sorted);
        } else {
            self.files.extend(entries);
        }
        Ok(count)
    }

    /// Whether a batch in path order (duplicates adjacent) holds no path [`Self::check_batch`]
    /// refuses: none is `/` or a directory (of the table, or made by another path of the
    /// batch), and no directory the batch makes is a file of the table. `false` may be wrong
    /// (the exact check then decides); `true` never is.
    fn sorted_batch_is_clean(&self, sorted: &[(String, FileEntry)]) -> bool {
        // The directories the batch makes: each is walked up from once, from its first file.
        let mut made: HashSet<&str> = HashSet::default();
        let mut last_parent = "";
        for (p, _) in sorted {
            if p == "/" {
                return false;
            }
            let parent = path::parent(p);
            if parent == last_parent {
                continue;
            }
            last_parent = parent;
            let mut ancestor = parent;
            while ancestor != "/" && !self.has_dir(ancestor) && made.insert(ancestor) {
                if self.files.contains_key(ancestor) {
                    return false;
                }
                ancestor = path::parent(ancestor);
            }
        }
        for (i, (p, _)) in sorted.iter().enumerate() {
            if self.has_dir(p) {
                return false;
            }
            // A path the batch also makes a directory of is followed, in path order, only by
            // paths starting with it up to its first descendant: when the next path does not
            // start with it, it has none.
            let followed = sorted.get(i + 1).is_some_and(|(next, _)| next.starts_with(p.as_str()));
            if followed && made.contains(p.as_str()) {
                return false;
            }
        }
        true
    }

    /// Whether a path other than `/` is a directory of the table.
    fn has_dir(&self, p: &str) -> bool {
        !self.dirs.is_empty() && self.dirs.contains_key(p)
    }

    /// The error [`Self::write_all`] gives for a batch of normalised paths in input order: the
    /// one writing its files one by one in order would meet first — at a path that is `/` or a
    /// directory (of the table, or made by an earlier path of the batch), or below a file (of
    /// the table, or an earlier path).
    fn check_batch<'a>(&self, batch: impl Iterator<Item = &'a str> + Clone) -> CoreResult<()> {
        // The first batch index at which each new directory and each file appears; the
        // directories are slices of the batch's own paths.
        let mut made: HashMap<&str, usize> = HashMap::default();
        let mut files: HashMap<&str, usize> = HashMap::default();
        for (i, p) in batch.clone().enumerate() {
            files.entry(p).or_insert(i);
            let mut ancestor = path::parent(p);
            while ancestor != "/" && !self.dirs.contains_key(ancestor) && !made.contains_key(ancestor) {
                made.insert(ancestor, i);
                ancestor = path::parent(ancestor);
            }
        }
        let before = |map: &HashMap<&str, usize>, key: &str, i: usize| map.get(key).is_some_and(|&at| at < i);
        for (i, p) in batch.enumerate() {
            if p == "/" || self.dirs.contains_key(p) || before(&made, p, i) {
                return Err(CoreError::of(ErrorCode::IsDirectory, p));
            }
            let mut ancestor = path::parent(p);
            while ancestor != "/" && !self.dirs.contains_key(ancestor) {
                if self.files.contains_key(ancestor) || before(&files, ancestor, i) {
                    return Err(CoreError::new(ErrorCode::InvalidPath, p, format!("'{ancestor}' is a file")));
                }
                ancestor = path::parent(ancestor);
            }
        }
        Ok(())
    }

    /// Appends to a file, creating it (and its parents) when missing: only the new bytes cross
    /// the boundary, however long the file has grown.
    pub fn append(&mut self, input: &str, data: &[u8], modified_at: f64) -> CoreResult<String> {
        let p = path::normalize(input)?;
        match self.files.get_mut(&p) {
            Some(f) => {
                self.last_version += 1;
                self.changes += 1;
                // A file alone in its buffer grows in place; a slice of a shared one is copied out.
                let mut grown = Vec::from(std::mem::take(&mut f.data));
                grown.extend_from_slice(data);
                self.content_bytes += data.len() as u64;
                f.data = grown.into();
                f.modified_at = modified_at;
                f.version = self.last_version;
                Ok(p)
            }
            None => self.write(&p, data.to_vec(), modified_at, None),
        }
    }

    /// Removes every file at once, releasing the memory they hold. Counts as one change, and the
    /// versions go on from where they were (a mark taken before then sees files gone).
    pub fn clear(&mut self) {
        *self = FileTable { last_version: self.last_version, changes: self.changes + 1, ..FileTable::default() };
    }

    /// Removes a file, or a directory with everything beneath it. Returns how many files went.
    pub fn delete(&mut self, input: &str) -> CoreResult<usize> {
        let p = path::normalize(input)?;
        if p == "/" {
            // Wiping the whole tree is never what one tool call should do.
            return Err(CoreError::new(ErrorCode::PermissionDenied, &p, ""));
        }
        if let Some(f) = self.files.remove(&p) {
            self.path_index.forget();
            self.content_bytes -= f.data.len() as u64;
            self.index_remove(&p);
            self.changes += 1;
            return Ok(1);
        }
        if !self.dirs.contains_key(&p) {
            return Err(CoreError::of(ErrorCode::FileNotFound, &p));
        }
        let doomed: Vec<String> = self.files_under(&p).map(|(k, _)| k.clone()).collect();
        self.path_index.forget();
        for k in &doomed {
            if let Some(f) = self.files.remove(k) {
                self.content_bytes -= f.data.len() as u64;
            }
            self.index_remove(k);
        }
        self.changes += 1;
        Ok(doomed.len())
    }

    /// Metadata for a file or directory.
    pub fn stat(&self, input: &str) -> CoreResult<FileInfo> {
        let p = path::normalize(input)?;
        if let Some(f) = self.files.get(&p) {
            return Ok(file_info(&p, f));
        }
        if self.is_dir(&p) {
            return Ok(dir_info(&p));
        }
        Err(CoreError::of(ErrorCode::FileNotFound, &p))
    }

    /// One level of a directory, sorted by path; directories end with `/`. `ls` of a file lists
    /// that file.
    pub fn ls(&self, input: &str) -> CoreResult<Vec<FileInfo>> {
        let p = path::normalize(input)?;
        if let Some(f) = self.files.get(&p) {
            return Ok(vec![file_info(&p, f)]);
        }
        let Some(children) = self.dirs.get(&p) else {
            return if p == "/" { Ok(Vec::new()) } else { Err(CoreError::of(ErrorCode::FileNotFound, &p)) };
        };
        let mut out: Vec<FileInfo> = children
            .iter()
            .map(|(name, kind)| {
                let child = path::join(&p, name);
                match kind {
                    Child::File => file_info(&child, &self.files[&child]),
                    Child::Dir => dir_info(&child),
                }
            })
            .collect();
        // Children come in name order, which is path order unless a directory's name is a
        // prefix of a sibling's followed by a byte below `/` (`a/` sorts after `a-b`): sort only
        // then (one comparison per entry instead of a sort's allocation and merge).
        if !out.is_sorted_by(|a, b| a.path <= b.path) {
            out.sort_by(|a, b| a.path.cmp(&b.path));
        }
        Ok(out)
    }

    /// Files at or beneath a normalised path, in path order (a file path yields that file).
    pub fn files_under<'a>(&'a self, normalised: &str) -> Box<dyn Iterator<Item = (&'a String, &'a FileEntry)> + 'a> {
        if normalised == "/" {
            return Box::new(self.files.iter());
        }
        if let Some((k, v)) = self.files.get_key_value(normalised) {
            return Box::new(std::iter::once((k, v)));
        }
        let prefix = format!("{normalised}/");
        Box::new(self.files.range(prefix.clone()..).take_while(move |(k, _)| k.starts_with(&prefix)))
    }

    /// Every file, in path order.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &FileEntry)> {
        self.files.iter()
    }

    /// Every file, in path order, its path read from the path index, for scans that read every
    /// path, which the index holds side by side. When the paths changed since the last index,
    /// it is built now if `build`, else `None` is returned (a scan that may stop early could pay
    /// more for the build than it saves).
    pub(crate) fn iter_indexed(&self, build: bool) -> Option<impl Iterator<Item = (&str, &FileEntry)>> {
        let index = if build { Some(self.path_index.get(self.files.keys())) } else { self.path_index.built() }?;
        debug_assert_eq!(index.len(), self.files.len());
        Some(index.iter().zip(self.files.values()))
    }

    /// Inserts an entry as it was saved (snapshot restore); keeps versions monotonic.
    pub(crate) fn restore(&mut self, p: String, entry: FileEntry) -> CoreResult<()> {
        if self.files.contains_key(&p) || self.dirs.contains_key(&p) {
            return Err(CoreError::new(ErrorCode::Unsupported, &p, "duplicate path in snapshot"));
        }
        self.check_no_file_ancestor(&p)?;
        self.last_version = self.last_version.max(entry.version);
        self.content_bytes += entry.data.len() as u64;
        self.path_index.forget();
        self.files.insert(p.clone(), entry);
        self.index_insert(&p);
        Ok(())
    }

    fn check_no_file_ancestor(&self, p: &str) -> CoreResult<()> {
        let mut ancestor = path::parent(p);
        // An existing directory has only directories above it: the walk stops there.
        while ancestor != "/" && !self.dirs.contains_key(ancestor) {
            if self.files.contains_key(ancestor) {
                return Err(CoreError::new(ErrorCode::InvalidPath, p, format!("'{ancestor}' is a file")));
            }
            ancestor = path::parent(ancestor);
        }
        Ok(())
    }

    /// Registers a new file in the directory index: its parent gains a child; a parent that is
    /// new itself is registered in its own parent, and so on up to the first existing directory.
    fn index_insert(&mut self, p: &str) {
        index_insert_as(&mut self.dirs, p, Child::File);
    }

    /// Unregisters a removed file; a directory left without children goes too (the root stays).
    fn index_remove(&mut self, p: &str) {
        let mut child = p;
        loop {
            let dir = path::parent(child);
            let Some(children) = self.dirs.get_mut(dir) else { return };
            children.remove(path::file_name(child));
            if !children.is_empty() || dir == "/" {
                return;
            }
            self.dirs.remove(dir);
            child = dir;
        }
    }
}

/// The directory index: each directory's children by name.
type Dirs = HashMap<String, BTreeMap<String, Child>>;

/// Registers a new child of `kind` at `p` in the directory index (see
/// [`FileTable::index_insert`]).
fn index_insert_as(dirs: &mut Dirs, p: &str, kind: Child) {
    let mut child = p;
    let mut kind = kind;
    loop {
        let dir = path::parent(child);
        let name = path::file_name(child);
        if let Some(children) = dirs.get_mut(dir) {
            children.insert(name.to_string(), kind);
            return;
        }
        dirs.insert(dir.to_string(), BTreeMap::from([(name.to_string(), kind)]));
        if dir == "/" {
            return;
        }
        child = dir;
        kind = Child::Dir;
    }
}

/// Registers new children of one directory `dir`, given in name order (and empties `run`): a
/// directory that is new is built from them in one pass, then registered in its parent.
fn index_insert_run(dirs: &mut Dirs, dir: &str, run: &mut Vec<(String, Child)>) {
    if run.is_empty() {
        return;
    }
    if let Some(children) = dirs.get_mut(dir) {
        children.extend(run.drain(..));
        return;
    }
    dirs.insert(dir.to_string(), run.drain(..).collect());
    if dir != "/" {
        index_insert_as(dirs, dir, Child::Dir);
    }
}

pub(crate) fn file_info(p: &str, f: &FileEntry) -> FileInfo {
    FileInfo {
        path: p.to_string(),
        is_dir: false,
        size: Some(f.data.len() as u64),
        modified_at: Some(f.modified_at),
        version: Some(itoa::Buffer::new().format(f.version).to_owned()),
    }
}

fn dir_info(p: &str) -> FileInfo {
    let shown = if p == "/" { "/".to_string() } else { format!("{p}/") };
    FileInfo { path: shown, is_dir: true, size: None, modified_at: None, version: None }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn table(paths: &[&str]) -> FileTable {
        let mut t = FileTable::new();
        for p in paths {
            t.write(p, p.as_bytes().to_vec(), 1.0, None).unwrap();
        }
        t
    }

    fn names(v: &[FileInfo]) -> Vec<&str> {
        v.iter().map(|f| f.path.as_str()).collect()
    }

    #[test]
    fn ls_lists_one_level_sorted_with_dir_slashes() {
        let t = table(&["/b.txt", "/a/x.md", "/a/y/z.md", "/a.txt", "/c/d/e"]);
        assert_eq!(names(&t.ls("/").unwrap()), vec!["/a.txt", "/a/", "/b.txt", "/c/"]);
        assert_eq!(names(&t.ls("/a").unwrap()), vec!["/a/x.md", "/a/y/"]);
        assert_eq!(t.ls("/nope").unwrap_err().code, ErrorCode::FileNotFound);
        assert_eq!(names(&t.ls("/b.txt").unwrap()), vec!["/b.txt"]);
        assert!(FileTable::new().ls("/").unwrap().is_empty());
    }

    #[test]
    fn delete_prunes_empty_directories() {
        let mut t = table(&["/a/b/c.txt", "/a/b/d.txt", "/a/e.txt"]);
        assert_eq!(t.delete("/a/b/c.txt").unwrap(), 1);
        assert_eq!(names(&t.ls("/a/b").unwrap()), vec!["/a/b/d.txt"]);
        assert_eq!(t.delete("/a/b").unwrap(), 1);
        assert_eq!(names(&t.ls("/a").unwrap()), vec!["/a/e.txt"]);
        t.delete("/a/e.txt").unwrap();
        assert!(t.ls("/").unwrap().is_empty());
        assert_eq!(t.ls("/a").unwrap_err().code, ErrorCode::FileNotFound);
        assert_eq!(t.delete("/a").unwrap_err().code, ErrorCode::FileNotFound);
        assert_eq!(t.delete("/").unwrap_err().code, ErrorCode::PermissionDenied);
    }

    #[test]
    fn write_refuses_directories_and_file_parents() {
        let mut t = table(&["/a/b.txt"]);
        assert_eq!(t.write("/a", vec![], 0.0, None).unwrap_err().code, ErrorCode::IsDirectory);
        assert_eq!(t.write("/", vec![], 0.0, None).unwrap_err().code, ErrorCode::IsDirectory);
        assert_eq!(t.write("/a/b.txt/c", vec![], 0.0, None).unwrap_err().code, ErrorCode::InvalidPath);
        assert_eq!(t.write("/../x", vec![], 0.0, None).unwrap_err().code, ErrorCode::PathEscape);
    }

    #[test]
    fn versions_change_on_every_write_and_guard_cas() {
        let mut t = FileTable::new();
        t.write("/m.md", b"1".to_vec(), 0.0, Some("0")).unwrap();
        let v1 = t.stat("/m.md").unwrap().version.unwrap();
        assert_eq!(t.write("/m.md", b"x".to_vec(), 0.0, Some("0")).unwrap_err().code, ErrorCode::Conflict);
        t.write("/m.md", b"2".to_vec(), 0.0, Some(&v1)).unwrap();
        let v2 = t.stat("/m.md").unwrap().version.unwrap();
        assert_ne!(v1, v2);
        assert_eq!(t.write("/m.md", b"3".to_vec(), 0.0, Some(&v1)).unwrap_err().code, ErrorCode::Conflict);
        assert_eq!(t.get("/m.md").unwrap().data, &b"2"[..]);
    }

    #[test]
    fn clear_empties_the_table_as_one_change() {
        let mut t = table(&["/a/x", "/b"]);
        let (changes, last, mark) = (t.changes(), t.last_version(), t.mark());
        t.clear();
        assert!(t.delta_since(mark).is_none(), "files went: only a full snapshot says so");
        assert!(t.is_empty() && t.ls("/").unwrap().is_empty() && t.content_bytes() == 0);
        assert_eq!((t.changes(), t.last_version()), (changes + 1, last));
        t.write("/a", b"new".to_vec(), 1.0, None).unwrap();
        assert_eq!(t.get("/a").unwrap().version, last + 1);
    }

    #[test]
    fn append_extends_or_creates_and_bumps_the_version() {
        let mut t = FileTable::new();
        t.append("/log/h.md", b"one\n", 1.0).unwrap();
        let v1 = t.get("/log/h.md").unwrap().version;
        t.append("/log/h.md", b"two\n", 2.0).unwrap();
        let f = t.get("/log/h.md").unwrap();
        assert_eq!((&f.data[..], f.modified_at), (&b"one\ntwo\n"[..], 2.0));
        assert!(f.version > v1);
        assert_eq!(t.append("/log", b"x", 0.0).unwrap_err().code, ErrorCode::IsDirectory);
    }

    #[test]
    fn write_all_is_all_or_nothing() {
        let mut t = table(&["/keep/a.txt", "/f"]);
        let before: Vec<(String, Vec<u8>, u64)> =
            t.iter().map(|(k, f)| (k.clone(), f.data.to_vec(), f.version)).collect();
        let (changes, listing) = (t.changes(), t.ls("/").unwrap());
        // Replaces one file, adds others, then fails: on a path below a file, on a directory,
        // on a path in the batch itself that became a directory, on a bad path.
        for bad in ["/f/x", "/keep", "/new/dir", "/../up", ""] {
            let files = [("/keep/a.txt", b"new".to_vec()), ("/new/dir/b.txt", vec![1]), ("/c", vec![]), (bad, vec![2])]
                .map(|(p, d)| (p, Bytes::from(d), 9.0));
            assert!(t.write_all(files).is_err(), "{bad}");
            let after: Vec<(String, Vec<u8>, u64)> =
                t.iter().map(|(k, f)| (k.clone(), f.data.to_vec(), f.version)).collect();
            assert_eq!(after, before, "{bad}");
            assert_eq!((t.changes(), t.ls("/").unwrap()), (changes, listing.clone()));
            assert!(t.ls("/new").is_err());
        }
        assert_eq!(
            t.write_all([("/a/1", vec![1], 1.0), ("/a/1", vec![2], 2.0), ("/a/2", vec![], 3.0)].map(|(p, d, m)| (
                p,
                Bytes::from(d),
                m
            ))),
            Ok(3)
        );
        assert_eq!((t.get("/a/1").unwrap().modified_at, t.get("/a/2").unwrap().modified_at), (2.0, 3.0));
        assert_eq!(t.get("/a/1").unwrap().data, vec![2u8]);
        assert_eq!(names(&t.ls("/a").unwrap()), vec!["/a/1", "/a/2"]);
        assert!(t.get("/a/2").unwrap().version > before.iter().map(|b| b.2).max().unwrap());
        assert_eq!(t.write_all(std::iter::empty::<(&str, Bytes, f64)>()), Ok(0));
    }

    #[test]
    fn files_under_does_not_leak_siblings_with_common_prefix() {
        let t = table(&["/a/x", "/a.b", "/ab/y", "/a/z/w"]);
        let under: Vec<&String> = t.files_under("/a").map(|(k, _)| k).collect();
        assert_eq!(under, vec!["/a/x", "/a/z/w"]);
    }

    /// A file as observed: path, data, version, modification time (bits).
    type Observed = (String, Vec<u8>, u64, u64);
    /// A directory and the names it lists.
    type Listing = (String, Vec<String>);

    /// Everything a caller can observe of a table: files with their data, versions and times,
    /// the counters, and the listing of every directory.
    fn observed(t: &FileTable) -> (Vec<Observed>, u64, u64, Vec<Listing>) {
        let held: u64 = t.iter().map(|(_, f)| f.data.len() as u64).sum();
        assert_eq!(t.content_bytes(), held, "content_bytes adds up the files' lengths");
        let files = t.iter().map(|(k, f)| (k.clone(), f.data.to_vec(), f.version, f.modified_at.to_bits())).collect();
        let mut dirs: Vec<Listing> = t
            .dirs
            .keys()
            .map(|d| (d.clone(), names(&t.ls(d).unwrap()).into_iter().map(str::to_string).collect()))
            .collect();
        dirs.sort();
        (files, t.last_version(), t.changes(), dirs)
    }

    proptest! {
        /// A batch leaves the table exactly as writing its files one by one would — or, when one
        /// of them fails, exactly as it was — and fails with the error the first failing write
        /// gives.
        #[test]
        fn write_all_equals_writes_in_order(
            seed in prop::collection::vec("(/[ab]){1,3}", 0..6),
            batch in prop::collection::vec(("(/[ab]){1,3}|/|/a/\\.\\./b|//a", any::<u8>()), 0..8),
        ) {
            batch_equals_writes_in_order(&seed, &batch)?;
        }

        /// The same with names whose bytes sort below `/` (`a-b` and `a.b` come between `a`
        /// and `a/…`), with batches already in path order (no sort), and with tables many
        /// times larger than the batch (existing files searched one by one).
        #[test]
        fn write_all_of_sorted_and_small_batches_equals_writes_in_order(
            seed in prop::collection::vec("(/[ab-][ab.-]?){1,3}", 0..80),
            mut batch in prop::collection::vec(("(/[ab-][ab.-]?){1,3}|/", any::<u8>()), 0..12),
            sorted in any::<bool>(),
        ) {
            if sorted {
                batch.sort_by(|a, b| a.0.cmp(&b.0));
                batch.dedup_by(|a, b| a.0 == b.0);
            }
            batch_equals_writes_in_order(&seed, &batch)?;
        }
    }

    /// Writes `seed` one by one (failures skipped), then `batch` both ways, and compares.
    fn batch_equals_writes_in_order(seed: &[String], batch: &[(String, u8)]) -> Result<(), TestCaseError> {
        let mut t = FileTable::new();
        for p in seed {
            let _ = t.write(p, vec![0], 1.0, None);
        }
        let mut one_by_one = t.clone();
        let mut expected = Ok(batch.len());
        for (p, byte) in batch {
            if let Err(e) = one_by_one.write(p, vec![*byte], f64::from(*byte), None) {
                expected = Err(e);
                one_by_one = t.clone();
                break;
            }
        }
        let got = t.write_all(batch.iter().map(|(p, b)| (p.as_str(), Bytes::from(vec![*b]), f64::from(*b))));
        prop_assert_eq!(got, expected);
        prop_assert_eq!(observed(&t), observed(&one_by_one));
        Ok(())
    }

    proptest! {
        /// After any sequence of writes and deletes, the directory index agrees with a listing
        /// computed by scanning every key.
        #[test]
        fn index_matches_a_full_scan(ops in prop::collection::vec((any::<bool>(), "(/[ab]){1,4}"), 1..40)) {
            let mut t = FileTable::new();
            for (i, (is_write, p)) in ops.iter().enumerate() {
                if !*is_write {
                    let _ = t.delete(p);
                } else if i % 3 == 0 {
                    let _ = t.append(p, &[2; 3], 0.0);
                } else {
                    let _ = t.write(p, vec![1; i % 5], 0.0, None);
                }
            }
            prop_assert_eq!(t.content_bytes(), t.iter().map(|(_, f)| f.data.len() as u64).sum::<u64>());
            let mut dirs: std::collections::BTreeSet<String> = ["/".to_string()].into();
            for (k, _) in t.iter() {
                let mut d = path::parent(k);
                loop { dirs.insert(d.to_string()); if d == "/" { break; } d = path::parent(d); }
            }
            for d in &dirs {
                let mut expected: Vec<String> = t.iter().filter_map(|(k, _)| {
                    let rest = path::strip_dir(k, d)?;
                    Some(match rest.split_once('/') { Some((first, _)) => format!("{}/", path::join(d, first)), None => k.clone() })
                }).collect();
                expected.sort();
                expected.dedup();
                let got: Vec<String> = t.ls(d).unwrap().into_iter().map(|f| f.path).collect();
                prop_assert_eq!(got, expected);
            }
            prop_assert_eq!(t.dirs.len() + usize::from(!t.dirs.contains_key("/")), dirs.len());
        }
    }
}
