//! Finding a literal in a buffer: memchr's `memmem` on every target, and on WASM a wider scan
//! in front of it.
//!
//! WASM has one thread and 128-bit SIMD, and memchr's packed-pair loop tests one vector per
//! turn, which V8 runs at ~17 GB/s. Testing four vectors per turn (the needle's two rarest
//! bytes, chosen by memchr's own ranking) runs at ~30 GB/s on the same data (issue 13: a rare
//! token in one 19 MB buffer 1.15 → 0.65 ms; over a 10k-file table 1.8 → 1.3 ms). Where the pair's bytes are frequent, each
//! candidate costs a comparison, so after a bounded amount of that work the rest of the buffer
//! goes to `memmem`, which is linear in every case.

use memchr::memmem;

/// A literal compiled once for searching many buffers.
pub struct LiteralFinder {
    memmem: memmem::Finder<'static>,
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    pair: Option<wide::Pair>,
}

impl LiteralFinder {
    pub fn new(needle: &[u8]) -> LiteralFinder {
        LiteralFinder {
            memmem: memmem::Finder::new(needle).into_owned(),
            #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
            pair: wide::Pair::new(needle),
        }
    }

    /// The offset of the first occurrence of the literal in `haystack`.
    #[inline]
    pub fn find(&self, haystack: &[u8]) -> Option<usize> {
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        if let Some(pair) = &self.pair {
            return pair.find(&self.memmem, haystack);
        }
        self.memmem.find(haystack)
    }
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[allow(unsafe_code)]
mod wide {
    use core::arch::wasm32::{u8x16_bitmask, u8x16_eq, u8x16_splat, v128, v128_and, v128_any_true, v128_load, v128_or};
    use memchr::arch::all::packedpair;
    use memchr::memmem;

    /// Candidate starts tested per loop turn: four 16-byte vectors.
    const BLOCK: usize = 64;
    /// Comparison work (bytes) allowed beyond the bytes scanned before `memmem` takes over.
    const SLACK: usize = 16 * 1024;

    pub(super) struct Pair {
        index1: usize,
        index2: usize,
        /// The larger index: a block at `at` reads up to, not including, `at + BLOCK + last`.
        last: usize,
    }

    impl Pair {
        pub(super) fn new(needle: &[u8]) -> Option<Pair> {
            let pair = packedpair::Pair::new(needle)?;
            let (index1, index2) = (usize::from(pair.index1()), usize::from(pair.index2()));
            Some(Pair { index1, index2, last: index1.max(index2) })
        }

        pub(super) fn find(&self, memmem: &memmem::Finder<'_>, haystack: &[u8]) -> Option<usize> {
            let len = haystack.len();
            if len < BLOCK + self.last {
                return memmem.find(haystack);
            }
            let needle = memmem.needle();
            let bytes = (u8x16_splat(needle[self.index1]), u8x16_splat(needle[self.index2]));
            // The last block ends at the haystack's end; its starts already tested are masked off.
            let last_block = len - BLOCK - self.last;
            let mut at: usize = 0;
            let mut work = 0;
            loop {
                let (block, untested) = match at.checked_sub(last_block) {
                    None | Some(0) => (at, u64::MAX),
                    Some(tested) => (last_block, u64::MAX.checked_shl(tested as u32).unwrap_or(0)),
                };
                // SAFETY: block <= last_block, so block + BLOCK + last <= len.
                let hits = unsafe { self.block(haystack, block, bytes) } & untested;
                if hits != 0 {
                    let found = verify(haystack, needle, block, hits, &mut work);
                    if found.is_some() {
                        return found;
                    }
                    if work > block + SLACK {
                        return memmem.find(&haystack[block..]).map(|i| block + i);
                    }
                }
                if block == last_block {
                    return None;
                }
                at += BLOCK;
            }
        }

        /// Bit `i` is set where a start at `at + i` (`i < BLOCK`) has the pair's two bytes.
        ///
        /// # Safety
        /// `at + BLOCK + self.last <= haystack.len()`, so every load stays within the haystack
        /// (wasm loads need no alignment).
        #[inline(always)]
        unsafe fn block(&self, haystack: &[u8], at: usize, (byte1, byte2): (v128, v128)) -> u64 {
            // Written out: `array::map` here is not unrolled at opt-level "s" and runs 8× slower.
            let p = haystack.as_ptr().add(at);
            let lane = |p: *const u8| {
                let a = v128_load(p.add(self.index1).cast::<v128>());
                let b = v128_load(p.add(self.index2).cast::<v128>());
                v128_and(u8x16_eq(a, byte1), u8x16_eq(b, byte2))
            };
            let (l0, l1, l2, l3) = (lane(p), lane(p.add(16)), lane(p.add(32)), lane(p.add(48)));
            if !v128_any_true(v128_or(v128_or(l0, l1), v128_or(l2, l3))) {
                return 0;
            }
            [l0, l1, l2, l3].iter().rev().fold(0, |bits, l| bits << 16 | u64::from(u8x16_bitmask(*l)))
        }
    }

    /// The first candidate start `at + i` (bit `i` of `bits`) where the whole needle is; each
    /// failed comparison adds the needle's length to `work`.
    #[inline(always)]
    fn verify(haystack: &[u8], needle: &[u8], at: usize, mut bits: u64, work: &mut usize) -> Option<usize> {
        while bits != 0 {
            let start = at + bits.trailing_zeros() as usize;
            if haystack.get(start..start + needle.len()) == Some(needle) {
                return Some(start);
            }
            *work += needle.len();
            bits &= bits - 1;
        }
        None
    }
}
