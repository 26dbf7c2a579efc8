//! What a search is asked (`GrepOptions`, its ceilings) and what it answers (`GrepResult`).

use crate::error::{CoreError, CoreResult, ErrorCode};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub use crate::limits::MAX_PATTERN_BYTES;
/// Ceiling on `maxCount`: matching lines (`content`) or files (other modes) one search returns,
/// also when no `maxCount` is given; `truncated` tells when it was reached. A model-chosen
/// count can never make a search hold more than this.
pub const MAX_COUNT: usize = 10_000;
/// Ceiling on `context` lines before and after each match.
pub const MAX_CONTEXT: usize = 100;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputMode {
    #[default]
    Content,
    FilesWithMatches,
    Count,
}

impl OutputMode {
    /// Parses `"content"`, `"files_with_matches"` or `"count"` (the typed bindings' option).
    pub fn parse(mode: &str) -> CoreResult<Self> {
        match mode {
            "content" => Ok(Self::Content),
            "files_with_matches" => Ok(Self::FilesWithMatches),
            "count" => Ok(Self::Count),
            other => Err(CoreError::new(
                ErrorCode::Unsupported,
                "options.outputMode",
                format_args!("unknown output mode '{other}'"),
            )),
        }
    }
}

/// Options of one search. Defaults: literal, `content` mode, whole tree, [`MAX_COUNT`] matches, no
/// context.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct GrepOptions {
    pub pattern: String,
    /// Directory (or single file) to search; `/` when absent.
    pub path: Option<String>,
    /// Only files whose path matches this glob (see [`PathFilter`](crate::glob::PathFilter)).
    pub glob: Option<String>,
    pub regex: bool,
    pub ignore_case: bool,
    /// Caps matching lines (`content`) or files (`files_with_matches`, `count`); never above
    /// [`MAX_COUNT`], which also applies when absent.
    pub max_count: Option<usize>,
    pub output_mode: OutputMode,
    /// Lines of context before and after each match (`content` mode); at most [`MAX_CONTEXT`].
    pub context: usize,
}

impl GrepOptions {
    /// The options of a call as the bindings receive them: absent flags are `false`, absent
    /// `context` is 0, absent `output_mode` is `content` (an unknown one: see [`OutputMode::parse`]).
    #[allow(clippy::too_many_arguments)]
    pub fn from_parts(
        pattern: String,
        path: Option<String>,
        glob: Option<String>,
        regex: Option<bool>,
        ignore_case: Option<bool>,
        max_count: Option<u32>,
        output_mode: Option<&str>,
        context: Option<u32>,
    ) -> CoreResult<GrepOptions> {
        Ok(GrepOptions {
            pattern,
            path,
            glob,
            regex: regex.unwrap_or(false),
            ignore_case: ignore_case.unwrap_or(false),
            max_count: max_count.map(|n| n as usize),
            output_mode: output_mode.map_or(Ok(OutputMode::Content), OutputMode::parse)?,
            context: context.unwrap_or(0) as usize,
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GrepMatch {
    pub path: String,
    /// 1-based line number.
    pub line: usize,
    pub text: String,
    /// True for a context line around a match rather than a match.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub context: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct GrepResult {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matches: Option<Vec<GrepMatch>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counts: Option<BTreeMap<String, usize>>,
    pub truncated: bool,
}
