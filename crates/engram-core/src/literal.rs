//! Finding a literal in a buffer: memchr's `memmem` on every target, and on WASM a wider scan
//! in front of it; the same scan finds an ASCII string regardless of case ([`FoldedFinder`]).
//!
//! WASM has one thread and 128-bit SIMD, and memchr's packed-pair loop tests one vector per
//! turn, which V8 runs at ~17 GB/s. Testing four vectors per turn (the needle's two rarest
//! bytes, chosen by memchr's own ranking) runs at ~30 GB/s on the same data (measured: a rare
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

/// Longest needle a [`FoldedFinder`] takes: a candidate costs at most this many comparisons.
pub const MAX_FOLDED_BYTES: usize = 16;

/// An ASCII string found regardless of ASCII case (`Engram` finds `ENGRAM` and `engram`; other
/// bytes only as themselves). No `memmem` knows case: each candidate of the needle's rarest
/// byte (in either case) is compared in full, and on WASM the four-vector pair scan runs in
/// front of that, comparing its two bytes case-folded.
pub struct FoldedFinder {
    /// The needle in lower case, at most [`MAX_FOLDED_BYTES`].
    needle: Vec<u8>,
    /// Where in the needle its rarest byte is (memchr's ranking).
    rare: usize,
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    pair: Option<wide::Pair>,
}

impl FoldedFinder {
    /// `needle`: non-empty, at most [`MAX_FOLDED_BYTES`] (longer ones are cut).
    pub fn new(needle: &[u8]) -> FoldedFinder {
        let needle = needle[..needle.len().min(MAX_FOLDED_BYTES)].to_ascii_lowercase();
        let pair = memchr::arch::all::packedpair::Pair::new(&needle);
        FoldedFinder {
            rare: pair.map_or(0, |p| usize::from(p.index1())),
            #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
            pair: wide::Pair::new(&needle),
            needle,
        }
    }

    /// The offset of the first occurrence of the needle in `haystack`, in any ASCII case.
    #[inline]
    pub fn find(&self, haystack: &[u8]) -> Option<usize> {
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        if let Some(pair) = &self.pair {
            return pair.find_folded::<core::arch::wasm32::v128>(self, haystack);
        }
        self.find_by_rare_byte(haystack)
    }

    /// Every occurrence of the rarest byte, in either case, compared in full: at most
    /// [`MAX_FOLDED_BYTES`] comparisons per byte of the haystack.
    fn find_by_rare_byte(&self, haystack: &[u8]) -> Option<usize> {
        let (n, rare) = (self.needle.len(), self.rare);
        if n == 0 {
            return Some(0);
        }
        let byte = self.needle[rare];
        let mut from = rare;
        let end = haystack.len().checked_sub(n - 1 - rare)?;
        while from < end {
            let tail = &haystack[from..end];
            let at = from + memchr::memchr2(byte, byte.to_ascii_uppercase(), tail)?;
            let start = at - rare;
            if self.is_at(haystack, start) {
                return Some(start);
            }
            from = at + 1;
        }
        None
    }

    /// Whether the needle starts at `start`, in any ASCII case.
    #[inline]
    fn is_at(&self, haystack: &[u8], start: usize) -> bool {
        haystack.get(start..start + self.needle.len()).is_some_and(|s| s.eq_ignore_ascii_case(&self.needle))
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
            self.scan::<L, false>(memmem.needle(), haystack, |block| memmem.find(&haystack[block..]).map(|i| block + i))
        }

        /// [`Pair::find`] regardless of ASCII case, for a [`FoldedFinder`]'s (lower-case) needle.
        pub(super) fn find_folded<L: Lanes>(&self, finder: &super::FoldedFinder, haystack: &[u8]) -> Option<usize> {
            self.scan::<L, true>(&finder.needle, haystack, |block| {
                finder.find_by_rare_byte(&haystack[block..]).map(|i| block + i)
            })
        }

        /// The scan; `FOLD`: letters compared in either case (the needle in lower case); `rest`
        /// finds the needle from a block on where candidates are too frequent, in time bounded
        /// per byte.
        #[inline(always)]
        fn scan<L: Lanes, const FOLD: bool>(
            &self,
            needle: &[u8],
            haystack: &[u8],
            rest: impl Fn(usize) -> Option<usize>,
        ) -> Option<usize> {
            let len = haystack.len();
            if len < BLOCK + self.last {
                return rest(0);
            }
            // `byte | 0x20` is a letter's lower case, and equals it only for that letter's two
            // cases; other bytes are compared as they are.
            let fold = |b: u8| L::splat(if FOLD && b.is_ascii_lowercase() { 0x20 } else { 0 });
            let (b1, b2) = (needle[self.index1], needle[self.index2]);
            let bytes = (L::splat(b1), L::splat(b2), fold(b1), fold(b2));
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
                let hits = unsafe { self.block::<L, FOLD>(haystack, block, bytes) } & untested;
                if hits != 0 {
                    let found = verify::<FOLD>(haystack, needle, block, hits, &mut work);
                    if found.is_some() {
                        return found;
                    }
                    if work > block + SLACK {
                        return rest(block);
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
        unsafe fn block<L: Lanes, const FOLD: bool>(
            &self,
            haystack: &[u8],
            at: usize,
            (byte1, byte2, fold1, fold2): (L, L, L, L),
        ) -> u64 {
            // SAFETY: within the bound above.
            let load = |k: usize, fold: L| unsafe {
                let bytes = L::load(haystack, at + k);
                if FOLD {
                    bytes.or(fold)
                } else {
                    bytes
                }
            };
            // Written out: `array::map` here is not unrolled at opt-level "s" and runs 8× slower.
            let lane = |k: usize| load(k + self.index1, fold1).both_eq(byte1, load(k + self.index2, fold2), byte2);
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
    fn verify<const FOLD: bool>(
        haystack: &[u8],
        needle: &[u8],
        at: usize,
        mut bits: u64,
        work: &mut usize,
    ) -> Option<usize> {
        while bits != 0 {
            let start = at + bits.trailing_zeros() as usize;
            let there = haystack.get(start..start + needle.len());
            if there.is_some_and(|s| if FOLD { s.eq_ignore_ascii_case(needle) } else { s == needle }) {
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
    use super::FoldedFinder;
    use memchr::memmem;
    use proptest::prelude::*;

    /// The folded finder's answers, by its WASM scan and by its rare byte, checked against a
    /// comparison at every start.
    fn scan_folded(needle: &[u8], haystack: &[u8]) -> Option<usize> {
        let finder = FoldedFinder::new(needle);
        let n = needle.len();
        let want =
            (0..(haystack.len() + 1).saturating_sub(n)).find(|&i| haystack[i..i + n].eq_ignore_ascii_case(needle));
        assert_eq!(finder.find_by_rare_byte(haystack), want, "by rare byte: {needle:?} in {haystack:?}");
        if let Some(pair) = Pair::new(&needle.to_ascii_lowercase()) {
            assert_eq!(pair.find_folded::<Portable>(&finder, haystack), want, "scan: {needle:?} in {haystack:?}");
        }
        want
    }

    #[test]
    fn folded_finds_any_case_and_nothing_else() {
        let hay = b"x ENGRAM_rare engram_RARE Engram@rare engram`rare";
        assert_eq!(scan_folded(b"engram_rare", hay), Some(2));
        assert_eq!(scan_folded(b"ENGRAM_RARE", &hay[3..]), Some(11));
        // `@` and `` ` `` differ from `_` and from each other in the bit that folds letters.
        assert_eq!(scan_folded(b"engram@rare", hay), Some(26));
        assert_eq!(scan_folded(b"Engram`Rare", hay), Some(38));
        assert_eq!(scan_folded(b"engram{rare", hay), None);
        let filler = b"enGRAm_rarX ".repeat(40);
        for at in [0, 1, 63, 64, 65, 200, filler.len()] {
            let mut hay = filler.clone();
            hay.splice(at..at, b"EnGrAm_RaRe".iter().copied());
            assert_eq!(scan_folded(b"engram_rare", &hay), Some(at));
        }
        assert_eq!(scan_folded(b"engram_rare", &filler), None);
        assert_eq!(scan_folded(b"ab", b"a"), None);
        assert_eq!(FoldedFinder::new(b"").find(b"abc"), Some(0), "as memmem finds an empty needle");
    }

    #[test]
    fn folded_hands_over_where_every_position_is_a_candidate() {
        planted_among_near_misses(&b"aB".repeat(8), b"Ab", b"ac", scan_folded);
    }

    /// `needle` planted at each of the first 300 starts and at the end of a haystack where
    /// every other position is a candidate: `pair` repeated, each window failing only at its
    /// end (`last`), so the scan must hand over; `scan` finds it at or before where it was
    /// planted, and nothing in the near misses alone.
    fn planted_among_near_misses(needle: &[u8], pair: &[u8], last: &[u8], scan: fn(&[u8], &[u8]) -> Option<usize>) {
        let mut near = pair.repeat(needle.len() / pair.len() - 1);
        near.extend_from_slice(last);
        let near = near.repeat(400);
        for at in (0..300).chain([near.len() - 1, near.len()]) {
            let mut hay = near.clone();
            hay.splice(at..at, needle.iter().copied());
            assert!(scan(needle, &hay).is_some_and(|i| i <= at), "planted at {at}");
        }
        assert_eq!(scan(needle, &near), None);
    }

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
        planted_among_near_misses(&b"ab".repeat(150), b"ab", b"ac", scan);
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

        #[test]
        fn folded_agrees_with_comparing_at_every_start(
            haystack in proptest::collection::vec(prop_oneof![Just(b'a'), Just(b'A'), Just(b'b'), Just(b'@'), Just(b'`'), any::<u8>()], 0..700),
            needle in proptest::collection::vec(prop_oneof![Just(b'a'), Just(b'B'), Just(b'_'), any::<u8>()], 1..=super::MAX_FOLDED_BYTES),
            cut in 0usize..700,
        ) {
            scan_folded(&needle, &haystack);
            let mut planted = haystack.clone();
            let at = cut.min(planted.len());
            planted.splice(at..at, needle.iter().map(|b| if b % 3 == 0 { b.to_ascii_uppercase() } else { *b }));
            prop_assert!(scan_folded(&needle, &planted).is_some_and(|i| i <= at));
        }
    }
}
