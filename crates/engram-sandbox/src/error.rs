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
    /// The error code the bindings report: `invalid_path` for a root or working directory
    /// that cannot be used, `unsupported` when the command cannot be run here at all.
    pub fn code(&self) -> &'static str {
        match self {
            SandboxError::InvalidPolicy(_) => "invalid_path",
            SandboxError::Unsupported(_) | SandboxError::Io(_) => "unsupported",
        }
    }
}
