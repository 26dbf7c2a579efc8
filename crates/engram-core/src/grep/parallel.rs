//! A large search split over scoped threads (natively), merged in path order as it goes.

use super::collector::Collector;
use super::options::OutputMode;
use super::searcher::{FileHits, Searcher};
use crate::error::{CoreError, CoreResult};
use std::sync::atomic::{AtomicBool, Ordering};

/// Blocks of files searched on scoped threads and on this one, each taking the next block in
/// path order. This thread merges the blocks in that order between its own: `progress` sees the
/// files as a sequential search would, and once it says stop (or the cap is reached) no further
/// block is started. A block stops once it alone has more than the cap, since nothing after that
/// point can be kept. (This thread searching too, rather than waiting for each block, leaves the
/// machine's cores to the search: on two of them, waking to merge every block cost ~20%.)
pub(super) fn parallel(
    files: &[(&String, &[u8])],
    searcher: &Searcher,
    mut collector: Collector,
    threads: usize,
    mut progress: impl FnMut(&Collector) -> bool,
) -> CoreResult<Collector> {
    use std::sync::atomic::AtomicUsize;
    use std::sync::mpsc;

    let limit = collector.limit();
    let per_file = collector.mode() != OutputMode::Content;
    // Small enough that a search stopped by the cap or the caller wastes little work past the
    // answer, large enough that taking a block costs nothing next to searching it.
    let block = files.len().div_ceil(threads * BLOCKS_PER_THREAD).max(1);
    let blocks: Vec<&[(&String, &[u8])]> = files.chunks(block).collect();
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let (done, arrived) = mpsc::channel::<(usize, BlockHits)>();
        for _ in 1..threads.min(blocks.len()) {
            let done = done.clone();
            let (blocks, next, stop) = (&blocks, &next, &stop);
            scope.spawn(move || loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                if k >= blocks.len() || stop.load(Ordering::Relaxed) {
                    return;
                }
                if done.send((k, search_block(blocks[k], searcher, limit, per_file, stop))).is_err() {
                    return;
                }
            });
        }
        drop(done);
        // Blocks finished ahead of their turn wait here.
        let mut waiting: Vec<Option<BlockHits>> = (0..blocks.len()).map(|_| None).collect();
        let mut turn = 0;
        let outcome = 'merge: loop {
            while let Ok((k, found)) = arrived.try_recv() {
                waiting[k] = Some(found);
            }
            while let Some((hits, failure)) = waiting.get_mut(turn).and_then(Option::take) {
                turn += 1;
                for h in hits {
                    if collector.is_full() {
                        break 'merge Ok(());
                    }
                    collector.push(h);
                    if !progress(&collector) {
                        break 'merge Ok(());
                    }
                }
                // As in a sequential search, a failure counts only if the answer was not
                // complete before it.
                if let Some(e) = failure.filter(|_| !collector.is_full()) {
                    break 'merge Err(e);
                }
                if collector.is_full() {
                    break 'merge Ok(());
                }
            }
            if turn == blocks.len() {
                break Ok(());
            }
            // Search the next block here; when none is left, wait for the one whose turn it is.
            let k = next.fetch_add(1, Ordering::Relaxed);
            if k < blocks.len() {
                waiting[k] = Some(search_block(blocks[k], searcher, limit, per_file, &stop));
            } else {
                match arrived.recv() {
                    Ok((k, found)) => waiting[k] = Some(found),
                    // No thread is left to send it: one panicked (the scope passes it on).
                    Err(_) => break Ok(()),
                }
            }
        };
        stop.store(true, Ordering::Relaxed);
        outcome
    })?;
    Ok(collector)
}

/// One block's hits, up to its first failure (a bounded regex out of work), and the failure.
type BlockHits = (Vec<FileHits>, Option<CoreError>);

/// How many blocks per thread a parallel search splits its files into.
const BLOCKS_PER_THREAD: usize = 16;

/// Searches one block of a parallel search, in order, until it alone holds more than the cap,
/// a regex runs out of work, or the search is stopped.
fn search_block(
    block: &[(&String, &[u8])],
    searcher: &Searcher,
    limit: usize,
    per_file: bool,
    stop: &AtomicBool,
) -> BlockHits {
    let mut found = Vec::new();
    let mut taken = 0usize;
    for (p, data) in block {
        if taken > collector_cap(limit) || stop.load(Ordering::Relaxed) {
            break;
        }
        match searcher.try_search(p, data, limit) {
            Ok(Some(hits)) => {
                taken = taken.saturating_add(if per_file { 1 } else { hits.count });
                found.push(hits);
            }
            Ok(None) => {}
            Err(e) => return (found, Some(e)),
        }
    }
    (found, None)
}

/// The cap behind a `limit` of cap + 1 (or no cap).
fn collector_cap(limit: usize) -> usize {
    limit.saturating_sub(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grep::fixtures::{lit, path_order};
    use crate::grep::GrepOptions;

    #[test]
    fn parallel_search_equals_sequential() {
        let files: Vec<(String, Vec<u8>)> = (0..300)
            .map(|i| {
                (
                    format!("/d{}/f{i:03}.txt", i % 7),
                    format!("a\nneedle {i}\nb\n{}", if i % 3 == 0 { "needle again\n" } else { "" }).into_bytes(),
                )
            })
            .collect();
        let mut sorted = files.clone();
        sorted.sort();
        let refs: Vec<(&String, &[u8])> = sorted.iter().map(|(p, d)| (p, d.as_slice())).collect();
        for mode in [OutputMode::Content, OutputMode::FilesWithMatches, OutputMode::Count] {
            for cap in [None, Some(0), Some(1), Some(7), Some(150), Some(1000)] {
                for context in [0, 1] {
                    let opts = GrepOptions { max_count: cap, output_mode: mode, context, ..lit("needle") };
                    let searcher = Searcher::new(&opts, "/").unwrap();
                    let seq = path_order(&refs, &searcher, &opts, |_| true).unwrap().finish();
                    for threads in [2, 3, 8] {
                        let par =
                            parallel(&refs, &searcher, Collector::new(&opts), threads, |_| true).unwrap().finish();
                        assert_eq!(par, seq, "{mode:?} cap {cap:?} context {context} threads {threads}");
                    }
                }
            }
        }
        // A caller that has enough after some files stops a parallel search where it stops a
        // sequential one, having seen the same files in the same order.
        let opts = lit("needle");
        let searcher = Searcher::new(&opts, "/").unwrap();
        for stop_after in [1, 5, 120, 299] {
            fn seen(calls: &mut Vec<String>, stop_after: usize) -> impl FnMut(&Collector) -> bool + '_ {
                move |c| {
                    calls.push(c.matches().last().map(|m| m.path.clone()).unwrap_or_default());
                    calls.len() < stop_after
                }
            }
            let mut seq_calls = Vec::new();
            let seq = path_order(&refs, &searcher, &opts, seen(&mut seq_calls, stop_after)).unwrap();
            for threads in [2, 3, 8] {
                let mut par_calls = Vec::new();
                let par = parallel(&refs, &searcher, Collector::new(&opts), threads, seen(&mut par_calls, stop_after))
                    .unwrap();
                assert_eq!(par_calls, seq_calls, "stop after {stop_after}, threads {threads}");
                assert_eq!(par.matches(), seq.matches(), "stop after {stop_after}, threads {threads}");
            }
        }
    }
}
