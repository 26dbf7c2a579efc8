//! A composite grep over resident tables: what each source is asked so that the merged answer
//! equals one tree's, and the merge as a grep result or as the tool's text.

use super::errors::{malformed, outer_error};
use super::fan_out::{slot_of, take_parts, FanAsk, Slot};
use super::merge::{merge_grep, GrepMerge, GrepPart, Merged};
use super::routing::mounts_under;
use crate::error::{CoreResult, ErrorCode};
use crate::format::GrepText;
use crate::grep::{GrepMatch, GrepOptions, GrepResult, OutputMode, MAX_COUNT};
use crate::router::Router;
use crate::table::FileTable;

/// One source's grep answer: the part the merge sees and, for `content`, each line's number
/// and text (lines of all groups in order).
type GrepGiven = (GrepPart, Vec<(usize, String)>);

/// A composite grep over resident tables (see [`GlobFanOut`](super::GlobFanOut) for the steps).
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
    use crate::composite::fixtures::{give, layout, tables, ROOTS};

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
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
}
