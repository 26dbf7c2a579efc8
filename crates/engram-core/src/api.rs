//! What both bindings call: the typed calls they marshal field by field, the column shapes
//! they hand to TypeScript (files, grep results) without an object per item, and the JSON
//! error text their constructors throw. Keeping it here means the bindings hold no logic.

use crate::error::{CoreError, CoreResult, ErrorCode};
use crate::glob::{Glob, PathFilter};
use crate::grep::GrepResult;
use crate::ops::{EditOptions, GlobOptions};
use crate::path;
use crate::read;
use crate::router::Router;
use crate::table::{FileInfo, FileTable};
use bytes::Bytes;

/// The canonical error for a code, for errors raised outside the core (a store lookup, a
/// host error) so every backend says the same thing. An unknown code is `unsupported`.
pub fn error_data(code: &str, subject: &str, detail: &str) -> CoreError {
    match ErrorCode::parse(code) {
        Some(code) => CoreError::new(code, subject, detail),
        None => CoreError::new(ErrorCode::Unsupported, code, "unknown error code"),
    }
}

/// Which of the normalised `paths` a glob admits (their indices, in order), with exactly the
/// matching rules of the table's `glob` and `grep` (used where files live outside a table, e.g.
/// behind a composite route). `kind`: `"glob"` — relative to `root`, or anchored when the
/// pattern starts with `/`; `"grep"` — grep's `glob` option: the file name when the pattern has
/// no `/`, else the path below `root`. Another kind is `unsupported`.
pub fn filter_paths(kind: &str, pattern: &str, root: &str, paths: &[String]) -> CoreResult<Vec<u32>> {
    let root = path::normalize(root)?;
    let admits: Box<dyn Fn(&str) -> bool> = match kind {
        "glob" => {
            let g = Glob::new(pattern, &root)?;
            let root = root.clone();
            Box::new(move |p| g.is_match(p, &root))
        }
        "grep" => {
            let f = PathFilter::new(pattern)?;
            let root = root.clone();
            Box::new(move |p| f.admits(p, &root))
        }
        _ => return Err(CoreError::new(ErrorCode::Unsupported, kind, "filter kind must be \"glob\" or \"grep\"")),
    };
    Ok((0..paths.len()).filter(|&i| admits(&paths[i])).map(|i| i as u32).collect())
}

/// A table rebuilt from [`FileTable::snapshot`] bytes the table may keep (a binding that
/// received its own copy): the files point into them rather than into a second copy.
pub fn table_from_owned_snapshot(bytes: impl Into<Bytes>) -> CoreResult<FileTable> {
    FileTable::from_snapshot_bytes(bytes.into())
}

pub fn normalize_path(input: &str) -> CoreResult<String> {
    path::normalize(input)
}

pub fn format_numbered(content: &str, first_line: usize) -> String {
    read::format_numbered(content, first_line)
}

/// Builds a router from its prefixes; the error is an invalid prefix's.
pub fn router_new(prefixes: &[String]) -> CoreResult<Router> {
    Router::new(prefixes)
}

/// BM25 relevance of each document to `query`, in document order (see [`crate::bm25`]).
pub fn rank_bm25(query: &str, documents: &[String]) -> Vec<f64> {
    crate::bm25::rank(query, documents)
}

/// Secrets replaced by `[REDACTED]` and how many (see [`crate::redact`]).
pub fn redact_secrets(text: &str) -> crate::redact::Redacted {
    crate::redact::redact(text)
}

// ---- Typed calls: what both bindings marshal field by field (no JSON on per-call paths) ----

/// A file's normalised path and new version after a write. Versions cross the bindings as
/// numbers (exact below 2^53; TypeScript shows them as their decimal text, as
/// [`FileInfo::version`] does).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    pub path: String,
    pub version: u64,
}

/// A successful write or append hands out the table's newest version to its file.
fn written(t: &FileTable, path: String) -> Written {
    Written { path, version: t.last_version() }
}

/// [`FileTable::edit`] with the new version as a number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edited {
    pub path: String,
    pub occurrences: usize,
    pub version: u64,
}

pub fn edit(t: &mut FileTable, options: &EditOptions) -> CoreResult<Edited> {
    let r = t.edit(options)?;
    let version = t.get(&r.path).map_or(0, |f| f.version);
    Ok(Edited { path: r.path, occurrences: r.occurrences, version })
}

/// [`FileTable::stat`] with the version as a number (`None` for a directory).
pub fn stat(t: &FileTable, input: &str) -> CoreResult<(FileInfo, Option<u64>)> {
    let info = t.stat(input)?;
    let version = if info.is_dir { None } else { t.get(&info.path).map(|f| f.version) };
    Ok((info, version))
}

/// [`FileTable::write`] with the new version.
pub fn write(
    t: &mut FileTable,
    input: &str,
    data: Vec<u8>,
    modified_at: f64,
    if_version: Option<&str>,
) -> CoreResult<Written> {
    let path = t.write(input, data, modified_at, if_version)?;
    Ok(written(t, path))
}

/// [`FileTable::append`] with the new version.
pub fn append(t: &mut FileTable, input: &str, data: &[u8], modified_at: f64) -> CoreResult<Written> {
    let path = t.append(input, data, modified_at)?;
    Ok(written(t, path))
}

/// When the files of a batch were last modified: all at one time, or each at its own (in the
/// batch's order).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Modified<'a> {
    All(f64),
    Each(&'a [f64]),
}

impl<'a> Modified<'a> {
    /// Each file's time, for `count` files; a list of another length is `unsupported`.
    fn times(self, count: usize) -> CoreResult<impl Iterator<Item = f64> + 'a> {
        let (all, each) = match self {
            Modified::All(at) => (Some(at), &[][..]),
            Modified::Each(each) if each.len() == count => (None, each),
            Modified::Each(each) => {
                return Err(CoreError::new(
                    ErrorCode::Unsupported,
                    "writeMany",
                    format_args!("{} modification times for {count} files", each.len()),
                ))
            }
        };
        Ok((0..count).map(move |i| all.unwrap_or_else(|| each[i])))
    }
}

/// Seeds many files in one call: `paths` joined by NUL (a byte no valid path contains), `data`
/// every content back to back, `lengths[i]` the byte length of file `i`. The files keep slices of
/// `data` (one buffer for the batch, no copy per file). Returns how many files were written. All
/// or nothing (see [`FileTable::write_all`]): at the first invalid path or write error (its
/// message names the path) no file is written. Mismatched counts are `unsupported`.
pub fn write_many(
    t: &mut FileTable,
    paths: &str,
    data: Bytes,
    lengths: &[u32],
    modified: Modified,
) -> CoreResult<usize> {
    let names = split_paths(paths, lengths.len())?;
    let times = modified.times(lengths.len())?;
    let total: u64 = lengths.iter().map(|&n| u64::from(n)).sum();
    if total != data.len() as u64 {
        return Err(CoreError::new(
            ErrorCode::Unsupported,
            "writeMany",
            format_args!("lengths add up to {total} of {} bytes", data.len()),
        ));
    }
    let mut at = 0usize;
    let files = lengths.iter().map(|&len| {
        let start = at;
        at += len as usize;
        data.slice(start..at)
    });
    t.write_all(names.into_iter().zip(files).zip(times).map(|((p, d), m)| (p, d, m)))
}

/// [`write_many`] with each file's content given on its own (slices of a few shared buffers,
/// as a binding that converts the contents itself makes them).
pub fn write_many_files(t: &mut FileTable, paths: &str, files: Vec<Bytes>, modified: Modified) -> CoreResult<usize> {
    let names = split_paths(paths, files.len())?;
    let times = modified.times(files.len())?;
    t.write_all(names.into_iter().zip(files).zip(times).map(|((p, d), m)| (p, d, m)))
}

/// A batch's contents (or one of its buffers) as its files will share them: `buffer` cut to its
/// first `used` bytes, and room past an eighth more than that given back (a buffer grown ahead
/// of its contents would otherwise stay allocated as long as any of its files).
pub fn batch_buffer(mut buffer: Vec<u8>, used: usize) -> Vec<u8> {
    buffer.truncate(used);
    if !room_kept(buffer.capacity(), buffer.len()) {
        buffer.shrink_to_fit();
    }
    buffer
}

/// Whether a buffer of `capacity` bytes may hold `len` bytes for as long as its files live: its
/// spare room is at most an eighth of `len` (more is given back, or another buffer is used).
pub fn room_kept(capacity: usize, len: usize) -> bool {
    capacity >= len && capacity - len <= len / 8
}

/// [`batch_buffer`] as the buffer its files share.
pub fn batch_bytes(buffer: Vec<u8>, used: usize) -> Bytes {
    Bytes::from(batch_buffer(buffer, used))
}

/// Room for exactly `bytes` bytes of a batch's contents in `staged` (zero-filled; what it
/// held is kept up to that length), for a binding whose caller encodes the contents straight into its memory
/// before [`write_many`]. A room that cannot be had (over the address space, or the memory
/// cannot grow that far) is `too_large`, and `staged` is released: the batch is refused whole
/// rather than aborting the process (WebAssembly's 32-bit memory meets this first).
pub fn stage_room(staged: &mut Vec<u8>, bytes: f64) -> CoreResult<()> {
    let refused = |staged: &mut Vec<u8>| {
        *staged = Vec::new();
        Err(CoreError::new(
            ErrorCode::TooLarge,
            "writeMany",
            format_args!("{bytes} bytes of contents do not fit in this core's memory"),
        ))
    };
    // Negative or NaN is no size; past `isize::MAX` no buffer can be that large.
    if bytes.is_nan() || bytes < 0.0 || bytes > isize::MAX as f64 {
        return refused(staged);
    }
    let want = bytes as usize;
    if want > staged.len() && staged.try_reserve_exact(want - staged.len()).is_err() {
        return refused(staged);
    }
    staged.resize(want, 0);
    Ok(())
}

/// The NUL-joined paths of a batch of `count` files; another count is `unsupported`.
fn split_paths(paths: &str, count: usize) -> CoreResult<Vec<&str>> {
    let names: Vec<&str> = if paths.is_empty() && count == 0 { Vec::new() } else { paths.split('\0').collect() };
    if names.len() != count {
        return Err(CoreError::new(
            ErrorCode::Unsupported,
            "writeMany",
            format_args!("{} paths for {count} files", names.len()),
        ));
    }
    Ok(names)
}

/// Files in columns, as the typed bindings pass them: the paths joined by NUL (which no
/// normalised path holds) in chunks of at most [`PATHS_CHUNK_BYTES`], and sizes, modification
/// times and versions as numbers (versions are counters, exact as numbers). A
/// few strings and three arrays cross the boundary instead of an object per file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileColumns {
    /// Each chunk's paths joined by NUL; a file's path is never split across chunks. Empty for
    /// no files.
    pub paths: Vec<String>,
    pub sizes: Vec<f64>,
    pub modified: Vec<f64>,
    pub versions: Vec<f64>,
}

/// Where [`FileColumns`] starts a new chunk of paths (unless the chunk is empty: a longer path
/// has one to itself). V8 puts a string of over 128 KiB (64 Ki UTF-16 units) in its large-object
/// space, which maps and faults fresh pages for every such string and unmaps them at the next
/// collection: one 160 KB string of 5,000 paths cost ~100 µs more than five small ones. 32 KiB
/// of UTF-8 stays under that threshold in either of V8's string widths.
pub const PATHS_CHUNK_BYTES: usize = 32 << 10;

impl FileColumns {
    pub(crate) fn with_capacity(files: usize) -> FileColumns {
        FileColumns {
            paths: Vec::new(),
            sizes: Vec::with_capacity(files),
            modified: Vec::with_capacity(files),
            versions: Vec::with_capacity(files),
        }
    }

    pub(crate) fn push(&mut self, path: &str, size: u64, modified_at: f64, version: u64) {
        match self.paths.last_mut() {
            Some(chunk) if chunk.len() + 1 + path.len() <= PATHS_CHUNK_BYTES => {
                chunk.push('\0');
                chunk.push_str(path);
            }
            _ => {
                self.paths.push(path.to_string());
            }
        }
        self.sizes.push(size as f64);
        self.modified.push(modified_at);
        self.versions.push(version as f64);
    }
}

/// A table glob's files in columns, built straight from the table; whether it was truncated.
pub fn glob_columns(t: &FileTable, opts: &GlobOptions) -> CoreResult<(FileColumns, bool)> {
    let mut c = FileColumns::default();
    let truncated = t.glob_each(opts, |p, f| c.push(p, f.data.len() as u64, f.modified_at, f.version))?;
    Ok((c, truncated))
}

/// Grep results in columns, the shape both bindings hand to TypeScript without one object per
/// match: content matches grouped by file (`group_paths[i]` owns the next `group_sizes[i]`
/// entries of `lines`/`texts`; a negative line number is a context line).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GrepColumns {
    pub truncated: bool,
    pub group_paths: Option<Vec<String>>,
    pub group_sizes: Option<Vec<u32>>,
    pub lines: Option<Vec<i32>>,
    pub texts: Option<Vec<String>>,
    pub files: Option<Vec<String>>,
    pub count_paths: Option<Vec<String>>,
    pub counts: Option<Vec<u32>>,
}

/// Splits a [`GrepResult`] into [`GrepColumns`].
pub fn grep_columns(r: GrepResult) -> GrepColumns {
    let mut out = GrepColumns { truncated: r.truncated, files: r.files, ..GrepColumns::default() };
    if let Some(counts) = r.counts {
        let (paths, n): (Vec<String>, Vec<u32>) =
            counts.into_iter().map(|(p, c)| (p, u32::try_from(c).unwrap_or(u32::MAX))).unzip();
        out.count_paths = Some(paths);
        out.counts = Some(n);
    }
    if let Some(matches) = r.matches {
        let (mut paths, mut sizes) = (Vec::<String>::new(), Vec::<u32>::new());
        let mut lines = Vec::with_capacity(matches.len());
        let mut texts = Vec::with_capacity(matches.len());
        for m in matches {
            match (paths.last(), sizes.last_mut()) {
                (Some(p), Some(n)) if *p == m.path => *n += 1,
                _ => {
                    paths.push(m.path);
                    sizes.push(1);
                }
            }
            let line = i32::try_from(m.line).unwrap_or(i32::MAX);
            lines.push(if m.context { -line } else { line });
            texts.push(m.text);
        }
        out.group_paths = Some(paths);
        out.group_sizes = Some(sizes);
        out.lines = Some(lines);
        out.texts = Some(texts);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grep::GrepOptions;

    fn columns_of(files: Vec<FileInfo>) -> FileColumns {
        let mut c = FileColumns::with_capacity(files.len());
        for f in files {
            let version = f.version.as_deref().and_then(|v| v.parse::<u64>().ok());
            c.push(&f.path, f.size.unwrap(), f.modified_at.unwrap(), version.unwrap());
        }
        c
    }

    #[test]
    fn glob_columns_are_the_glob_in_columns() {
        let mut t = FileTable::new();
        for (i, p) in ["/src/b.ts", "/src/a.ts", "/src/é 中.ts", "/README.md"].iter().enumerate() {
            t.write(p, vec![b'x'; i], 7.5, None).unwrap();
        }
        let all = GlobOptions { pattern: "**/*.ts".into(), ..GlobOptions::default() };
        let (c, truncated) = glob_columns(&t, &all).unwrap();
        assert_eq!(c, columns_of(t.glob(&all).unwrap().files));
        assert_eq!(c.paths, ["/src/a.ts\0/src/b.ts\0/src/é 中.ts"]);
        assert_eq!(
            (c.sizes.as_slice(), c.modified.as_slice(), truncated),
            (&[1.0, 0.0, 2.0][..], &[7.5; 3][..], false)
        );
        let capped = GlobOptions { max_results: Some(2), ..all };
        let (c, truncated) = glob_columns(&t, &capped).unwrap();
        assert_eq!((c.paths, truncated), (vec!["/src/a.ts\0/src/b.ts".to_string()], true));
        let none = GlobOptions { pattern: "*.rs".into(), ..GlobOptions::default() };
        assert_eq!(glob_columns(&t, &none).unwrap(), (FileColumns::default(), false));
        let bad = GlobOptions { pattern: "[".into(), ..GlobOptions::default() };
        assert!(glob_columns(&t, &bad).is_err());
    }

    #[test]
    fn file_columns_cut_their_paths_into_chunks_at_path_boundaries() {
        let long = format!("/{}", "d".repeat(PATHS_CHUNK_BYTES + 10));
        let mut paths: Vec<String> = (0..3000).map(|i| format!("/src/dir{i:04}/é-file.ts")).collect();
        paths.insert(1500, long.clone());
        let files: Vec<FileInfo> = paths
            .iter()
            .map(|p| FileInfo {
                path: p.clone(),
                is_dir: false,
                size: Some(1),
                modified_at: Some(2.0),
                version: Some("3".into()),
            })
            .collect();
        let c = columns_of(files);
        assert!(c.paths.len() > 2, "{} chunks", c.paths.len());
        assert!(c.paths.iter().all(|chunk| chunk.len() <= PATHS_CHUNK_BYTES || *chunk == long));
        assert!(c.paths.contains(&long), "a path longer than a chunk has one to itself");
        let rejoined: Vec<&str> = c.paths.iter().flat_map(|chunk| chunk.split('\0')).collect();
        assert_eq!(rejoined, paths);
        assert_eq!(c.sizes.len(), paths.len());
        assert_eq!(columns_of(Vec::new()).paths, Vec::<String>::new());
    }

    #[test]
    fn constructor_errors_are_core_errors() {
        assert_eq!(router_new(&["/a/../../b/".to_string()]).err().unwrap().code, ErrorCode::PathEscape);
        let e = table_from_owned_snapshot(b"not a snapshot".to_vec()).err().unwrap();
        assert!(!e.message.is_empty());
        assert_eq!(normalize_path("/a//b/"), Ok("/a/b".to_string()));
        assert_eq!(normalize_path("/../x").unwrap_err().code, ErrorCode::PathEscape);
    }

    #[test]
    fn error_data_and_filters() {
        assert_eq!(error_data("file_not_found", "/x", "").message, "File not found: '/x'");
        assert_eq!(error_data("nope", "/x", "").code, ErrorCode::Unsupported);
        let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(filter_paths("glob", "**/*.md", "/m", &owned(&["/m/a.md", "/x.md", "/m/b/c.md"])), Ok(vec![0, 2]));
        assert_eq!(filter_paths("grep", "*.md", "/", &owned(&["/a/b.md", "/c.txt"])), Ok(vec![0]));
        assert_eq!(filter_paths("glob", "[", "/", &[]).unwrap_err().code, ErrorCode::InvalidPattern);
        assert_eq!(filter_paths("find", "*", "/", &[]).unwrap_err().code, ErrorCode::Unsupported);
        assert_eq!(filter_paths("glob", "*", "/../x", &[]).unwrap_err().code, ErrorCode::PathEscape);
    }

    #[test]
    fn bm25_scores() {
        let scores = rank_bm25("rust", &["likes rust".to_string(), "likes go".to_string()]);
        assert_eq!(scores.len(), 2);
        assert!(scores[0] > 0.0 && scores[1] == 0.0);
    }

    #[test]
    fn stage_room_grows_keeps_and_refuses_what_cannot_fit() {
        let mut staged = Vec::new();
        assert_eq!(stage_room(&mut staged, 4.0), Ok(()));
        staged.copy_from_slice(b"abcd");
        assert_eq!(stage_room(&mut staged, 6.0), Ok(()));
        assert_eq!(staged, b"abcd\0\0", "grown, what it held kept");
        for bytes in [-1.0, f64::NAN, f64::INFINITY, 2f64.powi(70), isize::MAX as f64 * 2.0] {
            let e = stage_room(&mut staged, bytes).unwrap_err();
            assert_eq!((e.code, e.subject.as_str()), (ErrorCode::TooLarge, "writeMany"), "{bytes}");
            assert_eq!(staged.capacity(), 0, "released");
        }
        // Within the address space but more than an allocator can give.
        assert_eq!(stage_room(&mut staged, 2f64.powi(52)).unwrap_err().code, ErrorCode::TooLarge);
        assert_eq!(stage_room(&mut staged, 0.0), Ok(()));
    }

    #[test]
    fn a_batch_is_one_buffer_its_files_share() {
        let mut t = FileTable::new();
        let data = batch_bytes(b"onetwothree".to_vec(), 11);
        let start = data.as_ptr() as usize;
        assert_eq!(write_many(&mut t, "/a\0/b\0/c", data, &[3, 3, 5], Modified::All(1.0)), Ok(3));
        let at = |p: &str| t.get(p).unwrap().data.as_ptr() as usize - start;
        assert_eq!((at("/a"), at("/b"), at("/c")), (0, 3, 6), "slices of the batch, not copies");
        // Changing one file leaves its neighbours' bytes as they were.
        t.append("/a", b"!", 2.0).unwrap();
        let two = EditOptions {
            path: "/b".into(),
            old_string: "two".into(),
            new_string: "2".into(),
            replace_all: false,
            modified_at: 3.0,
            if_version: None,
        };
        edit(&mut t, &two).unwrap();
        assert_eq!(t.read_bytes("/a").unwrap(), b"one!");
        assert_eq!(t.read_bytes("/b").unwrap(), b"2");
        assert_eq!(t.read_bytes("/c").unwrap(), b"three");
        assert_eq!(t.content_bytes(), 4 + 1 + 5);
        let back = FileTable::from_snapshot(&t.snapshot()).unwrap();
        assert_eq!(back.read_bytes("/c").unwrap(), b"three");
        assert_eq!(back.content_bytes(), t.content_bytes());
        t.delete("/c").unwrap();
        assert_eq!(t.content_bytes(), 5);
    }

    #[test]
    fn room_kept_is_at_most_an_eighth_more() {
        assert!(room_kept(8, 8) && room_kept(9, 8) && room_kept(0, 0));
        assert!(!room_kept(10, 8) && !room_kept(7, 8) && !room_kept(1, 0));
        assert!(room_kept(20 << 20, 19 << 20) && !room_kept(64 << 20, 1 << 20));
    }

    #[test]
    fn batch_bytes_gives_back_spare_room() {
        let mut grown = Vec::with_capacity(1 << 16);
        grown.extend_from_slice(b"abc");
        let kept = batch_bytes(grown, 2);
        assert_eq!(&kept[..], b"ab");
        let exact = batch_bytes(b"abcdefghi".to_vec(), 9);
        assert_eq!(&exact[..], b"abcdefghi");
    }

    #[test]
    fn typed_calls() {
        let mut t = FileTable::new();
        let w = write(&mut t, "/a//b.txt", b"x\n".to_vec(), 1.0, None).unwrap();
        assert_eq!(w.path, "/a/b.txt");
        assert_eq!(append(&mut t, "/a/b.txt", b"hello\n", 2.0).unwrap().version, 2);
        assert_eq!(
            write_many(&mut t, "/c.txt\0/d/e.txt", Bytes::from_static(b"onetwo"), &[3, 3], Modified::All(3.0)),
            Ok(2)
        );
        assert_eq!(t.read_bytes("/d/e.txt").unwrap(), b"two");
        assert_eq!(write_many(&mut t, "", Bytes::from_static(b""), &[], Modified::All(3.0)), Ok(0));
        assert_eq!(
            write_many(&mut t, "/x", Bytes::from_static(b"ab"), &[1], Modified::All(3.0)).unwrap_err().code,
            ErrorCode::Unsupported
        );
        let (size, changes) = (t.len(), t.changes());
        assert_eq!(
            write_many(&mut t, "/y\0/../z", Bytes::from_static(b"ab"), &[1, 1], Modified::All(3.0)).unwrap_err().code,
            ErrorCode::PathEscape
        );
        assert!(t.get("/y").is_none(), "all or nothing");
        assert_eq!((t.len(), t.changes()), (size, changes));
        assert_eq!(
            write_many(&mut t, "", Bytes::from_static(b""), &[0], Modified::All(3.0)).unwrap_err().code,
            ErrorCode::InvalidPath
        );
        assert_eq!(write_many(&mut t, "/y\0/y", Bytes::from_static(b"ab"), &[1, 1], Modified::All(3.0)), Ok(2));
        assert_eq!(t.read_bytes("/y").unwrap(), b"b", "a path given twice keeps its last content");
        let each = Modified::Each(&[5.0, 6.5]);
        assert_eq!(
            write_many_files(&mut t, "/m1\0/m2", vec![Bytes::from_static(b"1"), Bytes::from_static(b"2")], each),
            Ok(2)
        );
        assert_eq!((t.get("/m1").unwrap().modified_at, t.get("/m2").unwrap().modified_at), (5.0, 6.5));
        let short = Modified::Each(&[5.0]);
        let e = write_many(&mut t, "/m3\0/m4", Bytes::from_static(b"34"), &[1, 1], short).unwrap_err();
        assert_eq!((e.code, t.get("/m3").is_none()), (ErrorCode::Unsupported, true));
        let before = t.changes();
        assert!(t.read("/y", 0, None).is_ok() && t.changes() == before);
        t.delete("/y").unwrap();
        assert_eq!(t.changes(), before + 1);
        assert!(t.delete("/nope").is_err() && t.changes() == before + 1);
        let g = grep_columns(t.grep(&GrepOptions { pattern: "e".into(), context: 1, ..Default::default() }).unwrap());
        assert_eq!(g.group_paths, Some(vec!["/a/b.txt".to_string(), "/c.txt".to_string()]));
        assert_eq!(g.group_sizes, Some(vec![2, 1]));
        assert_eq!(g.lines, Some(vec![-1, 2, 1]));
        let c = grep_columns(
            t.grep(&GrepOptions {
                pattern: "o".into(),
                output_mode: crate::grep::OutputMode::Count,
                ..Default::default()
            })
            .unwrap(),
        );
        assert_eq!((c.count_paths.map(|p| p.len()), c.counts), (Some(3), Some(vec![1, 1, 1])));
    }

    #[test]
    fn router_round_trip() {
        let r = router_new(&["/memories".to_string()]).unwrap();
        assert_eq!(r.route("/memories/x").unwrap().route, Some(0));
        assert_eq!(r.prefixes(), ["/memories/"]);
        assert_eq!(router_new(&["/ok".to_string(), "/../x".to_string()]).unwrap_err().code, ErrorCode::PathEscape);
    }
}
