//! Engram's core: the pure-Rust hot path shared by the Node addon and the WebAssembly build.
//!
//! No I/O and no clock: callers pass bytes and timestamps in, and get data (never panics) out.
//! Offsets inside the core are UTF-8 bytes; line numbers are 1-based where they are shown.
//! No unsafe code, except the WASM literal scan's vector loads (`literal`), whose bounds its loop
//! condition keeps.
#![deny(unsafe_code)]

pub mod api;
pub mod bm25;
pub mod composite;
pub mod delta;
pub mod edit;
pub mod error;
pub mod format;
pub mod glob;
pub mod grep;
pub mod limits;
pub mod literal;
pub mod ops;
pub mod path;
pub mod path_index;
pub mod prompt;
pub mod read;
pub mod redact;
pub mod router;
pub mod snapshot;
pub mod table;
mod text;
pub mod tokens;

pub use bytes::Bytes;
pub use error::{CoreError, CoreResult, ErrorCode};
pub use router::{Route, Router};
pub use table::{FileEntry, FileInfo, FileTable};
