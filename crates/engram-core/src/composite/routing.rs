//! Paths through the router: the outer path of a mount's inner path, where a path routes (in a
//! form that crosses the boundary), a mount's prefix, the mounts below a directory.

use super::errors::malformed;
use crate::error::CoreResult;
use crate::router::Router;

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

pub(super) fn mount_prefix(router: &Router, mount: usize) -> CoreResult<&str> {
    router.prefix(mount).ok_or_else(|| malformed("part (no such mount)"))
}

/// The routes strictly below the normalised directory `dir`, in construction order.
pub fn mounts_under(router: &Router, dir: &str) -> Vec<usize> {
    router.routes_under(dir).into_iter().map(|(i, _)| i).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outer_paths_join_prefix_and_inner() {
        assert_eq!(outer_path("/memories/", "/a.md"), "/memories/a.md");
        assert_eq!(outer_path("/memories/", "/"), "/memories/");
        assert_eq!(outer_path("/", "/a"), "/a");
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
}
