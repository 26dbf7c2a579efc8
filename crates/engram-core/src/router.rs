//! Longest-prefix routing of virtual paths to mounted backends (DESIGN §4 "Composite").

use crate::error::{CoreError, CoreResult, ErrorCode};
use crate::path;
use serde::Serialize;

/// Where a path goes: the index of the matching route (in construction order) or `None` for the
/// default backend, and the path as the mounted backend sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Route {
    pub route: Option<usize>,
    pub prefix: Option<String>,
    pub path: String,
    /// The whole path, normalised: what the composite names in answers and errors.
    pub outer: String,
}

/// Routes are normalised at construction to `/a/b/`; `/memoriesX` never matches `/memories/`.
#[derive(Debug, Clone)]
pub struct Router {
    /// `(normalised prefix with trailing '/', original index)`, longest prefix first.
    prefixes: Vec<(String, usize)>,
}

impl Router {
    /// Two prefixes naming one directory (`/m` and `/m/`) are refused (`invalid_path`): the
    /// second mount could never be reached by a path, yet a search over both would show its
    /// files.
    pub fn new<S: AsRef<str>>(prefixes: &[S]) -> CoreResult<Router> {
        let mut normalised = Vec::with_capacity(prefixes.len());
        for (i, p) in prefixes.iter().enumerate() {
            normalised.push((path::normalize_dir(p.as_ref())?, i));
        }
        normalised.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)).then(a.1.cmp(&b.1)));
        if let Some(pair) = normalised.windows(2).find(|w| w[0].0 == w[1].0) {
            let (first, second) = (prefixes[pair[0].1].as_ref(), prefixes[pair[1].1].as_ref());
            return Err(CoreError::new(
                ErrorCode::InvalidPath,
                &pair[0].0,
                format_args!("mounted twice (as {first:?} and {second:?})"),
            ));
        }
        Ok(Router { prefixes: normalised })
    }

    /// The normalised prefixes in construction order.
    pub fn prefixes(&self) -> Vec<String> {
        let mut v = self.prefixes.clone();
        v.sort_by_key(|(_, i)| *i);
        v.into_iter().map(|(p, _)| p).collect()
    }

    /// The normalised prefix of the route at `index` (construction order).
    pub fn prefix(&self, index: usize) -> Option<&str> {
        self.prefixes.iter().find(|(_, i)| *i == index).map(|(p, _)| p.as_str())
    }

    /// Number of routes.
    pub fn len(&self) -> usize {
        self.prefixes.len()
    }

    /// Whether there are no routes.
    pub fn is_empty(&self) -> bool {
        self.prefixes.is_empty()
    }

    /// Whether a normalised path of the default backend is hidden behind a route (the mount
    /// point itself or anything below it).
    pub fn shadows(&self, p: &str) -> bool {
        self.matching(p).is_some()
    }

    /// The route (index into `prefixes`) a normalised path belongs to, and the inner path.
    fn matching<'p>(&self, p: &'p str) -> Option<(usize, &'p str)> {
        self.prefixes.iter().enumerate().find_map(|(k, (prefix, _))| {
            if prefix == "/" {
                return Some((k, p));
            }
            // `/memories` (the mount point itself) and `/memories/...` both belong to `/memories/`.
            let rest = p.strip_prefix(&prefix[..prefix.len() - 1])?;
            match rest {
                "" => Some((k, "/")),
                r if r.starts_with('/') => Some((k, r)),
                _ => None,
            }
        })
    }

    /// Routes a path; the path is normalised first, so escapes are refused here.
    pub fn route(&self, input: &str) -> CoreResult<Route> {
        let p = path::normalize(input)?;
        Ok(self.route_normalised(&p))
    }

    /// Routes an already normalised path.
    pub fn route_normalised(&self, p: &str) -> Route {
        match self.matching(p) {
            Some((k, inner)) => {
                let (prefix, index) = &self.prefixes[k];
                Route {
                    route: Some(*index),
                    prefix: Some(prefix.clone()),
                    path: inner.to_string(),
                    outer: p.to_string(),
                }
            }
            None => Route { route: None, prefix: None, path: p.to_string(), outer: p.to_string() },
        }
    }

    /// Route prefixes strictly below the normalised directory `dir` (for fan-out of `ls`, `glob`
    /// and `grep` at a parent of one or more mount points), in construction order.
    pub fn routes_under(&self, dir: &str) -> Vec<(usize, String)> {
        let dir = if dir == "/" { "/".to_string() } else { format!("{dir}/") };
        let mut v: Vec<(usize, String)> = self
            .prefixes
            .iter()
            .filter(|(p, _)| p.len() > dir.len() && p.starts_with(&dir))
            .map(|(p, i)| (*i, p.clone()))
            .collect();
        v.sort_by_key(|(i, _)| *i);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    fn router() -> Router {
        Router::new(&["/memories", "/memories/deep/", "//skills//"]).unwrap()
    }

    #[test]
    fn refuses_a_directory_mounted_twice() {
        for (a, b) in [("/m", "/m/"), ("//m//", "/x/../m"), ("/", "//")] {
            let e = Router::new(&["/other", a, b]).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidPath);
            assert!(e.message.contains("mounted twice"), "{}", e.message);
        }
        assert!(Router::new(&["/m", "/m/n", "/mn"]).is_ok());
    }

    #[test]
    fn longest_prefix_wins() {
        let r = router();
        assert_eq!(r.route("/memories/a.md").unwrap().route, Some(0));
        assert_eq!(r.route("/memories/a.md").unwrap().path, "/a.md");
        let deep = r.route("/memories/deep/x/y.md").unwrap();
        assert_eq!((deep.route, deep.path.as_str()), (Some(1), "/x/y.md"));
        assert_eq!(r.route("/memories//deep/./x").unwrap().outer, "/memories/deep/x");
        assert_eq!(r.route("/skills/s/SKILL.md").unwrap().route, Some(2));
    }

    #[test]
    fn prefix_matches_whole_segments_only() {
        let r = router();
        let x = r.route("/memoriesX/a.md").unwrap();
        assert_eq!((x.route, x.path.as_str()), (None, "/memoriesX/a.md"));
        let mount = r.route("/memories").unwrap();
        assert_eq!((mount.route, mount.path.as_str()), (Some(0), "/"));
    }

    #[test]
    fn routing_normalises_and_refuses_escapes() {
        let r = router();
        assert_eq!(r.route("/x/../memories//a").unwrap().route, Some(0));
        assert_eq!(r.route("/memories/../../etc").unwrap_err().code, ErrorCode::PathEscape);
        assert_eq!(r.prefixes(), vec!["/memories/", "/memories/deep/", "/skills/"]);
    }

    #[test]
    fn lists_routes_under_a_directory() {
        let r = router();
        let under_root: Vec<usize> = r.routes_under("/").into_iter().map(|(i, _)| i).collect();
        assert_eq!(under_root, vec![0, 1, 2]);
        assert_eq!(r.routes_under("/memories").len(), 1);
        assert!(r.routes_under("/skills").is_empty());
    }
}
