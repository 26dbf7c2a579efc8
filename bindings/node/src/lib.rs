//! `@engram/native`: the N-API face of `engram-core`. Per-call methods (read, write, edit, stat,
//! ls, glob, grep, route) take and return typed values; a failure is a `{ error: { code,
//! message } }` object. Marshalling only: every rule lives in `engram_core`.

use crate::column::Column;
use engram_abi::batch;
use engram_core::grep::GrepOptions;
use engram_core::{api, CoreError, CoreResult, FileInfo as CoreInfo, FileTable as CoreTable, Router as CoreRouter};
use napi::bindgen_prelude::{Either, Env, Float64ArraySlice, ObjectFinalize, Uint8Array, Unknown};
use napi::JsValue;
use napi_derive::napi;

mod buffers;
mod calls;
mod column;
pub mod composite;
mod fs;
#[cfg(target_os = "linux")]
pub mod sandbox;
mod utf8;

use utf8::{Batch, Utf8};

use calls::export;
use composite::{GlobFanOut, GrepFanOut};

/// An error as data: a pinned code and its one message text.
#[napi(object)]
pub struct ErrorData {
    pub code: String,
    pub message: String,
    /// The path (or pattern) the error is about, unescaped (see `engram_core::CoreError`).
    pub subject: Option<String>,
    /// The reason shown in the message, when it has one.
    pub detail: Option<String>,
}

/// The failure half of every typed result.
#[napi(object)]
pub struct Failure {
    pub error: ErrorData,
}

/// A typed result: the success object or `{ error }`.
pub(crate) fn out<T, U>(r: CoreResult<T>, ok: impl FnOnce(T) -> U) -> Either<U, Failure> {
    match r {
        Ok(v) => Either::A(ok(v)),
        Err(e) => Either::B(failure(e)),
    }
}

pub(crate) fn failure(e: CoreError) -> Failure {
    let detail = (!e.detail.is_empty()).then_some(e.detail);
    Failure {
        error: ErrorData { code: e.code.as_str().to_string(), message: e.message, subject: Some(e.subject), detail },
    }
}

/// Small per-call results cross as one string (the content, or the normalised path) and the
/// numeric fields written into `meta`, a caller-owned `Float64Array` of at least 4 numbers
/// (NaN for an absent field): no result object is built for the calls an agent makes most.
/// On failure the call returns `null` and `takeError()` gives the `{ code, message }`.
fn fill(mut meta: Float64ArraySlice, values: &[f64]) {
    // SAFETY: the array is borrowed for this synchronous call only, on the JS thread, and no
    // other view of it is alive in Rust.
    let slots = unsafe { meta.as_mut() };
    for (slot, v) in slots.iter_mut().zip(values) {
        *slot = *v;
    }
}

/// A file or directory (directories end with `/`).
#[napi(object)]
pub struct FileInfo {
    pub path: String,
    pub is_dir: bool,
    pub size: Option<f64>,
    pub modified_at: Option<f64>,
    pub version: Option<String>,
}

fn info(i: CoreInfo) -> FileInfo {
    FileInfo {
        path: i.path,
        is_dir: i.is_dir,
        size: i.size.map(|s| s as f64),
        modified_at: i.modified_at,
        version: i.version,
    }
}

#[napi(object)]
pub struct Entries {
    pub entries: Vec<FileInfo>,
}

impl Entries {
    fn of(entries: Vec<CoreInfo>) -> Entries {
        Entries { entries: entries.into_iter().map(info).collect() }
    }
}

/// How many files `writeMany` wrote.
#[napi(object)]
pub struct Seeded {
    pub written: u32,
}

/// How many files a delete removed (`RootedFs`).
#[napi(object)]
pub struct Deleted {
    pub deleted: u32,
}

/// A glob's files in columns (see `engram_core::api::FileColumns`).
#[napi(object, object_from_js = false)]
pub struct GlobOut {
    pub paths: Vec<String>,
    #[napi(ts_type = "Float64Array")]
    pub sizes: Column<f64>,
    #[napi(ts_type = "Float64Array")]
    pub modified: Column<f64>,
    #[napi(ts_type = "Float64Array")]
    pub versions: Column<f64>,
    pub truncated: bool,
}

impl GlobOut {
    fn of((c, truncated): (api::FileColumns, bool)) -> GlobOut {
        GlobOut {
            paths: c.paths,
            sizes: Column(c.sizes),
            modified: Column(c.modified),
            versions: Column(c.versions),
            truncated,
        }
    }
}

/// Grep results in columns (see `engram_core::api::GrepColumns`).
#[napi(object, object_from_js = false)]
pub struct GrepOut {
    pub truncated: bool,
    pub group_paths: Option<Vec<String>>,
    #[napi(ts_type = "Uint32Array")]
    pub group_sizes: Option<Column<u32>>,
    #[napi(ts_type = "Int32Array")]
    pub lines: Option<Column<i32>>,
    pub texts: Option<Vec<String>>,
    pub files: Option<Vec<String>>,
    pub count_paths: Option<Vec<String>>,
    #[napi(ts_type = "Uint32Array")]
    pub counts: Option<Column<u32>>,
}

/// A grep result in columns.
pub(crate) fn grep_out(r: engram_core::grep::GrepResult) -> GrepOut {
    let c = api::grep_columns(r);
    GrepOut {
        truncated: c.truncated,
        group_paths: c.group_paths,
        group_sizes: c.group_sizes.map(Column),
        lines: c.lines.map(Column),
        texts: c.texts,
        files: c.files,
        count_paths: c.count_paths,
        counts: c.counts.map(Column),
    }
}

/// Where a path routes: `route` is the prefix index, or `null` for the default backend.
#[napi(object)]
pub struct RouteOut {
    pub route: Option<u32>,
    pub prefix: Option<String>,
    pub path: String,
    /// The whole path, normalised.
    pub outer: String,
}

impl RouteOut {
    fn of(r: engram_core::Route) -> RouteOut {
        RouteOut { route: r.route.map(|i| i as u32), prefix: r.prefix, path: r.path, outer: r.outer }
    }
}

/// Longest-prefix router over normalised mount points.
#[napi]
pub struct Router {
    inner: CoreRouter,
}

/// The options of one `grep` or `grepText` call, built once (defaults as in
/// `engram_core::grep::GrepOptions::from_parts`; an invalid mode fails the call that uses them).
#[napi]
pub struct GrepArgs {
    options: CoreResult<GrepOptions>,
}

impl GrepArgs {
    pub(crate) fn options(&self) -> CoreResult<&GrepOptions> {
        self.options.as_ref().map_err(Clone::clone)
    }
}

/// A resident file table: files stay in native memory between calls. V8 is told how much
/// memory its files hold ([`FileTable::account`]), so that tables nothing references any more
/// are collected as promptly as JavaScript objects of that size would be.
#[napi(custom_finalize)]
pub struct FileTable {
    inner: CoreTable,
    /// The error of the last call that returned `null`.
    error: std::cell::RefCell<Option<CoreError>>,
    /// The content bytes last reported to V8 as external memory.
    reported: i64,
}

/// The change in a table's content that is reported to V8 at once (smaller changes add up
/// first, so that small writes make no extra call).
const ACCOUNT_STEP: i64 = 256 * 1024;

impl FileTable {
    fn wrap(inner: CoreTable) -> Self {
        FileTable { inner, error: std::cell::RefCell::new(None), reported: 0 }
    }

    /// Reports the table's content size to V8 once it moved by [`ACCOUNT_STEP`] or more.
    fn account(&mut self, env: &Env) {
        let held = i64::try_from(self.inner.content_bytes()).unwrap_or(i64::MAX);
        if (held - self.reported).abs() >= ACCOUNT_STEP && env.adjust_external_memory(held - self.reported).is_ok() {
            self.reported = held;
        }
    }

    /// `Some(ok(value))`, or `None` with the error kept for `takeError()`.
    fn keep<T, U>(&self, r: CoreResult<T>, ok: impl FnOnce(T) -> U) -> Option<U> {
        match r {
            Ok(v) => Some(ok(v)),
            Err(e) => {
                *self.error.borrow_mut() = Some(e);
                None
            }
        }
    }

    fn written(&self, r: CoreResult<api::Written>, meta: Float64ArraySlice) -> Option<String> {
        self.keep(r, |w| {
            fill(meta, &[w.version as f64]);
            w.path
        })
    }
}

/// A table rebuilt from `snapshot()` bytes, or why they are not one.
#[napi]
pub fn restore_file_table(env: Env, bytes: Uint8Array) -> Either<FileTable, Failure> {
    out(api::table_from_owned_snapshot(buffers::shared_copy(&bytes)), |inner| {
        let mut table = FileTable::wrap(inner);
        table.account(&env);
        table
    })
}

impl ObjectFinalize for FileTable {
    fn finalize(self, env: Env) -> napi::Result<()> {
        if self.reported != 0 {
            env.adjust_external_memory(-self.reported)?;
        }
        Ok(())
    }
}

impl Default for FileTable {
    fn default() -> Self {
        Self::new()
    }
}

#[napi]
impl FileTable {
    /// Removes every file at once, releasing their memory now (see
    /// `engram_core::FileTable::clear`).
    #[napi]
    pub fn clear(&mut self, env: Env) {
        self.inner.clear();
        self.account(&env);
    }

    #[napi(getter)]
    pub fn size(&self) -> u32 {
        self.inner.len() as u32
    }

    /// Changes since creation or restore (see `engram_core::FileTable::changes`).
    #[napi(getter)]
    pub fn changes(&self) -> f64 {
        self.inner.changes() as f64
    }

    /// The newest version handed out (see `engram_core::FileTable::last_version`).
    #[napi(getter)]
    pub fn last_version(&self) -> f64 {
        self.inner.last_version() as f64
    }

    /// Writes a file: its normalised path, `meta` = `[version]`; `null` on failure.
    #[napi]
    pub fn write(
        &mut self,
        env: Env,
        path: String,
        data: &[u8],
        modified_at: f64,
        if_version: Option<String>,
        meta: Float64ArraySlice,
    ) -> Option<String> {
        let r = api::write(&mut self.inner, &path, data.to_vec(), modified_at, if_version.as_deref());
        self.account(&env);
        self.written(r, meta)
    }

    /// [`FileTable::write`] of text (transcoded once, by N-API, in one pass: see [`Utf8`]).
    #[napi]
    pub fn write_text(
        &mut self,
        env: Env,
        path: String,
        #[napi(ts_arg_type = "string")] text: Utf8,
        modified_at: f64,
        if_version: Option<String>,
        meta: Float64ArraySlice,
    ) -> Option<String> {
        let r = api::write(&mut self.inner, &path, text.0, modified_at, if_version.as_deref());
        self.account(&env);
        self.written(r, meta)
    }

    /// Seeds many files in one call, all or nothing (see `engram_abi::batch::write_many`):
    /// NUL-joined paths and one content per file, a string or bytes, each converted once
    /// straight into a few buffers the batch's files share (`room`: how many bytes to make
    /// room for at first, e.g. the texts' UTF-16 units; see `utf8::Batch`). Lone surrogates
    /// become U+FFFD, as in `writeText`. Every file gets `modified_at`, or its own time from
    /// `modified_each`. Returns `{ written }` or `{ error }`.
    #[napi]
    pub fn write_many(
        &mut self,
        env: Env,
        paths: String,
        #[napi(ts_arg_type = "Array<string | Uint8Array>")] contents: Unknown,
        room: f64,
        modified_at: f64,
        modified_each: Option<Float64ArraySlice>,
    ) -> napi::Result<Either<Seeded, Failure>> {
        let array = contents.value();
        // SAFETY: the handles napi-rs gave this call (`as` makes a negative or NaN room 0).
        let Batch { files } = unsafe { Batch::read(array.env, array.value, room as usize) }?;
        let modified = modified_each.as_deref().map_or(batch::Modified::All(modified_at), batch::Modified::Each);
        let r = batch::write_many_files(&mut self.inner, &paths, files, modified);
        self.account(&env);
        Ok(out(r, |n| Seeded { written: n as u32 }))
    }
}

// After the classes: napi-rs reads a class before a constructor of it.
engram_abi::calls!(export);
