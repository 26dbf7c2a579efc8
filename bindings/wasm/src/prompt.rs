//! Prompt assembly (see `engram_core::prompt`): the memory section, the skills index and the
//! long-term facts block, each in one call with typed columns. Marshalling only.

use crate::{F64s, IntoJs, Text, U32s};
use engram_core::prompt::{self, FactBudget, FactColumns, Source};
use wasm_bindgen::prelude::*;

/// Section tags neutralised (see `engram_core::prompt::neutralize_section_tags`).
#[wasm_bindgen(js_name = neutralizeSectionTags)]
pub fn neutralize_section_tags(text: &str) -> Text {
    prompt::neutralize_section_tags(text).into_owned().js()
}

/// `&`, `<`, `>` and disguised tag openers escaped, for short fields.
#[wasm_bindgen(js_name = escapeTags)]
pub fn escape_tags(text: &str) -> Text {
    prompt::escape_tags(text).js()
}

/// `escapeTags`, then every run of whitespace one space, trimmed (a skills-index field).
#[wasm_bindgen(js_name = escapeField)]
pub fn escape_field(text: &str) -> Text {
    prompt::escape_field(text).js()
}

result! {
    /// The `<agent_memory>` section and where each source's part lies in it.
    pub struct MemorySectionOut {
        pub text: Text,
        /// Per source, the UTF-16 start and end of its part in `text` (`0, 0` when it adds nothing).
        pub parts: U32s,
    }
}

/// The `<agent_memory>` section: per source its path, kind (0 missing, 1 text, 2 error message,
/// 3 an earlier rendering) and text.
#[wasm_bindgen(js_name = memorySection)]
pub fn memory_section(
    paths: Vec<String>,
    kinds: &[u8],
    texts: Vec<String>,
    max_tokens_per_source: u32,
) -> MemorySectionOut {
    let sources: Vec<Source> = texts.iter().zip(kinds).map(|(t, &k)| Source::from_kind(k, t)).collect();
    let section = prompt::memory_section(&paths, &sources, max_tokens_per_source as usize);
    let bytes: Vec<usize> = section.parts.iter().flat_map(|&(a, b)| [a, b]).collect();
    MemorySectionOut { parts: prompt::utf16_offsets(&section.text, &bytes).js(), text: section.text.js() }
}

/// The skills index, or `""` when there are no skills.
#[wasm_bindgen(js_name = skillsSection)]
pub fn skills_section(names: Vec<String>, descriptions: Vec<String>, paths: Vec<String>) -> Text {
    prompt::skills_section(&names, &descriptions, &paths).js()
}

/// The long-term `<memory>` block. `summaries`: the six summaries in order; facts in columns
/// (`sourceErrors[i]` `""` when none); ranked by `scores` when given (one per fact), else by
/// relevance to `query` (by confidence when it is blank).
#[wasm_bindgen(js_name = factsBlock)]
#[allow(clippy::too_many_arguments)]
pub fn facts_block(
    summaries: Vec<String>,
    contents: Vec<String>,
    categories: Vec<String>,
    confidences: &[f64],
    source_errors: Vec<String>,
    scores: &[f64],
    query: &str,
    max_tokens: u32,
    correction_tokens: u32,
) -> Text {
    let columns = FactColumns {
        summaries: &summaries,
        contents: &contents,
        categories: &categories,
        confidences,
        source_errors: &source_errors,
        scores,
        query,
    };
    prompt::facts_block_columns(
        columns,
        FactBudget { max_tokens: max_tokens as usize, correction_tokens: correction_tokens as usize },
    )
    .js()
}

/// Per fact, its confidence plus its BM25 relevance to `query` scaled to 0–1 (see
/// `engram_core::prompt::relevance_scores`).
#[wasm_bindgen(js_name = relevanceScores)]
pub fn relevance_scores(query: &str, contents: Vec<String>, confidences: &[f64]) -> F64s {
    prompt::relevance_scores_columns(query, &contents, confidences).js()
}
