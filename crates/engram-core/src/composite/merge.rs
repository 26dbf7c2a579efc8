//! Grep and glob answers of a composite's backends merged as if one tree had been searched:
//! mount paths prefixed, shadowed paths dropped, path order, one ceiling, output modes.

use super::errors::malformed;
use super::routing::{mount_prefix, outer_path};
use crate::error::CoreResult;
use crate::glob::{Glob, PathFilter};
use crate::grep::{OutputMode, MAX_COUNT};
use crate::path_index::JoinedPaths;
use crate::router::Router;
use std::borrow::Cow;
use std::cmp::Ordering;

/// One backend's grep answer in a fan-out, in columns (the order the backend answered).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GrepPart {
    /// The route (index in construction order) whose inner paths these are, or `None` for the
    /// default backend, whose paths are outer already and dropped where a route hides them.
    pub mount: Option<usize>,
    pub truncated: bool,
    /// `content`: the path of each group of lines; `files_with_matches`: the files; `count`:
    /// the counted files.
    pub paths: Vec<String>,
    /// `content`: lines per group; `count`: the count of each path; otherwise unused.
    pub sizes: Vec<u32>,
    /// `content`: per line, whether it is a context line (lines of all groups in order).
    pub context: Vec<bool>,
}

/// How fan-out grep answers are merged.
#[derive(Debug, Clone, Copy)]
pub struct GrepMerge<'a> {
    pub mode: OutputMode,
    /// One cap over the merged answer: matching lines (`content`, context lines not counted) or
    /// files, at most [`MAX_COUNT`] as in one search. `None`: [`MAX_COUNT`].
    pub max_count: Option<usize>,
    /// A grep `glob` with `/` (relative to `root`, the search directory): the mounts were
    /// searched without it (and without the cap, whose first matches could all be in files the
    /// glob drops), so their files are filtered here on their outer paths.
    pub path_glob: Option<&'a str>,
    pub root: &'a str,
}

/// A merged answer (grep, glob or a listing), in columns: what was kept, in path order, under
/// one cap. The caller keeps its own objects (lines, file metadata) and gets back only indices
/// into them and the paths it cannot know.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Merged {
    pub truncated: bool,
    /// grep: the outer paths of each group (`content`), the files, or the counted files.
    pub paths: Vec<String>,
    /// grep `content`: lines per group; `count`: the counts; otherwise empty.
    pub sizes: Vec<u32>,
    /// Each kept line (grep `content`) or entry (glob, listing) as its index among all parts'
    /// lines or paths, parts in order; [`MOUNT_POINT`](super::MOUNT_POINT) for a directory a route adds to a listing.
    pub picks: Vec<u32>,
    /// glob and listings: the outer path of each kept entry that came from a mount or was added,
    /// in the order of `picks` (the default backend's paths are unchanged: they do not cross
    /// back).
    pub renamed: Vec<String>,
}

/// A path of a part seen from outside, or `None` when it is not shown (shadowed, filtered).
struct Outer<'a> {
    router: &'a Router,
    filter: Option<PathFilter>,
    root: &'a str,
}

impl Outer<'_> {
    fn of(&self, mount: Option<&str>, p: &str) -> Option<String> {
        match mount {
            None => (!self.router.shadows(p)).then(|| p.to_string()),
            Some(prefix) => {
                let outer = outer_path(prefix, p);
                match &self.filter {
                    Some(f) if !f.admits(&outer, self.root) => None,
                    _ => Some(outer),
                }
            }
        }
    }
}

fn by_path<T>(a: &(String, T), b: &(String, T)) -> Ordering {
    a.0.cmp(&b.0)
}

/// Merges the grep answers of a composite's default backend and mounts as if one tree had been
/// searched: mount paths prefixed, paths a route hides dropped from the default backend's
/// answer, a path `glob` applied to the mounts, everything in path order (lines of one file in
/// their order), one `max_count` over the whole, `truncated` when any part or the cap cut.
pub fn merge_grep(router: &Router, parts: &[GrepPart], o: &GrepMerge) -> CoreResult<Merged> {
    let filter = match o.path_glob {
        Some(g) if parts.iter().any(|p| p.mount.is_some()) => Some(PathFilter::new(g)?),
        _ => None,
    };
    let outer = Outer { router, filter, root: o.root };
    // As one tree's search: never more than the core's ceiling.
    let cap = o.max_count.unwrap_or(MAX_COUNT).min(MAX_COUNT);
    let mut truncated = parts.iter().any(|p| p.truncated);
    let mut out = Merged::default();
    match o.mode {
        OutputMode::Content => {
            // (outer path, (first line index, lines)) per group.
            let mut groups: Vec<(String, (usize, usize))> = Vec::new();
            let mut first = 0usize;
            for part in parts {
                if part.sizes.len() != part.paths.len() {
                    return Err(malformed("grep part (one size per group)"));
                }
                let lines: usize = part.sizes.iter().map(|&n| n as usize).sum();
                if lines != part.context.len() {
                    return Err(malformed("grep part (one context flag per line)"));
                }
                let mount = part.mount.map(|m| mount_prefix(router, m)).transpose()?;
                for (p, &n) in part.paths.iter().zip(&part.sizes) {
                    if let Some(path) = outer.of(mount, p) {
                        groups.push((path, (first, n as usize)));
                    }
                    first += n as usize;
                }
            }
            let context: Vec<bool> = parts.iter().flat_map(|p| p.context.iter().copied()).collect();
            // Stable: groups of one path keep their order, and so do their lines.
            groups.sort_by(by_path);
            let mut taken = 0usize;
            'groups: for (path, (start, n)) in groups {
                let mut kept = 0u32;
                for (line, &is_context) in context.iter().enumerate().skip(start).take(n) {
                    if !is_context {
                        if taken == cap {
                            truncated = true;
                            if kept > 0 {
                                push_group(&mut out, path, kept);
                            }
                            break 'groups;
                        }
                        taken += 1;
                    }
                    out.picks.push(u32::try_from(line).map_err(|_| malformed("grep part (too many lines)"))?);
                    kept += 1;
                }
                if kept > 0 {
                    push_group(&mut out, path, kept);
                }
            }
        }
        OutputMode::FilesWithMatches => {
            let mut files: Vec<(String, ())> = Vec::new();
            for part in parts {
                let mount = part.mount.map(|m| mount_prefix(router, m)).transpose()?;
                files.extend(part.paths.iter().filter_map(|p| outer.of(mount, p)).map(|p| (p, ())));
            }
            files.sort_by(by_path);
            truncated |= files.len() > cap;
            out.paths = files.into_iter().take(cap).map(|(p, ())| p).collect();
        }
        OutputMode::Count => {
            let mut counts: Vec<(String, u32)> = Vec::new();
            for part in parts {
                if part.sizes.len() != part.paths.len() {
                    return Err(malformed("grep part (one count per path)"));
                }
                let mount = part.mount.map(|m| mount_prefix(router, m)).transpose()?;
                for (p, &n) in part.paths.iter().zip(&part.sizes) {
                    if let Some(path) = outer.of(mount, p) {
                        counts.push((path, n));
                    }
                }
            }
            counts.sort_by(by_path);
            truncated |= counts.len() > cap;
            (out.paths, out.sizes) = counts.into_iter().take(cap).unzip();
        }
    }
    out.truncated = truncated;
    Ok(out)
}

/// Appends a group, joining it to the previous one when both are of the same file.
fn push_group(out: &mut Merged, path: String, lines: u32) {
    if out.paths.last() == Some(&path) {
        if let Some(n) = out.sizes.last_mut() {
            *n += lines;
            return;
        }
    }
    out.paths.push(path);
    out.sizes.push(lines);
}

/// One backend's glob answer in a fan-out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GlobPart {
    /// As in [`GrepPart::mount`].
    pub mount: Option<usize>,
    pub truncated: bool,
    pub paths: JoinedPaths,
}

/// Merges glob answers: mount paths prefixed and, when `pattern` is given, kept only where the
/// pattern (relative to `root`, or anchored) admits the outer path — a mount is asked for a
/// superset (see [`glob_asks`](super::glob_asks)) — paths a route hides dropped from the default backend's
/// answer, sorted by path, at most `max_results`.
pub fn merge_glob(
    router: &Router,
    parts: &[GlobPart],
    pattern: Option<&str>,
    root: &str,
    max_results: Option<usize>,
) -> CoreResult<Merged> {
    // Compiled only when some mount answered: the default backend matched on its own.
    let needed = parts.iter().any(|p| p.mount.is_some() && !p.paths.is_empty());
    let glob = pattern.filter(|_| needed).map(|p| Glob::new(p, root)).transpose()?;
    let mut truncated = parts.iter().any(|p| p.truncated);
    // (outer path, index, from a mount)
    // The default backend's paths are borrowed (they do not change); a mount's are built.
    let mut found: Vec<(Cow<'_, str>, (u32, bool))> = Vec::new();
    let mut index = 0u32;
    for part in parts {
        let mount = part.mount.map(|m| mount_prefix(router, m)).transpose()?;
        for p in part.paths.iter() {
            let shown = match mount {
                None => (!router.shadows(p)).then_some(Cow::Borrowed(p)),
                Some(prefix) => Some(outer_path(prefix, p))
                    .filter(|o| glob.as_ref().is_none_or(|g| g.is_match(o, root)))
                    .map(Cow::Owned),
            };
            if let Some(o) = shown {
                found.push((o, (index, mount.is_some())));
            }
            index = index.checked_add(1).ok_or_else(|| malformed("glob part (too many paths)"))?;
        }
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    let max = max_results.unwrap_or(usize::MAX);
    truncated |= found.len() > max;
    found.truncate(max);
    let mut out = Merged { truncated, picks: Vec::with_capacity(found.len()), ..Merged::default() };
    for (path, (index, from_mount)) in found {
        out.picks.push(index);
        if from_mount {
            out.renamed.push(path.into_owned());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::composite::fixtures::router;
    use crate::error::ErrorCode;

    fn content(mount: Option<usize>, groups: &[(&str, &[bool])]) -> GrepPart {
        GrepPart {
            mount,
            truncated: false,
            paths: groups.iter().map(|(p, _)| p.to_string()).collect(),
            sizes: groups.iter().map(|(_, l)| l.len() as u32).collect(),
            context: groups.iter().flat_map(|(_, l)| l.iter().copied()).collect(),
        }
    }

    fn grep(parts: &[GrepPart], mode: OutputMode, max_count: Option<usize>, path_glob: Option<&str>) -> Merged {
        merge_grep(&router(), parts, &GrepMerge { mode, max_count, path_glob, root: "/" }).unwrap()
    }

    #[test]
    fn grep_merges_three_mounts_in_path_order_under_one_ceiling() {
        let m = [false];
        let parts = [
            // default backend: /z.md, a shadowed /memories/old.md, /a.md (answers out of order)
            content(None, &[("/z.md", &[false, false]), ("/memories/old.md", &m), ("/a.md", &[false, true, false])]),
            content(Some(1), &[("/s.md", &m)]),
            content(Some(0), &[("/b.md", &[false, false])]),
            content(Some(2), &[("/c.md", &m)]),
        ];
        // /a.md: 2 matches + its context line (not counted), then the ceiling of 3 cuts inside
        // /memories/b.md after its first line.
        let r = grep(&parts, OutputMode::Content, Some(3), None);
        assert_eq!(r.paths, ["/a.md", "/memories/b.md"]);
        assert_eq!(r.sizes, [3, 1]);
        assert_eq!(r.picks, [3, 4, 5, 7]);
        assert!(r.truncated);
        let all = grep(&parts, OutputMode::Content, None, None);
        assert_eq!(all.paths, ["/a.md", "/memories/b.md", "/memories/deep/c.md", "/skills/s.md", "/z.md"]);
        assert_eq!(all.picks, [3, 4, 5, 7, 8, 9, 6, 0, 1]);
        assert!(!all.truncated);
    }

    #[test]
    fn context_after_the_last_counted_match_is_kept_until_the_next_match() {
        let parts = [content(None, &[("/a", &[false, true, false])]), content(Some(0), &[("/b", &[true, false])])];
        let r = grep(&parts, OutputMode::Content, Some(1), None);
        assert_eq!(
            (r.paths.as_slice(), r.sizes.as_slice(), r.picks.as_slice(), r.truncated),
            (&["/a".to_string()][..], &[2][..], &[0, 1][..], true)
        );
    }

    #[test]
    fn grep_files_and_counts_merge_with_one_cap() {
        let files = |mount, paths: &[&str]| GrepPart {
            mount,
            paths: paths.iter().map(|p| p.to_string()).collect(),
            ..GrepPart::default()
        };
        let parts = [files(None, &["/y", "/memories/x"]), files(Some(0), &["/a", "/b"]), files(Some(1), &["/k"])];
        let r = grep(&parts, OutputMode::FilesWithMatches, Some(3), None);
        assert_eq!(
            (r.paths, r.truncated),
            (vec!["/memories/a".into(), "/memories/b".into(), "/skills/k".into()], true)
        );
        let counts = |mount, paths: &[(&str, u32)]| GrepPart {
            mount,
            paths: paths.iter().map(|(p, _)| p.to_string()).collect(),
            sizes: paths.iter().map(|(_, n)| *n).collect(),
            ..GrepPart::default()
        };
        let parts = [counts(None, &[("/z", 1), ("/memories", 9)]), counts(Some(0), &[("/a", 2)])];
        let r = grep(&parts, OutputMode::Count, None, None);
        assert_eq!((r.paths, r.sizes, r.truncated), (vec!["/memories/a".into(), "/z".into()], vec![2, 1], false));
        let r = grep(&parts, OutputMode::Count, Some(1), None);
        assert_eq!((r.paths.len(), r.truncated), (1, true));
        let mut cut = counts(Some(1), &[]);
        cut.truncated = true;
        assert!(grep(&[cut], OutputMode::Count, None, None).truncated);
    }

    #[test]
    fn a_path_glob_filters_mounts_on_their_outer_paths() {
        let files = |mount, paths: &[&str]| GrepPart {
            mount,
            paths: paths.iter().map(|p| p.to_string()).collect(),
            ..GrepPart::default()
        };
        let parts = [files(None, &["/memories.md"]), files(Some(0), &["/a.md", "/n/b.md"])];
        let r = grep(&parts, OutputMode::FilesWithMatches, None, Some("memories/*.md"));
        // The default backend applied the glob itself; mounts are filtered here.
        assert_eq!(r.paths, ["/memories.md", "/memories/a.md"]);
        let bad = merge_grep(
            &router(),
            &parts,
            &GrepMerge { mode: OutputMode::FilesWithMatches, max_count: None, path_glob: Some("a/[z"), root: "/" },
        );
        assert_eq!(bad.unwrap_err().code, ErrorCode::InvalidPattern);
    }

    #[test]
    fn malformed_parts_are_errors_not_panics() {
        let bad = GrepPart { paths: vec!["/a".into()], sizes: vec![2], context: vec![false], ..GrepPart::default() };
        assert_eq!(
            merge_grep(
                &router(),
                &[bad],
                &GrepMerge { mode: OutputMode::Content, max_count: None, path_glob: None, root: "/" }
            )
            .unwrap_err()
            .code,
            ErrorCode::Unsupported
        );
        let part = GlobPart { mount: Some(7), ..GlobPart::default() };
        assert_eq!(merge_glob(&router(), &[part], None, "/", None).unwrap_err().code, ErrorCode::Unsupported);
    }

    #[test]
    fn glob_merges_filters_and_caps() {
        let part = |mount, paths: &[&str]| GlobPart { mount, truncated: false, paths: paths.iter().copied().collect() };
        let parts = [
            part(None, &["/src/b.md", "/memories/hidden.md"]),
            part(Some(0), &["/x.md", "/x.txt", "/deep/y.md"]),
            part(Some(1), &["/s.md"]),
        ];
        let r = merge_glob(&router(), &parts, Some("**/*.md"), "/", None).unwrap();
        // /memories/deep/y.md, /memories/x.md, /skills/s.md, then the default's /src/b.md.
        assert_eq!(r.picks, [4, 2, 5, 0]);
        assert_eq!(r.renamed, ["/memories/deep/y.md", "/memories/x.md", "/skills/s.md"]);
        let r = merge_glob(&router(), &parts, Some("**/*.md"), "/", Some(2)).unwrap();
        assert_eq!((r.picks.len(), r.truncated), (2, true));
        // No pattern: a routed answer is only prefixed.
        let r = merge_glob(&router(), &parts[1..2], None, "/memories", None).unwrap();
        assert_eq!(r.renamed, ["/memories/deep/y.md", "/memories/x.md", "/memories/x.txt"]);
        // A pattern is compiled only for a mount's answer.
        let bad = |parts: &[GlobPart]| merge_glob(&router(), parts, Some("a/[z"), "/", None);
        assert_eq!(bad(&parts[..1]).unwrap().picks, [0]);
        assert_eq!(bad(&parts).unwrap_err().code, ErrorCode::InvalidPattern);
    }
}
