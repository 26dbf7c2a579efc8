//! The composite's rules (`engram_core::composite`), typed: a mount's error rendered for the
//! outer path, grep, glob and listing answers merged, the mounts a glob is pushed down to.
//! Marshalling only.

use crate::{failure, ErrorData, Failure, Router};
use engram_core::composite::{self, BackendError, GrepMerge, PartColumns};
use engram_core::grep::OutputMode;
use engram_core::CoreResult;
use napi::bindgen_prelude::{Either, Int32Array, Uint32Array, Uint8Array};
use napi_derive::napi;

/// A mounted backend's error seen from outside the mount (see
/// `engram_core::composite::mount_error`), or `null` when it passes on unchanged.
#[napi]
pub fn mount_error(
    code: String,
    message: String,
    subject: Option<String>,
    detail: Option<String>,
    prefix: String,
    request: String,
) -> Option<ErrorData> {
    let e = BackendError { code: &code, message: &message, subject: subject.as_deref(), detail: detail.as_deref() };
    composite::mount_error(&e, &prefix, &request).map(|e| failure(e).error)
}

/// A merged answer (see `engram_core::composite::Merged`; a pick of `0xFFFFFFFF` is a
/// directory a route adds to a listing).
#[napi(object)]
pub struct Merged {
    pub truncated: bool,
    pub paths: Vec<String>,
    pub sizes: Uint32Array,
    pub picks: Uint32Array,
    pub renamed: Vec<String>,
}

fn merged(r: CoreResult<composite::Merged>) -> Either<Merged, Failure> {
    match r {
        Ok(m) => Either::A(Merged {
            truncated: m.truncated,
            paths: m.paths,
            sizes: Uint32Array::new(m.sizes),
            picks: Uint32Array::new(m.picks),
            renamed: m.renamed,
        }),
        Err(e) => Either::B(failure(e)),
    }
}

/// Merges the grep answers of a composite's backends (see
/// `engram_core::composite::merge_grep_columns` for the columns).
#[napi]
#[allow(clippy::too_many_arguments)]
pub fn merge_grep(
    router: &Router,
    output_mode: String,
    max_count: Option<u32>,
    path_glob: Option<String>,
    root: String,
    mounts: Int32Array,
    truncated: Uint8Array,
    counts: Uint32Array,
    paths: String,
    sizes: Uint32Array,
    context: Uint8Array,
) -> Either<Merged, Failure> {
    let cols =
        PartColumns { mounts: &mounts, truncated: &truncated, counts: &counts, sizes: &sizes, context: &context };
    merged(OutputMode::parse(&output_mode).and_then(|mode| {
        let max_count = max_count.map(|n| n as usize);
        let o = GrepMerge { mode, max_count, path_glob: path_glob.as_deref(), root: &root };
        composite::merge_grep_columns(&router.inner, &cols, composite::split_paths(&paths), &o)
    }))
}

/// Merges the glob answers of a composite's backends; `pattern` filters the mounts' answers
/// (absent: paths are only prefixed).
#[napi]
#[allow(clippy::too_many_arguments)]
pub fn merge_glob(
    router: &Router,
    pattern: Option<String>,
    root: String,
    max_results: Option<u32>,
    mounts: Int32Array,
    truncated: Uint8Array,
    counts: Uint32Array,
    paths: String,
) -> Either<Merged, Failure> {
    let cols = PartColumns { mounts: &mounts, truncated: &truncated, counts: &counts, sizes: &[], context: &[] };
    let max = max_results.map(|n| n as usize);
    merged(composite::merge_glob_columns(
        &router.inner,
        &cols,
        composite::split_paths(&paths),
        pattern.as_deref(),
        &root,
        max,
    ))
}

/// A directory listing as the composite shows it (see `engram_core::composite::merge_ls`).
#[napi]
pub fn merge_ls(router: &Router, dir: String, mount: Option<u32>, paths: String) -> Either<Merged, Failure> {
    merged(composite::merge_ls(&router.inner, &dir, mount.map(|m| m as usize), &composite::split_paths(&paths)))
}

/// The routes strictly below a normalised directory, in construction order.
#[napi]
pub fn mounts_under(router: &Router, dir: String) -> Uint32Array {
    Uint32Array::new(composite::mounts_under(&router.inner, &dir).into_iter().map(|i| i as u32).collect())
}

/// The mounts a composite glob fans out to, in columns: route index, pattern and inner
/// directory of each (see `engram_core::composite::glob_asks`).
#[napi(object)]
pub struct GlobAsks {
    pub mounts: Uint32Array,
    pub patterns: Vec<String>,
    pub paths: Vec<String>,
}

#[napi]
pub fn glob_asks(router: &Router, pattern: String, root: String) -> GlobAsks {
    let asks = composite::glob_asks(&router.inner, &pattern, &root);
    GlobAsks {
        mounts: Uint32Array::new(asks.iter().map(|a| a.mount as u32).collect()),
        patterns: asks.iter().map(|a| a.pattern.clone()).collect(),
        paths: asks.into_iter().map(|a| a.path).collect(),
    }
}
