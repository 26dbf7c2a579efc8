//! Test fixtures shared by the search's modules.

use super::{grep, search::search_all, Collector, GrepOptions, GrepResult, Searcher};
use crate::error::CoreResult;

pub(super) fn run(files: &[(&str, &str)], opts: GrepOptions) -> CoreResult<GrepResult> {
    let owned: Vec<(String, Vec<u8>)> = files.iter().map(|(p, c)| (p.to_string(), c.as_bytes().to_vec())).collect();
    let root = opts.path.clone().unwrap_or_else(|| "/".into());
    grep(owned.iter().map(|(p, d)| (p, d.as_slice())), &root, &opts)
}

pub(super) fn lit(p: &str) -> GrepOptions {
    GrepOptions { pattern: p.into(), ..Default::default() }
}

pub(super) fn lines(r: &GrepResult) -> Vec<(String, usize, String, bool)> {
    r.matches.as_ref().unwrap().iter().map(|m| (m.path.clone(), m.line, m.text.clone(), m.context)).collect()
}

/// The files searched one after another in path order: what every search must answer.
pub(super) fn path_order(
    files: &[(&String, &[u8])],
    searcher: &Searcher,
    opts: &GrepOptions,
    mut progress: impl FnMut(&Collector) -> bool,
) -> CoreResult<Collector> {
    let mut collector = Collector::new(opts);
    search_all(files, searcher, &mut collector, &mut progress)?;
    Ok(collector)
}

/// `count` files of `size` bytes each, cut from one buffer in the reverse of their path order
/// (so memory order and path order disagree everywhere); `text(i)` starts file `i`.
pub(super) fn reversed_files(count: usize, size: usize, text: impl Fn(usize) -> String) -> (Vec<String>, Vec<u8>) {
    let paths: Vec<String> = (0..count).map(|i| format!("/f{i:04}.txt")).collect();
    let mut buffer = Vec::with_capacity(count * size);
    for i in (0..count).rev() {
        let mut content = text(i).into_bytes();
        content.resize(size - 1, b'.');
        content.push(b'\n');
        buffer.extend_from_slice(&content);
    }
    (paths, buffer)
}

pub(super) fn slices<'a>(paths: &'a [String], buffer: &'a [u8]) -> Vec<(&'a String, &'a [u8])> {
    let size = buffer.len() / paths.len();
    let at = |i: usize| (paths.len() - 1 - i) * size;
    paths.iter().enumerate().map(|(i, p)| (p, &buffer[at(i)..at(i) + size])).collect()
}
