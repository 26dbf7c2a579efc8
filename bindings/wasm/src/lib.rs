//! `@engram/wasm`: the wasm-bindgen face of `engram-core`, the same API as `@engram/native`.
//! Each method forwards to `engram_core::api`, which returns one JSON string per call.

use engram_core::{api, FileTable as CoreTable, Router as CoreRouter};
use wasm_bindgen::prelude::*;

/// `{ path } | { error }` for a virtual path.
#[wasm_bindgen(js_name = normalizePath)]
pub fn normalize_path(path: &str) -> String {
    api::normalize_path(path)
}

/// `cat -n` formatting of raw lines starting at 1-based `firstLine`.
#[wasm_bindgen(js_name = formatNumbered)]
pub fn format_numbered(content: &str, first_line: u32) -> String {
    api::format_numbered(content, first_line as usize)
}

/// The canonical `{ error }` JSON for a pinned error code.
#[wasm_bindgen(js_name = errorData)]
pub fn error_data(code: &str, subject: &str, detail: &str) -> String {
    api::error_data(code, subject, detail)
}

/// Keeps the paths a glob admits (`{ kind: "glob" | "grep", pattern, root, paths }`).
#[wasm_bindgen(js_name = filterPaths)]
pub fn filter_paths(options_json: &str) -> String {
    api::filter_paths(options_json)
}

/// BM25 relevance of each document (a JSON array of strings) to `query`: `{ scores } | { error }`.
#[wasm_bindgen(js_name = rankBm25)]
pub fn rank_bm25(query: &str, documents_json: &str) -> String {
    api::rank_bm25(query, documents_json)
}

/// Secrets replaced by `[REDACTED]`, labels kept: `{ text, count }` (see `engram_core::redact`).
#[wasm_bindgen(js_name = redactSecrets)]
pub fn redact_secrets(text: &str) -> String {
    api::redact_secrets(text)
}

/// Longest-prefix router over normalised mount points.
#[wasm_bindgen]
pub struct Router {
    inner: CoreRouter,
}

#[wasm_bindgen]
impl Router {
    /// `prefixesJson` is a JSON array of strings; an invalid prefix throws the JSON error text.
    #[wasm_bindgen(constructor)]
    pub fn new(prefixes_json: &str) -> Result<Router, JsError> {
        api::router_new(prefixes_json).map(|inner| Router { inner }).map_err(|e| JsError::new(&e))
    }

    pub fn route(&self, path: &str) -> String {
        api::router_route(&self.inner, path)
    }

    pub fn prefixes(&self) -> String {
        api::router_prefixes(&self.inner)
    }
}

/// A resident file table: files stay in WebAssembly memory between calls.
#[wasm_bindgen]
pub struct FileTable {
    inner: CoreTable,
}

impl Default for FileTable {
    fn default() -> Self {
        Self::new()
    }
}

#[wasm_bindgen]
impl FileTable {
    #[wasm_bindgen(constructor)]
    pub fn new() -> FileTable {
        FileTable { inner: CoreTable::new() }
    }

    /// Rebuilds a table from `snapshot()` bytes; corrupt input throws the JSON error text.
    #[wasm_bindgen(js_name = fromSnapshot)]
    pub fn from_snapshot(bytes: &[u8]) -> Result<FileTable, JsError> {
        api::table_from_snapshot(bytes).map(|inner| FileTable { inner }).map_err(|e| JsError::new(&e))
    }

    /// Every file, compactly, for a checkpoint.
    pub fn snapshot(&self) -> Vec<u8> {
        self.inner.snapshot()
    }

    #[wasm_bindgen(getter)]
    pub fn size(&self) -> u32 {
        self.inner.len() as u32
    }

    pub fn write(&mut self, path: &str, data: Vec<u8>, modified_at: f64, if_version: Option<String>) -> String {
        api::table_write(&mut self.inner, path, data, modified_at, if_version.as_deref())
    }

    #[wasm_bindgen(js_name = writeText)]
    pub fn write_text(&mut self, path: &str, text: String, modified_at: f64, if_version: Option<String>) -> String {
        api::table_write(&mut self.inner, path, text.into_bytes(), modified_at, if_version.as_deref())
    }

    /// Appends bytes to a file (created when missing).
    pub fn append(&mut self, path: &str, data: &[u8], modified_at: f64) -> String {
        api::table_append(&mut self.inner, path, data, modified_at)
    }

    pub fn read(&self, path: &str, offset: u32, limit: Option<u32>) -> String {
        api::table_read(&self.inner, path, offset as usize, limit.map(|l| l as usize))
    }

    /// The raw bytes of a file, or `undefined` when it is missing or a directory.
    #[wasm_bindgen(js_name = readBytes)]
    pub fn read_bytes(&self, path: &str) -> Option<Vec<u8>> {
        self.inner.read_bytes(path).ok().map(<[u8]>::to_vec)
    }

    pub fn ls(&self, path: &str) -> String {
        api::table_ls(&self.inner, path)
    }

    pub fn stat(&self, path: &str) -> String {
        api::table_stat(&self.inner, path)
    }

    pub fn delete(&mut self, path: &str) -> String {
        api::table_delete(&mut self.inner, path)
    }

    pub fn edit(&mut self, options_json: &str) -> String {
        api::table_edit(&mut self.inner, options_json)
    }

    pub fn grep(&self, options_json: &str) -> String {
        api::table_grep(&self.inner, options_json)
    }

    pub fn glob(&self, options_json: &str) -> String {
        api::table_glob(&self.inner, options_json)
    }
}
