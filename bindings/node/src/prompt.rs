//! The `<agent_memory>` section (see `engram_core::prompt`) in one call with typed columns.
//! Marshalling only; the rest of prompt assembly is in the `engram_abi::calls!` table.

use crate::column::Column;
use engram_core::prompt::{self, Source};
use napi::bindgen_prelude::Uint8Array;
use napi_derive::napi;

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
