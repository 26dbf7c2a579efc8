//! `grep` over in-memory files: literal by default ([`crate::literal`]: memchr's SIMD `memmem`), regex on
//! `regex-automata`'s lazy DFA with a bounded NFA fallback (see [`MAX_FALLBACK_WORK`]).
//! Whole-buffer search; lines are only materialised for hits.
//!
//! - `options`: what a search is asked and what it answers;
//! - `pattern`: a pattern as the regex engines compile it (limits, literals every match holds);
//! - `line_filter`: the scans that pass over text holding no match;
//! - `matcher`: finding the lines that hold a match in one buffer;
//! - `searcher`: one file's hits, with context lines;
//! - `collector`: merging files' hits in path order under the cap, per output mode;
//! - `search`, `memory_order`, `parallel`: the order files are searched in.

mod collector;
mod line_filter;
mod matcher;
mod memory_order;
mod options;
#[cfg(not(target_arch = "wasm32"))]
mod parallel;
mod pattern;
mod search;
mod searcher;

pub use collector::Collector;
pub use matcher::{LineRegex, Matcher, MAX_FALLBACK_WORK};
pub use options::{GrepMatch, GrepOptions, GrepResult, OutputMode, MAX_CONTEXT, MAX_COUNT, MAX_PATTERN_BYTES};
pub use pattern::MAX_REGEX_WEIGHT;
pub use search::{grep, grep_with};
pub use searcher::{FileHits, Searcher};

#[cfg(test)]
mod fixtures;
