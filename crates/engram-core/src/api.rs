//! What both bindings call beyond the rule modules: the typed calls they marshal field by field
//! (a write's new version as a number), the column shapes they hand over (files, grep results)
//! without an object per item, and the buffers a batch's files share. What only JavaScript
//! needs (NUL-joined batches, the JavaScript call a batch error names, filter kinds as
//! strings) is in `engram-abi`.

use crate::error::{CoreError, CoreResult, ErrorCode};
use crate::grep::GrepResult;
use crate::ops::{EditOptions, GlobOptions};
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

/// A table rebuilt from [`FileTable::snapshot`] bytes the table may keep (a binding that
/// received its own copy): the files point into them rather than into a second copy.
pub fn table_from_owned_snapshot(bytes: impl Into<Bytes>) -> CoreResult<FileTable> {
    FileTable::from_snapshot_bytes(bytes.into())
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
    fn constructor_errors_are_core_errors() {
        let e = table_from_owned_snapshot(b"not a snapshot".to_vec()).err().unwrap();
        assert!(!e.message.is_empty());
        assert_eq!(error_data("file_not_found", "/x", "").message, "File not found: '/x'");
        assert_eq!(error_data("nope", "/x", "").code, ErrorCode::Unsupported);
    }

    #[test]
    fn typed_calls() {
        let mut t = FileTable::new();
        let w = write(&mut t, "/a//b.txt", b"x\n".to_vec(), 1.0, None).unwrap();
        assert_eq!(w.path, "/a/b.txt");
        assert_eq!(append(&mut t, "/a/b.txt", b"hello\n", 2.0).unwrap().version, 2);
        write(&mut t, "/c.txt", b"one".to_vec(), 3.0, None).unwrap();
        write(&mut t, "/d/e.txt", b"two".to_vec(), 3.0, None).unwrap();
        let (info, version) = stat(&t, "/c.txt").unwrap();
        assert_eq!((info.size, version), (Some(3), Some(3)));
        assert_eq!(stat(&t, "/d").unwrap().1, None, "a directory has no version");
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
}
