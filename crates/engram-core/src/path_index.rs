//! A file table's paths side by side in one buffer, for scans that read every path.
//!
//! The table's paths live wherever the allocator put them when each file was written, between
//! the files' contents: a glob over 10,000 files written one by one spent most of its time
//! waiting for each path's cache line. The index keeps a copy of all of them, in path order, in
//! one string. It is built by the first full scan after the set of paths changes (a file created
//! or deleted; rewriting a file keeps it) and dropped by that change, so a scan pays for a build
//! only once per change, about what one scan cost without it.

use std::sync::OnceLock;

/// Every path of a table, in path order, concatenated.
#[derive(Debug, Clone)]
pub struct PathIndex {
    text: String,
    /// Where each path ends in `text`.
    ends: Vec<u32>,
}

impl PathIndex {
    /// The index of `paths` (in path order); `None` when they take more than 4 GiB.
    fn build<'a>(paths: impl ExactSizeIterator<Item = &'a String> + Clone) -> Option<PathIndex> {
        let bytes: usize = paths.clone().map(String::len).sum();
        u32::try_from(bytes).ok()?;
        let mut text = String::with_capacity(bytes);
        let mut ends = Vec::with_capacity(paths.len());
        for p in paths {
            text.push_str(p);
            ends.push(text.len() as u32);
        }
        Some(PathIndex { text, ends })
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// The paths in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        let mut start = 0;
        self.ends.iter().map(move |&end| {
            let p = &self.text[start..end as usize];
            start = end as usize;
            p
        })
    }
}

/// A table's [`PathIndex`], built on first use and dropped when the table's paths change.
#[derive(Debug, Clone, Default)]
pub struct LazyPathIndex(OnceLock<Option<PathIndex>>);

impl LazyPathIndex {
    /// The index of `paths`, which must be the table's paths in path order: the same ones every
    /// time until [`Self::forget`] is called.
    pub fn get<'a>(&self, paths: impl ExactSizeIterator<Item = &'a String> + Clone) -> Option<&PathIndex> {
        self.0.get_or_init(|| PathIndex::build(paths)).as_ref()
    }

    /// The index if it has been built since the paths last changed.
    pub fn built(&self) -> Option<&PathIndex> {
        self.0.get().and_then(Option::as_ref)
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
        let paths: Vec<String> = ["/a", "/a/b.ts", "/é/ü.md", "/z"].map(String::from).to_vec();
        let index = LazyPathIndex::default();
        let built = index.get(paths.iter()).unwrap();
        assert_eq!(built.iter().collect::<Vec<_>>(), paths);
        assert_eq!(built.len(), 4);
        let none: Vec<String> = Vec::new();
        assert_eq!(PathIndex::build(none.iter()).unwrap().len(), 0);
    }

    #[test]
    fn forgetting_makes_the_next_use_rebuild() {
        let mut index = LazyPathIndex::default();
        let first = ["/a".to_string()];
        assert!(index.built().is_none());
        assert_eq!(index.get(first.iter()).unwrap().len(), 1);
        let second = ["/a".to_string(), "/b".to_string()];
        assert_eq!(index.get(second.iter()).unwrap().len(), 1, "kept until forgotten");
        index.forget();
        assert!(index.built().is_none());
        assert_eq!(index.get(second.iter()).unwrap().iter().collect::<Vec<_>>(), ["/a", "/b"]);
    }
}
