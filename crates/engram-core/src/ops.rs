//! The backend operations over a [`FileTable`]: read, edit, grep and glob.

use crate::edit;
use crate::error::{CoreError, CoreResult, ErrorCode};
use crate::glob::Glob;
use crate::grep::{self, GrepOptions, GrepResult};
use crate::path;
use crate::read::{self, ReadResult};
use crate::table::{FileEntry, FileInfo, FileTable};
use serde::{Deserialize, Serialize};

/// Most lines one read returns, also when no limit is given (the tool's default is 100).
pub const MAX_READ_LINES: usize = 100_000;
/// Most bytes of content one read returns; more is `too_large` (read fewer lines).
pub const MAX_READ_BYTES: usize = 10 << 20;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct EditOptions {
    pub path: String,
    pub old_string: String,
    pub new_string: String,
    pub replace_all: bool,
    pub modified_at: f64,
    pub if_version: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EditResult {
    pub path: String,
    pub occurrences: usize,
    pub version: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct GlobOptions {
    pub pattern: String,
    pub path: Option<String>,
    pub max_results: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GlobResult {
    pub files: Vec<FileInfo>,
    pub truncated: bool,
}

impl FileTable {
    fn file_bytes(&self, input: &str) -> CoreResult<(String, &[u8])> {
        let p = path::normalize(input)?;
        match self.get(&p) {
            Some(f) => Ok((p, &f.data[..])),
            None if self.is_dir(&p) => Err(CoreError::of(ErrorCode::IsDirectory, &p)),
            None => Err(CoreError::of(ErrorCode::FileNotFound, &p)),
        }
    }

    /// The whole content of a file.
    pub fn read_bytes(&self, input: &str) -> CoreResult<&[u8]> {
        self.file_bytes(input).map(|(_, d)| d)
    }

    /// Lines `offset .. offset + limit` of a file: at most [`MAX_READ_LINES`] lines (also when
    /// `limit` is absent) and `too_large` when they would exceed [`MAX_READ_BYTES`].
    pub fn read(&self, input: &str, offset: usize, limit: Option<usize>) -> CoreResult<ReadResult> {
        let (p, data) = self.file_bytes(input)?;
        let limit = limit.unwrap_or(MAX_READ_LINES).min(MAX_READ_LINES);
        let r = read::read_lines(data, offset, Some(limit));
        if r.content.len() > MAX_READ_BYTES {
            return Err(CoreError::new(
                ErrorCode::TooLarge,
                &p,
                format_args!("{} bytes in {} lines; read fewer lines at a time", r.content.len(), r.lines),
            ));
        }
        Ok(r)
    }

    pub fn edit(&mut self, opts: &EditOptions) -> CoreResult<EditResult> {
        let (p, data) = self.file_bytes(&opts.path)?;
        let (updated, occurrences) = edit::edit(&p, data, &opts.old_string, &opts.new_string, opts.replace_all)?;
        let version = self.replace(&p, updated, opts.modified_at, opts.if_version.as_deref())?;
        Ok(EditResult { path: p, occurrences, version: version.to_string() })
    }

    pub fn grep(&self, opts: &GrepOptions) -> CoreResult<GrepResult> {
        let root = self.search_root(opts)?;
        let files = self.files_under(&root).map(|(k, f)| (k, &f.data[..]));
        grep::grep(files, &root, opts)
    }

    /// The normalised directory (or file) a grep searches, which must exist.
    pub(crate) fn search_root(&self, opts: &GrepOptions) -> CoreResult<String> {
        let root = path::normalize(opts.path.as_deref().unwrap_or("/"))?;
        if self.get(&root).is_none() && !self.is_dir(&root) {
            return Err(CoreError::of(ErrorCode::FileNotFound, &root));
        }
        Ok(root)
    }

    /// Files matching a glob, sorted by path. A missing search directory matches nothing.
    pub fn glob(&self, opts: &GlobOptions) -> CoreResult<GlobResult> {
        let mut files = Vec::new();
        let truncated = self.glob_each(opts, |p, f| files.push(crate::table::file_info(p, f)))?;
        Ok(GlobResult { files, truncated })
    }

    /// Visits the files [`FileTable::glob`] returns, in order, without building them; whether
    /// more matched than `max_results`.
    pub fn glob_each<'a>(
        &'a self,
        opts: &GlobOptions,
        mut visit: impl FnMut(&'a str, &'a FileEntry),
    ) -> CoreResult<bool> {
        let root = path::normalize(opts.path.as_deref().unwrap_or("/"))?;
        let glob = Glob::new(&opts.pattern, &root)?;
        let mut left = opts.max_results.unwrap_or(usize::MAX);
        let mut each = |p: &'a str, f: &'a FileEntry| {
            if !glob.is_match(p, &root) {
                return true;
            }
            if left == 0 {
                return false;
            }
            left -= 1;
            visit(p, f);
            true
        };
        // A glob that may match anywhere reads every path: from the index, where they lie
        // side by side (built for it unless the glob may stop early).
        let indexed = if glob.base() == "/" { self.iter_indexed(opts.max_results.is_none()) } else { None };
        let stopped = match indexed {
            Some(mut files) => !files.all(|(p, f)| each(p, f)),
            None => !self.files_under(glob.base()).all(|(p, f)| each(p, f)),
        };
        Ok(stopped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> FileTable {
        let mut t = FileTable::new();
        for (p, c) in [("/src/a.ts", "export const a = 1;\n"), ("/src/lib/b.ts", "a\nb\n"), ("/README.md", "# hi\n")] {
            t.write(p, c.as_bytes().to_vec(), 5.0, None).unwrap();
        }
        t
    }

    #[test]
    fn read_errors_for_directories_and_missing_files() {
        let t = table();
        assert_eq!(t.read("/src", 0, None).unwrap_err().code, ErrorCode::IsDirectory);
        assert_eq!(t.read("/nope", 0, None).unwrap_err().code, ErrorCode::FileNotFound);
        assert_eq!(t.read("/src/../README.md", 0, Some(1)).unwrap().content, "# hi");
    }

    #[test]
    fn edit_writes_back_and_bumps_version() {
        let mut t = table();
        let before = t.stat("/src/lib/b.ts").unwrap().version.unwrap();
        let opts = EditOptions {
            path: "/src/lib/b.ts".into(),
            old_string: "b".into(),
            new_string: "c".into(),
            modified_at: 9.0,
            ..Default::default()
        };
        let r = t.edit(&opts).unwrap();
        assert_eq!(r.occurrences, 1);
        assert_ne!(r.version, before);
        assert_eq!(t.read_bytes("/src/lib/b.ts").unwrap(), b"a\nc\n");
        let stale = EditOptions { if_version: Some(before), ..opts };
        assert_eq!(t.edit(&stale).unwrap_err().code, ErrorCode::StringNotFound);
    }

    #[test]
    fn reads_are_bounded_in_lines_and_bytes() {
        let mut t = FileTable::new();
        t.write("/many", "x\n".repeat(MAX_READ_LINES + 5).into_bytes(), 0.0, None).unwrap();
        let r = t.read("/many", 0, None).unwrap();
        assert_eq!((r.lines, r.total_lines), (MAX_READ_LINES, MAX_READ_LINES + 5));
        assert_eq!(t.read("/many", 0, Some(usize::MAX)).unwrap().lines, MAX_READ_LINES);
        t.write("/wide", vec![b'a'; MAX_READ_BYTES + 1], 0.0, None).unwrap();
        assert_eq!(t.read("/wide", 0, None).unwrap_err().code, ErrorCode::TooLarge);
        assert_eq!(t.read("/wide", 1, None).unwrap().lines, 0);
    }

    #[test]
    fn glob_sorted_and_scoped() {
        let t = table();
        let all = t.glob(&GlobOptions { pattern: "**/*.ts".into(), ..Default::default() }).unwrap();
        let paths: Vec<&str> = all.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, vec!["/src/a.ts", "/src/lib/b.ts"]);
        let scoped = t
            .glob(&GlobOptions { pattern: "*.ts".into(), path: Some("/src/lib".into()), ..Default::default() })
            .unwrap();
        assert_eq!(scoped.files.len(), 1);
        let capped = t.glob(&GlobOptions { pattern: "**".into(), max_results: Some(2), ..Default::default() }).unwrap();
        assert_eq!((capped.files.len(), capped.truncated), (2, true));
        let none =
            t.glob(&GlobOptions { pattern: "*".into(), path: Some("/missing".into()), ..Default::default() }).unwrap();
        assert!(none.files.is_empty());
    }

    #[test]
    fn grep_scope_must_exist() {
        let t = table();
        let opts = GrepOptions { pattern: "a".into(), path: Some("/nope".into()), ..Default::default() };
        assert_eq!(t.grep(&opts).unwrap_err().code, ErrorCode::FileNotFound);
        let one_file = GrepOptions { pattern: "a".into(), path: Some("/src/lib/b.ts".into()), ..Default::default() };
        assert_eq!(t.grep(&one_file).unwrap().matches.unwrap().len(), 1);
    }

    /// What the table holds changes between globs in every way a path can come or go (a glob
    /// reads paths from an index built by the first scan after such a change): each glob must
    /// answer as a plain walk of the table does.
    mod globs_follow_every_change {
        use super::*;
        use crate::glob::Glob;
        use bytes::Bytes;
        use proptest::prelude::*;

        const PATHS: &[&str] = &["/a.ts", "/a/b.ts", "/a/c.md", "/a/d/e.ts", "/b.md", "/b/x.ts", "/z.ts"];
        const GLOBS: &[(&str, &str)] = &[("**/*.ts", "/"), ("*", "/"), ("**", "/"), ("a/**", "/"), ("*.ts", "/a")];

        #[derive(Debug, Clone)]
        enum Op {
            Write(usize, usize),
            Append(usize),
            Delete(usize),
            DeleteDir(&'static str),
            Batch(Vec<usize>),
            Clear,
            Reload,
        }

        fn op() -> impl Strategy<Value = Op> {
            let path = 0..PATHS.len();
            prop_oneof![
                4 => (path.clone(), 0usize..40).prop_map(|(p, n)| Op::Write(p, n)),
                1 => path.clone().prop_map(Op::Append),
                3 => path.clone().prop_map(Op::Delete),
                1 => prop::sample::select(&["/a", "/a/d", "/b"][..]).prop_map(Op::DeleteDir),
                2 => prop::collection::vec(path, 0..4).prop_map(Op::Batch),
                1 => Just(Op::Clear),
                1 => Just(Op::Reload),
            ]
        }

        fn apply(t: &mut FileTable, op: &Op, now: f64) {
            // A write the table refuses (a file where a directory is) changes nothing.
            let _ = match op {
                Op::Write(p, n) => t.write(PATHS[*p], vec![b'x'; *n], now, None).map(drop),
                Op::Append(p) => t.append(PATHS[*p], b"+", now).map(drop),
                Op::Delete(p) => t.delete(PATHS[*p]).map(drop),
                Op::DeleteDir(d) => t.delete(d).map(drop),
                Op::Batch(ps) => {
                    t.write_all(ps.iter().map(|&p| (PATHS[p], Bytes::from_static(b"batch"), now))).map(drop)
                }
                Op::Clear => {
                    t.clear();
                    Ok(())
                }
                Op::Reload => FileTable::from_snapshot(&t.snapshot()).map(|restored| *t = restored),
            };
        }

        /// The glob as a walk over every file, without the index.
        fn walked(t: &FileTable, pattern: &str, root: &str) -> Vec<(String, usize, u64)> {
            let glob = Glob::new(pattern, root).unwrap();
            t.iter()
                .filter(|(p, _)| glob.is_match(p, root))
                .map(|(p, f)| (p.clone(), f.data.len(), f.version))
                .collect()
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(256))]
            #[test]
            fn as_a_walk_of_the_table(ops in prop::collection::vec(op(), 1..24), cap in 0usize..3, capped_first: bool) {
                let mut t = FileTable::new();
                // A capped glob reads the index only once an uncapped one has built it.
                let caps = if capped_first { [Some(cap), None] } else { [None, Some(cap)] };
                for (i, op) in ops.iter().enumerate() {
                    apply(&mut t, op, i as f64);
                    for (&(pattern, root), cap) in GLOBS.iter().flat_map(|g| caps.iter().map(move |&c| (g, c))) {
                        let want = walked(&t, pattern, root);
                        let opts = GlobOptions { pattern: pattern.into(), path: Some(root.into()), max_results: cap };
                        let mut got = Vec::new();
                        let truncated = t.glob_each(&opts, |p, f| got.push((p.to_string(), f.data.len(), f.version))).unwrap();
                        let shown = cap.map_or(want.len(), |c| c.min(want.len()));
                        prop_assert_eq!(&got[..], &want[..shown], "{} from {} after {:?}", pattern, root, &ops[..=i]);
                        prop_assert_eq!(truncated, shown < want.len());
                        let text = t.glob_text(&opts, usize::MAX).unwrap();
                        prop_assert!(want[..shown].iter().all(|(p, _, _)| text.contains(p.as_str())), "{}", text);
                    }
                }
            }
        }
    }
}
