//! One file searched on its own: its matching lines (with merged context lines) or its count,
//! so that files can be searched in any order, or on any thread, and merged in path order.

use super::line_filter::Sieve;
use super::matcher::Matcher;
use super::options::{GrepMatch, GrepOptions, OutputMode, MAX_CONTEXT};
use crate::error::CoreResult;
use crate::glob::PathFilter;
use crate::text::{is_binary, lossy_line};

/// What one file contributed to a search.
#[derive(Debug, Clone, PartialEq)]
pub struct FileHits {
    pub path: String,
    /// Matching lines (plus context lines) in `content` mode; empty otherwise.
    pub lines: Vec<GrepMatch>,
    /// Matching lines found (at most the limit given to [`Searcher::search`]).
    pub count: usize,
}

/// A compiled search, reusable across files and threads: each file is searched on its own and
/// a [`Collector`](super::Collector) merges the results in path order, so sequential (in-memory) and parallel
/// (filesystem) searches give identical answers.
pub struct Searcher {
    matcher: Matcher,
    filter: Option<PathFilter>,
    root: String,
    mode: OutputMode,
    context: usize,
}

impl Searcher {
    /// `root` is the normalised directory (or file) the search is scoped to.
    pub fn new(opts: &GrepOptions, root: &str) -> CoreResult<Searcher> {
        Ok(Searcher {
            matcher: Matcher::new(&opts.pattern, opts.regex, opts.ignore_case)?,
            filter: opts.glob.as_deref().map(PathFilter::new).transpose()?,
            root: root.to_string(),
            mode: opts.output_mode,
            context: opts.context.min(MAX_CONTEXT),
        })
    }

    /// What every match holds, when the matcher knows it (see [`Matcher`]'s sieve).
    pub(super) fn sieve(&self) -> Option<Sieve<'_>> {
        self.matcher.sieve()
    }

    /// Whether the `glob` filter admits this normalised path.
    pub fn wants(&self, p: &str) -> bool {
        self.filter.as_ref().is_none_or(|f| f.admits(p, &self.root))
    }

    /// The same search with its regex fallback work bounded (see [`Matcher::bounded`]): for
    /// searches that run on the caller's thread.
    pub fn bounded(mut self) -> Searcher {
        self.matcher = self.matcher.bounded();
        self
    }

    /// Searches one file, collecting at most `limit` matching lines. `None` for a binary file
    /// or one without matches. An unbounded searcher never fails; use [`Searcher::try_search`]
    /// with a bounded one.
    pub fn search(&self, p: &str, data: &[u8], limit: usize) -> Option<FileHits> {
        self.try_search(p, data, limit).unwrap_or(None)
    }

    /// [`Searcher::search`], failing with `pattern_too_expensive` when a bounded regex runs out
    /// of fallback work.
    pub fn try_search(&self, p: &str, data: &[u8], limit: usize) -> CoreResult<Option<FileHits>> {
        if limit == 0 {
            return Ok(None);
        }
        let limit = if self.mode == OutputMode::FilesWithMatches { 1 } else { limit };
        let mut ranges: Vec<(usize, usize)> = Vec::new();
        let mut count = 0usize;
        let keep_ranges = self.mode == OutputMode::Content;
        self.matcher.for_each_matching_line(data, |s, e| {
            count += 1;
            if keep_ranges {
                ranges.push((s, e));
            }
            count < limit
        })?;
        // Checked only once something matched: most files in a search have no match, and the
        // probe would otherwise read their first 8 KiB a second time.
        if count == 0 || is_binary(data) {
            return Ok(None);
        }
        let mut lines = Vec::new();
        emit_lines(p, data, &ranges, self.context, &mut lines);
        Ok(Some(FileHits { path: p.to_string(), lines, count }))
    }
}

/// Turns matching line ranges into numbered lines, adding merged context around them.
fn emit_lines(p: &str, data: &[u8], hits: &[(usize, usize)], context: usize, out: &mut Vec<GrepMatch>) {
    if hits.is_empty() {
        return;
    }
    if context == 0 {
        let mut line = 1usize;
        let mut counted_to = 0usize;
        for &(s, e) in hits {
            line += memchr::memchr_iter(b'\n', &data[counted_to..s]).count();
            counted_to = s;
            out.push(GrepMatch { path: p.to_string(), line, text: lossy_line(&data[s..e]), context: false });
        }
        return;
    }
    let starts = crate::text::line_starts(data);
    let mut hit_lines: Vec<usize> = hits.iter().map(|&(s, _)| starts.partition_point(|&x| x <= s) - 1).collect();
    hit_lines.dedup();
    let mut next_unemitted = 0usize;
    for &h in &hit_lines {
        let from = h.saturating_sub(context).max(next_unemitted);
        let to = (h + context).min(starts.len() - 1);
        for i in from..=to {
            let is_hit = hit_lines.binary_search(&i).is_ok();
            let (s, e) = crate::text::nth_line(data, &starts, i);
            out.push(GrepMatch { path: p.to_string(), line: i + 1, text: lossy_line(&data[s..e]), context: !is_hit });
        }
        next_unemitted = to + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grep::fixtures::{lines, lit, run};
    use crate::grep::grep;

    #[test]
    fn context_lines_are_merged_and_marked() {
        let text = "1\n2\nhit\n4\nhit\n6\n7\n8\nhit";
        let r = run(&[("/a", text)], GrepOptions { context: 1, ..lit("hit") }).unwrap();
        let got: Vec<(usize, bool)> = lines(&r).into_iter().map(|l| (l.1, l.3)).collect();
        assert_eq!(got, vec![(2, true), (3, false), (4, true), (5, false), (6, true), (8, true), (9, false)]);
    }

    #[test]
    fn binary_skipped_invalid_utf8_searched() {
        let owned =
            [("/bin".to_string(), b"foo\0bar foo".to_vec()), ("/latin1".to_string(), b"caf\xe9 foo\n".to_vec())];
        let r = grep(owned.iter().map(|(p, d)| (p, d.as_slice())), "/", &lit("foo")).unwrap();
        assert_eq!(lines(&r), vec![("/latin1".into(), 1, "caf\u{FFFD} foo".into(), false)]);
    }

    #[test]
    fn glob_filter_matches_basename_or_relative_path() {
        let files = [("/src/a.ts", "x"), ("/src/b.js", "x"), ("/src/deep/c.ts", "x")];
        let by_name = run(&files, GrepOptions { glob: Some("*.ts".into()), ..lit("x") }).unwrap();
        assert_eq!(lines(&by_name).len(), 2);
        let by_path = run(&files, GrepOptions { glob: Some("src/*.ts".into()), ..lit("x") }).unwrap();
        assert_eq!(lines(&by_path).len(), 1);
    }
}
