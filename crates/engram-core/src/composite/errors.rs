//! A mounted backend's error as the composite reports it: rendered again for the outer path,
//! never by editing its message; and the composite's own `malformed` answer.

use super::routing::outer_path;
use crate::error::{CoreError, ErrorCode};
use crate::router::Router;

/// An error as a backend returned it. Errors the core rendered (every built-in backend) carry
/// their `subject` and `detail`; a custom backend may return only `{ code, message }`.
#[derive(Debug, Clone, Copy)]
pub struct BackendError<'a> {
    pub code: &'a str,
    pub message: &'a str,
    pub subject: Option<&'a str>,
    pub detail: Option<&'a str>,
}

/// A mounted backend's error as the composite reports it, rendered again for the outer path;
/// `None` when it passes on unchanged. `prefix` is the mount's normalised prefix and `request`
/// the outer (normalised) path the composite was asked about.
///
/// - A structured error whose subject is a path (`/…`) names `prefix` + subject; its detail is
///   kept as it is.
/// - A structured error whose subject is not a path (a pattern, an option name) is unchanged.
/// - An error without structure (a custom backend's `{ code, message }`) is the canonical error
///   for its code about `request`; the backend's message becomes the detail where the code's
///   message has one (`Permission denied: '/memories/a' (read-only)`), and `multiple_matches`
///   says "several" for the count it does not know. Its `invalid_pattern` is unchanged.
/// - A code the core does not pin is unchanged: nothing can be rendered for it.
///
/// Message text is never parsed or edited.
pub fn mount_error(e: &BackendError, prefix: &str, request: &str) -> Option<CoreError> {
    let code = ErrorCode::parse(e.code)?;
    match e.subject {
        Some(subject) => (code.subject_is_path() && subject.starts_with('/'))
            .then(|| CoreError::new(code, &outer_path(prefix, subject), e.detail.unwrap_or(""))),
        None if !code.subject_is_path() => None,
        None => {
            let detail = match e.detail {
                Some(d) => d,
                None if code == ErrorCode::MultipleMatches => "several",
                None if code.has_detail() => e.message,
                None => "",
            };
            Some(CoreError::new(code, request, detail))
        }
    }
}

pub(super) fn malformed(what: &str) -> CoreError {
    CoreError::new(ErrorCode::Unsupported, "composite", format_args!("malformed {what}"))
}

/// A mount's error for the composite, rendered for the outer path `request` (see
/// [`mount_error`]); the default backend's errors (`mount` = `None`) pass on unchanged.
pub(super) fn outer_error(router: &Router, mount: Option<usize>, e: CoreError, request: &str) -> CoreError {
    let Some(prefix) = mount.and_then(|m| router.prefix(m)) else { return e };
    let b =
        BackendError { code: e.code.as_str(), message: &e.message, subject: Some(&e.subject), detail: Some(&e.detail) };
    mount_error(&b, prefix, request).unwrap_or(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err<'a>(code: &'a str, message: &'a str, subject: Option<&'a str>, detail: Option<&'a str>) -> BackendError<'a> {
        BackendError { code, message, subject, detail }
    }

    #[test]
    fn structured_errors_are_rendered_for_the_outer_path() {
        let inner = CoreError::of(ErrorCode::FileNotFound, "/a.md");
        let e = err(inner.code.as_str(), &inner.message, Some(&inner.subject), None);
        let outer = mount_error(&e, "/memories/", "/memories/a.md").unwrap();
        assert_eq!(outer.message, "File not found: '/memories/a.md'");
        assert_eq!(outer.subject, "/memories/a.md");
    }

    #[test]
    fn special_characters_and_repeated_paths_are_not_text_edits() {
        // Regex metacharacters, a quote and a control character: the message shows them
        // escaped, the subject holds them raw, and only the subject is moved.
        let hostile = "/a(.*)+[x]'$1\\\n.md";
        let inner = CoreError::of(ErrorCode::IsDirectory, hostile);
        let e = err("is_directory", &inner.message, Some(&inner.subject), None);
        let outer = mount_error(&e, "/m/", "/m/whatever").unwrap();
        assert_eq!(outer, CoreError::of(ErrorCode::IsDirectory, &format!("/m{hostile}")));
        // The inner path also appears in the detail (before the subject in `unsupported`): the
        // detail is kept as it is and the subject alone names the outer path.
        let inner = CoreError::new(ErrorCode::Unsupported, "/x", "'/x' is special");
        let e = err("unsupported", &inner.message, Some("/x"), Some(&inner.detail));
        assert_eq!(mount_error(&e, "/mnt/", "/mnt/x").unwrap().message, "Unsupported: '/x' is special ('/mnt/x')");
        // A path that occurs twice in its own message.
        let inner = CoreError::new(ErrorCode::InvalidPath, "/d/d", "'/d' is a file");
        let e = err("invalid_path", &inner.message, Some("/d/d"), Some("'/d' is a file"));
        assert_eq!(mount_error(&e, "/d/", "/d/d/d").unwrap().message, "Invalid path '/d/d/d': '/d' is a file");
    }

    #[test]
    fn errors_about_patterns_or_unknown_codes_pass_unchanged() {
        let inner = CoreError::new(ErrorCode::InvalidPattern, "/a[", "unclosed");
        assert_eq!(
            mount_error(&err("invalid_pattern", &inner.message, Some("/a["), Some("unclosed")), "/m/", "/m"),
            None
        );
        assert_eq!(mount_error(&err("invalid_pattern", "bad", None, None), "/m/", "/m"), None);
        assert_eq!(mount_error(&err("unsupported", "x", Some("options.outputMode"), None), "/m/", "/m"), None);
        assert_eq!(mount_error(&err("teapot", "I'm a teapot", None, None), "/m/", "/m/a"), None);
    }

    #[test]
    fn unstructured_errors_name_the_request_path() {
        let plain =
            |code, message| mount_error(&err(code, message, None, None), "/memories/", "/memories/a.md").unwrap();
        assert_eq!(plain("file_not_found", "no such key a.md").message, "File not found: '/memories/a.md'");
        assert_eq!(plain("permission_denied", "read-only").message, "Permission denied: '/memories/a.md' (read-only)");
        assert!(plain("multiple_matches", "twice")
            .message
            .starts_with("String appears several times in '/memories/a.md'"));
        assert_eq!(plain("conflict", "stale").subject, "/memories/a.md");
        let detailed = mount_error(&err("too_large", "big", None, Some("3 MB")), "/memories/", "/memories/a").unwrap();
        assert_eq!(detailed.message, "Too large: '/memories/a' (3 MB)");
    }
}
