//! Composite rules (DESIGN §4 "Composite"): how the answers of backends mounted at route
//! prefixes look from outside — errors that name the outer path, and grep/glob fan-out results
//! merged as if one tree had been searched. Both bindings expose these to the TypeScript
//! `CompositeBackend`, which only routes calls and hands the answers here.

use crate::api::FileColumns;
use crate::error::{CoreError, CoreResult, ErrorCode};
use crate::format::{format_glob, GrepText};
use crate::glob::{Glob, PathFilter};
use crate::grep::{GrepMatch, GrepOptions, GrepResult, OutputMode, MAX_COUNT};
use crate::ops::GlobOptions;
use crate::path_index::JoinedPaths;
use crate::router::Router;
use crate::table::{FileInfo, FileTable};
use std::borrow::Cow;
use std::cmp::Ordering;

/// The outer path of `inner` seen through the mount `prefix` (normalised, with its trailing
/// `/`): `/memories/` + `/a.md` → `/memories/a.md`; `/` → `/memories/`.
pub fn outer_path(prefix: &str, inner: &str) -> String {
    let mount = prefix.strip_suffix('/').unwrap_or(prefix);
    let mut out = String::with_capacity(mount.len() + inner.len());
    out.push_str(mount);
    out.push_str(inner);
    out
}

/// Where a path routes, in a form that crosses the boundary without a result object: the outer
/// (normalised) path, the route (`None`: the default backend), and where the inner path starts
/// in the outer one, in UTF-16 units (`None`: the inner path is `/`, a mount point itself).
pub fn route_parts(router: &Router, input: &str) -> CoreResult<(String, Option<usize>, Option<usize>)> {
    let r = router.route(input)?;
    let start = if r.route.is_none() {
        Some(0)
    } else if r.outer.ends_with(&r.path) && (r.path != "/" || r.outer == "/") {
        let at = r.outer.len() - r.path.len();
        Some(r.outer[..at].encode_utf16().count())
    } else {
        None
    };
    Ok((r.outer, r.route, start))
}

/// An error as a backend returned it. Errors the core rendered (every built-in backend) carry
/// their `subject` and `detail`; a custom backend may return only `{ code, message }`.
#[derive(Debug, Clone, Copy)]
pub struct BackendError<'a> {
    pub code: &'a str,
    pub message: &'a str,
    pub subject: Option<&'a str>,
    pub detail: Option<&'a str>,
}

/// A mounted backend's error as the composite reports it, rendered again for the outer path;
/// `None` when it passes on unchanged. `prefix` is the mount's normalised prefix and `request`
/// the outer (normalised) path the composite was asked about.
///
/// - A structured error whose subject is a path (`/…`) names `prefix` + subject; its detail is
///   kept as it is.
/// - A structured error whose subject is not a path (a pattern, an option name) is unchanged.
/// - An error without structure (a custom backend's `{ code, message }`) is the canonical error
///   for its code about `request`; the backend's message becomes the detail where the code's
///   message has one (`Permission denied: '/memories/a' (read-only)`), and `multiple_matches`
///   says "several" for the count it does not know. Its `invalid_pattern` is unchanged.
/// - A code the core does not pin is unchanged: nothing can be rendered for it.
///
/// Message text is never parsed or edited.
pub fn mount_error(e: &BackendError, prefix: &str, request: &str) -> Option<CoreError> {
    let code = ErrorCode::parse(e.code)?;
    match e.subject {
        Some(subject) => (code.subject_is_path() && subject.starts_with('/'))
            .then(|| CoreError::new(code, &outer_path(prefix, subject), e.detail.unwrap_or(""))),
        None if !code.subject_is_path() => None,
        None => {
            let detail = match e.detail {
                Some(d) => d,
                None if code == ErrorCode::MultipleMatches => "several",
                None if code.has_detail() => e.message,
                None => "",
            };
            Some(CoreError::new(code, request, detail))
        }
    }
}

fn malformed(what: &str) -> CoreError {
    CoreError::new(ErrorCode::Unsupported, "composite", format_args!("malformed {what}"))
}

fn mount_prefix(router: &Router, mount: usize) -> CoreResult<&str> {
    router.prefix(mount).ok_or_else(|| malformed("part (no such mount)"))
}

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
    /// lines or paths, parts in order; [`MOUNT_POINT`] for a directory a route adds to a listing.
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
/// superset (see [`glob_asks`]) — paths a route hides dropped from the default backend's
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

/// The pick of a directory that exists only because a route is mounted below it.
pub const MOUNT_POINT: u32 = u32::MAX;

/// Lists `dir` (outer, normalised) as a composite shows it. With `mount`, `paths` are that
/// mount's entries (inner paths) and are prefixed. Without, they are the default backend's
/// entries of `dir`: those a route hides are dropped, and the first directory of each route
/// below `dir` is added (once; it stands in for a default entry of the same path).
pub fn merge_ls(router: &Router, dir: &str, mount: Option<usize>, paths: &[String]) -> CoreResult<Merged> {
    let mut out = Merged::default();
    if let Some(m) = mount {
        let prefix = mount_prefix(router, m)?;
        out.picks = (0..paths.len()).map(|i| u32::try_from(i).unwrap_or(MOUNT_POINT)).collect();
        out.renamed = paths.iter().map(|p| outer_path(prefix, p)).collect();
        return Ok(out);
    }
    let base = if dir == "/" { "/".to_string() } else { format!("{dir}/") };
    let mut added: Vec<String> = router
        .routes_under(dir)
        .into_iter()
        .map(|(_, prefix)| {
            let child = prefix[base.len()..].split('/').next().unwrap_or_default();
            format!("{base}{child}/")
        })
        .collect();
    added.sort();
    added.dedup();
    // (path, pick); `None` for an added directory.
    let mut entries: Vec<(&str, Option<u32>)> = Vec::with_capacity(paths.len() + added.len());
    for (i, p) in paths.iter().enumerate() {
        let bare = p.strip_suffix('/').filter(|b| !b.is_empty()).unwrap_or(p);
        if !router.shadows(bare) && added.binary_search(p).is_err() {
            entries.push((p, Some(u32::try_from(i).map_err(|_| malformed("listing (too many entries)"))?)));
        }
    }
    entries.extend(added.iter().map(|p| (p.as_str(), None)));
    entries.sort_by(|a, b| a.0.cmp(b.0));
    for (path, pick) in entries {
        match pick {
            Some(i) => out.picks.push(i),
            None => {
                out.picks.push(MOUNT_POINT);
                out.renamed.push(path.to_string());
            }
        }
    }
    Ok(out)
}

/// The routes strictly below the normalised directory `dir`, in construction order.
pub fn mounts_under(router: &Router, dir: &str) -> Vec<usize> {
    router.routes_under(dir).into_iter().map(|(i, _)| i).collect()
}

/// What one mount is asked for when a composite glob fans out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GlobAsk {
    pub mount: usize,
    pub pattern: String,
    /// The mount's inner directory to glob from.
    pub path: String,
}

fn is_glob_special(c: char) -> bool {
    matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\')
}

/// A superset of the mount's files that `pattern` (relative to `root`, or anchored) can
/// match, pushed down so a Store-backed mount lists only that prefix: the literal leading
/// directories of the pattern narrow the mount's directory (`None`: the mount cannot hold a
/// match); a `**` / `**/<name>` rest, which matches on the last path component only, is passed
/// on as the pattern. [`merge_glob`] still filters the answer, so this only narrows the work.
fn push_down(pattern: &str, root: &str, prefix: &str) -> Option<(String, String)> {
    let everything = Some(("**".to_string(), "/".to_string()));
    let segments: Vec<&str> = pattern.split('/').filter(|s| !s.is_empty()).collect();
    if segments.iter().any(|s| *s == "." || *s == "..") {
        return everything;
    }
    let mut dir = if pattern.starts_with('/') || root == "/" { String::new() } else { root.to_string() };
    let mut i = 0;
    while i + 1 < segments.len() && !segments[i].contains(is_glob_special) {
        dir.push('/');
        dir.push_str(segments[i]);
        i += 1;
    }
    let rest = segments[i..].join("/");
    let last_only =
        rest == "**" || rest.strip_prefix("**/").is_some_and(|name| !name.contains('/') && !name.contains("**"));
    let dir_slash = format!("{dir}/");
    if dir_slash.starts_with(prefix) {
        // The literal directory is inside the mount: list only below it.
        let inner = &dir[prefix.len() - 1..];
        let inner = if inner.is_empty() { "/" } else { inner };
        return Some((if last_only { rest } else { "**".to_string() }, inner.to_string()));
    }
    if prefix.starts_with(&dir_slash) {
        return if last_only { Some((rest, "/".to_string())) } else { everything };
    }
    None
}

/// The mounts a composite glob at the normalised directory `root` fans out to, each with the
/// narrowest pattern and directory that still holds every match: the mount `root` lies in,
/// else every mount for an anchored pattern, else the mounts below `root`; mounts that cannot
/// hold a match are left out.
pub fn glob_asks(router: &Router, pattern: &str, root: &str) -> Vec<GlobAsk> {
    let candidates: Vec<usize> = match router.route_normalised(root).route {
        Some(m) => vec![m],
        None if pattern.starts_with('/') => (0..router.len()).collect(),
        None => router.routes_under(root).into_iter().map(|(i, _)| i).collect(),
    };
    candidates
        .into_iter()
        .filter_map(|m| {
            let prefix = router.prefix(m)?;
            push_down(pattern, root, prefix).map(|(pattern, path)| GlobAsk { mount: m, pattern, path })
        })
        .collect()
}

// ---- fan-out over resident tables ----
//
// When every backend a composite grep or glob reaches keeps its files in a core file table (a
// StateBackend's table, a StoreBackend's synced mirror), the composite asks each table here, as
// it would ask the backend (same pattern, directory and options), and merges once: no answer
// crosses the boundary per mount, and the tool text is made from the merge directly.

/// A mount's error for the composite, rendered for the outer path `request` (see
/// [`mount_error`]); the default backend's errors (`mount` = `None`) pass on unchanged.
fn outer_error(router: &Router, mount: Option<usize>, e: CoreError, request: &str) -> CoreError {
    let Some(prefix) = mount.and_then(|m| router.prefix(m)) else { return e };
    let b =
        BackendError { code: e.code.as_str(), message: &e.message, subject: Some(&e.subject), detail: Some(&e.detail) };
    mount_error(&b, prefix, request).unwrap_or(e)
}

/// One source a fan-out asks: the default backend (`mount` = `None`) or a route, with the
/// directory (inner to the source), pattern and cap it is asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FanAsk {
    pub mount: Option<usize>,
    pub path: String,
    /// glob: the pattern; grep: the file-name `glob` option the source applies itself.
    pub pattern: Option<String>,
    /// grep: the `maxCount` the source is asked with (`None`: none; see [`GrepFanOut::new`]);
    /// glob: unused (`None`).
    pub max_count: Option<usize>,
}

/// A slot's answer: not yet given, skipped (a missing directory that holds no matches), or given.
enum Slot<T> {
    Empty,
    Skipped,
    Given(T),
}

fn take_parts<T>(slots: Vec<Slot<T>>) -> CoreResult<Vec<T>> {
    let mut out = Vec::with_capacity(slots.len());
    for s in slots {
        match s {
            Slot::Empty => return Err(malformed("fan-out (a source was not given)")),
            Slot::Skipped => {}
            Slot::Given(t) => out.push(t),
        }
    }
    Ok(out)
}

fn slot_of(asks: &[FanAsk], mount: Option<usize>) -> CoreResult<usize> {
    asks.iter().position(|a| a.mount == mount).ok_or_else(|| malformed("fan-out (that source is not asked)"))
}

/// A composite glob over resident tables: [`GlobFanOut::asks`] says which sources to give,
/// [`GlobFanOut::add`] searches each one's table, [`GlobFanOut::finish`] or
/// [`GlobFanOut::text`] merges. Answers equal the composite's per-backend fan-out.
pub struct GlobFanOut {
    pattern: String,
    root: String,
    max_results: Option<usize>,
    /// The root lies inside this mount and the pattern is relative: that mount alone answers,
    /// with the cap, and its paths are only prefixed.
    within: Option<usize>,
    asks: Vec<FanAsk>,
    slots: Vec<Slot<GlobGiven>>,
}

/// One source's glob answer: the part the merge sees, and each file's metadata.
type GlobGiven = (GlobPart, Vec<FileMeta>);

/// A globbed file's size, modification time and version.
#[derive(Debug, Clone, Copy)]
struct FileMeta {
    size: u64,
    modified_at: f64,
    version: u64,
}

/// The merged answer of a [`GlobFanOut`]: every part's paths and metadata (in part order, as
/// the merge's picks count them), the source of each, and the picks.
struct MergedGlob {
    parts: Vec<GlobPart>,
    meta: Vec<FileMeta>,
    merged: Merged,
}

impl MergedGlob {
    /// Visits the merged files in path order: outer path, metadata and source.
    fn for_each<'a>(&'a self, mut visit: impl FnMut(&'a str, FileMeta, Option<usize>)) -> CoreResult<()> {
        let mut at = Vec::with_capacity(self.meta.len());
        for (k, part) in self.parts.iter().enumerate() {
            at.extend((0..part.paths.len()).map(|j| (k, j)));
        }
        let mut renamed = self.merged.renamed.iter();
        for &pick in &self.merged.picks {
            let i = pick as usize;
            let (&(k, j), &meta) = at.get(i).zip(self.meta.get(i)).ok_or_else(|| malformed("glob pick"))?;
            let part = &self.parts[k];
            let path = match part.mount {
                None => part.paths.get(j).ok_or_else(|| malformed("glob pick"))?,
                Some(_) => renamed.next().ok_or_else(|| malformed("glob pick"))?.as_str(),
            };
            visit(path, meta, part.mount);
        }
        Ok(())
    }
}

impl GlobFanOut {
    /// `root` is the normalised outer directory of the call.
    pub fn new(router: &Router, pattern: &str, root: &str, max_results: Option<usize>) -> GlobFanOut {
        let routed = router.route_normalised(root);
        let mut asks = Vec::new();
        let within = match routed.route {
            Some(m) if !pattern.starts_with('/') => {
                asks.push(FanAsk {
                    mount: Some(m),
                    path: routed.path,
                    pattern: Some(pattern.to_string()),
                    max_count: None,
                });
                Some(m)
            }
            route => {
                if route.is_none() {
                    asks.push(FanAsk {
                        mount: None,
                        path: root.to_string(),
                        pattern: Some(pattern.to_string()),
                        max_count: None,
                    });
                }
                for a in glob_asks(router, pattern, root) {
                    asks.push(FanAsk { mount: Some(a.mount), path: a.path, pattern: Some(a.pattern), max_count: None });
                }
                None
            }
        };
        let slots = asks.iter().map(|_| Slot::Empty).collect();
        GlobFanOut { pattern: pattern.to_string(), root: root.to_string(), max_results, within, asks, slots }
    }

    /// The sources to give, the default backend first when it is asked.
    pub fn asks(&self) -> &[FanAsk] {
        &self.asks
    }

    /// Globs `table`, the files of the source `mount` (`None`: the default backend).
    pub fn add(&mut self, router: &Router, mount: Option<usize>, table: &FileTable) -> CoreResult<()> {
        let k = slot_of(&self.asks, mount)?;
        let ask = &self.asks[k];
        let opts = GlobOptions {
            pattern: ask.pattern.clone().unwrap_or_default(),
            path: Some(ask.path.clone()),
            max_results: if self.within.is_some() { self.max_results } else { None },
        };
        // One buffer for the part's paths: a string each cost as much as the glob itself.
        let (mut paths, mut meta) = (JoinedPaths::default(), Vec::new());
        let found = table.glob_each(&opts, |p, f| {
            paths.push(p);
            meta.push(FileMeta { size: f.data.len() as u64, modified_at: f.modified_at, version: f.version });
        });
        self.slots[k] = match found {
            Ok(truncated) => Slot::Given((GlobPart { mount, truncated, paths }, meta)),
            // A narrowed directory the mount does not have holds no matches.
            Err(e) if mount.is_some() && ask.path != "/" && e.code == ErrorCode::FileNotFound => Slot::Skipped,
            Err(e) => return Err(outer_error(router, mount, e, &self.root)),
        };
        Ok(())
    }

    /// The merged files in columns, in path order, with their outer paths; the source of each
    /// (`None`: the default backend); whether the answer was cut.
    pub fn finish(self, router: &Router) -> CoreResult<(FileColumns, Vec<Option<usize>>, bool)> {
        let m = self.merge(router)?;
        let mut files = FileColumns::with_capacity(m.merged.picks.len());
        let mut from = Vec::with_capacity(m.merged.picks.len());
        m.for_each(|path, f, source| {
            files.push(path, f.size, f.modified_at, f.version);
            from.push(source);
        })?;
        Ok((files, from, m.merged.truncated))
    }

    /// The `glob` tool's text of the merged answer (see [`format_glob`]).
    pub fn text(self, router: &Router, max_chars: usize) -> CoreResult<String> {
        let pattern = self.pattern.clone();
        let m = self.merge(router)?;
        let mut paths = Vec::with_capacity(m.merged.picks.len());
        m.for_each(|path, _, _| paths.push(path))?;
        Ok(format_glob(&pattern, paths, m.merged.truncated, &[], max_chars))
    }

    fn merge(self, router: &Router) -> CoreResult<MergedGlob> {
        let (pattern, root, max, within) = (self.pattern, self.root, self.max_results, self.within);
        let (parts, meta): (Vec<GlobPart>, Vec<Vec<FileMeta>>) = take_parts(self.slots)?.into_iter().unzip();
        let merged = match within {
            Some(_) => merge_glob(router, &parts, None, &root, None)?,
            None => merge_glob(router, &parts, Some(&pattern), &root, max)?,
        };
        Ok(MergedGlob { parts, meta: meta.into_iter().flatten().collect(), merged })
    }
}

/// A composite `ls` of the normalised outer directory `dir` answered from the resident `table`
/// of the backend `dir` routes to (`mount`; `inner` is `dir` as that backend sees it), in one
/// call: a mount's listing gets its prefix and its error names the outer path; the default
/// backend's listing drops what a route hides and gains the mount points below `dir` (its own
/// missing `dir` is no error when a route lies below). As the composite's per-backend `ls`.
pub fn ls_table(
    router: &Router,
    dir: &str,
    mount: Option<usize>,
    inner: &str,
    table: &FileTable,
) -> CoreResult<Vec<FileInfo>> {
    let below = mount.is_none() && !mounts_under(router, dir).is_empty();
    let mut own = match table.ls(inner) {
        Ok(entries) => entries,
        Err(e) if below && e.code == ErrorCode::FileNotFound => Vec::new(),
        Err(e) => return Err(outer_error(router, mount, e, dir)),
    };
    let paths: Vec<String> = own.iter().map(|f| f.path.clone()).collect();
    let merged = merge_ls(router, dir, mount, &paths)?;
    let mut renamed = merged.renamed.into_iter();
    let mut out = Vec::with_capacity(merged.picks.len());
    for pick in merged.picks {
        if pick == MOUNT_POINT {
            let path = renamed.next().ok_or_else(|| malformed("listing pick"))?;
            out.push(FileInfo { path, is_dir: true, size: None, modified_at: None, version: None });
            continue;
        }
        let entry = own.get_mut(pick as usize).ok_or_else(|| malformed("listing pick"))?;
        let mut f = std::mem::replace(
            entry,
            FileInfo { path: String::new(), is_dir: false, size: None, modified_at: None, version: None },
        );
        if mount.is_some() {
            f.path = renamed.next().ok_or_else(|| malformed("listing pick"))?;
        }
        out.push(f);
    }
    Ok(out)
}

/// One source's grep answer: the part the merge sees and, for `content`, each line's number
/// and text (lines of all groups in order).
type GrepGiven = (GrepPart, Vec<(usize, String)>);

/// A composite grep over resident tables (see [`GlobFanOut`] for the steps).
pub struct GrepFanOut {
    opts: GrepOptions,
    root: String,
    within: Option<usize>,
    /// A grep `glob` with `/`: applied by the default backend itself and by the merge to the
    /// mounts' outer paths.
    path_glob: Option<String>,
    /// Mounts below the root: the default backend's missing root is then no error.
    mounts_below: bool,
    /// Only the tool's text of at most this many characters is wanted (see
    /// [`GrepFanOut::for_text`]).
    text_chars: Option<usize>,
    asks: Vec<FanAsk>,
    slots: Vec<Slot<GrepGiven>>,
}

impl GrepFanOut {
    /// `opts` are the call's options (`path` ignored: `root` is the normalised outer directory).
    ///
    /// What each source is asked (its [`FanAsk`], also what the composite's per-backend path
    /// asks): the call's `maxCount`, except
    /// - a mount searched without a path `glob` (one with `/`, applied by the merge) has no cap:
    ///   its first matches may be in files the glob drops, hiding admitted ones after them;
    /// - with several sources, `content` mode and context lines, one match more: a source cut
    ///   at the cap would stop before its next match, and that match's leading context lines
    ///   (which one tree shows when that match is the one the cap cuts) would be missing;
    /// - with routes below the root, the default backend one match (file) more: its files under
    ///   a route are hidden, and when its answer is cut with a hidden path among it, the files
    ///   shown after them may be missing — the composite's per-backend path then asks it again
    ///   without the cap; with the one more, an answer whose first hidden match would be the cut
    ///   one is seen whole. (Searching its table here, the hidden files are left out instead.)
    pub fn new(router: &Router, opts: &GrepOptions, root: &str) -> GrepFanOut {
        let routed = router.route_normalised(root);
        let mut asks = Vec::new();
        let mut path_glob = None;
        let mut mounts_below = false;
        // A source never holds more than the core's ceiling: asking for more is asking for it.
        let cap = opts.max_count.map(|n| n.min(MAX_COUNT));
        let within = match routed.route {
            Some(m) => {
                asks.push(FanAsk { mount: Some(m), path: routed.path, pattern: opts.glob.clone(), max_count: cap });
                Some(m)
            }
            None => {
                let under = mounts_under(router, root);
                mounts_below = !under.is_empty();
                path_glob = opts.glob.clone().filter(|g| g.contains('/'));
                let more = cap.map(|n| n + 1);
                let own_cap = if mounts_below { more } else { cap };
                asks.push(FanAsk {
                    mount: None,
                    path: root.to_string(),
                    pattern: opts.glob.clone(),
                    max_count: own_cap,
                });
                let lookahead = opts.output_mode == OutputMode::Content && opts.context > 0;
                let (mount_glob, mount_cap) = match (&path_glob, lookahead) {
                    (Some(_), _) => (None, None),
                    (None, true) => (opts.glob.clone(), more),
                    (None, false) => (opts.glob.clone(), cap),
                };
                for m in under {
                    asks.push(FanAsk {
                        mount: Some(m),
                        path: "/".to_string(),
                        pattern: mount_glob.clone(),
                        max_count: mount_cap,
                    });
                }
                None
            }
        };
        let slots = asks.iter().map(|_| Slot::Empty).collect();
        GrepFanOut {
            opts: opts.clone(),
            root: root.to_string(),
            within,
            path_glob,
            mounts_below,
            text_chars: None,
            asks,
            slots,
        }
    }

    /// With `max_chars`, the same fan-out for the `grep` tool's text of at most that many
    /// characters alone ([`GrepFanOut::text`]; [`GrepFanOut::finish`] then refuses): a source
    /// stops searching once its own lines would fill that text, since the merged text, which
    /// holds them and other sources' lines in path order, is full by then too. Not a mount whose
    /// lines the merge may drop (a path `glob` applied to outer paths): its own lines say
    /// nothing about the merged text.
    pub fn for_text(mut self, max_chars: Option<usize>) -> GrepFanOut {
        self.text_chars = max_chars;
        self
    }

    /// The sources to give, the default backend first when it is asked.
    pub fn asks(&self) -> &[FanAsk] {
        &self.asks
    }

    /// Searches `table`, the files of the source `mount` (`None`: the default backend).
    pub fn add(&mut self, router: &Router, mount: Option<usize>, table: &FileTable) -> CoreResult<()> {
        let k = slot_of(&self.asks, mount)?;
        let ask = &self.asks[k];
        let opts = GrepOptions {
            path: Some(ask.path.clone()),
            glob: ask.pattern.clone(),
            max_count: ask.max_count,
            ..self.opts.clone()
        };
        // Files a route hides are not searched: counted toward the cap, they would cut shown
        // matches after them (and set `truncated` with nothing cut that is shown).
        let hide = mount.is_none() && self.mounts_below;
        let text_chars = self.text_chars.filter(|_| mount.is_none() || self.path_glob.is_none());
        let answer = table.search_root(&opts).and_then(|root| {
            let files = table.files_under(&root).filter(|(p, _)| !hide || !router.shadows(p));
            let files = files.map(|(p, f)| (p, &f.data[..]));
            let mut text = text_chars.map(GrepText::new);
            let searched =
                crate::grep::grep_with(files, &root, &opts, |c| text.as_mut().is_none_or(|t| t.wants_more(c)));
            searched.map(crate::grep::Collector::finish)
        });
        self.slots[k] = match answer {
            Ok(r) => Slot::Given(grep_part(mount, r)),
            Err(e) if mount.is_none() && self.mounts_below && e.code == ErrorCode::FileNotFound => Slot::Skipped,
            Err(e) => return Err(outer_error(router, mount, e, &self.root)),
        };
        Ok(())
    }

    fn merged(self, router: &Router) -> CoreResult<GrepMerged> {
        let (opts, root) = (self.opts, self.root);
        let path_glob = if self.within.is_some() { None } else { self.path_glob };
        let given = take_parts(self.slots)?;
        let (parts, lines): (Vec<GrepPart>, Vec<Vec<(usize, String)>>) = given.into_iter().unzip();
        let o = GrepMerge {
            mode: opts.output_mode,
            max_count: opts.max_count,
            path_glob: path_glob.as_deref(),
            root: &root,
        };
        let merged = merge_grep(router, &parts, &o)?;
        Ok((merged, lines.into_iter().flatten().collect(), opts.output_mode, opts.pattern))
    }

    /// The merged answer as one grep result (outer paths).
    pub fn finish(self, router: &Router) -> CoreResult<GrepResult> {
        if self.text_chars.is_some() {
            return Err(malformed("fan-out (made for its text alone)"));
        }
        let (m, mut lines, mode, _) = self.merged(router)?;
        let mut out = GrepResult { truncated: m.truncated, ..GrepResult::default() };
        match mode {
            OutputMode::Content => {
                let mut matches = Vec::with_capacity(m.picks.len());
                let mut picks = m.picks.iter();
                for (path, &n) in m.paths.iter().zip(&m.sizes) {
                    for &pick in picks.by_ref().take(n as usize) {
                        let line = lines.get_mut(pick as usize).ok_or_else(|| malformed("grep pick"))?;
                        let context = line.0 & CONTEXT_BIT != 0;
                        let text = std::mem::take(&mut line.1);
                        matches.push(GrepMatch { path: path.clone(), line: line.0 & !CONTEXT_BIT, text, context });
                    }
                }
                out.matches = Some(matches);
            }
            OutputMode::FilesWithMatches => out.files = Some(m.paths),
            OutputMode::Count => {
                out.counts = Some(m.paths.into_iter().zip(m.sizes).map(|(p, n)| (p, n as usize)).collect())
            }
        }
        Ok(out)
    }

    /// The `grep` tool's text of the merged answer, under the output cap.
    pub fn text(self, router: &Router, max_chars: usize) -> CoreResult<String> {
        let (m, lines, mode, pattern) = self.merged(router)?;
        let mut text = GrepText::new(max_chars);
        match mode {
            OutputMode::Content => {
                let mut picks = m.picks.iter();
                'groups: for (path, &n) in m.paths.iter().zip(&m.sizes) {
                    for &pick in picks.by_ref().take(n as usize) {
                        if text.full() {
                            break 'groups;
                        }
                        let (line, t) = lines.get(pick as usize).ok_or_else(|| malformed("grep pick"))?;
                        text.push_match(path, line & !CONTEXT_BIT, line & CONTEXT_BIT != 0, t);
                    }
                }
            }
            OutputMode::FilesWithMatches => {
                for p in &m.paths {
                    if text.full() {
                        break;
                    }
                    text.push_file(p);
                }
            }
            OutputMode::Count => {
                for (p, &n) in m.paths.iter().zip(&m.sizes) {
                    if text.full() {
                        break;
                    }
                    text.push_count(p, n as usize);
                }
            }
        }
        Ok(text.finish(&pattern, m.truncated))
    }
}

/// A fan-out's merge with the lines it picks from, its mode and pattern.
type GrepMerged = (Merged, Vec<(usize, String)>, OutputMode, String);

/// Marks a context line in a [`GrepGiven`] line number.
const CONTEXT_BIT: usize = 1 << (usize::BITS - 1);

fn grep_part(mount: Option<usize>, r: GrepResult) -> GrepGiven {
    let mut part = GrepPart { mount, truncated: r.truncated, ..GrepPart::default() };
    let mut lines = Vec::new();
    if let Some(matches) = r.matches {
        lines.reserve(matches.len());
        for m in matches {
            match (part.paths.last(), part.sizes.last_mut()) {
                (Some(p), Some(n)) if *p == m.path => *n += 1,
                _ => {
                    part.paths.push(m.path);
                    part.sizes.push(1);
                }
            }
            part.context.push(m.context);
            lines.push((if m.context { m.line | CONTEXT_BIT } else { m.line }, m.text));
        }
    } else if let Some(counts) = r.counts {
        for (p, n) in counts {
            part.paths.push(p);
            part.sizes.push(u32::try_from(n).unwrap_or(u32::MAX));
        }
    } else if let Some(files) = r.files {
        part.paths = files;
    }
    (part, lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn router() -> Router {
        Router::new(&["/memories/", "/skills/", "/memories/deep/"]).unwrap()
    }

    fn err<'a>(code: &'a str, message: &'a str, subject: Option<&'a str>, detail: Option<&'a str>) -> BackendError<'a> {
        BackendError { code, message, subject, detail }
    }

    #[test]
    fn outer_paths_join_prefix_and_inner() {
        assert_eq!(outer_path("/memories/", "/a.md"), "/memories/a.md");
        assert_eq!(outer_path("/memories/", "/"), "/memories/");
        assert_eq!(outer_path("/", "/a"), "/a");
    }

    #[test]
    fn structured_errors_are_rendered_for_the_outer_path() {
        let inner = CoreError::of(ErrorCode::FileNotFound, "/a.md");
        let e = err(inner.code.as_str(), &inner.message, Some(&inner.subject), None);
        let outer = mount_error(&e, "/memories/", "/memories/a.md").unwrap();
        assert_eq!(outer.message, "File not found: '/memories/a.md'");
        assert_eq!(outer.subject, "/memories/a.md");
    }

    #[test]
    fn special_characters_and_repeated_paths_are_not_text_edits() {
        // Regex metacharacters, a quote and a control character: the message shows them
        // escaped, the subject holds them raw, and only the subject is moved.
        let hostile = "/a(.*)+[x]'$1\\\n.md";
        let inner = CoreError::of(ErrorCode::IsDirectory, hostile);
        let e = err("is_directory", &inner.message, Some(&inner.subject), None);
        let outer = mount_error(&e, "/m/", "/m/whatever").unwrap();
        assert_eq!(outer, CoreError::of(ErrorCode::IsDirectory, &format!("/m{hostile}")));
        // The inner path also appears in the detail (before the subject in `unsupported`): the
        // detail is kept as it is and the subject alone names the outer path.
        let inner = CoreError::new(ErrorCode::Unsupported, "/x", "'/x' is special");
        let e = err("unsupported", &inner.message, Some("/x"), Some(&inner.detail));
        assert_eq!(mount_error(&e, "/mnt/", "/mnt/x").unwrap().message, "Unsupported: '/x' is special ('/mnt/x')");
        // A path that occurs twice in its own message.
        let inner = CoreError::new(ErrorCode::InvalidPath, "/d/d", "'/d' is a file");
        let e = err("invalid_path", &inner.message, Some("/d/d"), Some("'/d' is a file"));
        assert_eq!(mount_error(&e, "/d/", "/d/d/d").unwrap().message, "Invalid path '/d/d/d': '/d' is a file");
    }

    #[test]
    fn errors_about_patterns_or_unknown_codes_pass_unchanged() {
        let inner = CoreError::new(ErrorCode::InvalidPattern, "/a[", "unclosed");
        assert_eq!(
            mount_error(&err("invalid_pattern", &inner.message, Some("/a["), Some("unclosed")), "/m/", "/m"),
            None
        );
        assert_eq!(mount_error(&err("invalid_pattern", "bad", None, None), "/m/", "/m"), None);
        assert_eq!(mount_error(&err("unsupported", "x", Some("options.outputMode"), None), "/m/", "/m"), None);
        assert_eq!(mount_error(&err("teapot", "I'm a teapot", None, None), "/m/", "/m/a"), None);
    }

    #[test]
    fn unstructured_errors_name_the_request_path() {
        let plain =
            |code, message| mount_error(&err(code, message, None, None), "/memories/", "/memories/a.md").unwrap();
        assert_eq!(plain("file_not_found", "no such key a.md").message, "File not found: '/memories/a.md'");
        assert_eq!(plain("permission_denied", "read-only").message, "Permission denied: '/memories/a.md' (read-only)");
        assert!(plain("multiple_matches", "twice")
            .message
            .starts_with("String appears several times in '/memories/a.md'"));
        assert_eq!(plain("conflict", "stale").subject, "/memories/a.md");
        let detailed = mount_error(&err("too_large", "big", None, Some("3 MB")), "/memories/", "/memories/a").unwrap();
        assert_eq!(detailed.message, "Too large: '/memories/a' (3 MB)");
    }

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

    #[test]
    fn listings_hide_shadowed_entries_and_add_mount_points() {
        let r = Router::new(&["/memories/", "/a/b/", "/a/c/", "/x/"]).unwrap();
        let own: Vec<String> = ["/a/", "/memories/", "/memoriesX.md", "/notes.md"].map(String::from).to_vec();
        let l = merge_ls(&r, "/", None, &own).unwrap();
        // /a/ is added once for two routes (standing in for the default's own /a/), the
        // default's /memories/ is hidden by the route and added back as a mount point.
        assert_eq!(l.picks, [MOUNT_POINT, MOUNT_POINT, 2, 3, MOUNT_POINT]);
        assert_eq!(l.renamed, ["/a/", "/memories/", "/x/"]);
        let l = merge_ls(&r, "/a", None, &[]).unwrap();
        assert_eq!(l.renamed, ["/a/b/", "/a/c/"]);
        let l = merge_ls(&r, "/memories", Some(0), &["/n/".into(), "/z.md".into()]).unwrap();
        assert_eq!((l.picks, l.renamed), (vec![0, 1], vec!["/memories/n/".into(), "/memories/z.md".into()]));
        assert_eq!(mounts_under(&r, "/a"), [1, 2]);
        assert!(mounts_under(&r, "/memories").is_empty());
    }

    fn asks(pattern: &str, root: &str) -> Vec<(usize, String, String)> {
        let r = Router::new(&["/memories/"]).unwrap();
        glob_asks(&r, pattern, root).into_iter().map(|a| (a.mount, a.pattern, a.path)).collect()
    }

    #[test]
    fn glob_pushes_literal_directories_down() {
        let ask = |m: usize, p: &str, d: &str| (m, p.to_string(), d.to_string());
        assert_eq!(asks("/memories/notes/*.md", "/"), [ask(0, "**", "/notes")]);
        assert_eq!(asks("**/*.md", "/"), [ask(0, "**/*.md", "/")]);
        assert_eq!(asks("src/*.ts", "/"), []);
        assert_eq!(asks("*/*.ts", "/"), [ask(0, "**", "/")]);
        assert_eq!(asks("memories/**/deep/*.md", "/"), [ask(0, "**", "/")]);
        assert_eq!(asks("*.md", "/memories/notes"), [ask(0, "**", "/notes")]);
        assert_eq!(asks("../x/*", "/"), [ask(0, "**", "/")]);
        assert_eq!(asks("/src/*.ts", "/memories"), []);
    }

    // ---- fan-out over resident tables: the same answer as one flat tree ----

    // Not nested: a route inside another route's tree is answered as the composite always did
    // (each backend on its own), which no flat tree shows; the TypeScript property test
    // compares the fan-out with the per-backend path on nested layouts too.
    const PREFIXES: [&str; 5] = ["/a/", "/q/r/", "/m/", "/x/y/", "/z/"];
    const NAMES: [&str; 8] = ["/n.md", "/b/k.md", "/b/c.txt", "/d/e/f.md", "/y/q.md", "/k.txt", "/a/b/g.md", "/m"];
    const ROOTS: [&str; 8] = ["/", "/a", "/a/b", "/m", "/x", "/x/y/d", "/b", "/nowhere"];
    const GLOBS: [&str; 10] =
        ["**/*.md", "*", "b/*", "/a/**", "**", "*.txt", "b/**/*.md", "../x/*", "/m/*.md", "y/[q-z].md"];

    /// (mounted prefixes, files of the default backend, files per mount).
    type Layout = (Vec<usize>, Vec<(usize, u8)>, Vec<Vec<(usize, u8)>>);

    fn layout() -> impl proptest::strategy::Strategy<Value = Layout> {
        let files = || proptest::collection::vec((0..NAMES.len(), 0u8..4), 0..6);
        (
            proptest::sample::subsequence((0..PREFIXES.len()).collect::<Vec<_>>(), 0..=3),
            files(),
            proptest::collection::vec(files(), 3),
        )
    }

    fn file_content(i: usize, v: u8) -> Vec<u8> {
        format!("alpha {i}\nbeta {v}\nalpha beta\n{}\n", "gamma ".repeat(v as usize)).into_bytes()
    }

    /// The composite's tables and router, and one flat table holding what the composite shows.
    /// A call whose directory lies in a mount sees that mount only: then `flat` holds its files.
    fn tables(l: &Layout, within: impl Fn(&Router) -> Option<usize>) -> (Router, FileTable, Vec<FileTable>, FileTable) {
        let prefixes: Vec<&str> = l.0.iter().map(|&i| PREFIXES[i]).collect();
        let router = Router::new(&prefixes).unwrap();
        let (mut own, mut flat) = (FileTable::new(), FileTable::new());
        for &(n, v) in &l.1 {
            let _ = own.write(NAMES[n], file_content(n, v), 1.0, None);
        }
        let only = within(&router);
        for (p, f) in own.iter() {
            if only.is_none() && !router.shadows(p) {
                flat.write(p, f.data.to_vec(), 1.0, None).unwrap();
            }
        }
        let mut mounts = Vec::new();
        for (m, files) in l.2.iter().take(prefixes.len()).enumerate() {
            let mut t = FileTable::new();
            for &(n, v) in files {
                let _ = t.write(NAMES[n], file_content(n, v), 1.0, None);
            }
            for (p, f) in t.iter() {
                // A file hidden by a longer route is not shown either.
                let outer = outer_path(router.prefix(m).unwrap(), p);
                if only.is_none_or(|o| o == m) {
                    let _ = flat.write(&outer, f.data.to_vec(), 1.0, None);
                }
            }
            mounts.push(t);
        }
        (router, own, mounts, flat)
    }

    fn give<F: FnMut(Option<usize>, &FileTable) -> CoreResult<()>>(
        asks: &[FanAsk],
        own: &FileTable,
        mounts: &[FileTable],
        mut add: F,
    ) -> CoreResult<()> {
        for a in asks {
            add(a.mount, a.mount.map_or(own, |m| &mounts[m]))?;
        }
        Ok(())
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
        #[test]
        fn fan_out_globs_as_one_tree(l in layout(), root in 0..ROOTS.len(), g in 0..GLOBS.len(), cap in proptest::option::of(0usize..4)) {
            let (pattern, root) = (GLOBS[g], ROOTS[root]);
            let (router, own, mounts, flat) = tables(&l, |r| r.route_normalised(root).route);
            let mut fan = GlobFanOut::new(&router, pattern, root, cap);
            let asks = fan.asks().to_vec();
            let got = give(&asks, &own, &mounts, |m, t| fan.add(&router, m, t)).and_then(|_| fan.finish(&router));
            let want = flat.glob(&GlobOptions { pattern: pattern.into(), path: Some(root.into()), max_results: cap });
            match (got, want) {
                (Ok((files, from, truncated)), Ok(w)) => {
                    let paths: Vec<&str> = files.paths.iter().flat_map(|c| c.split('\0')).collect();
                    let want: Vec<&str> = w.files.iter().map(|f| f.path.as_str()).collect();
                    proptest::prop_assert_eq!(&paths, &want);
                    proptest::prop_assert_eq!(truncated, w.truncated);
                    // Each file's own metadata: the flat tree holds the same contents and times.
                    let sizes: Vec<f64> = w.files.iter().map(|f| f.size.unwrap_or(0) as f64).collect();
                    let times: Vec<f64> = w.files.iter().map(|f| f.modified_at.unwrap_or(0.0)).collect();
                    proptest::prop_assert_eq!((&files.sizes, &files.modified), (&sizes, &times));
                    for (p, m) in paths.iter().zip(from) {
                        proptest::prop_assert_eq!(router.route_normalised(p).route, m);
                    }
                    for (p, v) in paths.iter().zip(&files.versions) {
                        let (inner, table) = match router.route_normalised(p).route {
                            Some(m) => (router.route_normalised(p).path, &mounts[m]),
                            None => (p.to_string(), &own),
                        };
                        proptest::prop_assert_eq!(table.stat(&inner).ok().and_then(|i| i.version), Some(v.to_string()));
                    }
                }
                (Err(a), Err(b)) => proptest::prop_assert_eq!(a.code, b.code),
                (a, b) => proptest::prop_assert!(false, "{a:?} vs {b:?}"),
            }
        }

        #[test]
        fn fan_out_greps_as_one_tree(
            l in layout(), root in 0..ROOTS.len(), mode in 0..3usize, cap in proptest::option::of(0usize..5),
            context in 0usize..2, file_glob in proptest::option::of(proptest::sample::select(vec!["*.md", "b/*.md", "**/*.txt"])),
            pattern in proptest::sample::select(vec!["alpha", "beta 2", "gamma", "zzz", "a("]), regex in proptest::bool::ANY,
        ) {
            let root = ROOTS[root];
            let (router, own, mounts, flat) = tables(&l, |r| r.route_normalised(root).route);
            let output_mode = [OutputMode::Content, OutputMode::FilesWithMatches, OutputMode::Count][mode];
            let opts = GrepOptions {
                pattern: pattern.into(), glob: file_glob.map(String::from), regex, max_count: cap, output_mode, context,
                ..GrepOptions::default()
            };
            let mut fan = GrepFanOut::new(&router, &opts, root);
            let asks = fan.asks().to_vec();
            let text_fan = {
                let mut t = GrepFanOut::new(&router, &opts, root);
                give(&asks, &own, &mounts, |m, tb| t.add(&router, m, tb)).and_then(|_| t.text(&router, 300))
            };
            // A fan-out made for its text alone stops each source early, and gives the same text.
            for max_chars in [0, 1, 12, 40, 120, 300] {
                let text = |mut t: GrepFanOut| {
                    give(&asks, &own, &mounts, |m, tb| t.add(&router, m, tb)).and_then(|_| t.text(&router, max_chars))
                };
                let whole = text(GrepFanOut::new(&router, &opts, root));
                let early = text(GrepFanOut::new(&router, &opts, root).for_text(Some(max_chars)));
                match (whole, early) {
                    (Ok(a), Ok(b)) => proptest::prop_assert_eq!(a, b, "max_chars {}", max_chars),
                    (Err(a), Err(b)) => proptest::prop_assert_eq!(a.code, b.code),
                    (a, b) => proptest::prop_assert!(false, "{a:?} vs {b:?}"),
                }
            }
            let got = give(&asks, &own, &mounts, |m, t| fan.add(&router, m, t)).and_then(|_| fan.finish(&router));
            let want = flat.grep(&GrepOptions { path: Some(root.into()), ..opts.clone() });
            match (&got, &want) {
                (Ok(a), Ok(b)) => proptest::prop_assert_eq!(a, b),
                // The flat tree has no directory where only an empty mount is: the composite
                // shows that directory, empty.
                (Ok(a), Err(b)) if b.code == ErrorCode::FileNotFound => {
                    proptest::prop_assert!(a.matches.as_ref().is_none_or(Vec::is_empty) && a.files.as_ref().is_none_or(Vec::is_empty) && a.counts.as_ref().is_none_or(|c| c.is_empty()));
                }
                (Err(a), Err(b)) if b.code == ErrorCode::FileNotFound => {
                    proptest::prop_assert!(matches!(a.code, ErrorCode::FileNotFound | ErrorCode::InvalidPattern))
                }
                (Err(a), Err(b)) => proptest::prop_assert_eq!(a.code, b.code),
                (a, b) => proptest::prop_assert!(false, "{a:?} vs {b:?}"),
            }
            if let Ok(a) = got {
                // The text is the tool formatter's text of the structured answer.
                let text = text_fan.unwrap();
                let cols = crate::api::grep_columns(a);
                let (paths, numbers, texts) = match output_mode {
                    OutputMode::Content => {
                        let mut paths = Vec::new();
                        for (p, &n) in cols.group_paths.unwrap().iter().zip(&cols.group_sizes.unwrap()) {
                            paths.extend(std::iter::repeat_n(p.clone(), n as usize));
                        }
                        (paths, cols.lines.unwrap(), cols.texts.unwrap())
                    }
                    OutputMode::FilesWithMatches => (cols.files.unwrap(), vec![], vec![]),
                    OutputMode::Count => (cols.count_paths.unwrap(), cols.counts.unwrap().iter().map(|&n| n as i32).collect(), vec![]),
                };
                let want = crate::format::format_grep_columns(pattern, output_mode, &paths, &numbers, &texts, cols.truncated, &[], 300);
                proptest::prop_assert_eq!(text, want);
            }
        }
    }

    #[test]
    fn route_parts_give_the_inner_path_as_a_utf16_offset() {
        let r = Router::new(&["/mémoires/", "/a/b/"]).unwrap();
        let inner = |input: &str| {
            let (outer, route, start) = route_parts(&r, input).unwrap();
            let units: Vec<u16> = outer.encode_utf16().collect();
            let inner = start.map_or("/".to_string(), |s| String::from_utf16(&units[s..]).unwrap());
            let routed = r.route(input).unwrap();
            assert_eq!(
                (outer.as_str(), route, inner.as_str()),
                (routed.outer.as_str(), routed.route, routed.path.as_str())
            );
            (route, inner)
        };
        assert_eq!(inner("/mémoires//x/é.md"), (Some(0), "/x/é.md".to_string()));
        assert_eq!(inner("/mémoires"), (Some(0), "/".to_string()));
        assert_eq!(inner("/a/b"), (Some(1), "/".to_string()));
        assert_eq!(inner("/a/b/c/../d"), (Some(1), "/d".to_string()));
        assert_eq!(inner("/a/x"), (None, "/a/x".to_string()));
        assert_eq!(inner("/"), (None, "/".to_string()));
        let root = Router::new(&["/"]).unwrap();
        assert_eq!(route_parts(&root, "/q").unwrap(), ("/q".to_string(), Some(0), Some(0)));
        assert_eq!(route_parts(&root, "/").unwrap(), ("/".to_string(), Some(0), Some(0)));
        assert!(route_parts(&r, "/../x").is_err());
    }

    #[test]
    fn ls_of_a_table_lists_as_the_merge_does() {
        let r = Router::new(&["/memories/", "/a/b/"]).unwrap();
        let mut own = FileTable::new();
        for p in ["/memories/hidden.md", "/n.md", "/a/x.md", "/memoriesX.md"] {
            own.write(p, b"x".to_vec(), 1.0, None).unwrap();
        }
        let paths = |v: Vec<FileInfo>| v.into_iter().map(|f| f.path).collect::<Vec<_>>();
        let root = ls_table(&r, "/", None, "/", &own).unwrap();
        assert_eq!(paths(root), ["/a/", "/memories/", "/memoriesX.md", "/n.md"]);
        assert_eq!(paths(ls_table(&r, "/a", None, "/a", &own).unwrap()), ["/a/b/", "/a/x.md"]);
        // Only a route below: the default's missing directory lists the mount point.
        let empty = FileTable::new();
        assert_eq!(paths(ls_table(&r, "/a", None, "/a", &empty).unwrap()), ["/a/b/"]);
        assert_eq!(ls_table(&r, "/q", None, "/q", &empty).unwrap_err().subject, "/q");
        let mut m = FileTable::new();
        m.write("/d/k.md", b"k".to_vec(), 1.0, None).unwrap();
        let listed = ls_table(&r, "/memories", Some(0), "/", &m).unwrap();
        assert_eq!((listed[0].path.as_str(), listed[0].is_dir), ("/memories/d/", true));
        let e = ls_table(&r, "/memories/nope", Some(0), "/nope", &m).unwrap_err();
        assert_eq!((e.code, e.subject.as_str()), (ErrorCode::FileNotFound, "/memories/nope"));
    }

    /// Under a cap with context lines, each source is asked one match more: the cut is where
    /// one tree's search cuts, with the leading context of the match cut and nothing after.
    #[test]
    fn a_capped_fan_out_with_context_cuts_where_one_tree_does() {
        let router = Router::new(&["/m/"]).unwrap();
        let (mut own, mut mount, mut flat) = (FileTable::new(), FileTable::new(), FileTable::new());
        let text = b"alpha\nbefore\nhit 1\nafter\nhit 2\nend\n".to_vec();
        own.write("/y.md", text.clone(), 1.0, None).unwrap();
        mount.write("/f.md", text.clone(), 1.0, None).unwrap();
        flat.write("/m/f.md", text.clone(), 1.0, None).unwrap();
        flat.write("/y.md", text, 1.0, None).unwrap();
        for (cap, context) in [(0, 1), (1, 1), (2, 1), (3, 1), (1, 2), (0, 0), (1, 0)] {
            let opts = GrepOptions { pattern: "hit".into(), max_count: Some(cap), context, ..GrepOptions::default() };
            let mut fan = GrepFanOut::new(&router, &opts, "/");
            let asked: Vec<Option<usize>> = fan.asks().iter().map(|a| a.max_count).collect();
            let mount_cap = if context > 0 { cap + 1 } else { cap };
            assert_eq!(asked, [Some(cap + 1), Some(mount_cap)], "cap {cap} context {context}");
            fan.add(&router, None, &own).unwrap();
            fan.add(&router, Some(0), &mount).unwrap();
            let got = fan.finish(&router).unwrap();
            let want = flat.grep(&GrepOptions { path: Some("/".into()), ..opts }).unwrap();
            assert_eq!(got, want, "cap {cap} context {context}");
        }
        // Within one mount, or with no mount below, the one source is asked the call's cap.
        let opts = GrepOptions { pattern: "hit".into(), max_count: Some(1), context: 1, ..GrepOptions::default() };
        assert_eq!(GrepFanOut::new(&router, &opts, "/m").asks()[0].max_count, Some(1));
        assert_eq!(GrepFanOut::new(&router, &opts, "/a").asks()[0].max_count, Some(1));
    }

    /// The default backend's files under a route are hidden: they neither fill the cap nor set
    /// `truncated`.
    #[test]
    fn hidden_files_of_the_default_backend_do_not_count_toward_the_cap() {
        let router = Router::new(&["/m/"]).unwrap();
        let (mut own, mut mount) = (FileTable::new(), FileTable::new());
        own.write("/m/hidden.md", b"hit\n".to_vec(), 1.0, None).unwrap();
        mount.write("/x.md", b"miss\n".to_vec(), 1.0, None).unwrap();
        let run = |own: &FileTable, mode, cap| {
            let opts = GrepOptions {
                pattern: "hit".into(),
                max_count: Some(cap),
                output_mode: mode,
                ..GrepOptions::default()
            };
            let mut fan = GrepFanOut::new(&router, &opts, "/");
            fan.add(&router, None, own).unwrap();
            fan.add(&router, Some(0), &mount).unwrap();
            let r = fan.finish(&router).unwrap();
            let shown =
                r.matches.map_or(0, |m| m.len()) + r.files.map_or(0, |f| f.len()) + r.counts.map_or(0, |c| c.len());
            (shown, r.truncated)
        };
        for mode in [OutputMode::Content, OutputMode::FilesWithMatches, OutputMode::Count] {
            assert_eq!(run(&own, mode, 0), (0, false), "{mode:?}: nothing shown was cut");
        }
        own.write("/z.md", b"hit\n".to_vec(), 1.0, None).unwrap();
        for mode in [OutputMode::Content, OutputMode::FilesWithMatches, OutputMode::Count] {
            assert_eq!(run(&own, mode, 1), (1, false), "{mode:?}: /z.md is shown");
            assert_eq!(run(&own, mode, 0), (0, true), "{mode:?}: /z.md is cut");
        }
    }

    #[test]
    fn fan_out_errors_name_the_outer_path_and_need_every_source() {
        let router = Router::new(&["/m/"]).unwrap();
        let (own, mount) = (FileTable::new(), FileTable::new());
        let opts = GrepOptions { pattern: "x".into(), ..GrepOptions::default() };
        let mut fan = GrepFanOut::new(&router, &opts, "/m/missing");
        assert_eq!(fan.asks(), [FanAsk { mount: Some(0), path: "/missing".into(), pattern: None, max_count: None }]);
        let e = fan.add(&router, Some(0), &mount).unwrap_err();
        assert_eq!((e.code, e.subject.as_str()), (ErrorCode::FileNotFound, "/m/missing"));
        // A source not given is a malformed call, not an empty answer.
        let mut fan = GrepFanOut::new(&router, &opts, "/");
        fan.add(&router, None, &own).unwrap();
        assert_eq!(fan.finish(&router).unwrap_err().code, ErrorCode::Unsupported);
        let mut fan = GlobFanOut::new(&router, "*", "/", None);
        assert_eq!(fan.add(&router, Some(3), &own).unwrap_err().code, ErrorCode::Unsupported);
        // A fan-out made for its text alone answers the text and refuses the structured answer,
        // which may be missing what its sources left unsearched.
        let text_only = || {
            let mut fan = GrepFanOut::new(&router, &opts, "/").for_text(Some(10));
            fan.add(&router, None, &own).unwrap();
            fan.add(&router, Some(0), &mount).unwrap();
            fan
        };
        assert_eq!(text_only().finish(&router).unwrap_err().code, ErrorCode::Unsupported);
        assert!(text_only().text(&router, 10).is_ok());
    }
}
