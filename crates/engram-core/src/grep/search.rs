//! The order a search takes the files in: the head in path order on the calling thread, then
//! a sparse pattern's holders found in memory order, or the rest in path order (on threads,
//! natively). Every order gives the answer path order gives.

use super::collector::Collector;
use super::memory_order::{holders_in_memory_order, Layout, MOST_HOLDING};
use super::options::{GrepOptions, GrepResult};
#[cfg(not(target_arch = "wasm32"))]
use super::parallel::parallel;
use super::searcher::Searcher;
use crate::error::CoreResult;

/// Below this many bytes a search stays on one thread: spawning costs more than it saves.
#[cfg(not(target_arch = "wasm32"))]
const PARALLEL_MIN_BYTES: usize = 4 << 20;
/// How much of a search runs first on the calling thread in path order: a frequent pattern
/// settles a capped answer there (the grep tool's 80,000 characters of `return` lines: ~15
/// files); what it finds also tells how dense the pattern is.
const HEAD_BYTES: usize = 1 << 20;
/// The average file size below which a sparse literal is still searched in path order (see
/// [`grep_with`]): visiting small files costs more than reading them, in whatever order.
const SPARSE_MIN_FILE_BYTES: usize = 512;

/// Searches `files` (already restricted to the search root, in path order). Large native
/// searches are split across threads; results are identical either way.
pub fn grep<'a>(
    files: impl Iterator<Item = (&'a String, &'a [u8])>,
    root: &str,
    opts: &GrepOptions,
) -> CoreResult<GrepResult> {
    grep_with(files, root, opts, |_| true).map(Collector::finish)
}

/// [`grep`], handing back the collector, and calling `progress` with it after each file that
/// contributed: the search stops early when `progress` returns `false` (its caller has all it
/// needs, e.g. a capped text).
///
/// The first [`HEAD_BYTES`] are searched in path order on this thread. Where their contents lie
/// scattered in memory, a pattern found there too rarely to fill the cap in the rest has what
/// every match holds (its sieve: the literal, or a regex's line filter or prefilter) looked for
/// in the rest in memory order (see [`holders_in_memory_order`]), and only the files that hold
/// it are searched, in path order:
/// the same calls as in path order, less those on files without a match. Anything else goes on
/// in path order, split over threads when large (natively).
pub fn grep_with<'a>(
    files: impl Iterator<Item = (&'a String, &'a [u8])>,
    root: &str,
    opts: &GrepOptions,
    mut progress: impl FnMut(&Collector) -> bool,
) -> CoreResult<Collector> {
    let searcher = Searcher::new(opts, root)?.bounded();
    let mut collector = Collector::new(opts);
    let files = files.filter(|(p, _)| searcher.wants(p));
    search_files(files, &searcher, &mut collector, &mut progress)?;
    Ok(collector)
}

/// A file of a search: its path and content.
pub(super) type File<'a> = (&'a String, &'a [u8]);

/// The body of [`grep_with`].
fn search_files<'a>(
    mut files: impl Iterator<Item = File<'a>>,
    searcher: &Searcher,
    collector: &mut Collector,
    progress: &mut dyn FnMut(&Collector) -> bool,
) -> CoreResult<()> {
    let mut head_bytes = 0usize;
    let mut layout = Layout::default();
    let mut more = false;
    for file in files.by_ref() {
        head_bytes += file.1.len();
        layout.step(file.1);
        if search_one(file, searcher, collector, progress)? {
            return Ok(());
        }
        if head_bytes >= HEAD_BYTES {
            more = true;
            break;
        }
    }
    if !more {
        return Ok(());
    }
    let mut rest = Rest::default();
    // The head's layout stands for the rest's: where it lies in path order, so does (nearly)
    // the rest, and the rest is searched as it comes.
    if let (Some(sieve), true) = (searcher.sieve(), layout.scattered()) {
        // The bytes the rest may hold, at the head's density (one match more than found, so
        // that an empty head promises nothing), without filling the room left. Past them the
        // cap is likely reached before the end, and path order stops there.
        let sparse_bytes = collector.room() as f64 * head_bytes as f64 / (collector.taken() + 1) as f64;
        let sparse = rest.take_within(&mut files, sparse_bytes);
        if sparse && rest.bytes >= rest.files.len() * SPARSE_MIN_FILE_BYTES {
            let holds = |data: &[u8]| sieve.holds(data);
            let threads = threads_for(head_bytes + rest.bytes);
            if let Some(holding) = holders_in_memory_order(&rest.files, holds, threads, rest.files.len() / MOST_HOLDING)
            {
                let holders: Vec<File> =
                    rest.files.into_iter().zip(holding).filter_map(|(file, holds)| holds.then_some(file)).collect();
                search_all(&holders, searcher, collector, progress)?;
                return Ok(());
            }
        }
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        rest.take_within(&mut files, f64::INFINITY);
        let threads = threads_for(head_bytes + rest.bytes);
        if threads > 1 {
            *collector =
                parallel(&rest.files, searcher, std::mem::replace(collector, Collector::empty()), threads, progress)?;
            return Ok(());
        }
    }
    if search_all(&rest.files, searcher, collector, progress)? {
        return Ok(());
    }
    for file in files {
        if search_one(file, searcher, collector, progress)? {
            break;
        }
    }
    Ok(())
}

/// Files of a search taken out of its iterator after the head.
#[derive(Default)]
struct Rest<'a> {
    files: Vec<File<'a>>,
    bytes: usize,
}

impl<'a> Rest<'a> {
    /// Takes files until they hold more than `most` bytes (then `false`: files may be left) or
    /// run out (`true`).
    fn take_within(&mut self, files: &mut impl Iterator<Item = File<'a>>, most: f64) -> bool {
        for file in files {
            self.bytes += file.1.len();
            self.files.push(file);
            if self.bytes as f64 > most {
                return false;
            }
        }
        true
    }
}

/// Threads for a search of `bytes`: one below [`PARALLEL_MIN_BYTES`] (and on WASM).
fn threads_for(bytes: usize) -> usize {
    #[cfg(not(target_arch = "wasm32"))]
    if bytes >= PARALLEL_MIN_BYTES {
        return std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
    }
    let _ = bytes;
    1
}

/// Searches `files` one after another; whether the search ended before the last (see
/// [`search_one`]).
pub(super) fn search_all(
    files: &[File],
    searcher: &Searcher,
    collector: &mut Collector,
    progress: &mut dyn FnMut(&Collector) -> bool,
) -> CoreResult<bool> {
    for &file in files {
        if search_one(file, searcher, collector, progress)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Searches one file into `collector`; whether the search has ended there: the cap exceeded,
/// or `progress` said stop.
fn search_one(
    (p, data): File,
    searcher: &Searcher,
    collector: &mut Collector,
    progress: &mut dyn FnMut(&Collector) -> bool,
) -> CoreResult<bool> {
    if let Some(hits) = searcher.try_search(p, data, collector.limit())? {
        collector.push(hits);
        return Ok(!progress(collector) || collector.is_full());
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grep::fixtures::{lit, path_order, reversed_files, slices};
    use crate::grep::OutputMode;

    #[test]
    fn large_searches_answer_and_stop_as_sequential_ones() {
        // Over PARALLEL_MIN_BYTES: the first HEAD_BYTES on this thread, the rest in blocks on
        // threads (on a machine with more than one CPU), or a sparse literal in memory order.
        let filler = "x".repeat(8 << 10);
        let files: Vec<(String, Vec<u8>)> = (0..700)
            .map(|i| {
                let mut text = format!("head {i}\n{filler}\n");
                if i % 50 == 7 {
                    text.push_str("rare needle\n");
                }
                if i % 2 == 0 {
                    text.push_str("common needle\ncommon again\n");
                }
                (format!("/d{}/f{i:03}.txt", i % 9), text.into_bytes())
            })
            .collect();
        let mut sorted = files;
        sorted.sort();
        let refs: Vec<(&String, &[u8])> = sorted.iter().map(|(p, d)| (p, d.as_slice())).collect();
        assert!(refs.iter().map(|(_, d)| d.len()).sum::<usize>() > PARALLEL_MIN_BYTES);
        for pattern in ["rare needle", "common", "needle"] {
            for cap in [None, Some(3), Some(300)] {
                let opts = GrepOptions { max_count: cap, ..lit(pattern) };
                let searcher = Searcher::new(&opts, "/").unwrap().bounded();
                let seq = path_order(&refs, &searcher, &opts, |_| true).unwrap();
                let all = grep_with(refs.iter().copied(), "/", &opts, |_| true).unwrap();
                assert_eq!(all.finish(), seq.finish(), "{pattern} cap {cap:?}");
                for stop_after in [1, 40, 200] {
                    let (mut seen_seq, mut seen_all) = (0, 0);
                    let seq = path_order(&refs, &searcher, &opts, |_| {
                        seen_seq += 1;
                        seen_seq < stop_after
                    })
                    .unwrap();
                    let all = grep_with(refs.iter().copied(), "/", &opts, |_| {
                        seen_all += 1;
                        seen_all < stop_after
                    })
                    .unwrap();
                    assert_eq!(
                        (seen_all, all.finish()),
                        (seen_seq, seq.finish()),
                        "{pattern} cap {cap:?} {stop_after}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_literal_sparse_at_first_answers_as_in_path_order() {
        // Past the head, contents in the reverse of path order: the rest is searched in memory
        // order, and must give what path order gives, also where the literal turns dense late,
        // and for a regex with a literal prefix (which fewer of the files holding it match).
        for (late, every) in [(0, 97), (700, 1), (1100, 3), (0, 1)] {
            let (paths, buffer) = reversed_files(1200, 2048, |i| {
                if i >= late && i % every == 0 {
                    format!("x\nneedle {i}\nagain needle\n")
                } else {
                    String::new()
                }
            });
            let files = slices(&paths, &buffer);
            let patterns = [
                lit("needle"),
                GrepOptions { regex: true, ..lit(r"needle \d*[05]\b") },
                GrepOptions { ignore_case: true, ..lit("NEEDLE") },
            ];
            for (mode, pattern) in [OutputMode::Content, OutputMode::FilesWithMatches, OutputMode::Count]
                .into_iter()
                .flat_map(|mode| patterns.iter().map(move |p| (mode, p)))
            {
                for cap in [None, Some(1), Some(5), Some(120), Some(1500)] {
                    for context in [0, 1] {
                        let opts = GrepOptions { max_count: cap, output_mode: mode, context, ..pattern.clone() };
                        let searcher = Searcher::new(&opts, "/").unwrap().bounded();
                        let path_order = path_order(&files, &searcher, &opts, |_| true);
                        let got = grep_with(files.iter().copied(), "/", &opts, |_| true);
                        let case = format!(
                            "{} late {late} every {every} {mode:?} cap {cap:?} context {context}",
                            opts.pattern
                        );
                        assert_eq!(got.unwrap().finish(), path_order.unwrap().finish(), "{case}");
                    }
                }
            }
            let opts = lit("needle");
            let searcher = Searcher::new(&opts, "/").unwrap().bounded();
            for stop_after in [1, 3, 50] {
                fn seen(calls: &mut Vec<usize>, stop_after: usize) -> impl FnMut(&Collector) -> bool + '_ {
                    move |c| {
                        calls.push(c.matches().len());
                        calls.len() < stop_after
                    }
                }
                let (mut want, mut got) = (Vec::new(), Vec::new());
                let path_order = path_order(&files, &searcher, &opts, seen(&mut want, stop_after));
                let all = grep_with(files.iter().copied(), "/", &opts, seen(&mut got, stop_after));
                assert_eq!(all.unwrap().finish(), path_order.unwrap().finish(), "late {late} stop after {stop_after}");
                assert_eq!(got, want, "late {late} stop after {stop_after}");
            }
        }
    }
}
