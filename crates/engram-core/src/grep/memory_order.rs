//! Asking what every match holds of the files in the order their contents lie in memory,
//! answered in the files' order: where path order jumps around memory, memory order streams.

use super::search::File;

/// How the contents of files taken in path order lie in memory.
#[derive(Default)]
pub(super) struct Layout {
    files: usize,
    /// How many lie before the file ahead of them.
    backwards: usize,
    last: usize,
}

impl Layout {
    pub(super) fn step(&mut self, data: &[u8]) {
        let at = data.as_ptr() as usize;
        self.files += 1;
        self.backwards += usize::from(at < self.last);
        self.last = at;
    }

    /// Whether they lie out of path order often enough (one step in 16 backwards) for memory
    /// order to pay for sorting them: a table restored from a snapshot lies in path order, and
    /// stays nearly so through a few writes.
    pub(super) fn scattered(&self) -> bool {
        self.backwards * 16 > self.files
    }
}

/// The share of the files (one in this many) past which memory order gives up: a literal
/// that most files hold (a regex's common prefix, such as `return` in `return\s+null;`)
/// spares little of the search, which then goes on in path order (on threads, natively).
pub(super) const MOST_HOLDING: usize = 8;

/// `holds` of each file's content, asked in the order the contents lie in memory (split over
/// `threads`), answered in the files' order; `None` as soon as more than `most` files hold.
/// Files written one by one lie wherever the allocator put them, so path order jumps around
/// memory; in memory order the reads stream.
/// A rare grep over 10,000 files written in another order than their paths' took a third less
/// time this way on WASM (one thread, waiting on memory), and less natively too.
pub(super) fn holders_in_memory_order(
    files: &[File],
    holds: impl Fn(&[u8]) -> bool + Sync,
    threads: usize,
    most: usize,
) -> Option<Vec<bool>> {
    let mut order: Vec<(usize, u32)> =
        files.iter().enumerate().map(|(i, (_, data))| (data.as_ptr() as usize, i as u32)).collect();
    sort_by_address(&mut order);
    let holders = |part: &[(usize, u32)]| -> Option<Vec<u32>> {
        let mut found = Vec::new();
        for &(_, i) in part {
            if holds(files[i as usize].1) {
                if found.len() == most {
                    return None;
                }
                found.push(i);
            }
        }
        Some(found)
    };
    #[cfg(not(target_arch = "wasm32"))]
    let found: Vec<u32> = if threads > 1 {
        let part = order.len().div_ceil(threads).max(1);
        std::thread::scope(|scope| {
            let mut parts = order.chunks(part);
            let first = parts.next().unwrap_or_default();
            let others: Vec<_> = parts.map(|p| scope.spawn(move || holders(p))).collect();
            let mut found = holders(first);
            for other in others {
                let theirs = other.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                found = found.zip(theirs).map(|(mut found, theirs)| {
                    found.extend(theirs);
                    found
                });
            }
            found
        })
        .filter(|found| found.len() <= most)?
    } else {
        holders(&order)?
    };
    #[cfg(target_arch = "wasm32")]
    let found: Vec<u32> = {
        let _ = threads;
        holders(&order)?
    };
    let mut holding = vec![false; files.len()];
    for i in found {
        holding[i as usize] = true;
    }
    Some(holding)
}

/// Sorts `(address, index)` pairs by address: a byte at a time, least significant first, over
/// the bytes in which the addresses differ (four passes over a heap of tens of megabytes).
/// Written out because `sort_unstable` brought ~9 KB of sorting networks into the WASM module.
fn sort_by_address(order: &mut Vec<(usize, u32)>) {
    let low = order.iter().map(|&(at, _)| at).min().unwrap_or(0);
    let span = order.iter().map(|&(at, _)| at - low).max().unwrap_or(0);
    let mut sorted = vec![(0, 0); order.len()];
    let mut shift = 0;
    while shift < usize::BITS && span >> shift != 0 {
        let digit = |at: usize| ((at - low) >> shift) & 0xff;
        let mut start = [0usize; 256];
        for &(at, _) in order.iter() {
            start[digit(at)] += 1;
        }
        let mut next = 0;
        for slot in &mut start {
            (*slot, next) = (next, next + *slot);
        }
        for &pair in order.iter() {
            let slot = &mut start[digit(pair.0)];
            sorted[*slot] = pair;
            *slot += 1;
        }
        std::mem::swap(order, &mut sorted);
        shift += 8;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grep::fixtures::{reversed_files, slices};
    use std::sync::Mutex;

    #[test]
    fn holders_are_asked_in_memory_order_and_answered_in_file_order() {
        let (paths, buffer) =
            reversed_files(200, 600, |i| if i % 7 == 0 { format!("needle {i}\n") } else { String::new() });
        let files = slices(&paths, &buffer);
        let asked = Mutex::new(Vec::new());
        let holding = holders_in_memory_order(
            &files,
            |data| {
                asked.lock().unwrap().push(data.as_ptr() as usize);
                data.starts_with(b"needle")
            },
            1,
            usize::MAX,
        );
        let asked = asked.into_inner().unwrap();
        assert_eq!(asked.len(), files.len());
        assert!(asked.is_sorted(), "asked in memory order");
        let want: Vec<bool> = (0..files.len()).map(|i| i % 7 == 0).collect();
        assert_eq!(holding.as_ref(), Some(&want));
        let holding = want.iter().filter(|&&h| h).count();
        for threads in [1, 2, 3, 8] {
            let found = |most| holders_in_memory_order(&files, |data| data.starts_with(b"needle"), threads, most);
            assert_eq!(found(holding).as_ref(), Some(&want), "{threads} threads");
            assert_eq!(found(holding - 1), None, "{threads} threads: one holder too many");
        }
    }

    #[test]
    fn memory_order_is_used_only_where_files_lie_scattered() {
        // 200 files cut from one buffer in path order, but for the files swapped in pairs.
        let paths: Vec<String> = (0..200).map(|i| format!("/f{i:03}")).collect();
        let buffer = vec![b'x'; 200 * 100];
        let layout_of = |swapped: usize| {
            let mut files: Vec<File> =
                paths.iter().enumerate().map(|(i, p)| (p, &buffer[i * 100..(i + 1) * 100])).collect();
            for pair in 0..swapped {
                let (a, b) = (pair * 2, pair * 2 + 1);
                let (da, db) = (files[a].1, files[b].1);
                (files[a].1, files[b].1) = (db, da);
            }
            let mut layout = Layout::default();
            files.iter().for_each(|(_, data)| layout.step(data));
            layout
        };
        assert_eq!(layout_of(0).backwards, 0);
        assert!(!layout_of(0).scattered(), "in path order");
        assert!(!layout_of(12).scattered(), "a few files out of place");
        assert!(layout_of(13).scattered());
        assert!(layout_of(100).scattered());
    }

    proptest::proptest! {
        #[test]
        fn addresses_sort_as_the_standard_sort_does(
            low in 0usize..usize::MAX / 2,
            offsets in proptest::collection::vec(proptest::prop_oneof![0usize..300, 0usize..1 << 20, 0usize..usize::MAX / 2], 0..400),
        ) {
            let mut order: Vec<(usize, u32)> = offsets.iter().enumerate().map(|(i, &o)| (low + o, i as u32)).collect();
            let mut want = order.clone();
            want.sort();
            sort_by_address(&mut order);
            let mut got = order.clone();
            proptest::prop_assert!(order.windows(2).all(|w| w[0].0 <= w[1].0), "ascending");
            got.sort();
            proptest::prop_assert_eq!(got, want, "the same pairs");
        }
    }
}
