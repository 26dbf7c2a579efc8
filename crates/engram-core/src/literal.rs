//! Finding a literal in a buffer: memchr's `memmem` on every target, and on WASM a wider scan
//! in front of it.
//!
//! WASM has one thread and 128-bit SIMD, and memchr's packed-pair loop tests one vector per
//! turn, which V8 runs at ~17 GB/s. Testing four vectors per turn (the needle's two rarest
//! bytes, chosen by memchr's own ranking) runs at ~30 GB/s on the same data (issue 13: a rare
//! token in one 19 MB buffer 1.15 → 0.65 ms; over a 10k-file table 1.8 → 1.3 ms). Where the
//! pair's bytes are frequent, each candidate costs a comparison, so after a bounded amount of
//! that work the rest of the buffer goes to `memmem`, which is linear in every case.
//!
//! The scan is written over a small set of vector operations ([`wide::Lanes`]): WebAssembly's
//! `v128` in the build, and plain byte arrays with bounds-checked loads in the tests, so its
//! blocks, masks and hand-over are property-tested on every target.

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
            return pair.find::<core::arch::wasm32::v128>(&self.memmem, haystack);
        }
        self.memmem.find(haystack)
    }
}

#[cfg(any(test, all(target_arch = "wasm32", target_feature = "simd128")))]
#[allow(unsafe_code)]
mod wide {
    use memchr::arch::all::packedpair;
    use memchr::memmem;

    /// Candidate starts tested per loop turn: four 16-byte vectors.
    const BLOCK: usize = 64;
    /// Comparison work (bytes) allowed beyond the bytes scanned before `memmem` takes over.
    const SLACK: usize = 16 * 1024;

    /// Sixteen byte lanes and the operations the scan needs on them.
    pub(super) trait Lanes: Copy {
        fn splat(byte: u8) -> Self;
        /// The 16 bytes at `haystack[at..]`.
        ///
        /// # Safety
        /// `at + 16 <= haystack.len()`.
        unsafe fn load(haystack: &[u8], at: usize) -> Self;
        /// All ones in the lanes where `self == a` and `other == b`.
        fn both_eq(self, a: Self, other: Self, b: Self) -> Self;
        fn or(self, other: Self) -> Self;
        fn any(self) -> bool;
        /// Bit `i` set where lane `i` is all ones.
        fn bitmask(self) -> u16;
    }

    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    impl Lanes for core::arch::wasm32::v128 {
        #[inline(always)]
        fn splat(byte: u8) -> Self {
            core::arch::wasm32::u8x16_splat(byte)
        }
        #[inline(always)]
        unsafe fn load(haystack: &[u8], at: usize) -> Self {
            // SAFETY: the caller keeps the 16 bytes within the haystack; wasm loads need no alignment.
            unsafe { core::arch::wasm32::v128_load(haystack.as_ptr().add(at).cast()) }
        }
        #[inline(always)]
        fn both_eq(self, a: Self, other: Self, b: Self) -> Self {
            use core::arch::wasm32::{u8x16_eq, v128_and};
            v128_and(u8x16_eq(self, a), u8x16_eq(other, b))
        }
        #[inline(always)]
        fn or(self, other: Self) -> Self {
            core::arch::wasm32::v128_or(self, other)
        }
        #[inline(always)]
        fn any(self) -> bool {
            core::arch::wasm32::v128_any_true(self)
        }
        #[inline(always)]
        fn bitmask(self) -> u16 {
            core::arch::wasm32::u8x16_bitmask(self)
        }
    }

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

        pub(super) fn find<L: Lanes>(&self, memmem: &memmem::Finder<'_>, haystack: &[u8]) -> Option<usize> {
            let len = haystack.len();
            if len < BLOCK + self.last {
                return memmem.find(haystack);
            }
            let needle = memmem.needle();
            let bytes = (L::splat(needle[self.index1]), L::splat(needle[self.index2]));
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
                let hits = unsafe { self.block::<L>(haystack, block, bytes) } & untested;
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
        /// `at + BLOCK + self.last <= haystack.len()`: every load ends at or before
        /// `at + 48 + last + 16`.
        #[inline(always)]
        unsafe fn block<L: Lanes>(&self, haystack: &[u8], at: usize, (byte1, byte2): (L, L)) -> u64 {
            // Written out: `array::map` here is not unrolled at opt-level "s" and runs 8× slower.
            // SAFETY: within the bound above.
            let lane = |k: usize| unsafe {
                L::load(haystack, at + k + self.index1).both_eq(byte1, L::load(haystack, at + k + self.index2), byte2)
            };
            let (l0, l1, l2, l3) = (lane(0), lane(16), lane(32), lane(48));
            if !l0.or(l1).or(l2.or(l3)).any() {
                return 0;
            }
            [l0, l1, l2, l3].iter().rev().fold(0, |bits, l| bits << 16 | u64::from(l.bitmask()))
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

    /// Lanes in plain Rust, with bounds-checked loads: a scan that reads past its haystack panics.
    #[cfg(test)]
    #[derive(Clone, Copy)]
    pub(super) struct Portable([u8; 16]);

    #[cfg(test)]
    impl Lanes for Portable {
        fn splat(byte: u8) -> Self {
            Portable([byte; 16])
        }
        unsafe fn load(haystack: &[u8], at: usize) -> Self {
            Portable(haystack[at..at + 16].try_into().unwrap())
        }
        fn both_eq(self, a: Self, other: Self, b: Self) -> Self {
            Portable(std::array::from_fn(|i| if self.0[i] == a.0[i] && other.0[i] == b.0[i] { 0xff } else { 0 }))
        }
        fn or(self, other: Self) -> Self {
            Portable(std::array::from_fn(|i| self.0[i] | other.0[i]))
        }
        fn any(self) -> bool {
            self.0.iter().any(|&b| b != 0)
        }
        fn bitmask(self) -> u16 {
            self.0.iter().enumerate().fold(0, |bits, (i, &b)| bits | (u16::from(b >> 7) << i))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::wide::{Pair, Portable};
    use memchr::memmem;
    use proptest::prelude::*;

    /// The scan's answer, checked against memmem's; `None` when the needle has no pair.
    fn scan(needle: &[u8], haystack: &[u8]) -> Option<usize> {
        let finder = memmem::Finder::new(needle);
        let want = finder.find(haystack);
        let got = match Pair::new(needle) {
            Some(pair) => pair.find::<Portable>(&finder, haystack),
            None => want,
        };
        assert_eq!(got, want, "needle {needle:?} in {} bytes", haystack.len());
        got
    }

    #[test]
    fn finds_the_needle_at_every_start_around_the_block_size() {
        for needle in [&b"ab"[..], b"xyz", b"ENGRAM_RARE_TOKEN_7f3a", &[b'q'; 63], &[7; 300]] {
            let mut miss = needle.to_vec();
            *miss.last_mut().unwrap() ^= 1;
            for len in needle.len()..needle.len() + 200 {
                let filler: Vec<u8> = miss.iter().copied().cycle().take(len - needle.len()).collect();
                assert_eq!(scan(needle, &filler), None);
                for at in 0..=filler.len() {
                    let mut hay = filler.clone();
                    hay.splice(at..at, needle.iter().copied());
                    assert!(scan(needle, &hay).is_some_and(|i| i <= at));
                }
            }
        }
    }

    #[test]
    fn hands_over_to_memmem_where_every_position_is_a_candidate() {
        let needle = b"ab".repeat(150);
        let mut near = b"ab".repeat(149);
        near.extend_from_slice(b"ac");
        let near = near.repeat(400);
        for at in (0..600).chain([near.len() - 1, near.len()]) {
            let mut hay = near.clone();
            hay.splice(at..at, needle.iter().copied());
            scan(&needle, &hay);
        }
        assert_eq!(scan(&needle, &near), None);
    }

    proptest! {
        #[test]
        fn agrees_with_memmem(
            haystack in proptest::collection::vec(prop_oneof![Just(b'a'), Just(b'b'), Just(b'\n'), any::<u8>()], 0..700),
            needle in proptest::collection::vec(prop_oneof![Just(b'a'), Just(b'b'), any::<u8>()], 1..40),
            cut in 0usize..700,
        ) {
            scan(&needle, &haystack);
            // And with the needle planted at an arbitrary start.
            let mut planted = haystack.clone();
            let at = cut.min(planted.len());
            planted.splice(at..at, needle.iter().copied());
            prop_assert!(scan(&needle, &planted).is_some_and(|i| i <= at));
        }
    }
}
