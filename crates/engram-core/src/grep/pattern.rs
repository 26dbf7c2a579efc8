//! A pattern as the regex engines compile it: its limits (a hostile pattern is refused, not
//! compiled), the line-bound form every search runs, and what every match holds (literal
//! prefixes, a run of bytes, literal suffixes) for the line filters.

use super::line_filter::MAX_PREFIXES;
use crate::error::{CoreError, CoreResult, ErrorCode};
use regex_automata::util::prefilter::Prefilter;
use regex_automata::MatchKind;
use regex_syntax::hir::literal::{ExtractKind, Extractor};
use regex_syntax::hir::{
    Capture, Class, ClassBytes, ClassBytesRange, ClassUnicode, ClassUnicodeRange, Hir, HirKind, Literal, Repetition,
};

/// Compiled-program limits: a hostile pattern fails with `invalid_pattern` in milliseconds
/// instead of compiling a huge program (or searching with one). The size limits bound the
/// compiled NFA and the lazy DFA's cache; the nest limit bounds parser recursion; the weight
/// limit bounds counted repetition (`[a-z]{20000}`, `(a{100}){100}`) and giant alternations,
/// whose programs stay small per state but make every searched byte visit thousands of states.
pub(super) const REGEX_SIZE_LIMIT: usize = 1 << 20;
/// The lazy DFA's cache. It gives up after filling it three times at under 10 searched bytes
/// per state built (a thrashing pattern), so this also bounds the work before the NFA fallback:
/// about 40 ms natively whatever the input size.
pub(super) const REGEX_DFA_SIZE_LIMIT: usize = 1 << 20;
const REGEX_NEST_LIMIT: u32 = 64;
/// Most "positions" a regex may expand to: literal bytes, classes, and each counted repetition
/// multiplying its body. A linear-time engine still spends time proportional to this weight
/// per searched byte on adversarial input (when its lazy DFA cannot cache the states), so it is
/// kept to what real searches need (`[0-9a-f]{64}`, `.{0,200}`).
pub const MAX_REGEX_WEIGHT: u64 = 256;

/// A pattern as a [`LineRegex`] searches it: multi-line, CRLF-aware, over bytes, and never
/// across lines (see [`without_newline`]).
pub(super) fn line_hir(source: &str, ignore_case: bool) -> Result<Hir, String> {
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
pub(super) fn prefix_literals(hir: &Hir) -> Option<Vec<Vec<u8>>> {
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
pub(super) struct Run {
    pub(super) bytes: Vec<u8>,
    /// Whether some are letters in either case (then all are compared so, in lower case).
    pub(super) folded: bool,
    /// Non-ASCII members of those letters' classes (the Kelvin sign in `(?i)k`), at most
    /// [`MAX_PREFIXES`]` - 1`.
    pub(super) others: Vec<char>,
}

/// The longest run of bytes every match of `hir` holds in a row, each a literal byte or one
/// ASCII letter in either case (`(?i)a` is `[Aa]`), at least [`MIN_RUN`] long; a letter's
/// class may also hold one non-ASCII character (`(?i)k` holds the Kelvin sign, `(?i)s` the
/// long s), which a line is then also searched for. Only the top level of the pattern is read:
/// a concatenation of literals and classes (`_RARE_` in `\w+_RARE_\d+`).
pub(super) fn held_run(hir: &Hir) -> Option<Run> {
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
pub(super) fn suffix_filter(hir: &Hir) -> Option<Prefilter> {
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
pub(super) fn invalid_pattern(pattern: &str, why: impl std::fmt::Display) -> CoreError {
    let shown: String = pattern.chars().take(200).collect();
    CoreError::new(ErrorCode::InvalidPattern, &shown, why)
}

/// Refuses a regex whose expansion weight exceeds [`MAX_REGEX_WEIGHT`] (parsing with the same
/// nest limit as the compiler, so a deeply nested pattern is refused before any recursion).
pub(super) fn check_weight(pattern: &str) -> CoreResult<()> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;
    use crate::grep::fixtures::{lines, lit, run};
    use crate::grep::GrepOptions;

    #[test]
    fn invalid_and_oversized_regexes_are_invalid_pattern() {
        let bad = GrepOptions { pattern: "(".into(), regex: true, ..Default::default() };
        assert_eq!(run(&[], bad).unwrap_err().code, ErrorCode::InvalidPattern);
        let huge = GrepOptions { pattern: "\\w{1000}{1000}".into(), regex: true, ..Default::default() };
        assert_eq!(run(&[], huge).unwrap_err().code, ErrorCode::InvalidPattern);
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
}
