//! A directory listing as a composite shows it: a mount's entries prefixed, the default
//! backend's entries a route hides dropped, and the mount points below the directory added.

use super::errors::{malformed, outer_error};
use super::merge::Merged;
use super::routing::{mount_prefix, mounts_under, outer_path};
use crate::error::{CoreResult, ErrorCode};
use crate::router::Router;
use crate::table::{FileInfo, FileTable};

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
