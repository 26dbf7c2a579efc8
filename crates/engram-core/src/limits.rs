//! Sizes the core refuses beyond, shared by the modules that parse patterns.

/// The longest pattern the core accepts (a literal, a regular expression or a glob), in bytes.
pub const MAX_PATTERN_BYTES: usize = 4096;
