//! The `<agent_memory>` section (see `engram_core::prompt`) in one call with typed columns.
//! Marshalling only; the rest of prompt assembly is in the `engram_abi::calls!` table.

use crate::{IntoJs, Text, U32s};
use engram_core::prompt::{self, Source};
use wasm_bindgen::prelude::*;

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
