//! A compiled pattern and the lines of a buffer that hold a match: a literal's `memmem`, or a
//! regex's lazy DFA (after its line filter) with the NFA engines as a bounded fallback.

use super::line_filter::{Ahead, FoldedRun, LineFilter, Sieve};
use super::pattern::{
    check_weight, held_run, invalid_pattern, line_hir, prefix_literals, suffix_filter, REGEX_DFA_SIZE_LIMIT,
    REGEX_SIZE_LIMIT,
};
use crate::error::{CoreError, CoreResult, ErrorCode};
use crate::limits::MAX_PATTERN_BYTES;
use crate::literal::LiteralFinder;
use crate::text::line_bounds;
use regex_automata::nfa::thompson::{self, backtrack, pikevm};
use regex_automata::util::prefilter::Prefilter;
use regex_automata::{hybrid, Input, MatchErrorKind, MatchKind, Span};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

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
    pub(super) fn sieve(&self) -> Option<Sieve<'_>> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grep::fixtures::{lines, lit, run};
    use crate::grep::{GrepOptions, Searcher};

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
    fn ignore_case_literal_escapes_metacharacters() {
        let r = run(&[("/a", "A.B\naxb")], GrepOptions { ignore_case: true, ..lit("a.b") }).unwrap();
        assert_eq!(lines(&r).len(), 1);
    }
}
