//! `RootedFs`: the N-API face of `engram-fs` (native only). Every operation runs on the libuv
//! thread pool, so no call blocks the event loop, whatever the input (a huge directory, a deep
//! tree, a slow disk); searches can be cancelled through an [`FsCancel`]. Arguments and results
//! are typed (listings and grep answers in columns, the tools' text made in Rust); a failure is
//! a `{ error: { code, message } }` object. Marshalling only: every rule lives in `engram_fs`.

use crate::calls::TextOut;
use crate::column::Column;
use crate::{failure, grep_out, info, Deleted, Failure, FileInfo, GrepArgs, GrepOut};
use engram_core::grep::GrepOptions;
use engram_core::ops::{EditOptions, EditResult, GlobOptions};
use engram_core::read::ReadResult;
use engram_core::{CoreError, CoreResult, ErrorCode, FileInfo as CoreInfo};
use engram_fs::{Durability, FsOptions, GlobReport, GrepReport, LsReport, Skip};
use napi::bindgen_prelude::{AsyncTask, Buffer, Either, ToNapiValue, TypeName, Uint8Array};
use napi::{Env, Task};
use napi_derive::napi;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Real files under one host directory, with handle-based containment.
#[napi]
pub struct RootedFs {
    inner: Arc<engram_fs::RootedFs>,
}

/// A cancellation flag for one search; `cancel()` makes the walk stop at its next entry.
#[napi]
#[derive(Default)]
pub struct FsCancel {
    flag: Arc<AtomicBool>,
}

#[napi]
impl FsCancel {
    #[napi(constructor)]
    pub fn new() -> Self {
        FsCancel::default()
    }

    #[napi]
    pub fn cancel(&self) {
        self.flag.store(true, Ordering::Relaxed);
    }
}

/// A file's bytes and the version of exactly those bytes.
#[napi(object)]
pub struct VersionedBytes {
    pub data: Buffer,
    pub version: String,
}

/// Lines of a file (see `engram_core::read::ReadResult`).
#[napi(object)]
pub struct FsRead {
    pub content: String,
    pub total_lines: u32,
    pub offset: u32,
    pub lines: u32,
}

/// A written file's path and new version.
#[napi(object)]
pub struct FsWritten {
    pub path: String,
    pub version: String,
}

/// An edited file's path, the replacements made and its new version.
#[napi(object)]
pub struct FsEdited {
    pub path: String,
    pub occurrences: u32,
    pub version: String,
}

/// A renamed file's new path.
#[napi(object)]
pub struct FsRenamed {
    pub path: String,
}

/// One entry's metadata.
#[napi(object)]
pub struct FsStat {
    pub info: FileInfo,
}

/// Entries in columns, one row per entry: `paths` (directories end with `/`), `sizes` (`-1`
/// for a directory), `modifiedAt` (ms since the epoch, NaN for a directory), `versions` (`""`
/// for a directory); `truncated` for a glob that stopped at its maximum; what a glob's walk
/// could not look into, or the entries an `ls` could not name, as `skippedPaths[i]` for
/// `skippedReasons[i]`.
#[napi(object, object_from_js = false)]
pub struct FsListing {
    pub paths: Vec<String>,
    #[napi(ts_type = "Float64Array")]
    pub sizes: Column<f64>,
    #[napi(ts_type = "Float64Array")]
    pub modified_at: Column<f64>,
    pub versions: Vec<String>,
    pub truncated: bool,
    pub skipped_paths: Vec<String>,
    pub skipped_reasons: Vec<String>,
}

/// Grep results in columns, as a table's grep gives them ([`GrepOut`]), and the entries the
/// search could not look into (`skippedPaths[i]` for `skippedReasons[i]`).
#[napi(object, object_from_js = false)]
pub struct FsGrep {
    pub grep: GrepOut,
    pub skipped_paths: Vec<String>,
    pub skipped_reasons: Vec<String>,
}

/// How many fsyncs a handle made (see `engram_fs::Syncs`).
#[napi(object)]
pub struct FsSyncs {
    pub files: f64,
    pub dirs: f64,
}

/// A Rust result turned into its JavaScript value on the JS thread (typed arrays and buffers
/// are made there, not on the pool).
pub trait Marshal: Send + 'static {
    type Js: ToNapiValue + TypeName;
    fn js(self) -> Self::Js;
}

/// One operation off the JavaScript thread: the success value, or `{ error }`.
pub struct Op<T: Marshal> {
    run: Option<Box<dyn FnOnce() -> CoreResult<T> + Send>>,
}

fn op<T: Marshal>(run: impl FnOnce() -> CoreResult<T> + Send + 'static) -> AsyncTask<Op<T>> {
    AsyncTask::new(Op { run: Some(Box::new(run)) })
}

impl<T: Marshal> Task for Op<T> {
    type Output = CoreResult<T>;
    type JsValue = Either<T::Js, Failure>;
    fn compute(&mut self) -> napi::Result<Self::Output> {
        self.run.take().map(|f| f()).ok_or_else(|| napi::Error::from_reason("operation already ran"))
    }
    fn resolve(&mut self, _env: Env, output: Self::Output) -> napi::Result<Self::JsValue> {
        Ok(match output {
            Ok(v) => Either::A(v.js()),
            Err(e) => Either::B(failure(e)),
        })
    }
}

impl Marshal for Vec<u8> {
    type Js = Buffer;
    fn js(self) -> Buffer {
        Buffer::from(self)
    }
}

impl Marshal for (Vec<u8>, String) {
    type Js = VersionedBytes;
    fn js(self) -> VersionedBytes {
        VersionedBytes { data: Buffer::from(self.0), version: self.1 }
    }
}

impl Marshal for ReadResult {
    type Js = FsRead;
    fn js(self) -> FsRead {
        let n = |v: usize| u32::try_from(v).unwrap_or(u32::MAX);
        FsRead { content: self.content, total_lines: n(self.total_lines), offset: n(self.offset), lines: n(self.lines) }
    }
}

/// A write's answer: the path and the new version.
pub struct Placed(CoreInfo);

impl Marshal for Placed {
    type Js = FsWritten;
    fn js(self) -> FsWritten {
        FsWritten { path: self.0.path, version: self.0.version.unwrap_or_default() }
    }
}

/// A rename's answer: the new path.
pub struct Moved(CoreInfo);

impl Marshal for Moved {
    type Js = FsRenamed;
    fn js(self) -> FsRenamed {
        FsRenamed { path: self.0.path }
    }
}

impl Marshal for EditResult {
    type Js = FsEdited;
    fn js(self) -> FsEdited {
        let occurrences = u32::try_from(self.occurrences).unwrap_or(u32::MAX);
        FsEdited { path: self.path, occurrences, version: self.version }
    }
}

/// A delete's answer: how many files went.
pub struct Count(usize);

impl Marshal for Count {
    type Js = Deleted;
    fn js(self) -> Deleted {
        Deleted { deleted: u32::try_from(self.0).unwrap_or(u32::MAX) }
    }
}

impl Marshal for CoreInfo {
    type Js = FsStat;
    fn js(self) -> FsStat {
        FsStat { info: info(self) }
    }
}

fn listing(files: Vec<CoreInfo>, truncated: bool, skipped: Vec<Skip>) -> FsListing {
    let n = files.len();
    let (mut paths, mut versions) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let (mut sizes, mut modified_at) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for f in files {
        sizes.push(if f.is_dir { -1.0 } else { f.size.unwrap_or(0) as f64 });
        modified_at.push(f.modified_at.unwrap_or(f64::NAN));
        versions.push(f.version.unwrap_or_default());
        paths.push(f.path);
    }
    let (skipped_paths, skipped_reasons) = skipped_columns(skipped);
    FsListing {
        paths,
        sizes: Column(sizes),
        modified_at: Column(modified_at),
        versions,
        truncated,
        skipped_paths,
        skipped_reasons,
    }
}

/// Skipped entries as two columns: paths and reasons.
fn skipped_columns(skipped: Vec<Skip>) -> (Vec<String>, Vec<String>) {
    skipped.into_iter().map(|s| (s.path, s.reason.to_string())).unzip()
}

impl Marshal for LsReport {
    type Js = FsListing;
    fn js(self) -> FsListing {
        listing(self.entries, false, self.skipped)
    }
}

impl Marshal for GlobReport {
    type Js = FsListing;
    fn js(self) -> FsListing {
        listing(self.result.files, self.result.truncated, self.skipped)
    }
}

impl Marshal for GrepReport {
    type Js = FsGrep;
    fn js(self) -> FsGrep {
        let (skipped_paths, skipped_reasons) = skipped_columns(self.skipped);
        FsGrep { grep: grep_out(self.result), skipped_paths, skipped_reasons }
    }
}

impl Marshal for String {
    type Js = TextOut;
    fn js(self) -> TextOut {
        TextOut { text: self }
    }
}

/// The options of a grep (built by [`GrepArgs`]), owned for the pool thread.
fn grep_options(args: &GrepArgs) -> CoreResult<GrepOptions> {
    args.options().cloned()
}

/// A count of bytes or milliseconds from JavaScript: NaN, infinities and negatives are
/// `unsupported` (as malformed options always were); fractions are cut.
fn whole(n: f64, what: &str) -> CoreResult<u64> {
    if n.is_finite() && n >= 0.0 {
        Ok(n as u64)
    } else {
        Err(CoreError::new(ErrorCode::Unsupported, what, format_args!("must be a non-negative number, got {n}")))
    }
}

#[napi]
impl RootedFs {
    /// Opens a handle on `root` (see `engram_fs::FsOptions` for each option; `durability` is
    /// `"full"` or `"relaxed"`): the handle, or `{ error }` (`file_not_found`, `invalid_path`
    /// for a non-directory, `unsupported` for another durability).
    #[napi(ts_return_type = "RootedFs | Failure")]
    pub fn open(
        root: String,
        max_file_bytes: f64,
        respect_gitignore: bool,
        max_results: u32,
        durability: String,
        lock_timeout_ms: f64,
    ) -> Either<RootedFs, Failure> {
        let opened = (|| {
            engram_fs::RootedFs::open(FsOptions {
                root: PathBuf::from(root),
                max_file_bytes: whole(max_file_bytes, "maxFileBytes")?,
                respect_gitignore,
                max_results: max_results as usize,
                durability: Durability::parse(&durability)?,
                lock_timeout_ms: whole(lock_timeout_ms, "lockTimeoutMs")?,
            })
        })();
        match opened {
            Ok(fs) => Either::A(RootedFs { inner: Arc::new(fs) }),
            Err(e) => Either::B(failure(e)),
        }
    }

    /// The canonical host directory behind `/`.
    #[napi]
    pub fn root(&self) -> String {
        self.inner.root().to_string_lossy().into_owned()
    }

    /// The fsyncs this handle made so far (all zero with `durability: "relaxed"`).
    #[napi]
    pub fn syncs(&self) -> FsSyncs {
        let s = self.inner.syncs();
        FsSyncs { files: s.files as f64, dirs: s.dirs as f64 }
    }

    #[napi(ts_return_type = "Promise<FsListing | Failure>")]
    pub fn ls(&self, path: String) -> AsyncTask<Op<LsReport>> {
        let fs = self.inner.clone();
        op(move || fs.ls_report(&path))
    }

    #[napi(ts_return_type = "Promise<FsStat | Failure>")]
    pub fn stat(&self, path: String) -> AsyncTask<Op<CoreInfo>> {
        let fs = self.inner.clone();
        op(move || fs.stat(&path))
    }

    #[napi(ts_return_type = "Promise<FsRead | Failure>")]
    pub fn read(&self, path: String, offset: u32, limit: Option<u32>) -> AsyncTask<Op<ReadResult>> {
        let fs = self.inner.clone();
        op(move || fs.read(&path, offset as usize, limit.map(|l| l as usize)))
    }

    #[napi(ts_return_type = "Promise<Buffer | Failure>")]
    pub fn read_bytes(&self, path: String) -> AsyncTask<Op<Vec<u8>>> {
        let fs = self.inner.clone();
        op(move || fs.read_bytes(&path))
    }

    #[napi(ts_return_type = "Promise<VersionedBytes | Failure>")]
    pub fn read_versioned(&self, path: String) -> AsyncTask<Op<(Vec<u8>, String)>> {
        let fs = self.inner.clone();
        op(move || fs.read_versioned(&path))
    }

    #[napi(ts_return_type = "Promise<FsWritten | Failure>")]
    pub fn write(&self, path: String, data: Uint8Array, if_version: Option<String>) -> AsyncTask<Op<Placed>> {
        let fs = self.inner.clone();
        let data = data.to_vec();
        op(move || fs.write(&path, &data, if_version.as_deref()).map(Placed))
    }

    #[napi(ts_return_type = "Promise<FsEdited | Failure>")]
    pub fn edit(
        &self,
        path: String,
        old_string: String,
        new_string: String,
        replace_all: bool,
        if_version: Option<String>,
    ) -> AsyncTask<Op<EditResult>> {
        let fs = self.inner.clone();
        let o = EditOptions { path, old_string, new_string, replace_all, modified_at: 0.0, if_version };
        op(move || fs.edit(&o))
    }

    #[napi(ts_return_type = "Promise<Deleted | Failure>")]
    pub fn delete(&self, path: String, if_version: Option<String>) -> AsyncTask<Op<Count>> {
        let fs = self.inner.clone();
        op(move || fs.delete_if(&path, if_version.as_deref()).map(Count))
    }

    #[napi(ts_return_type = "Promise<FsRenamed | Failure>")]
    pub fn rename(&self, from: String, to: String, if_version: Option<String>) -> AsyncTask<Op<Moved>> {
        let fs = self.inner.clone();
        op(move || fs.rename(&from, &to, if_version.as_deref()).map(Moved))
    }

    /// Grep (see [`GrepArgs`]; `maxCount` is clamped to the handle's `maxResults`).
    #[napi(ts_return_type = "Promise<FsGrep | Failure>")]
    pub fn grep(&self, args: &GrepArgs, cancel: &FsCancel) -> AsyncTask<Op<GrepReport>> {
        let (fs, flag, o) = (self.inner.clone(), cancel.flag.clone(), grep_options(args));
        op(move || fs.grep_report(&o?, Some(&flag)))
    }

    #[napi(ts_return_type = "Promise<FsListing | Failure>")]
    pub fn glob(
        &self,
        pattern: String,
        path: Option<String>,
        max_results: Option<u32>,
        cancel: &FsCancel,
    ) -> AsyncTask<Op<GlobReport>> {
        let (fs, flag) = (self.inner.clone(), cancel.flag.clone());
        let o = GlobOptions { pattern, path, max_results: max_results.map(|n| n as usize) };
        op(move || fs.glob_report(&o, Some(&flag)))
    }

    /// The `grep` tool's text, capped at `maxChars` UTF-16 units.
    #[napi(ts_return_type = "Promise<TextOut | Failure>")]
    pub fn grep_text(&self, args: &GrepArgs, max_chars: u32, cancel: &FsCancel) -> AsyncTask<Op<String>> {
        let (fs, flag, o) = (self.inner.clone(), cancel.flag.clone(), grep_options(args));
        op(move || fs.grep_text(&o?, max_chars as usize, Some(&flag)))
    }

    /// The `glob` tool's text.
    #[napi(ts_return_type = "Promise<TextOut | Failure>")]
    pub fn glob_text(
        &self,
        pattern: String,
        path: Option<String>,
        max_chars: u32,
        cancel: &FsCancel,
    ) -> AsyncTask<Op<String>> {
        let (fs, flag) = (self.inner.clone(), cancel.flag.clone());
        let o = GlobOptions { pattern, path, max_results: None };
        op(move || fs.glob_text(&o, max_chars as usize, Some(&flag)))
    }

    /// The `ls` tool's text; `shown` is the path as the model gave it.
    #[napi(ts_return_type = "Promise<TextOut | Failure>")]
    pub fn ls_text(&self, path: String, shown: String, max_chars: u32) -> AsyncTask<Op<String>> {
        let fs = self.inner.clone();
        op(move || fs.ls_text(&path, &shown, max_chars as usize))
    }

    /// The `read_file` tool's text; `shown` is the path as the model gave it.
    #[napi(ts_return_type = "Promise<TextOut | Failure>")]
    pub fn read_text(
        &self,
        path: String,
        shown: String,
        offset: u32,
        limit: u32,
        max_chars: u32,
    ) -> AsyncTask<Op<String>> {
        let fs = self.inner.clone();
        op(move || fs.read_text(&path, &shown, offset as usize, limit as usize, max_chars as usize))
    }
}
