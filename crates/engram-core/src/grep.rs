//! `grep` over in-memory files: literal by default ([`crate::literal`]: memchr's SIMD `memmem`), regex on
//! `regex-automata`'s lazy DFA with a bounded NFA fallback (see [`MAX_FALLBACK_WORK`]).
//! Whole-buffer search; lines are only materialised for hits.

use crate::error::{CoreError, CoreResult, ErrorCode};
use crate::glob::PathFilter;
use crate::literal::{FoldedFinder, LiteralFinder};
use crate::text::{is_binary, line_bounds, lossy_line};
use regex_automata::nfa::thompson::{self, backtrack, pikevm};
use regex_automata::util::prefilter::Prefilter;
use regex_automata::{hybrid, Input, MatchErrorKind, MatchKind, Span};
use regex_syntax::hir::literal::{ExtractKind, Extractor};
use regex_syntax::hir::{
    Capture, Class, ClassBytes, ClassBytesRange, ClassUnicode, ClassUnicodeRange, Hir, HirKind, Literal, Repetition,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

pub use crate::limits::MAX_PATTERN_BYTES;
/// Ceiling on `maxCount`: matching lines (`content`) or files (other modes) one search returns,
/// also when no `maxCount` is given; `truncated` tells when it was reached. A model-chosen
/// count can never make a search hold more than this.
pub const MAX_COUNT: usize = 10_000;
/// Ceiling on `context` lines before and after each match.
pub const MAX_CONTEXT: usize = 100;

/// Compiled-program limits: a hostile pattern fails with `invalid_pattern` in milliseconds
/// instead of compiling a huge program (or searching with one). The size limits bound the
/// compiled NFA and the lazy DFA's cache; the nest limit bounds parser recursion; the weight
/// limit bounds counted repetition (`[a-z]{20000}`, `(a{100}){100}`) and giant alternations,
/// whose programs stay small per state but make every searched byte visit thousands of states.
const REGEX_SIZE_LIMIT: usize = 1 << 20;
/// The lazy DFA's cache. It gives up after filling it three times at under 10 searched bytes
/// per state built (a thrashing pattern), so this also bounds the work before the NFA fallback:
/// about 40 ms natively whatever the input size.
const REGEX_DFA_SIZE_LIMIT: usize = 1 << 20;
const REGEX_NEST_LIMIT: u32 = 64;
/// Most "positions" a regex may expand to: literal bytes, classes, and each counted repetition
/// multiplying its body. A linear-time engine still spends time proportional to this weight
/// per searched byte on adversarial input (when its lazy DFA cannot cache the states), so it is
/// kept to what real searches need (`[0-9a-f]{64}`, `.{0,200}`).
pub const MAX_REGEX_WEIGHT: u64 = 256;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputMode {
    #[default]
    Content,
    FilesWithMatches,
    Count,
}

impl OutputMode {
    /// Parses `"content"`, `"files_with_matches"` or `"count"` (the typed bindings' option).
    pub fn parse(mode: &str) -> CoreResult<Self> {
        match mode {
            "content" => Ok(Self::Content),
            "files_with_matches" => Ok(Self::FilesWithMatches),
            "count" => Ok(Self::Count),
            other => Err(CoreError::new(
                ErrorCode::Unsupported,
                "options.outputMode",
                format_args!("unknown output mode '{other}'"),
            )),
        }
    }
}

/// Options of one search. Defaults: literal, `content` mode, whole tree, [`MAX_COUNT`] matches, no
/// context.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct GrepOptions {
    pub pattern: String,
    /// Directory (or single file) to search; `/` when absent.
    pub path: Option<String>,
    /// Only files whose path matches this glob (see [`PathFilter`]).
    pub glob: Option<String>,
    pub regex: bool,
    pub ignore_case: bool,
    /// Caps matching lines (`content`) or files (`files_with_matches`, `count`); never above
    /// [`MAX_COUNT`], which also applies when absent.
    pub max_count: Option<usize>,
    pub output_mode: OutputMode,
    /// Lines of context before and after each match (`content` mode); at most [`MAX_CONTEXT`].
    pub context: usize,
}

impl GrepOptions {
    /// The options of a call as the bindings receive them: absent flags are `false`, absent
    /// `context` is 0, absent `output_mode` is `content` (an unknown one: see [`OutputMode::parse`]).
    #[allow(clippy::too_many_arguments)]
    pub fn from_parts(
        pattern: String,
        path: Option<String>,
        glob: Option<String>,
        regex: Option<bool>,
        ignore_case: Option<bool>,
        max_count: Option<u32>,
        output_mode: Option<&str>,
        context: Option<u32>,
    ) -> CoreResult<GrepOptions> {
        Ok(GrepOptions {
            pattern,
            path,
            glob,
            regex: regex.unwrap_or(false),
            ignore_case: ignore_case.unwrap_or(false),
            max_count: max_count.map(|n| n as usize),
            output_mode: output_mode.map_or(Ok(OutputMode::Content), OutputMode::parse)?,
            context: context.unwrap_or(0) as usize,
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GrepMatch {
    pub path: String,
    /// 1-based line number.
    pub line: usize,
    pub text: String,
    /// True for a context line around a match rather than a match.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub context: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct GrepResult {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matches: Option<Vec<GrepMatch>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counts: Option<BTreeMap<String, usize>>,
    pub truncated: bool,
}

/// Most fallback work one in-memory search may do, in NFA state-bytes (bytes given to the
/// NFA engines times the states of the pattern's NFA). The lazy DFA searches in time linear in
/// the bytes; a pattern that makes it thrash (`a[ab]{20}c` on text of `a`s and `b`s) makes it
/// give up, and the lines left are checked by the bounded backtracker (the PikeVM for lines too
/// long for it, charged 5×) while this budget lasts; then the search fails with
/// `pattern_too_expensive`. About 4 ns per unit natively, so the fallback stays in the tens of
/// milliseconds on any input; a count, not a clock, so both cores stop at the same point.
pub const MAX_FALLBACK_WORK: u64 = 4 << 20;
/// The PikeVM's cost per state-byte relative to the bounded backtracker (measured 4–6×).
const PIKEVM_COST: u64 = 5;

/// A compiled pattern; build once, run over many buffers.
pub enum Matcher {
    Literal(Box<LiteralFinder>),
    Regex(Box<LineRegex>),
}

/// A regex compiled for finding matching lines: every class and literal has `\n` removed, so a
/// match never spans lines and a whole-buffer search finds exactly the lines holding a match.
/// A forward lazy DFA (earliest match, literal prefilter) does the searching; where it quits
/// (a Unicode `\b` next to non-ASCII text) or gives up (its cache thrashes), the NFA engines
/// check line by line under [`MAX_FALLBACK_WORK`] when a budget is set.
pub struct LineRegex {
    dfa: hybrid::dfa::DFA,
    backtrack: backtrack::BoundedBacktracker,
    pikevm: pikevm::PikeVM,
    prefilter: Option<Prefilter>,
    /// Where the searching may start: see [`LineFilter`].
    line_filter: Option<LineFilter>,
    nfa_states: u64,
    caches: Mutex<Vec<Caches>>,
    /// Set once the lazy DFA gave up: the rest of the search runs on the NFA engines (a cache
    /// rebuilt per file would repeat the thrashing on every file).
    gave_up: AtomicBool,
    /// Fallback work done so far and the most allowed (`None`: unbounded).
    spent: AtomicU64,
    budget: Option<u64>,
    /// The pattern as shown in an error (at most 200 characters).
    shown: String,
}

/// What a buffer is scanned for before the lazy DFA runs: text that cannot hold a match is
/// passed over by the fastest scan at hand.
enum LineFilter {
    /// The literals every match starts with: the one literal (`ENGRAM_[0-9]{4}` starts with
    /// `ENGRAM_`), whose [`LiteralFinder`] on WASM runs at about twice the speed of the DFA's
    /// own prefilter; or up to [`MAX_PREFIXES`] (`TODO|FIXME`) where the regex has no fast
    /// prefilter for them (on WASM, no Teddy: the set scanned at the DFA's speed, each literal
    /// scanned on its own is ten times faster). The DFA starts at the first found, and a file
    /// without any is not searched at all (see [`grep_with`]).
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
    fn next(&self, data: &[u8], pos: usize, ahead: &mut Ahead) -> Option<(usize, usize)> {
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
    fn admits(&self, data: &[u8], start: usize, end: usize) -> bool {
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
const MAX_PREFIXES: usize = 4;

/// Where each scan of a line filter was last found in a buffer (`usize::MAX`: nowhere past
/// where it was looked for); `None` until looked for.
type Ahead = [Option<usize>; MAX_PREFIXES];

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
struct FoldedRun {
    /// The run in either case.
    run: FoldedFinder,
    /// The non-ASCII members of the run's classes, each as UTF-8: a match holding one holds
    /// the run in no ASCII case.
    others: Box<[LiteralFinder]>,
}

impl FoldedRun {
    fn new(run: &Run) -> FoldedRun {
        let others = run.others.iter().map(|c| LiteralFinder::new(c.encode_utf8(&mut [0; 4]).as_bytes())).collect();
        FoldedRun { run: FoldedFinder::new(&run.bytes), others }
    }

    fn holds(&self, data: &[u8]) -> bool {
        self.run.find(data).is_some() || self.others.iter().any(|f| f.find(data).is_some())
    }
}

/// A test every buffer holding a match passes, fast enough to run over a whole table first.
enum Sieve<'a> {
    /// Any of these literals.
    Literal(&'a [LiteralFinder]),
    Folded(&'a FoldedRun),
    Prefilter(&'a Prefilter),
}

impl Sieve<'_> {
    fn holds(&self, data: &[u8]) -> bool {
        match self {
            Sieve::Literal(finders) => finders.iter().any(|f| f.find(data).is_some()),
            Sieve::Folded(folded) => folded.holds(data),
            Sieve::Prefilter(filter) => filter.find(data, Span::from(0..data.len())).is_some(),
        }
    }
}

/// The caches of one search over a buffer: taken from the regex's pool when the DFA first has
/// something to search (most buffers of a search hold no candidate, and threads searching
/// together would queue on the pool's lock), given back when the search ends.
struct Lease<'a> {
    re: &'a LineRegex,
    caches: Option<Caches>,
}

impl Lease<'_> {
    fn get(&mut self) -> &mut Caches {
        let re = self.re;
        self.caches.get_or_insert_with(|| {
            re.caches.lock().unwrap_or_else(|e| e.into_inner()).pop().unwrap_or_else(|| Caches {
                dfa: re.dfa.create_cache(),
                backtrack: re.backtrack.create_cache(),
                pikevm: re.pikevm.create_cache(),
            })
        })
    }
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        if let Some(caches) = self.caches.take() {
            self.re.caches.lock().unwrap_or_else(|e| e.into_inner()).push(caches);
        }
    }
}

struct Caches {
    dfa: hybrid::dfa::Cache,
    backtrack: backtrack::Cache,
    pikevm: pikevm::Cache,
}

impl Matcher {
    /// Compiles a search pattern. Errors: `invalid_pattern` for a malformed regex, a pattern
    /// over [`MAX_PATTERN_BYTES`], or one whose program exceeds the limits above. The fallback
    /// work of a regex is unbounded; see [`Matcher::bounded`].
    pub fn new(pattern: &str, regex: bool, ignore_case: bool) -> CoreResult<Matcher> {
        if pattern.len() > MAX_PATTERN_BYTES {
            return Err(invalid_pattern(
                pattern,
                format_args!("{} bytes; the limit is {MAX_PATTERN_BYTES}", pattern.len()),
            ));
        }
        if !regex && !ignore_case {
            return Ok(Matcher::Literal(Box::new(LiteralFinder::new(pattern.as_bytes()))));
        }
        let source = if regex { pattern.to_string() } else { regex_syntax::escape(pattern) };
        if regex {
            check_weight(pattern)?;
        }
        LineRegex::new(pattern, &source, ignore_case).map(|r| Matcher::Regex(Box::new(r)))
    }

    /// The same matcher with its fallback work capped at [`MAX_FALLBACK_WORK`]: a search that
    /// would need more fails with `pattern_too_expensive` instead of blocking its caller.
    pub fn bounded(mut self) -> Matcher {
        if let Matcher::Regex(r) = &mut self {
            r.budget = Some(MAX_FALLBACK_WORK);
        }
        self
    }

    /// What every match holds, when the matcher knows it (the literal searched for, a regex's
    /// line filter or prefilter): a buffer without it has no matching line.
    fn sieve(&self) -> Option<Sieve<'_>> {
        let re = match self {
            Matcher::Literal(finder) => return Some(Sieve::Literal(std::slice::from_ref(finder))),
            Matcher::Regex(re) => re,
        };
        Some(match (&re.line_filter, &re.prefilter) {
            (Some(LineFilter::Prefix(finders)), _) => Sieve::Literal(finders),
            (Some(LineFilter::Folded(folded)), _) => Sieve::Folded(folded),
            (Some(LineFilter::Inner(finder)), _) => Sieve::Literal(std::slice::from_ref(finder)),
            (Some(LineFilter::Suffix(filter)), _) | (None, Some(filter)) => Sieve::Prefilter(filter),
            (None, None) => return None,
        })
    }

    /// Calls `on_line(start, end)` for each line (byte range, terminator excluded) that contains
    /// a match, in order, until it returns `false`. Fails only when a bounded regex runs out of
    /// fallback work (`pattern_too_expensive`).
    pub fn for_each_matching_line(&self, data: &[u8], mut on_line: impl FnMut(usize, usize) -> bool) -> CoreResult<()> {
        match self {
            Matcher::Literal(finder) => {
                let mut pos = 0;
                while pos < data.len() {
                    let Some(i) = finder.find(&data[pos..]) else { break };
                    let (start, end) = line_bounds(data, pos + i);
                    if !on_line(start, end) {
                        return Ok(());
                    }
                    pos = end + 1;
                }
                Ok(())
            }
            Matcher::Regex(re) => re.for_each_matching_line(data, on_line),
        }
    }
}

impl LineRegex {
    fn new(pattern: &str, source: &str, ignore_case: bool) -> CoreResult<LineRegex> {
        let fail =
            |e: &dyn std::fmt::Display| invalid_pattern(pattern, e.to_string().lines().last().unwrap_or("").trim());
        let hir = line_hir(source, ignore_case).map_err(|e| fail(&e))?;
        let nfa = thompson::Compiler::new()
            .configure(
                thompson::Config::new()
                    .utf8(false)
                    .nfa_size_limit(Some(REGEX_SIZE_LIMIT))
                    .which_captures(thompson::WhichCaptures::None),
            )
            .build_from_hir(&hir)
            .map_err(|e| fail(&e))?;
        let prefilter = Prefilter::from_hir_prefix(MatchKind::LeftmostFirst, &hir);
        let slow = prefilter.as_ref().is_none_or(|p| !p.is_fast());
        let line_filter = if let Some(prefixes) = prefix_literals(&hir).filter(|p| p.len() == 1 || slow) {
            Some(LineFilter::Prefix(prefixes.iter().map(|p| LiteralFinder::new(p)).collect()))
        } else if let Some(run) = slow.then(|| held_run(&hir)).flatten() {
            Some(match run.folded {
                true => LineFilter::Folded(Box::new(FoldedRun::new(&run))),
                false => LineFilter::Inner(Box::new(LiteralFinder::new(&run.bytes))),
            })
        } else if prefilter.is_some() {
            None
        } else {
            suffix_filter(&hir).map(LineFilter::Suffix)
        };
        let dfa = hybrid::dfa::Config::new()
            .prefilter(prefilter.clone())
            .cache_capacity(REGEX_DFA_SIZE_LIMIT)
            .skip_cache_capacity_check(true)
            .unicode_word_boundary(true)
            .minimum_cache_clear_count(Some(3))
            .minimum_bytes_per_state(Some(10));
        let dfa = hybrid::dfa::Builder::new().configure(dfa).build_from_nfa(nfa.clone()).map_err(|e| fail(&e))?;
        let backtrack = backtrack::Builder::new().build_from_nfa(nfa.clone()).map_err(|e| fail(&e))?;
        let pikevm = pikevm::Builder::new().build_from_nfa(nfa.clone()).map_err(|e| fail(&e))?;
        Ok(LineRegex {
            dfa,
            backtrack,
            pikevm,
            prefilter,
            line_filter,
            nfa_states: nfa.states().len() as u64,
            caches: Mutex::new(Vec::new()),
            gave_up: AtomicBool::new(false),
            spent: AtomicU64::new(0),
            budget: None,
            shown: pattern.chars().take(200).collect(),
        })
    }

    fn for_each_matching_line(&self, data: &[u8], mut on_line: impl FnMut(usize, usize) -> bool) -> CoreResult<()> {
        self.search(data, &mut Lease { re: self, caches: None }, &mut on_line)
    }

    fn search(&self, data: &[u8], lease: &mut Lease, on_line: &mut dyn FnMut(usize, usize) -> bool) -> CoreResult<()> {
        let mut pos = 0;
        let mut ahead = Ahead::default();
        while pos < data.len() {
            if self.gave_up.load(Ordering::Relaxed) {
                return self.fallback_lines(data, pos, lease.get(), on_line);
            }
            // The whole rest of the buffer, or where the line filter points.
            let (from, to) = match &self.line_filter {
                None => (pos, data.len()),
                Some(filter) => match filter.next(data, pos, &mut ahead) {
                    None => return Ok(()),
                    Some(span) => span,
                },
            };
            let input = Input::new(data).range(from..to).earliest(true);
            let (start, end) = match self.dfa.try_search_fwd(&mut lease.get().dfa, &input) {
                Ok(None) if to < data.len() => {
                    pos = to + 1;
                    continue;
                }
                Ok(None) => return Ok(()),
                // A match never contains `\n`: a non-empty one ends on its own line; an empty one
                // sits on the line of its offset.
                Ok(Some(m)) => {
                    let e = m.offset();
                    let at = if e > from && data[e - 1] != b'\n' { e - 1 } else { e };
                    if at == data.len() && data.last() == Some(&b'\n') {
                        return Ok(()); // after the final newline: no line there
                    }
                    line_bounds(data, at)
                }
                Err(err) => match *err.kind() {
                    // Lines before the one holding `offset` have no match (the DFA would have
                    // stopped there); that line is checked by the NFA, the search goes on after it.
                    MatchErrorKind::Quit { offset, .. } => {
                        let (s, e) = line_bounds(data, offset.min(data.len()));
                        if self.nfa_line(data, s, e, lease.get())? && !on_line(s, e) {
                            return Ok(());
                        }
                        pos = e + 1;
                        continue;
                    }
                    _ => {
                        let offset = match *err.kind() {
                            MatchErrorKind::GaveUp { offset } => offset,
                            _ => pos,
                        };
                        self.gave_up.store(true, Ordering::Relaxed);
                        let (s, _) = line_bounds(data, offset.min(data.len()).max(from));
                        return self.fallback_lines(data, s, lease.get(), on_line);
                    }
                },
            };
            if !on_line(start, end) {
                return Ok(());
            }
            pos = end + 1;
        }
        Ok(())
    }

    /// Line by line on the NFA engines from `start` (a line start).
    fn fallback_lines(
        &self,
        data: &[u8],
        mut start: usize,
        c: &mut Caches,
        on_line: &mut dyn FnMut(usize, usize) -> bool,
    ) -> CoreResult<()> {
        while start < data.len() {
            let end = memchr::memchr(b'\n', &data[start..]).map_or(data.len(), |i| start + i);
            if self.nfa_line(data, start, end, c)? && !on_line(start, end) {
                return Ok(());
            }
            start = end + 1;
        }
        Ok(())
    }

    /// Whether line `start..end` holds a match, on the NFA engines, charged to the budget.
    fn nfa_line(&self, data: &[u8], start: usize, end: usize, c: &mut Caches) -> CoreResult<bool> {
        // A line without the literals every match starts (or ends) with costs nothing.
        if self.prefilter.as_ref().is_some_and(|filter| filter.find(data, Span::from(start..end)).is_none())
            || self.line_filter.as_ref().is_some_and(|filter| !filter.admits(data, start, end))
        {
            return Ok(false);
        }
        let len = (end - start) as u64 + 1;
        let use_backtrack = end - start <= self.backtrack.max_haystack_len();
        let cost = len.saturating_mul(self.nfa_states).saturating_mul(if use_backtrack { 1 } else { PIKEVM_COST });
        let spent = self.spent.fetch_add(cost, Ordering::Relaxed).saturating_add(cost);
        if let Some(budget) = self.budget {
            if spent > budget {
                return Err(CoreError::new(
                    ErrorCode::PatternTooExpensive,
                    &self.shown,
                    format_args!("this pattern needs slow backtracking on this text and the search stopped after {budget} units of work"),
                ));
            }
        }
        let input = Input::new(data).range(start..end).earliest(true);
        if use_backtrack {
            // Within `max_haystack_len` the backtracker cannot fail.
            Ok(matches!(self.backtrack.try_search_slots(&mut c.backtrack, &input, &mut []), Ok(Some(_))))
        } else {
            Ok(self.pikevm.search_slots(&mut c.pikevm, &input, &mut []).is_some())
        }
    }
}

/// A pattern as a [`LineRegex`] searches it: multi-line, CRLF-aware, over bytes, and never
/// across lines (see [`without_newline`]).
fn line_hir(source: &str, ignore_case: bool) -> Result<Hir, String> {
    let hir = regex_syntax::ParserBuilder::new()
        .multi_line(true)
        .crlf(true)
        .case_insensitive(ignore_case)
        .utf8(false)
        .nest_limit(REGEX_NEST_LIMIT)
        .build()
        .parse(source)
        .map_err(|e| e.to_string())?;
    Ok(without_newline(hir))
}

/// The literals every match of `hir` starts with, when they are at most [`MAX_PREFIXES`] and
/// none is empty.
fn prefix_literals(hir: &Hir) -> Option<Vec<Vec<u8>>> {
    let mut seq = Extractor::new().kind(ExtractKind::Prefix).extract(hir);
    seq.optimize_for_prefix_by_preference();
    let literals = seq.literals()?;
    let usable = (1..=MAX_PREFIXES).contains(&literals.len()) && literals.iter().all(|l| !l.as_bytes().is_empty());
    usable.then(|| literals.iter().map(|l| l.as_bytes().to_vec()).collect())
}

/// Fewest bytes in a row a [`LineFilter::Inner`] or [`LineFilter::Folded`] looks for:
/// shorter ones are on most lines.
const MIN_RUN: usize = 3;

/// Bytes every match of a pattern holds in a row (see [`held_run`]).
#[derive(Debug, PartialEq)]
struct Run {
    bytes: Vec<u8>,
    /// Whether some are letters in either case (then all are compared so, in lower case).
    folded: bool,
    /// Non-ASCII members of those letters' classes (the Kelvin sign in `(?i)k`), at most
    /// [`MAX_PREFIXES`]` - 1`.
    others: Vec<char>,
}

/// The longest run of bytes every match of `hir` holds in a row, each a literal byte or one
/// ASCII letter in either case (`(?i)a` is `[Aa]`), at least [`MIN_RUN`] long; a letter's
/// class may also hold one non-ASCII character (`(?i)k` holds the Kelvin sign, `(?i)s` the
/// long s), which a line is then also searched for. Only the top level of the pattern is read:
/// a concatenation of literals and classes (`_RARE_` in `\w+_RARE_\d+`).
fn held_run(hir: &Hir) -> Option<Run> {
    /// A byte as itself (`Some(false)`) or in either case (`Some(true)`), with the one other
    /// member of its class; `None` ends a run.
    type Unit = Option<(u8, bool, Option<char>)>;
    /// `unicode`: the members are characters (in a byte class, a member past ASCII is one raw
    /// byte, which no other member's case or UTF-8 encoding stands for).
    fn class(ranges: &mut dyn Iterator<Item = (u32, u32)>, unicode: bool) -> Unit {
        let byte = |c: u32| u8::try_from(c).ok().filter(u8::is_ascii);
        // The lower case of the letter whose two cases `a` and `b` are.
        let letter = |a: u32, b: u32| {
            let (a, b) = (byte(a)?, byte(b)?);
            (a != b && a.eq_ignore_ascii_case(&b)).then(|| a.to_ascii_lowercase())
        };
        match ranges.take(4).collect::<Vec<_>>()[..] {
            [(a, b)] if a == b => Some((byte(a)?, false, None)),
            [(a, a2), (b, b2)] if a == a2 && b == b2 => Some((letter(a, b)?, true, None)),
            [(a, a2), (b, b2), (c, c2)] if unicode && a == a2 && b == b2 && c == c2 && c > 0x7f => {
                Some((letter(a, b)?, true, Some(char::from_u32(c)?)))
            }
            _ => None,
        }
    }
    fn units(hir: &Hir, out: &mut Vec<Unit>) {
        match hir.kind() {
            HirKind::Literal(Literal(bytes)) => out.extend(bytes.iter().map(|&b| Some((b, false, None)))),
            HirKind::Class(Class::Unicode(c)) => {
                out.push(class(&mut c.ranges().iter().map(|r| (u32::from(r.start()), u32::from(r.end()))), true))
            }
            HirKind::Class(Class::Bytes(c)) => {
                out.push(class(&mut c.ranges().iter().map(|r| (u32::from(r.start()), u32::from(r.end()))), false))
            }
            HirKind::Concat(parts) => parts.iter().for_each(|part| units(part, out)),
            _ => out.push(None),
        }
    }
    let mut all = Vec::new();
    units(hir, &mut all);
    let longest = all.split(Option::is_none).max_by_key(|run| run.len()).filter(|run| run.len() >= MIN_RUN)?;
    let folded = longest.iter().flatten().any(|&(_, folded, _)| folded);
    let bytes = longest.iter().flatten().map(|&(b, _, _)| if folded { b.to_ascii_lowercase() } else { b }).collect();
    let mut others: Vec<char> = Vec::new();
    for other in longest.iter().flatten().filter_map(|&(_, _, other)| other) {
        if !others.contains(&other) {
            others.push(other);
        }
    }
    (others.len() < MAX_PREFIXES).then_some(Run { bytes, folded, others })
}

/// A prefilter for the literals every match of `hir` ends with, when they are few and non-empty.
fn suffix_filter(hir: &Hir) -> Option<Prefilter> {
    let mut seq = Extractor::new().kind(ExtractKind::Suffix).extract(hir);
    seq.optimize_for_suffix_by_preference();
    let literals = seq.literals()?;
    if literals.is_empty() || seq.min_literal_len()? == 0 {
        return None;
    }
    let needles: Vec<&[u8]> = literals.iter().map(|l| l.as_bytes()).collect();
    Prefilter::new(MatchKind::LeftmostFirst, &needles)
}

/// The pattern with `\n` removed from every class and literal (a literal holding one can never
/// match within a line), so no match spans lines.
fn without_newline(hir: Hir) -> Hir {
    let newline_u = ClassUnicode::new([ClassUnicodeRange::new('\n', '\n')]);
    let newline_b = ClassBytes::new([ClassBytesRange::new(b'\n', b'\n')]);
    match hir.into_kind() {
        HirKind::Literal(Literal(bytes)) if bytes.contains(&b'\n') => Hir::fail(),
        HirKind::Literal(Literal(bytes)) => Hir::literal(bytes),
        HirKind::Class(Class::Unicode(mut c)) => {
            c.difference(&newline_u);
            Hir::class(Class::Unicode(c))
        }
        HirKind::Class(Class::Bytes(mut c)) => {
            c.difference(&newline_b);
            Hir::class(Class::Bytes(c))
        }
        HirKind::Repetition(r) => Hir::repetition(Repetition { sub: Box::new(without_newline(*r.sub)), ..r }),
        HirKind::Capture(c) => Hir::capture(Capture { sub: Box::new(without_newline(*c.sub)), ..c }),
        HirKind::Concat(v) => Hir::concat(v.into_iter().map(without_newline).collect()),
        HirKind::Alternation(v) => Hir::alternation(v.into_iter().map(without_newline).collect()),
        HirKind::Look(l) => Hir::look(l),
        HirKind::Empty => Hir::empty(),
    }
}

/// `invalid_pattern`, echoing at most 200 characters of the pattern.
fn invalid_pattern(pattern: &str, why: impl std::fmt::Display) -> CoreError {
    let shown: String = pattern.chars().take(200).collect();
    CoreError::new(ErrorCode::InvalidPattern, &shown, why)
}

/// Refuses a regex whose expansion weight exceeds [`MAX_REGEX_WEIGHT`] (parsing with the same
/// nest limit as the compiler, so a deeply nested pattern is refused before any recursion).
fn check_weight(pattern: &str) -> CoreResult<()> {
    let hir = regex_syntax::ParserBuilder::new()
        .nest_limit(REGEX_NEST_LIMIT)
        .build()
        .parse(pattern)
        .map_err(|e| invalid_pattern(pattern, e.to_string().lines().last().unwrap_or("").trim()))?;
    let w = weight(&hir);
    if w > MAX_REGEX_WEIGHT {
        return Err(invalid_pattern(
            pattern,
            format_args!(
                "expands to about {w} positions; the limit is {MAX_REGEX_WEIGHT} (use a smaller repetition count)"
            ),
        ));
    }
    Ok(())
}

/// Positions a pattern expands to, saturating (see [`MAX_REGEX_WEIGHT`]).
fn weight(hir: &regex_syntax::hir::Hir) -> u64 {
    use regex_syntax::hir::HirKind;
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => 0,
        HirKind::Literal(l) => l.0.len() as u64,
        HirKind::Class(_) => 1,
        HirKind::Repetition(r) => {
            let times = u64::from(r.max.unwrap_or(r.min).max(1));
            weight(&r.sub).max(1).saturating_mul(times)
        }
        HirKind::Capture(c) => weight(&c.sub),
        HirKind::Concat(v) | HirKind::Alternation(v) => v.iter().map(weight).fold(0, u64::saturating_add),
    }
}

/// What one file contributed to a search.
#[derive(Debug, Clone, PartialEq)]
pub struct FileHits {
    pub path: String,
    /// Matching lines (plus context lines) in `content` mode; empty otherwise.
    pub lines: Vec<GrepMatch>,
    /// Matching lines found (at most the limit given to [`Searcher::search`]).
    pub count: usize,
}

/// A compiled search, reusable across files and threads: each file is searched on its own and
/// a [`Collector`] merges the results in path order, so sequential (in-memory) and parallel
/// (filesystem) searches give identical answers.
pub struct Searcher {
    matcher: Matcher,
    filter: Option<PathFilter>,
    root: String,
    mode: OutputMode,
    context: usize,
}

impl Searcher {
    /// `root` is the normalised directory (or file) the search is scoped to.
    pub fn new(opts: &GrepOptions, root: &str) -> CoreResult<Searcher> {
        Ok(Searcher {
            matcher: Matcher::new(&opts.pattern, opts.regex, opts.ignore_case)?,
            filter: opts.glob.as_deref().map(PathFilter::new).transpose()?,
            root: root.to_string(),
            mode: opts.output_mode,
            context: opts.context.min(MAX_CONTEXT),
        })
    }

    /// Whether the `glob` filter admits this normalised path.
    pub fn wants(&self, p: &str) -> bool {
        self.filter.as_ref().is_none_or(|f| f.admits(p, &self.root))
    }

    /// The same search with its regex fallback work bounded (see [`Matcher::bounded`]): for
    /// searches that run on the caller's thread.
    pub fn bounded(mut self) -> Searcher {
        self.matcher = self.matcher.bounded();
        self
    }

    /// Searches one file, collecting at most `limit` matching lines. `None` for a binary file
    /// or one without matches. An unbounded searcher never fails; use [`Searcher::try_search`]
    /// with a bounded one.
    pub fn search(&self, p: &str, data: &[u8], limit: usize) -> Option<FileHits> {
        self.try_search(p, data, limit).unwrap_or(None)
    }

    /// [`Searcher::search`], failing with `pattern_too_expensive` when a bounded regex runs out
    /// of fallback work.
    pub fn try_search(&self, p: &str, data: &[u8], limit: usize) -> CoreResult<Option<FileHits>> {
        if limit == 0 {
            return Ok(None);
        }
        let limit = if self.mode == OutputMode::FilesWithMatches { 1 } else { limit };
        let mut ranges: Vec<(usize, usize)> = Vec::new();
        let mut count = 0usize;
        let keep_ranges = self.mode == OutputMode::Content;
        self.matcher.for_each_matching_line(data, |s, e| {
            count += 1;
            if keep_ranges {
                ranges.push((s, e));
            }
            count < limit
        })?;
        // Checked only once something matched: most files in a search have no match, and the
        // probe would otherwise read their first 8 KiB a second time.
        if count == 0 || is_binary(data) {
            return Ok(None);
        }
        let mut lines = Vec::new();
        emit_lines(p, data, &ranges, self.context, &mut lines);
        Ok(Some(FileHits { path: p.to_string(), lines, count }))
    }
}

/// Merges per-file hits, in path order, into a [`GrepResult`] under the `maxCount` cap.
pub struct Collector {
    mode: OutputMode,
    cap: usize,
    taken: usize,
    result: GrepResult,
    matches: Vec<GrepMatch>,
    files: Vec<String>,
    /// In path order (files arrive in path order).
    counts: Vec<(String, usize)>,
}

impl Collector {
    pub fn new(opts: &GrepOptions) -> Collector {
        Collector {
            mode: opts.output_mode,
            cap: opts.max_count.unwrap_or(MAX_COUNT).min(MAX_COUNT),
            taken: 0,
            result: GrepResult::default(),
            matches: Vec::new(),
            files: Vec::new(),
            counts: Vec::new(),
        }
    }

    pub fn mode(&self) -> OutputMode {
        self.mode
    }

    /// The lines kept so far (`content` mode), in order.
    pub fn matches(&self) -> &[GrepMatch] {
        &self.matches
    }

    /// The files kept so far (`files_with_matches` mode), in path order.
    pub fn files(&self) -> &[String] {
        &self.files
    }

    /// The counts kept so far (`count` mode), in path order.
    pub fn counts(&self) -> &[(String, usize)] {
        &self.counts
    }

    /// How many more matching lines one file may usefully contribute (one more than fits, so
    /// that overflow is detected).
    pub fn limit(&self) -> usize {
        match self.mode {
            OutputMode::Content => (self.cap - self.taken).saturating_add(1),
            _ => usize::MAX,
        }
    }

    pub fn is_full(&self) -> bool {
        self.result.truncated
    }

    /// How many more lines (`content` mode) or files the cap leaves room for.
    fn room(&self) -> usize {
        self.cap - self.taken
    }

    /// A stand-in while a search moves the collector.
    #[cfg(not(target_arch = "wasm32"))]
    fn empty() -> Collector {
        Collector::new(&GrepOptions::default())
    }

    /// Adds one file's hits; files must arrive in path order.
    pub fn push(&mut self, hits: FileHits) {
        if self.result.truncated {
            return;
        }
        match self.mode {
            OutputMode::Content => {
                let room = self.cap - self.taken;
                if hits.count > room {
                    self.result.truncated = true;
                    let mut kept = 0;
                    for line in hits.lines {
                        if !line.context {
                            if kept == room {
                                break;
                            }
                            kept += 1;
                        }
                        self.matches.push(line);
                    }
                    self.taken = self.cap;
                } else {
                    self.taken += hits.count;
                    self.matches.extend(hits.lines);
                }
            }
            OutputMode::FilesWithMatches | OutputMode::Count => {
                if self.taken == self.cap {
                    self.result.truncated = true;
                    return;
                }
                self.taken += 1;
                if self.mode == OutputMode::Count {
                    self.counts.push((hits.path, hits.count));
                } else {
                    self.files.push(hits.path);
                }
            }
        }
    }

    pub fn finish(mut self) -> GrepResult {
        match self.mode {
            OutputMode::Content => self.result.matches = Some(self.matches),
            OutputMode::FilesWithMatches => self.result.files = Some(self.files),
            OutputMode::Count => self.result.counts = Some(self.counts.into_iter().collect()),
        }
        self.result
    }
}

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
type File<'a> = (&'a String, &'a [u8]);

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
    if let (Some(sieve), true) = (searcher.matcher.sieve(), layout.scattered()) {
        // The bytes the rest may hold, at the head's density (one match more than found, so
        // that an empty head promises nothing), without filling the room left. Past them the
        // cap is likely reached before the end, and path order stops there.
        let sparse_bytes = collector.room() as f64 * head_bytes as f64 / (collector.taken + 1) as f64;
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

/// How the contents of files taken in path order lie in memory.
#[derive(Default)]
struct Layout {
    files: usize,
    /// How many lie before the file ahead of them.
    backwards: usize,
    last: usize,
}

impl Layout {
    fn step(&mut self, data: &[u8]) {
        let at = data.as_ptr() as usize;
        self.files += 1;
        self.backwards += usize::from(at < self.last);
        self.last = at;
    }

    /// Whether they lie out of path order often enough (one step in 16 backwards) for memory
    /// order to pay for sorting them: a table restored from a snapshot lies in path order, and
    /// stays nearly so through a few writes.
    fn scattered(&self) -> bool {
        self.backwards * 16 > self.files
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
fn search_all(
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

/// The share of the files (one in this many) past which memory order gives up: a literal
/// that most files hold (a regex's common prefix, such as `return` in `return\s+null;`)
/// spares little of the search, which then goes on in path order (on threads, natively).
const MOST_HOLDING: usize = 8;

/// `holds` of each file's content, asked in the order the contents lie in memory (split over
/// `threads`), answered in the files' order; `None` as soon as more than `most` files hold.
/// Files written one by one lie wherever the allocator put them, so path order jumps around
/// memory; in memory order the reads stream.
/// A rare grep over 10,000 files written in another order than their paths' took a third less
/// time this way on WASM (one thread, waiting on memory), and less natively too.
fn holders_in_memory_order(
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

/// Blocks of files searched on scoped threads and on this one, each taking the next block in
/// path order. This thread merges the blocks in that order between its own: `progress` sees the
/// files as a sequential search would, and once it says stop (or the cap is reached) no further
/// block is started. A block stops once it alone has more than the cap, since nothing after that
/// point can be kept. (This thread searching too, rather than waiting for each block, leaves the
/// machine's cores to the search: on two of them, waking to merge every block cost ~20%.)
#[cfg(not(target_arch = "wasm32"))]
fn parallel(
    files: &[(&String, &[u8])],
    searcher: &Searcher,
    mut collector: Collector,
    threads: usize,
    mut progress: impl FnMut(&Collector) -> bool,
) -> CoreResult<Collector> {
    use std::sync::atomic::AtomicUsize;
    use std::sync::mpsc;

    let limit = collector.limit();
    let per_file = collector.mode != OutputMode::Content;
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
#[cfg(not(target_arch = "wasm32"))]
type BlockHits = (Vec<FileHits>, Option<CoreError>);

/// How many blocks per thread a parallel search splits its files into.
#[cfg(not(target_arch = "wasm32"))]
const BLOCKS_PER_THREAD: usize = 16;

/// Searches one block of a parallel search, in order, until it alone holds more than the cap,
/// a regex runs out of work, or the search is stopped.
#[cfg(not(target_arch = "wasm32"))]
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
#[cfg(not(target_arch = "wasm32"))]
fn collector_cap(limit: usize) -> usize {
    limit.saturating_sub(1)
}

/// Turns matching line ranges into numbered lines, adding merged context around them.
fn emit_lines(p: &str, data: &[u8], hits: &[(usize, usize)], context: usize, out: &mut Vec<GrepMatch>) {
    if hits.is_empty() {
        return;
    }
    if context == 0 {
        let mut line = 1usize;
        let mut counted_to = 0usize;
        for &(s, e) in hits {
            line += memchr::memchr_iter(b'\n', &data[counted_to..s]).count();
            counted_to = s;
            out.push(GrepMatch { path: p.to_string(), line, text: lossy_line(&data[s..e]), context: false });
        }
        return;
    }
    let starts = crate::text::line_starts(data);
    let mut hit_lines: Vec<usize> = hits.iter().map(|&(s, _)| starts.partition_point(|&x| x <= s) - 1).collect();
    hit_lines.dedup();
    let mut next_unemitted = 0usize;
    for &h in &hit_lines {
        let from = h.saturating_sub(context).max(next_unemitted);
        let to = (h + context).min(starts.len() - 1);
        for i in from..=to {
            let is_hit = hit_lines.binary_search(&i).is_ok();
            let (s, e) = crate::text::nth_line(data, &starts, i);
            out.push(GrepMatch { path: p.to_string(), line: i + 1, text: lossy_line(&data[s..e]), context: !is_hit });
        }
        next_unemitted = to + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(files: &[(&str, &str)], opts: GrepOptions) -> CoreResult<GrepResult> {
        let owned: Vec<(String, Vec<u8>)> = files.iter().map(|(p, c)| (p.to_string(), c.as_bytes().to_vec())).collect();
        let root = opts.path.clone().unwrap_or_else(|| "/".into());
        grep(owned.iter().map(|(p, d)| (p, d.as_slice())), &root, &opts)
    }

    fn lit(p: &str) -> GrepOptions {
        GrepOptions { pattern: p.into(), ..Default::default() }
    }

    fn lines(r: &GrepResult) -> Vec<(String, usize, String, bool)> {
        r.matches.as_ref().unwrap().iter().map(|m| (m.path.clone(), m.line, m.text.clone(), m.context)).collect()
    }

    #[test]
    fn literal_is_not_regex() {
        let r = run(&[("/a", "x.y\nxzy\n(a+)+$\n")], lit("x.y")).unwrap();
        assert_eq!(lines(&r), vec![("/a".into(), 1, "x.y".into(), false)]);
        let r = run(&[("/a", "x.y\nxzy\n(a+)+$\n")], lit("(a+)+$")).unwrap();
        assert_eq!(lines(&r)[0].1, 3);
    }

    #[test]
    fn reports_each_line_once_with_correct_numbers() {
        let r = run(&[("/a", "foo foo\nbar\r\nfoo\n\nlast foo")], lit("foo")).unwrap();
        let got: Vec<(usize, String)> = lines(&r).into_iter().map(|l| (l.1, l.2)).collect();
        assert_eq!(got, vec![(1, "foo foo".into()), (3, "foo".into()), (5, "last foo".into())]);
    }

    #[test]
    fn regex_mode_anchors_per_line_and_handles_crlf() {
        let opts = GrepOptions { pattern: "^b.r$".into(), regex: true, ..Default::default() };
        let r = run(&[("/a", "foo\r\nbar\r\nbaz bar\r\n")], opts).unwrap();
        assert_eq!(lines(&r), vec![("/a".into(), 2, "bar".into(), false)]);
    }

    #[test]
    fn regex_that_could_span_lines_only_reports_real_line_matches() {
        let opts = GrepOptions { pattern: r"a\s+b".into(), regex: true, ..Default::default() };
        let r = run(&[("/a", "a\nb\na  b\nxa\tb")], opts).unwrap();
        let got: Vec<usize> = lines(&r).into_iter().map(|l| l.1).collect();
        assert_eq!(got, vec![3, 4]);
    }

    #[test]
    fn invalid_and_oversized_regexes_are_invalid_pattern() {
        let bad = GrepOptions { pattern: "(".into(), regex: true, ..Default::default() };
        assert_eq!(run(&[], bad).unwrap_err().code, ErrorCode::InvalidPattern);
        let huge = GrepOptions { pattern: "\\w{1000}{1000}".into(), regex: true, ..Default::default() };
        assert_eq!(run(&[], huge).unwrap_err().code, ErrorCode::InvalidPattern);
    }

    #[test]
    fn hostile_regex_runs_in_linear_time() {
        let line = format!("{}!", "a".repeat(200_000));
        let opts = GrepOptions { pattern: "(a+)+$".into(), regex: true, ..Default::default() };
        let r = run(&[("/a", &line)], opts).unwrap();
        assert_eq!(r.matches.unwrap().len(), 0);
    }

    /// Text of `a`s and `b`s (lines of ~100 bytes) on which `a[ab]{20}c` thrashes the lazy DFA.
    fn ab_text(bytes: usize, seed: u64) -> String {
        let mut x: u64 = seed * 2 + 7;
        let mut s = String::with_capacity(bytes + 1);
        while s.len() < bytes {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            s.push(if x & 1 == 0 { 'a' } else { 'b' });
            if x % 97 == 0 {
                s.push('\n');
            }
        }
        s
    }

    #[test]
    fn hostile_regex_on_large_text_is_pattern_too_expensive() {
        let text = ab_text(10 << 20, 1);
        for pattern in ["a[ab]{20}c", "(a|b)*a[ab]{19}c", "[ab]{8}a[ab]{16}c", "(?i)A[AB]{20}C"] {
            let opts = GrepOptions { pattern: pattern.into(), regex: true, ..Default::default() };
            let started = std::time::Instant::now();
            let e = run(&[("/big", &text)], opts).unwrap_err();
            eprintln!("{pattern}: {:?}", started.elapsed());
            assert_eq!(e.code, ErrorCode::PatternTooExpensive, "{pattern}");
            assert!(e.message.contains("simpler pattern"), "{}", e.message);
        }
        // Many small files share one budget.
        let small: Vec<(String, String)> = (0..200u64).map(|i| (format!("/f{i:03}"), ab_text(50_000, i))).collect();
        let refs: Vec<(&str, &str)> = small.iter().map(|(p, c)| (p.as_str(), c.as_str())).collect();
        let opts = GrepOptions { pattern: "a[ab]{20}c".into(), regex: true, ..Default::default() };
        assert_eq!(run(&refs, opts).unwrap_err().code, ErrorCode::PatternTooExpensive);
    }

    #[test]
    fn hostile_regex_on_small_text_still_answers() {
        let text = format!("{}\nxx a{}c yy\n", ab_text(20_000, 2), "ab".repeat(10));
        let opts = GrepOptions { pattern: "a[ab]{20}c".into(), regex: true, ..Default::default() };
        let r = run(&[("/s", &text)], opts).unwrap();
        let got = lines(&r);
        assert_eq!(got.len(), 1);
        assert!(got[0].2.starts_with("xx a"));
        // The unbounded searcher (the filesystem's, off the JS thread) never fails.
        let big = ab_text(2 << 20, 3);
        let opts = GrepOptions { pattern: "a[ab]{20}c".into(), regex: true, ..Default::default() };
        let searcher = Searcher::new(&opts, "/").unwrap();
        assert_eq!(searcher.search("/b", big.as_bytes(), 10), None);
    }

    #[test]
    fn unicode_word_boundaries_next_to_non_ascii_text() {
        let text = "日本 foo 語\nfoobar\né foo\nfoo\n";
        let opts = GrepOptions { pattern: r"\bfoo\b".into(), regex: true, ..Default::default() };
        let got: Vec<usize> = lines(&run(&[("/u", text)], opts).unwrap()).into_iter().map(|l| l.1).collect();
        assert_eq!(got, vec![1, 3, 4]);
    }

    #[test]
    fn empty_matches_and_newline_literals() {
        let opts = GrepOptions { pattern: "^$".into(), regex: true, ..Default::default() };
        let got: Vec<usize> = lines(&run(&[("/e", "a\n\nb\n")], opts).unwrap()).into_iter().map(|l| l.1).collect();
        assert_eq!(got, vec![2]);
        let opts = GrepOptions { pattern: "a\nb|c".into(), regex: true, ..Default::default() };
        let got: Vec<usize> = lines(&run(&[("/n", "a\nb\nc\n")], opts).unwrap()).into_iter().map(|l| l.1).collect();
        assert_eq!(got, vec![3]);
    }

    use proptest::prelude::Strategy;

    proptest::proptest! {
        /// The line regex (DFA and fallback) finds exactly the lines on which the PikeVM finds a match.
        #[test]
        fn line_regex_agrees_with_per_line_search(
            pattern in proptest::collection::vec(proptest::sample::select(vec![
                "a", "b", ".", "^", "$", r"\s", r"\w", r"\b", r"\S", "(a|b)", "*", "+", "?", "{1,3}", r"\n", "[^a]", "é",
            ]), 1..7).prop_map(|v| v.concat()),
            text in "[ab \n\r\té]{0,60}",
            ignore_case in proptest::bool::ANY,
        ) {
            // An independent engine on the pattern as written, each line searched as a range of
            // the whole buffer (look-arounds see the neighbouring bytes, as in a whole-buffer search).
            let syntax = regex_automata::util::syntax::Config::new().multi_line(true).crlf(true).case_insensitive(ignore_case).utf8(false);
            let Ok(reference) = pikevm::PikeVM::builder().syntax(syntax).thompson(thompson::Config::new().utf8(false)).build(&pattern) else { return Ok(()) };
            let mut cache = reference.create_cache();
            let Ok(m) = Matcher::new(&pattern, true, ignore_case) else { return Ok(()) };
            let mut got = Vec::new();
            m.for_each_matching_line(text.as_bytes(), |s, e| { got.push((s, e)); true }).unwrap();
            let mut want = Vec::new();
            let data = text.as_bytes();
            let mut start = 0;
            while start < data.len() {
                let end = memchr::memchr(b'\n', &data[start..]).map_or(data.len(), |i| start + i);
                if reference.is_match(&mut cache, Input::new(data).range(start..end)) { want.push((start, end)); }
                start = end + 1;
            }
            proptest::prop_assert_eq!(&got, &want);
            // The NFA fallback (as after the DFA gave up) finds the same lines.
            if let Matcher::Regex(r) = &m {
                r.gave_up.store(true, Ordering::Relaxed);
            }
            let mut fallback = Vec::new();
            m.for_each_matching_line(text.as_bytes(), |s, e| { fallback.push((s, e)); true }).unwrap();
            proptest::prop_assert_eq!(fallback, want);
        }
    }

    #[test]
    fn modes_and_caps() {
        let files = [("/a", "x\nx\n"), ("/b", "y\n"), ("/c", "x\n")];
        let f = run(&files, GrepOptions { output_mode: OutputMode::FilesWithMatches, ..lit("x") }).unwrap();
        assert_eq!(f.files.unwrap(), vec!["/a", "/c"]);
        let c = run(&files, GrepOptions { output_mode: OutputMode::Count, ..lit("x") }).unwrap();
        assert_eq!(c.counts.unwrap(), BTreeMap::from([("/a".to_string(), 2), ("/c".to_string(), 1)]));
        let capped = run(&files, GrepOptions { max_count: Some(2), ..lit("x") }).unwrap();
        assert!(capped.truncated);
        assert_eq!(capped.matches.unwrap().len(), 2);
        let exact = run(&files, GrepOptions { max_count: Some(3), ..lit("x") }).unwrap();
        assert!(!exact.truncated);
        let files_cap =
            run(&files, GrepOptions { max_count: Some(1), output_mode: OutputMode::FilesWithMatches, ..lit("x") })
                .unwrap();
        assert_eq!((files_cap.files.unwrap(), files_cap.truncated), (vec!["/a".to_string()], true));
    }

    #[test]
    fn context_lines_are_merged_and_marked() {
        let text = "1\n2\nhit\n4\nhit\n6\n7\n8\nhit";
        let r = run(&[("/a", text)], GrepOptions { context: 1, ..lit("hit") }).unwrap();
        let got: Vec<(usize, bool)> = lines(&r).into_iter().map(|l| (l.1, l.3)).collect();
        assert_eq!(got, vec![(2, true), (3, false), (4, true), (5, false), (6, true), (8, true), (9, false)]);
    }

    #[test]
    fn binary_skipped_invalid_utf8_searched() {
        let owned =
            [("/bin".to_string(), b"foo\0bar foo".to_vec()), ("/latin1".to_string(), b"caf\xe9 foo\n".to_vec())];
        let r = grep(owned.iter().map(|(p, d)| (p, d.as_slice())), "/", &lit("foo")).unwrap();
        assert_eq!(lines(&r), vec![("/latin1".into(), 1, "caf\u{FFFD} foo".into(), false)]);
    }

    #[test]
    fn glob_filter_matches_basename_or_relative_path() {
        let files = [("/src/a.ts", "x"), ("/src/b.js", "x"), ("/src/deep/c.ts", "x")];
        let by_name = run(&files, GrepOptions { glob: Some("*.ts".into()), ..lit("x") }).unwrap();
        assert_eq!(lines(&by_name).len(), 2);
        let by_path = run(&files, GrepOptions { glob: Some("src/*.ts".into()), ..lit("x") }).unwrap();
        assert_eq!(lines(&by_path).len(), 1);
    }

    /// The files searched one after another in path order: what every search must answer.
    fn path_order(
        files: &[(&String, &[u8])],
        searcher: &Searcher,
        opts: &GrepOptions,
        mut progress: impl FnMut(&Collector) -> bool,
    ) -> CoreResult<Collector> {
        let mut collector = Collector::new(opts);
        search_all(files, searcher, &mut collector, &mut progress)?;
        Ok(collector)
    }

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

    /// `count` files of `size` bytes each, cut from one buffer in the reverse of their path order
    /// (so memory order and path order disagree everywhere); `text(i)` starts file `i`.
    fn reversed_files(count: usize, size: usize, text: impl Fn(usize) -> String) -> (Vec<String>, Vec<u8>) {
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

    fn slices<'a>(paths: &'a [String], buffer: &'a [u8]) -> Vec<(&'a String, &'a [u8])> {
        let size = buffer.len() / paths.len();
        let at = |i: usize| (paths.len() - 1 - i) * size;
        paths.iter().enumerate().map(|(i, p)| (p, &buffer[at(i)..at(i) + size])).collect()
    }

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

    #[test]
    fn a_regex_is_searched_from_its_literal_prefix() {
        let required = |pattern: &str, ignore_case: bool| match Matcher::new(pattern, true, ignore_case).unwrap() {
            Matcher::Regex(re) => matches!(re.line_filter, Some(LineFilter::Prefix(_))),
            Matcher::Literal(_) => unreachable!(),
        };
        assert!(required(r"needle \d+5\b", false));
        assert!(required(r"^needle", false));
        assert!(required("needle", false));
        assert!(!required("needle", true), "a case-insensitive prefix is many literals");
        assert!(!required(r"(needle|pin) \d", false));
        assert!(!required(r"\w+_\d+\(", false), "no literal prefix");
        // The DFA starts at each occurrence of the prefix: what comes before still counts for
        // look-behind, and an occurrence that does not match leaves the later ones to search.
        let text = "xneedle 5\n needle\nneedle x needle 15 y\n\u{e9}needle 5\n  needle 25 needle\nend";
        let found = |pattern: &str| -> Vec<usize> {
            let r = run(&[("/a", text)], GrepOptions { regex: true, ..lit(pattern) }).unwrap();
            lines(&r).into_iter().map(|(_, line, _, _)| line).collect()
        };
        assert_eq!(found(r"needle \d*5\b"), [1, 3, 4, 5]);
        assert_eq!(found(r"\bneedle \d*5\b"), [3, 5]);
        assert_eq!(found(r"^needle"), [3]);
        assert_eq!(found(r"needle$"), [2, 5]);
        assert_eq!(found(r"needle \d+ y$"), [3]);
    }

    proptest::proptest! {
        /// Each line filter (forced, whatever the target would choose) finds the lines the DFA
        /// alone finds.
        #[test]
        fn line_filters_find_what_the_dfa_alone_finds(
            text in proptest::collection::vec(proptest::prop_oneof![proptest::strategy::Just('a'), proptest::strategy::Just('b'), proptest::strategy::Just('B'), proptest::strategy::Just('c'), proptest::strategy::Just('\n'), proptest::strategy::Just(' '), proptest::strategy::Just('k'), proptest::strategy::Just('\u{212A}')], 0..400),
            pattern in proptest::prop_oneof![
                proptest::strategy::Just(r"(ab|ba)c?"), proptest::strategy::Just(r"(abc|b)\b"), proptest::strategy::Just(r"(ab|cb|bb|ac)a"), proptest::strategy::Just(r"(?i)abcab"), proptest::strategy::Just(r"^(ab|b )"), proptest::strategy::Just(r"[ab]+ bca?"), proptest::strategy::Just(r"(?i)abk"),
            ],
        ) {
            let text: String = text.into_iter().collect();
            let lines_of = |filter: Option<LineFilter>| {
                let Matcher::Regex(mut re) = Matcher::new(pattern, true, false).unwrap() else { unreachable!() };
                re.line_filter = filter;
                let mut found = Vec::new();
                re.for_each_matching_line(text.as_bytes(), |s, e| {
                    found.push((s, e));
                    true
                })
                .unwrap();
                found
            };
            let want = lines_of(None);
            let hir = line_hir(pattern, false).unwrap();
            if let Some(prefixes) = prefix_literals(&hir) {
                let finders = prefixes.iter().map(|p| LiteralFinder::new(p)).collect();
                proptest::prop_assert_eq!(lines_of(Some(LineFilter::Prefix(finders))), want.clone(), "prefixes {:?}", prefixes);
            }
            if let Some(run) = held_run(&hir) {
                let folded = LineFilter::Folded(Box::new(FoldedRun::new(&run)));
                proptest::prop_assert_eq!(lines_of(Some(folded)), want.clone());
                if !run.folded {
                    let inner = LineFilter::Inner(Box::new(LiteralFinder::new(&run.bytes)));
                    proptest::prop_assert_eq!(lines_of(Some(inner)), want.clone());
                }
            }
        }
    }

    #[test]
    fn runs_every_match_holds_are_looked_for_first() {
        let held = |pattern: &str, ignore_case: bool| {
            held_run(&line_hir(pattern, ignore_case).unwrap())
                .map(|r| (String::from_utf8(r.bytes).unwrap(), r.folded, r.others))
        };
        let folded = |run: &str, others: &[char]| Some((run.to_string(), true, others.to_vec()));
        let exact = |run: &str| Some((run.to_string(), false, vec![]));
        assert_eq!(
            held("engram_rare_token_7f3a", true),
            folded("engram_rare_token_7f3a", &['\u{212A}']),
            "k: the Kelvin sign"
        );
        assert_eq!(held("kernel", true), folded("kernel", &['\u{212A}']));
        assert_eq!(held("tests", true), folded("tests", &['\u{17F}']), "s: the long s, once");
        assert_eq!(held("task key", true), folded("task key", &['\u{17F}', '\u{212A}']));
        assert_eq!(held(r"[Ee]ngram\.[Rr]", false), folded("engram.r", &[]));
        assert_eq!(held("caf\u{e9} au lait", true), folded(" au lait", &[]), "é ends a run");
        assert_eq!(held("Ab", true), None, "too short");
        assert_eq!(held("foo|bar", true), None, "an alternation is not read");
        assert_eq!(held("[a-c]bcD", false), exact("bcD"), "a range is not one letter");
        assert_eq!(held("[Kk\u{212A}\u{17F}]abc", false), exact("abc"), "a class of four members is not one letter");
        assert_eq!(held(r"\w+_RARE_7f\d+", false), exact("_RARE_7f"));
        // In a byte class, \xE9 is one raw byte, not `é` (grep refuses such patterns before
        // this, as ones that can match invalid UTF-8; the run stays right on its own).
        assert_eq!(held(r"(?-u:[Aa\xE9])bcd", false), exact("bcd"), "a byte class past ASCII is not one letter");
        assert_eq!(held("caf\u{e9}\\w", false), exact("caf\u{e9}"), "bytes of any kind");
        // Matches holding the non-ASCII members of a letter's class (Kelvin sign, long s) are
        // still found: the run stops before them.
        let text = "tokens_here\nTO\u{212A}ENS_HERE\ntokens_her\n\u{17f}truct_field\nSTRUCT_FIELD\nstruct_fiel\n";
        let found = |pattern: &str| -> Vec<usize> {
            let r = run(&[("/a", text)], GrepOptions { ignore_case: true, ..lit(pattern) }).unwrap();
            lines(&r).into_iter().map(|(_, line, _, _)| line).collect()
        };
        assert_eq!(found("tokens_here"), [1, 2]);
        assert_eq!(found("struct_field"), [4, 5]);
        // Folded, a line filter passes as many lines as the regex's exact match admits.
        let r = run(&[("/a", text)], GrepOptions { regex: true, ..lit("[Tt][Oo]kens_here") }).unwrap();
        assert_eq!(lines(&r).len(), 1);
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

    #[test]
    fn ignore_case_literal_escapes_metacharacters() {
        let r = run(&[("/a", "A.B\naxb")], GrepOptions { ignore_case: true, ..lit("a.b") }).unwrap();
        assert_eq!(lines(&r).len(), 1);
    }
}
