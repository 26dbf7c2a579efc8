//! `@engram/native`: the N-API face of `engram-core`. Each method forwards to
//! `engram_core::api`, which returns one JSON string per call (see `packages/engram/src/core`).

use engram_core::{api, FileTable as CoreTable, Router as CoreRouter};
use napi::bindgen_prelude::{Buffer, Uint8Array};
use napi_derive::napi;

mod fs;

/// `{ path } | { error }` for a virtual path.
#[napi]
pub fn normalize_path(path: String) -> String {
    api::normalize_path(&path)
}

/// `cat -n` formatting of raw lines starting at 1-based `firstLine`.
#[napi]
pub fn format_numbered(content: String, first_line: u32) -> String {
    api::format_numbered(&content, first_line as usize)
}

/// The canonical `{ error }` JSON for a pinned error code.
#[napi]
pub fn error_data(code: String, subject: String, detail: String) -> String {
    api::error_data(&code, &subject, &detail)
}

/// Keeps the paths a glob admits (`{ kind: "glob" | "grep", pattern, root, paths }`).
#[napi]
pub fn filter_paths(options_json: String) -> String {
    api::filter_paths(&options_json)
}

/// BM25 relevance of each document (a JSON array of strings) to `query`: `{ scores } | { error }`.
#[napi]
pub fn rank_bm25(query: String, documents_json: String) -> String {
    api::rank_bm25(&query, &documents_json)
}

/// Secrets replaced by `[REDACTED]`, labels kept: `{ text, count }` (see `engram_core::redact`).
#[napi]
pub fn redact_secrets(text: String) -> String {
    api::redact_secrets(&text)
}

/// Longest-prefix router over normalised mount points.
#[napi]
pub struct Router {
    inner: CoreRouter,
}

#[napi]
impl Router {
    /// `prefixesJson` is a JSON array of strings; an invalid prefix throws the JSON error text.
    #[napi(constructor)]
    pub fn new(prefixes_json: String) -> napi::Result<Self> {
        api::router_new(&prefixes_json).map(|inner| Router { inner }).map_err(napi::Error::from_reason)
    }

    #[napi]
    pub fn route(&self, path: String) -> String {
        api::router_route(&self.inner, &path)
    }

    #[napi]
    pub fn prefixes(&self) -> String {
        api::router_prefixes(&self.inner)
    }
}

/// A resident file table: files stay in native memory between calls.
#[napi]
pub struct FileTable {
    inner: CoreTable,
}

impl Default for FileTable {
    fn default() -> Self {
        Self::new()
    }
}

#[napi]
impl FileTable {
    #[napi(constructor)]
    pub fn new() -> Self {
        FileTable { inner: CoreTable::new() }
    }

    /// Rebuilds a table from `snapshot()` bytes; corrupt input throws the JSON error text.
    #[napi(factory)]
    pub fn from_snapshot(bytes: Uint8Array) -> napi::Result<Self> {
        api::table_from_snapshot(&bytes).map(|inner| FileTable { inner }).map_err(napi::Error::from_reason)
    }

    /// Every file, compactly, for a checkpoint.
    #[napi]
    pub fn snapshot(&self) -> Buffer {
        Buffer::from(self.inner.snapshot())
    }

    #[napi(getter)]
    pub fn size(&self) -> u32 {
        self.inner.len() as u32
    }

    #[napi]
    pub fn write(&mut self, path: String, data: Uint8Array, modified_at: f64, if_version: Option<String>) -> String {
        api::table_write(&mut self.inner, &path, data.to_vec(), modified_at, if_version.as_deref())
    }

    #[napi]
    pub fn write_text(&mut self, path: String, text: String, modified_at: f64, if_version: Option<String>) -> String {
        api::table_write(&mut self.inner, &path, text.into_bytes(), modified_at, if_version.as_deref())
    }

    /// Appends bytes to a file (created when missing).
    #[napi]
    pub fn append(&mut self, path: String, data: Uint8Array, modified_at: f64) -> String {
        api::table_append(&mut self.inner, &path, &data, modified_at)
    }

    #[napi]
    pub fn read(&self, path: String, offset: u32, limit: Option<u32>) -> String {
        api::table_read(&self.inner, &path, offset as usize, limit.map(|l| l as usize))
    }

    /// The raw bytes of a file, or `null` when it is missing or a directory.
    #[napi]
    pub fn read_bytes(&self, path: String) -> Option<Buffer> {
        self.inner.read_bytes(&path).ok().map(|d| Buffer::from(d.to_vec()))
    }

    #[napi]
    pub fn ls(&self, path: String) -> String {
        api::table_ls(&self.inner, &path)
    }

    #[napi]
    pub fn stat(&self, path: String) -> String {
        api::table_stat(&self.inner, &path)
    }

    #[napi]
    pub fn delete(&mut self, path: String) -> String {
        api::table_delete(&mut self.inner, &path)
    }

    #[napi]
    pub fn edit(&mut self, options_json: String) -> String {
        api::table_edit(&mut self.inner, &options_json)
    }

    #[napi]
    pub fn grep(&self, options_json: String) -> String {
        api::table_grep(&self.inner, &options_json)
    }

    #[napi]
    pub fn glob(&self, options_json: String) -> String {
        api::table_glob(&self.inner, &options_json)
    }
}
