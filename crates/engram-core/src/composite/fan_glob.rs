//! A composite glob over resident tables.

use super::errors::{malformed, outer_error};
use super::fan_out::{slot_of, take_parts, FanAsk, Slot};
use super::glob_asks::glob_asks;
use super::merge::{merge_glob, GlobPart, Merged};
use crate::api::FileColumns;
use crate::error::{CoreResult, ErrorCode};
use crate::format::format_glob;
use crate::ops::GlobOptions;
use crate::path_index::JoinedPaths;
use crate::router::Router;
use crate::table::FileTable;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::composite::fixtures::{give, layout, tables, GLOBS, ROOTS};

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
    }
}
