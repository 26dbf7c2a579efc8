//! Composite rules (DESIGN §4 "Composite"): how the answers of backends mounted at route
//! prefixes look from outside — errors that name the outer path, and grep/glob fan-out results
//! merged as if one tree had been searched. Both bindings expose these to the TypeScript
//! `CompositeBackend`, which only routes calls and hands the answers here.
//!
//! - `routing`: outer paths, where a path routes, the mounts below a directory;
//! - `errors`: a mount's error named for the outer path;
//! - `merge`: grep and glob answers of several backends merged as one tree's;
//! - `columns`: those answers as the bindings pass them, in flat columns;
//! - `listing`: a directory listing with shadowed entries hidden and mount points added;
//! - `glob_asks`: what each mount is asked when a glob fans out (push-down);
//! - `fan_out`, `fan_glob`, `fan_grep`: grep and glob fanned out over resident tables.

mod columns;
mod errors;
mod fan_glob;
mod fan_grep;
mod fan_out;
mod glob_asks;
mod listing;
mod merge;
mod routing;

pub use columns::{merge_glob_columns, merge_grep_columns, split_paths, PartColumns};
pub use errors::{mount_error, BackendError};
pub use fan_glob::GlobFanOut;
pub use fan_grep::GrepFanOut;
pub use fan_out::FanAsk;
pub use glob_asks::{glob_asks, GlobAsk};
pub use listing::{ls_table, merge_ls, MOUNT_POINT};
pub use merge::{merge_glob, merge_grep, GlobPart, GrepMerge, GrepPart, Merged};
pub use routing::{mounts_under, outer_path, route_parts};

#[cfg(test)]
mod fixtures;
