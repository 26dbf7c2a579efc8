//! What each mount is asked when a composite glob fans out: the pattern's literal leading
//! directories pushed down, so a Store-backed mount lists only that prefix.

use crate::router::Router;

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
