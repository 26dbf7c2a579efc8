//! Paths side by side in one buffer, for code that reads many paths in a row.
//!
//! A file table's paths live wherever the allocator put them when each file was written,
//! between the files' contents: a glob over 10,000 files written one by one spent most of its
//! time waiting for each path's cache line. [`LazyPathIndex`] keeps a copy of all of them, in
//! path order, in one string. It is built by the first full scan after the set of paths
//! changes (a file created or deleted; rewriting a file keeps it) and dropped by that change,
//! so a scan pays for a build only once per change, about what one scan cost without it.

use std::sync::OnceLock;

/// Paths concatenated in one string, in the order they were added: one allocation for all of
/// them, read in a row.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JoinedPaths {
    text: String,
    /// Where each path ends in `text`.
    ends: Vec<usize>,
}

impl JoinedPaths {
    pub fn push(&mut self, path: &str) {
        self.text.push_str(path);
        self.ends.push(self.text.len());
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The `i`-th path.
    pub fn get(&self, i: usize) -> Option<&str> {
        let end = *self.ends.get(i)?;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        Some(&self.text[start..end])
    }

    /// The paths in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        let mut start = 0;
        self.ends.iter().map(move |&end| {
            let p = &self.text[start..end];
            start = end;
            p
        })
    }
}

impl<'a> FromIterator<&'a str> for JoinedPaths {
    fn from_iter<I: IntoIterator<Item = &'a str>>(paths: I) -> Self {
        let mut joined = JoinedPaths::default();
        paths.into_iter().for_each(|p| joined.push(p));
        joined
    }
}

/// A table's paths as [`JoinedPaths`], built on first use and dropped when they change.
#[derive(Debug, Clone, Default)]
pub struct LazyPathIndex(OnceLock<JoinedPaths>);

impl LazyPathIndex {
    /// The index of `paths`, which must be the table's paths in path order: the same ones every
    /// time until [`Self::forget`] is called.
    pub fn get<'a>(&self, paths: impl ExactSizeIterator<Item = &'a String> + Clone) -> &JoinedPaths {
        self.0.get_or_init(|| {
            let bytes = paths.clone().map(String::len).sum();
            let mut index = JoinedPaths { text: String::with_capacity(bytes), ends: Vec::with_capacity(paths.len()) };
            paths.for_each(|p| index.push(p));
            index
        })
    }

    /// The index if it has been built since the paths last changed.
    pub fn built(&self) -> Option<&JoinedPaths> {
        self.0.get()
    }

    /// Drops the index: the table's set of paths is about to change.
    pub fn forget(&mut self) {
        self.0.take();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_come_back_in_order_and_whole() {
        let paths = ["/a", "/a/b.ts", "", "/é/ü.md", "/z"];
        let joined: JoinedPaths = paths.into_iter().collect();
        assert_eq!(joined.iter().collect::<Vec<_>>(), paths);
        assert_eq!(
            (0..6).map(|i| joined.get(i)).collect::<Vec<_>>(),
            paths.map(Some).into_iter().chain([None]).collect::<Vec<_>>()
        );
        assert_eq!((joined.len(), joined.is_empty()), (5, false));
        assert!(JoinedPaths::default().is_empty());
    }

    #[test]
    fn the_index_is_kept_until_forgotten() {
        let mut index = LazyPathIndex::default();
        let first = ["/a".to_string()];
        assert!(index.built().is_none());
        assert_eq!(index.get(first.iter()).len(), 1);
        let second = ["/a".to_string(), "/b".to_string()];
        assert_eq!(index.get(second.iter()).len(), 1, "kept until forgotten");
        index.forget();
        assert!(index.built().is_none());
        assert_eq!(index.get(second.iter()).iter().collect::<Vec<_>>(), ["/a", "/b"]);
    }
}
