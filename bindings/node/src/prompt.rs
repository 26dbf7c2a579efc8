//! Prompt assembly (see `engram_core::prompt`): the memory section, the skills index and the
//! long-term facts block, each in one call with typed columns. Marshalling only.

use crate::column::Column;
use engram_core::prompt::{self, FactBudget, FactColumns, Source};
use napi::bindgen_prelude::{Float64Array, Uint8Array};
use napi_derive::napi;

/// Section tags neutralised (see `engram_core::prompt::neutralize_section_tags`).
#[napi]
pub fn neutralize_section_tags(text: String) -> String {
    prompt::neutralize_section_tags(&text).into_owned()
}

/// `&`, `<`, `>` and disguised tag openers escaped, for short fields.
#[napi]
pub fn escape_tags(text: String) -> String {
    prompt::escape_tags(&text)
}

/// [`escape_tags`], then every run of whitespace one space, trimmed (a skills-index field).
#[napi]
pub fn escape_field(text: String) -> String {
    prompt::escape_field(&text)
}

/// The `<agent_memory>` section and where each source's part lies in it.
#[napi(object, object_from_js = false)]
pub struct MemorySectionOut {
    pub text: String,
    /// Per source, the UTF-16 start and end of its part in `text` (`0, 0` when it adds nothing).
    #[napi(ts_type = "Uint32Array")]
    pub parts: Column<u32>,
}

/// The `<agent_memory>` section: per source its path, kind (0 missing, 1 text, 2 error message,
/// 3 an earlier rendering) and text.
#[napi]
pub fn memory_section(
    paths: Vec<String>,
    kinds: Uint8Array,
    texts: Vec<String>,
    max_tokens_per_source: u32,
) -> MemorySectionOut {
    let sources: Vec<Source> = texts.iter().zip(kinds.iter()).map(|(t, &k)| Source::from_kind(k, t)).collect();
    let section = prompt::memory_section(&paths, &sources, max_tokens_per_source as usize);
    let bytes: Vec<usize> = section.parts.iter().flat_map(|&(a, b)| [a, b]).collect();
    MemorySectionOut { parts: Column(prompt::utf16_offsets(&section.text, &bytes)), text: section.text }
}

/// The skills index, or `""` when there are no skills.
#[napi]
pub fn skills_section(names: Vec<String>, descriptions: Vec<String>, paths: Vec<String>) -> String {
    prompt::skills_section(&names, &descriptions, &paths)
}

/// The long-term `<memory>` block. `summaries`: the six summaries in order; facts in columns
/// (`sourceErrors[i]` `""` when none); ranked by `scores` when given (one per fact), else by
/// relevance to `query` (by confidence when it is blank).
#[napi]
#[allow(clippy::too_many_arguments)]
pub fn facts_block(
    summaries: Vec<String>,
    contents: Vec<String>,
    categories: Vec<String>,
    confidences: Float64Array,
    source_errors: Vec<String>,
    scores: Float64Array,
    query: String,
    max_tokens: u32,
    correction_tokens: u32,
) -> String {
    let columns = FactColumns {
        summaries: &summaries,
        contents: &contents,
        categories: &categories,
        confidences: &confidences,
        source_errors: &source_errors,
        scores: &scores,
        query: &query,
    };
    prompt::facts_block_columns(
        columns,
        FactBudget { max_tokens: max_tokens as usize, correction_tokens: correction_tokens as usize },
    )
}

/// Per fact, its confidence plus its BM25 relevance to `query` scaled to 0–1 (see
/// `engram_core::prompt::relevance_scores`).
#[napi(ts_return_type = "Float64Array")]
pub fn relevance_scores(query: String, contents: Vec<String>, confidences: Float64Array) -> Column<f64> {
    Column(prompt::relevance_scores_columns(&query, &contents, &confidences))
}
