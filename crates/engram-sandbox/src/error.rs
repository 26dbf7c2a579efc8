use std::fmt;

/// Why a command could not be run (its own failure is an [`crate::Outcome`], not an error).
#[derive(Debug)]
pub enum SandboxError {
    /// The kernel lacks what the policy needs; the text names it.
    Unsupported(String),
    /// The policy is not usable (a root that is not a directory, a `cwd` outside the root).
    InvalidPolicy(String),
    /// Setting up or running the process failed.
    Io(String),
}

impl fmt::Display for SandboxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SandboxError::Unsupported(what) => write!(f, "sandbox not available here: this kernel lacks {what}"),
            SandboxError::InvalidPolicy(why) => write!(f, "invalid sandbox policy: {why}"),
            SandboxError::Io(why) => write!(f, "sandbox: {why}"),
        }
    }
}

impl std::error::Error for SandboxError {}

impl SandboxError {
    /// A stable code for the bindings (`unsupported`, `invalid_argument`, `io_error`).
    pub fn code(&self) -> &'static str {
        match self {
            SandboxError::Unsupported(_) => "unsupported",
            SandboxError::InvalidPolicy(_) => "invalid_argument",
            SandboxError::Io(_) => "io_error",
        }
    }
}
