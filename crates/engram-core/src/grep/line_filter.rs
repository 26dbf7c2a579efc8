//! What a buffer is scanned for before the lazy DFA runs, and what a whole table is sieved with
//! before a search in memory order: text that cannot hold a match is passed over by the fastest
//! scan at hand.

use super::pattern::Run;
use crate::literal::{FoldedFinder, LiteralFinder};
use crate::text::line_bounds;
use regex_automata::util::prefilter::Prefilter;
use regex_automata::Span;

/// What a buffer is scanned for before the lazy DFA runs: text that cannot hold a match is
/// passed over by the fastest scan at hand.
pub(super) enum LineFilter {
    /// The literals every match starts with: the one literal (`ENGRAM_[0-9]{4}` starts with
    /// `ENGRAM_`), whose [`LiteralFinder`] on WASM runs at about twice the speed of the DFA's
    /// own prefilter; or up to [`MAX_PREFIXES`] (`TODO|FIXME`) where the regex has no fast
    /// prefilter for them (on WASM, no Teddy: the set scanned at the DFA's speed, each literal
    /// scanned on its own is ten times faster). The DFA starts at the first found, and a file
    /// without any is not searched at all (see [`grep_with`](super::grep_with)).
    Prefix(Box<[LiteralFinder]>),
    /// For a pattern without one literal prefix: letters every match holds in a row, each in
    /// either ASCII case (`(?i)engram_rare_token`). Only lines holding them, or one of the
    /// non-ASCII members of their classes (`(?i)k` also matches the Kelvin sign), are searched.
    /// Used where the regex has no fast prefilter: its set of up to 64 case variants natively
    /// goes to Teddy, but on WASM (no Teddy) it scanned at the DFA's speed, 18× slower than a
    /// literal.
    Folded(Box<FoldedRun>),
    /// For a pattern without literal prefixes: a literal every match holds (`_RARE_` in
    /// `\w+_RARE_\d+`), where the regex has no fast prefilter. Only lines holding it are
    /// searched.
    Inner(Box<LiteralFinder>),
    /// For a pattern without a literal prefix: the literals every match ends with (`\w+_\d+\(`
    /// ends with `(`). A line holding none of them cannot match, so only lines that do are
    /// searched (what the `regex` crate's reverse-suffix strategy gains, per line).
    Suffix(Prefilter),
}

impl LineFilter {
    /// The span of `data` the DFA searches next, from `pos`; `None` when nothing past `pos`
    /// can match. `ahead` keeps where each prefix was found (the others' are still ahead when
    /// one of them is taken), from one call to the next over the same buffer.
    pub(super) fn next(&self, data: &[u8], pos: usize, ahead: &mut Ahead) -> Option<(usize, usize)> {
        match self {
            LineFilter::Prefix(finders) => {
                first_found(finders.iter().map(|f| f as &dyn Find), data, pos, ahead).map(|at| (at, data.len()))
            }
            LineFilter::Folded(folded) => {
                let finds =
                    std::iter::once(&folded.run as &dyn Find).chain(folded.others.iter().map(|f| f as &dyn Find));
                first_found(finds, data, pos, ahead).map(|at| line_bounds(data, at))
            }
            LineFilter::Inner(finder) => finder.find(&data[pos..]).map(|at| line_bounds(data, pos + at)),
            LineFilter::Suffix(filter) => {
                filter.find(data, Span::from(pos..data.len())).map(|candidate| line_bounds(data, candidate.start))
            }
        }
    }

    /// Whether `data[start..end]` holds what every match holds.
    pub(super) fn admits(&self, data: &[u8], start: usize, end: usize) -> bool {
        match self {
            LineFilter::Prefix(finders) => finders.iter().any(|f| f.find(&data[start..end]).is_some()),
            LineFilter::Folded(folded) => folded.holds(&data[start..end]),
            LineFilter::Inner(finder) => finder.find(&data[start..end]).is_some(),
            LineFilter::Suffix(filter) => filter.find(data, Span::from(start..end)).is_some(),
        }
    }
}

/// Most literals a [`LineFilter::Prefix`] looks for one by one (and most scans of a
/// [`LineFilter::Folded`]).
pub(super) const MAX_PREFIXES: usize = 4;

/// Where each scan of a line filter was last found in a buffer (`usize::MAX`: nowhere past
/// where it was looked for); `None` until looked for.
pub(super) type Ahead = [Option<usize>; MAX_PREFIXES];

/// A scan for something in a buffer.
trait Find {
    fn find(&self, haystack: &[u8]) -> Option<usize>;
}

impl Find for LiteralFinder {
    fn find(&self, haystack: &[u8]) -> Option<usize> {
        LiteralFinder::find(self, haystack)
    }
}

impl Find for FoldedFinder {
    fn find(&self, haystack: &[u8]) -> Option<usize> {
        FoldedFinder::find(self, haystack)
    }
}

/// Where the first of `finds` is found in `data` from `pos`; each one's place is kept in its
/// slot of `ahead` while it is still ahead, so that the scans stay linear over a buffer.
fn first_found<'a>(
    finds: impl Iterator<Item = &'a dyn Find>,
    data: &[u8],
    pos: usize,
    ahead: &mut Ahead,
) -> Option<usize> {
    let mut first = usize::MAX;
    for (finder, found) in finds.zip(ahead.iter_mut()) {
        let at = match *found {
            Some(at) if at >= pos => at,
            _ => *found.insert(finder.find(&data[pos..]).map_or(usize::MAX, |at| pos + at)),
        };
        first = first.min(at);
    }
    (first != usize::MAX).then_some(first)
}

/// The scans of a [`LineFilter::Folded`].
pub(super) struct FoldedRun {
    /// The run in either case.
    run: FoldedFinder,
    /// The non-ASCII members of the run's classes, each as UTF-8: a match holding one holds
    /// the run in no ASCII case.
    others: Box<[LiteralFinder]>,
}

impl FoldedRun {
    pub(super) fn new(run: &Run) -> FoldedRun {
        let others = run.others.iter().map(|c| LiteralFinder::new(c.encode_utf8(&mut [0; 4]).as_bytes())).collect();
        FoldedRun { run: FoldedFinder::new(&run.bytes), others }
    }

    fn holds(&self, data: &[u8]) -> bool {
        self.run.find(data).is_some() || self.others.iter().any(|f| f.find(data).is_some())
    }
}

/// A test every buffer holding a match passes, fast enough to run over a whole table first.
pub(super) enum Sieve<'a> {
    /// Any of these literals.
    Literal(&'a [LiteralFinder]),
    Folded(&'a FoldedRun),
    Prefilter(&'a Prefilter),
}

impl Sieve<'_> {
    pub(super) fn holds(&self, data: &[u8]) -> bool {
        match self {
            Sieve::Literal(finders) => finders.iter().any(|f| f.find(data).is_some()),
            Sieve::Folded(folded) => folded.holds(data),
            Sieve::Prefilter(filter) => filter.find(data, Span::from(0..data.len())).is_some(),
        }
    }
}
