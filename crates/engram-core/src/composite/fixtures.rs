//! Test fixtures shared by the composite's modules.

use super::{outer_path, FanAsk};
use crate::error::CoreResult;
use crate::router::Router;
use crate::table::FileTable;

pub(super) fn router() -> Router {
    Router::new(&["/memories/", "/skills/", "/memories/deep/"]).unwrap()
}

// ---- fan-out over resident tables: the same answer as one flat tree ----

// Not nested: a route inside another route's tree is answered as the composite always did
// (each backend on its own), which no flat tree shows; the TypeScript property test
// compares the fan-out with the per-backend path on nested layouts too.
const PREFIXES: [&str; 5] = ["/a/", "/q/r/", "/m/", "/x/y/", "/z/"];
const NAMES: [&str; 8] = ["/n.md", "/b/k.md", "/b/c.txt", "/d/e/f.md", "/y/q.md", "/k.txt", "/a/b/g.md", "/m"];
pub(super) const ROOTS: [&str; 8] = ["/", "/a", "/a/b", "/m", "/x", "/x/y/d", "/b", "/nowhere"];
pub(super) const GLOBS: [&str; 10] =
    ["**/*.md", "*", "b/*", "/a/**", "**", "*.txt", "b/**/*.md", "../x/*", "/m/*.md", "y/[q-z].md"];

/// (mounted prefixes, files of the default backend, files per mount).
pub(super) type Layout = (Vec<usize>, Vec<(usize, u8)>, Vec<Vec<(usize, u8)>>);

pub(super) fn layout() -> impl proptest::strategy::Strategy<Value = Layout> {
    let files = || proptest::collection::vec((0..NAMES.len(), 0u8..4), 0..6);
    (
        proptest::sample::subsequence((0..PREFIXES.len()).collect::<Vec<_>>(), 0..=3),
        files(),
        proptest::collection::vec(files(), 3),
    )
}

pub(super) fn file_content(i: usize, v: u8) -> Vec<u8> {
    format!("alpha {i}\nbeta {v}\nalpha beta\n{}\n", "gamma ".repeat(v as usize)).into_bytes()
}

/// The composite's tables and router, and one flat table holding what the composite shows.
/// A call whose directory lies in a mount sees that mount only: then `flat` holds its files.
pub(super) fn tables(
    l: &Layout,
    within: impl Fn(&Router) -> Option<usize>,
) -> (Router, FileTable, Vec<FileTable>, FileTable) {
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

pub(super) fn give<F: FnMut(Option<usize>, &FileTable) -> CoreResult<()>>(
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
