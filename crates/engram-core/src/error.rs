//! Errors as data: a pinned code plus one message text per code, identical in every backend.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The pinned error codes of the backend contract (DESIGN §4). They cross every boundary as
/// their `snake_case` name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    FileNotFound,
    IsDirectory,
    InvalidPath,
    PathEscape,
    PermissionDenied,
    StringNotFound,
    MultipleMatches,
    TooLarge,
    InvalidPattern,
    /// A regex that would need more backtracking work than a search may do on this text
    /// (see `grep::MAX_FALLBACK_WORK`); a simpler pattern will do.
    PatternTooExpensive,
    Conflict,
    /// Another writer holds the lock and did not release it in time.
    Busy,
    Unsupported,
}

impl ErrorCode {
    pub const ALL: [ErrorCode; 13] = [
        ErrorCode::FileNotFound,
        ErrorCode::IsDirectory,
        ErrorCode::InvalidPath,
        ErrorCode::PathEscape,
        ErrorCode::PermissionDenied,
        ErrorCode::StringNotFound,
        ErrorCode::MultipleMatches,
        ErrorCode::TooLarge,
        ErrorCode::InvalidPattern,
        ErrorCode::PatternTooExpensive,
        ErrorCode::Conflict,
        ErrorCode::Busy,
        ErrorCode::Unsupported,
    ];

    /// The code named by its `snake_case` string, `None` for a code the core does not pin.
    pub fn parse(code: &str) -> Option<ErrorCode> {
        ErrorCode::ALL.into_iter().find(|c| c.as_str() == code)
    }

    /// Whether the subject of this code's message is a path (every code but
    /// `invalid_pattern` and `pattern_too_expensive`, whose subject is the pattern).
    pub fn subject_is_path(self) -> bool {
        !matches!(self, ErrorCode::InvalidPattern | ErrorCode::PatternTooExpensive)
    }

    /// Whether this code's message carries a `{detail}` (a reason, or for `multiple_matches` a
    /// count).
    pub fn has_detail(self) -> bool {
        self.template().contains("{detail}")
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::FileNotFound => "file_not_found",
            ErrorCode::IsDirectory => "is_directory",
            ErrorCode::InvalidPath => "invalid_path",
            ErrorCode::PathEscape => "path_escape",
            ErrorCode::PermissionDenied => "permission_denied",
            ErrorCode::StringNotFound => "string_not_found",
            ErrorCode::MultipleMatches => "multiple_matches",
            ErrorCode::TooLarge => "too_large",
            ErrorCode::InvalidPattern => "invalid_pattern",
            ErrorCode::PatternTooExpensive => "pattern_too_expensive",
            ErrorCode::Conflict => "conflict",
            ErrorCode::Busy => "busy",
            ErrorCode::Unsupported => "unsupported",
        }
    }

    /// The one message template for this code. `{subject}` is the path or pattern concerned,
    /// `{detail}` a short reason (may be empty).
    fn template(self) -> &'static str {
        match self {
            ErrorCode::FileNotFound => "File not found: '{subject}'",
            ErrorCode::IsDirectory => "Is a directory: '{subject}'",
            ErrorCode::InvalidPath => "Invalid path '{subject}': {detail}",
            ErrorCode::PathEscape => "Path escapes the root: '{subject}'",
            ErrorCode::PermissionDenied => "Permission denied: '{subject}' ({detail})",
            ErrorCode::StringNotFound => "String not found in file: '{subject}'",
            ErrorCode::MultipleMatches => {
                "String appears {detail} times in '{subject}'; pass replaceAll or give more context to make it unique"
            }
            ErrorCode::TooLarge => "Too large: '{subject}' ({detail})",
            ErrorCode::InvalidPattern => "Invalid pattern '{subject}': {detail}",
            ErrorCode::PatternTooExpensive => {
                "Pattern too expensive: '{subject}' ({detail}); use a simpler pattern (a literal, fewer counted repetitions) or a narrower path"
            }
            ErrorCode::Conflict => "Conflict: '{subject}' changed since it was read; read it again and retry",
            ErrorCode::Busy => "Busy: '{subject}' is locked by another writer ({detail}); retry later",
            ErrorCode::Unsupported => "Unsupported: {detail} ('{subject}')",
        }
    }
}

/// An error that crosses the boundary as `{ code, message, subject, detail? }`: the rendered
/// message and the structure it was rendered from, so a caller that shows the error elsewhere
/// (a composite route naming the outer path) renders it again instead of editing its text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CoreError {
    pub code: ErrorCode,
    pub message: String,
    /// The path (or, for `invalid_pattern`, the pattern) the error is about, unescaped.
    pub subject: String,
    /// The short reason in the message; empty (and not serialised) when there is none.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub detail: String,
}

impl CoreError {
    /// Builds the canonical message for `code`. `subject` is shown escaped so that control
    /// characters in hostile input cannot forge extra lines in a model-facing message.
    pub fn new(code: ErrorCode, subject: &str, detail: impl fmt::Display) -> Self {
        let shown: String = subject.escape_debug().collect();
        let detail = detail.to_string();
        let template =
            if detail.is_empty() { code.template().replace(" ({detail})", "") } else { code.template().to_string() };
        let message = template.replace("{subject}", &shown).replace("{detail}", &detail);
        CoreError { code, message, subject: subject.to_string(), detail }
    }

    pub fn of(code: ErrorCode, subject: &str) -> Self {
        Self::new(code, subject, "")
    }
}

impl fmt::Display for CoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

impl std::error::Error for CoreError {}

pub type CoreResult<T> = Result<T, CoreError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_serialise_as_snake_case() {
        for code in ErrorCode::ALL {
            let json = serde_json::to_string(&code).unwrap();
            assert_eq!(json, format!("\"{}\"", code.as_str()));
        }
    }

    #[test]
    fn messages_escape_control_characters() {
        let e = CoreError::of(ErrorCode::FileNotFound, "/a\nb");
        assert_eq!(e.message, "File not found: '/a\\nb'");
    }

    #[test]
    fn optional_detail_is_dropped_cleanly() {
        assert_eq!(CoreError::of(ErrorCode::PermissionDenied, "/").message, "Permission denied: '/'");
        assert_eq!(
            CoreError::new(ErrorCode::PermissionDenied, "/l", "a link").message,
            "Permission denied: '/l' (a link)"
        );
    }

    #[test]
    fn errors_carry_their_structure() {
        let e = CoreError::new(ErrorCode::InvalidPath, "/a'\nb", "'/a' is a file");
        assert_eq!((e.subject.as_str(), e.detail.as_str()), ("/a'\nb", "'/a' is a file"));
        let json = serde_json::to_value(&e).unwrap();
        assert_eq!(json["subject"], "/a'\nb");
        assert!(serde_json::to_value(CoreError::of(ErrorCode::FileNotFound, "/x")).unwrap().get("detail").is_none());
        assert_eq!(ErrorCode::parse("busy"), Some(ErrorCode::Busy));
        assert_eq!(ErrorCode::parse("nope"), None);
    }

    #[test]
    fn every_template_mentions_its_subject() {
        for code in ErrorCode::ALL {
            assert!(CoreError::new(code, "/x", "d").message.contains("/x"), "{code:?}");
        }
    }
}
