//! Host I/O errors mapped to the pinned codes. The OS message is never forwarded: only a short
//! fixed detail, so no host path can reach a model-facing message.

use engram_core::{CoreError, ErrorCode};
use std::io;

/// Maps an I/O error on `subject` (a virtual path) to a [`CoreError`].
pub(crate) fn io_error(e: &io::Error, subject: &str) -> CoreError {
    let code = match e.raw_os_error() {
        Some(libc::ENOENT) | Some(libc::ENOTDIR) => ErrorCode::FileNotFound,
        Some(libc::EISDIR) => ErrorCode::IsDirectory,
        Some(libc::EACCES) | Some(libc::EPERM) | Some(libc::EROFS) => ErrorCode::PermissionDenied,
        // Only an `O_NOFOLLOW` open or a symlink loop yields this; treat it as leaving the root.
        Some(libc::ELOOP) => ErrorCode::PathEscape,
        Some(libc::ENAMETOOLONG) => return CoreError::new(ErrorCode::InvalidPath, subject, "name too long"),
        Some(libc::ENOSPC) | Some(libc::EDQUOT) => {
            return CoreError::new(ErrorCode::Unsupported, subject, "no space left on the device")
        }
        Some(libc::EFBIG) => return CoreError::new(ErrorCode::TooLarge, subject, "file too large for the device"),
        _ => match e.kind() {
            io::ErrorKind::NotFound => ErrorCode::FileNotFound,
            io::ErrorKind::PermissionDenied => ErrorCode::PermissionDenied,
            kind => return CoreError::new(ErrorCode::Unsupported, subject, format_args!("I/O error ({kind})")),
        },
    };
    CoreError::of(code, subject)
}

pub(crate) fn escape(subject: &str) -> CoreError {
    CoreError::of(ErrorCode::PathEscape, subject)
}

pub(crate) fn not_found(subject: &str) -> CoreError {
    CoreError::of(ErrorCode::FileNotFound, subject)
}

pub(crate) fn is_directory(subject: &str) -> CoreError {
    CoreError::of(ErrorCode::IsDirectory, subject)
}

/// A symbolic link that resolves inside the root: refused, never followed.
pub(crate) fn link_refused(subject: &str) -> CoreError {
    CoreError::new(ErrorCode::PermissionDenied, subject, "symbolic links are not followed")
}

pub(crate) fn not_regular(subject: &str) -> CoreError {
    CoreError::new(ErrorCode::Unsupported, subject, "not a regular file")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_common_errnos_without_os_text() {
        let cases = [
            (libc::ENOENT, ErrorCode::FileNotFound),
            (libc::ENOTDIR, ErrorCode::FileNotFound),
            (libc::EISDIR, ErrorCode::IsDirectory),
            (libc::EACCES, ErrorCode::PermissionDenied),
            (libc::ELOOP, ErrorCode::PathEscape),
            (libc::ENAMETOOLONG, ErrorCode::InvalidPath),
            (libc::ENOSPC, ErrorCode::Unsupported),
            (libc::EIO, ErrorCode::Unsupported),
        ];
        for (errno, code) in cases {
            let e = io_error(&io::Error::from_raw_os_error(errno), "/v");
            assert_eq!(e.code, code, "errno {errno}");
            assert!(!e.message.contains("os error"), "{}", e.message);
        }
    }
}
