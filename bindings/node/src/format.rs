//! The filesystem tools' text for the model, made in the core (see `engram_core::format`):
//! per-table methods that search or read and format in one call under the output cap, and free
//! functions that format another backend's results with the same rules. Strings in and out.

use crate::{failure, Failure, FileTable, GrepArgs};
use engram_core::format;
use engram_core::grep::OutputMode;
use engram_core::ops::GlobOptions;
use engram_core::CoreResult;
use napi::bindgen_prelude::{Either, Float64Array, Int32Array};
use napi_derive::napi;

/// The text of one tool call.
#[napi(object)]
pub struct TextOut {
    pub text: String,
}

fn text(r: CoreResult<String>) -> Either<TextOut, Failure> {
    match r {
        Ok(text) => Either::A(TextOut { text }),
        Err(e) => Either::B(failure(e)),
    }
}

#[napi]
impl FileTable {
    /// The `grep` tool's text, capped at `maxChars` UTF-16 units.
    #[napi]
    pub fn grep_text(&self, args: &GrepArgs, max_chars: u32) -> Either<TextOut, Failure> {
        text(args.options().and_then(|o| self.inner.grep_text(o, max_chars as usize)))
    }

    /// The `glob` tool's text.
    #[napi]
    pub fn glob_text(
        &self,
        pattern: String,
        path: Option<String>,
        max_results: Option<u32>,
        max_chars: u32,
    ) -> Either<TextOut, Failure> {
        let o = GlobOptions { pattern, path, max_results: max_results.map(|n| n as usize) };
        text(self.inner.glob_text(&o, max_chars as usize))
    }

    /// The `ls` tool's text; `shown` is the path as the model gave it.
    #[napi]
    pub fn ls_text(&self, path: String, shown: String, max_chars: u32) -> Either<TextOut, Failure> {
        text(self.inner.ls_text(&path, &shown, max_chars as usize))
    }

    /// The `read_file` tool's text; `shown` is the path as the model gave it.
    #[napi]
    pub fn read_text(
        &self,
        path: String,
        shown: String,
        offset: u32,
        limit: u32,
        max_chars: u32,
    ) -> Either<TextOut, Failure> {
        text(self.inner.read_text(&path, &shown, offset as usize, limit as usize, max_chars as usize))
    }
}

/// Grep output from columns (see `engram_core::format::format_grep_columns`); what the search
/// skipped as `skippedPaths[i]` for `skippedReasons[i]`.
#[napi]
#[allow(clippy::too_many_arguments)]
pub fn format_grep(
    pattern: String,
    mode: String,
    paths: Vec<String>,
    numbers: Int32Array,
    texts: Vec<String>,
    truncated: bool,
    skipped_paths: Vec<String>,
    skipped_reasons: Vec<String>,
    max_chars: u32,
) -> String {
    let mode = OutputMode::parse(&mode).unwrap_or_default();
    let skipped = format::skipped_pairs(&skipped_paths, &skipped_reasons);
    format::format_grep_columns(&pattern, mode, &paths, &numbers, &texts, truncated, &skipped, max_chars as usize)
}

/// `ls` output; a negative size marks a directory; entries it could not name as
/// `skippedPaths[i]` for `skippedReasons[i]`.
#[napi]
pub fn format_ls(
    shown: String,
    paths: Vec<String>,
    sizes: Float64Array,
    skipped_paths: Vec<String>,
    skipped_reasons: Vec<String>,
    max_chars: u32,
) -> String {
    let skipped = format::skipped_pairs(&skipped_paths, &skipped_reasons);
    format::format_ls_columns(&shown, &paths, &sizes, &skipped, max_chars as usize)
}

/// `glob` output; what the walk skipped as `skippedPaths[i]` for `skippedReasons[i]`.
#[napi]
pub fn format_glob(
    pattern: String,
    paths: Vec<String>,
    truncated: bool,
    skipped_paths: Vec<String>,
    skipped_reasons: Vec<String>,
    max_chars: u32,
) -> String {
    let skipped = format::skipped_pairs(&skipped_paths, &skipped_reasons);
    format::format_glob(&pattern, paths.iter().map(String::as_str), truncated, &skipped, max_chars as usize)
}

/// `read_file` output from a read result.
#[napi]
pub fn format_read(
    shown: String,
    content: String,
    offset: u32,
    total_lines: u32,
    lines: u32,
    limit: u32,
    max_chars: u32,
) -> String {
    let r = engram_core::read::ReadResult {
        content,
        total_lines: total_lines as usize,
        offset: offset as usize,
        lines: lines as usize,
    };
    format::format_read(&shown, &r, limit as usize, max_chars as usize)
}

/// Any tool output cut to `maxChars` UTF-16 units with the truncation note.
#[napi]
pub fn cap_output(text: String, max_chars: u32) -> String {
    format::cap_output(text, max_chars as usize)
}
