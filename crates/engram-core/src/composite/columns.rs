//! Fan-out answers as the bindings pass them (flat columns for all parts, paths in one
//! NUL-joined string), split into parts and merged.

use super::errors::malformed;
use super::merge::{merge_glob, merge_grep, GlobPart, GrepMerge, GrepPart, Merged};
use crate::error::CoreResult;
use crate::grep::OutputMode;
use crate::router::Router;

/// Fan-out answers as the bindings pass them: flat columns for all parts at once.
#[derive(Debug, Clone, Copy)]
pub struct PartColumns<'a> {
    /// Per part: its route index, or a negative number for the default backend.
    pub mounts: &'a [i32],
    /// Per part: non-zero when the backend cut its answer.
    pub truncated: &'a [u8],
    /// Per part: how many of `paths` are its own (parts in order).
    pub counts: &'a [u32],
    /// grep: per path, lines in its group (`content`) or its count (`count`); empty otherwise.
    pub sizes: &'a [u32],
    /// grep `content`: per line, non-zero for a context line; empty otherwise.
    pub context: &'a [u8],
}

/// The paths of all parts as the bindings pass them: one string, each path followed by a NUL
/// (no path may hold a NUL: a backend that returns one gets a `malformed` error, as the counts
/// no longer add up). One string crosses the boundary instead of one per path.
pub fn split_paths(joined: &str) -> Vec<String> {
    joined.split_terminator('\0').map(str::to_string).collect()
}

/// Splits [`PartColumns`] (with all parts' `paths`) into parts; `each` builds one part from
/// its mount, truncation, paths and range of `sizes`.
fn split_parts<T>(
    c: &PartColumns,
    paths: Vec<String>,
    mut each: impl FnMut(Option<usize>, bool, Vec<String>, std::ops::Range<usize>) -> CoreResult<T>,
) -> CoreResult<Vec<T>> {
    let n = c.mounts.len();
    if c.truncated.len() != n || c.counts.len() != n {
        return Err(malformed("parts (one mount, truncation and count per part)"));
    }
    if c.counts.iter().map(|&k| k as usize).sum::<usize>() != paths.len() {
        return Err(malformed("parts (path counts do not add up)"));
    }
    let mut rest = paths.into_iter();
    let mut start = 0usize;
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let k = c.counts[i] as usize;
        let own: Vec<String> = rest.by_ref().take(k).collect();
        let mount = usize::try_from(c.mounts[i]).ok();
        out.push(each(mount, c.truncated[i] != 0, own, start..start + k)?);
        start += k;
    }
    Ok(out)
}

/// [`merge_grep`] over flat columns (`paths` holds every part's paths in order).
pub fn merge_grep_columns(router: &Router, c: &PartColumns, paths: Vec<String>, o: &GrepMerge) -> CoreResult<Merged> {
    let sized = o.mode != OutputMode::FilesWithMatches;
    if sized && c.sizes.len() != paths.len() {
        return Err(malformed("grep parts (one size per path)"));
    }
    let mut line = 0usize;
    let parts = split_parts(c, paths, |mount, truncated, paths, range| {
        let sizes = if sized { c.sizes[range].to_vec() } else { Vec::new() };
        let context = if o.mode == OutputMode::Content {
            let n: usize = sizes.iter().map(|&s| s as usize).sum();
            let flags = c.context.get(line..line + n).ok_or_else(|| malformed("grep parts (context flags)"))?;
            line += n;
            flags.iter().map(|&f| f != 0).collect()
        } else {
            Vec::new()
        };
        Ok(GrepPart { mount, truncated, paths, sizes, context })
    })?;
    if o.mode == OutputMode::Content && line != c.context.len() {
        return Err(malformed("grep parts (context flags)"));
    }
    merge_grep(router, &parts, o)
}

/// [`merge_glob`] over flat columns (`sizes` and `context` unused).
pub fn merge_glob_columns(
    router: &Router,
    c: &PartColumns,
    paths: Vec<String>,
    pattern: Option<&str>,
    root: &str,
    max_results: Option<usize>,
) -> CoreResult<Merged> {
    let parts = split_parts(c, paths, |mount, truncated, paths, _| {
        Ok(GlobPart { mount, truncated, paths: paths.iter().map(String::as_str).collect() })
    })?;
    merge_glob(router, &parts, pattern, root, max_results)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::composite::fixtures::router;
    use crate::error::ErrorCode;

    #[test]
    fn columns_split_into_parts() {
        let cols = PartColumns {
            mounts: &[-1, 0],
            truncated: &[0, 1],
            counts: &[1, 2],
            sizes: &[2, 1, 1],
            context: &[0, 1, 0, 0],
        };
        let paths = || split_paths("/z\0/b\0/a\0");
        let o = GrepMerge { mode: OutputMode::Content, max_count: None, path_glob: None, root: "/" };
        let r = merge_grep_columns(&router(), &cols, paths(), &o).unwrap();
        assert_eq!(r.paths, ["/memories/a", "/memories/b", "/z"]);
        assert_eq!((r.picks, r.truncated), (vec![3, 2, 0, 1], true));
        let short = PartColumns { context: &[0, 1, 0], ..cols };
        assert_eq!(merge_grep_columns(&router(), &short, paths(), &o).unwrap_err().code, ErrorCode::Unsupported);
        let miscounted = PartColumns { counts: &[1, 1], ..cols };
        assert!(merge_grep_columns(&router(), &miscounted, paths(), &o).is_err());
        // A path holding a NUL splits in two: the counts no longer add up.
        assert!(merge_grep_columns(&router(), &cols, split_paths("/z\0/b\0/a\0/x\0y\0"), &o).is_err());
        assert!(split_paths("").is_empty());
        let g = merge_glob_columns(&router(), &cols, paths(), None, "/", None).unwrap();
        assert_eq!((g.renamed, g.picks), (vec!["/memories/a".into(), "/memories/b".into()], vec![2, 1, 0]));
    }
}
