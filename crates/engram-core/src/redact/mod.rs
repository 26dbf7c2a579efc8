//! Secret redaction: the one redactor every memory write path runs (DESIGN §9 "Memory never
//! stores secrets"), here in the core so that native and edge builds share it.
//!
//! The rule set covers credential formats catalogued publicly by secret scanners (gitleaks'
//! default rules, secretlint's recommended preset) — written here as our own patterns — plus
//! generic detectors: credentials in URLs, `key = value` / `"key": "value"` / `.env` lines with
//! secret-like keys, authorization headers, secrets stated in prose, high-entropy tokens near
//! secret words, and base64 whose decoded text holds a secret. Only the secret is replaced; its
//! label stays (`API key: [REDACTED]`).
//!
//! The rules are written for plain text. Text that hides a secret behind an encoding — zero-width
//! or full-width characters, JSON escapes, percent-encoding — is also matched in its normalised
//! form, and what is found there is redacted in the original text ([`normalise`]).
//!
//! Every pattern runs on the linear-time `regex` engine; a [`RegexSet`] over all rules finds in
//! one pass which rules can match at all, and only those are run for their positions.

mod checks;
mod encoded;
mod normalise;
mod rules;
mod span;
mod wrap;

use regex::{Regex, RegexBuilder, RegexSet, RegexSetBuilder};
use rules::{expand, Check, Rule, RULES};
use std::sync::OnceLock;

/// What a redacted secret is replaced with.
pub const REDACTED: &str = "[REDACTED]";

/// Redaction passes at most: a pass only runs again when the previous one changed the text, so
/// clean text costs one scan and the result is a fixpoint (redacting it again changes nothing).
const MAX_PASSES: usize = 4;

/// One secret found: the rule that found it and its UTF-8 byte range.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Finding {
    pub rule: &'static str,
    pub start: usize,
    pub end: usize,
}

/// The redacted text and how many secrets were replaced.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Redacted {
    pub text: String,
    pub count: usize,
}

struct Compiled {
    set: RegexSet,
    rules: Vec<(&'static Rule, Regex)>,
}

/// Compiled-program bounds for the rule set (built once per process from fixed patterns).
const RULE_SIZE_LIMIT: usize = 32 << 20;

fn compiled() -> &'static Compiled {
    static COMPILED: OnceLock<Compiled> = OnceLock::new();
    COMPILED.get_or_init(|| {
        let sources: Vec<String> = RULES.iter().map(|r| expand(r.pattern)).collect();
        let rules = RULES
            .iter()
            .zip(&sources)
            .map(|(r, src)| {
                let re = RegexBuilder::new(src)
                    .size_limit(RULE_SIZE_LIMIT)
                    .build()
                    .unwrap_or_else(|e| panic!("redaction rule {} does not compile: {e}", r.id));
                (r, re)
            })
            .collect();
        let set = RegexSetBuilder::new(&sources)
            .size_limit(RULE_SIZE_LIMIT * 4)
            .build()
            .unwrap_or_else(|e| panic!("redaction rule set does not compile: {e}"));
        Compiled { set, rules }
    })
}

/// Ids of every rule, in order (each is a credential format or a generic detector).
pub fn rule_ids() -> impl Iterator<Item = &'static str> {
    RULES.iter().map(|r| r.id)
}

/// Compiles the rule set now (it is otherwise compiled on first use).
pub fn warm_up() {
    compiled();
}

/// Every secret in `text`, by rule, in order of position (ranges of different rules may overlap).
pub fn find(text: &str) -> Vec<Finding> {
    let mut out = find_in_plain_text(text);
    if let Some(normalised) = normalise::normalise(text) {
        out.extend(find_in_plain_text(normalised.text()).into_iter().map(|f| Finding {
            rule: f.rule,
            start: normalised.start_in_original(f.start),
            end: normalised.end_in_original(f.end),
        }));
    }
    out.sort_unstable_by_key(|f| (f.start, f.end, f.rule));
    out.dedup();
    out
}

/// Secrets in `text` as written, including keys wrapped across lines.
fn find_in_plain_text(text: &str) -> Vec<Finding> {
    let mut out = find_unwrapped(text);
    let breaks = wrap::wrap_breaks(text);
    if !breaks.is_empty() {
        out.extend(wrap::find_across_breaks(text, &breaks));
    }
    out
}

/// A rejected value shorter than this is searched again for a secret inside it
/// (`credentials: password: x`, `auth: {token: x}`); a longer one is skipped whole, which keeps
/// the search linear on long runs of assignment-shaped text.
const RESEARCH_REJECTED_UP_TO: usize = 256;

fn find_unwrapped(text: &str) -> Vec<Finding> {
    let c = compiled();
    let mut out = Vec::new();
    for i in c.set.matches(text).iter() {
        let (rule, re) = &c.rules[i];
        let mut at = 0;
        while let Some(caps) = re.captures_at(text, at) {
            let whole = caps.get(0).map_or(at..at, |m| m.range());
            let Some((start, end, quoted)) = span::secret_span(&caps) else { break };
            // Go on after the secret (a rule's trailing context may start the next match), or
            // inside a rejected value.
            let next = match vet(text, rule, start, end, quoted) {
                Some(found) => {
                    out.push(found);
                    end
                }
                None if end - start <= RESEARCH_REJECTED_UP_TO => start,
                None => whole.end,
            };
            at = next.max(next_char(text, whole.start));
            if at > text.len() {
                break;
            }
        }
    }
    out
}

fn next_char(text: &str, pos: usize) -> usize {
    text[pos..].chars().next().map_or(text.len() + 1, |c| pos + c.len_utf8())
}

/// The finding a rule's match makes, once its value is trimmed to the secret and vetted.
fn vet(text: &str, rule: &'static Rule, mut start: usize, mut end: usize, quoted: bool) -> Option<Finding> {
    // `token%3D<secret>`: the span may start inside the percent-escape of its separator.
    let b = text.as_bytes();
    if start > 0 && b[start - 1] == b'%' && end - start > 2 && b[start..start + 2].iter().all(u8::is_ascii_hexdigit) {
        start += 2;
    }
    if matches!(rule.check, Check::Assigned | Check::Generated) && !quoted {
        end = span::assigned_value_end(text, start, end);
    }
    let value = &text[start..end];
    if value.is_empty() || value.contains(REDACTED) || !checks::accept(rule.check, value, quoted) {
        return None;
    }
    if !quoted {
        end = span::token_end(text, start, end);
    }
    Some(Finding { rule: rule.id, start, end })
}

/// `text` with every secret replaced by [`REDACTED`], labels kept. Idempotent.
pub fn redact(text: &str) -> Redacted {
    let mut current = std::borrow::Cow::Borrowed(text);
    let mut count = 0;
    for _ in 0..MAX_PASSES {
        let spans = merge(find(&current));
        if spans.is_empty() {
            break;
        }
        count += spans.len();
        let mut out = String::with_capacity(current.len());
        let mut copied = 0;
        for (s, e) in spans {
            out.push_str(&current[copied..s]);
            out.push_str(REDACTED);
            copied = e;
        }
        out.push_str(&current[copied..]);
        current = std::borrow::Cow::Owned(out);
    }
    Redacted { text: current.into_owned(), count }
}

/// Overlapping or touching ranges merged, in order.
fn merge(findings: Vec<Finding>) -> Vec<(usize, usize)> {
    let mut spans: Vec<(usize, usize)> = Vec::with_capacity(findings.len());
    for f in findings {
        match spans.last_mut() {
            Some((_, e)) if f.start <= *e => *e = (*e).max(f.end),
            _ => spans.push((f.start, f.end)),
        }
    }
    spans
}

#[cfg(test)]
mod tests;
