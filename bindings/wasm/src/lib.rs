//! `@engram/wasm`: the wasm-bindgen face of `engram-core`, the same API as `@engram/native`.
//! Per-call methods (read, write, edit, stat, ls, glob, grep, route) take typed arguments and
//! return result objects whose fields are read through getters; a failure sets `error` to
//! `{ code, message }`. Marshalling only: every rule lives in `engram_core`.
//!
//! Strings, lists and numbers that may be absent cross as one JavaScript value made inside the
//! call, of an imported type that names its TypeScript type (`Text` is a `string`, `Texts` a
//! `string[]`, ...), both as results and as result fields. wasm-bindgen would return a
//! `String`, a `Vec` or an `Option` of one as a multi-value pair, and Node 20's V8 compiles a
//! wrapper for each multi-value export signature with its optimising compiler while it
//! compiles the module (~0.15 ms each): 20 signatures were 2.5 ms of a 12 ms cold start.
//! One-value signatures share V8's generic wrapper. No call throws: a call that
//! makes one thing returns it or a [`Failure`], one value typed `T | Failure`.

use engram_abi::batch;
use engram_core::grep::GrepOptions;
use engram_core::{api, CoreError, CoreResult, FileInfo as CoreInfo, FileTable as CoreTable, Router as CoreRouter};
use wasm_bindgen::prelude::*;

// The heap: std's dlmalloc with geometric memory growth (build configuration, see heap.rs).
#[cfg(target_arch = "wasm32")]
mod heap;
// Word-at-a-time `memcmp`/`bcmp` in place of compiler_builtins' byte loops (see mem.rs).
#[cfg(any(target_arch = "wasm32", test))]
mod mem;

/// A result JavaScript reads: each field through a getter (a clone), and none ever set, so
/// every field is `readonly` (a setter would be one more export and glue method per field: 63
/// of them were 18 KB of the glue).
macro_rules! result {
    ($(#[$meta:meta])* pub struct $name:ident { $($(#[$field_meta:meta])* pub $field:ident: $ty:ty,)* }) => {
        #[wasm_bindgen(getter_with_clone)]
        $(#[$meta])*
        pub struct $name {
            $($(#[$field_meta])* #[wasm_bindgen(readonly)] pub $field: $ty,)*
        }
    };
}

// The JavaScript values results hold and calls return, each an imported type that TypeScript
// sees as the type named here and that crosses as one value (see the crate docs).
#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(typescript_type = "string")]
    #[derive(Clone)]
    pub type Text;
    #[wasm_bindgen(typescript_type = "string[]")]
    #[derive(Clone)]
    pub type Texts;
    #[wasm_bindgen(typescript_type = "number")]
    #[derive(Clone)]
    pub type Number;
    #[wasm_bindgen(typescript_type = "Uint8Array")]
    #[derive(Clone)]
    pub type Bytes;
    #[wasm_bindgen(typescript_type = "Uint32Array")]
    #[derive(Clone)]
    pub type U32s;
    #[wasm_bindgen(typescript_type = "Int32Array")]
    #[derive(Clone)]
    pub type I32s;
    #[wasm_bindgen(typescript_type = "Float64Array")]
    #[derive(Clone)]
    pub type F64s;
    #[wasm_bindgen(typescript_type = "FileInfo[]")]
    #[derive(Clone)]
    pub type FileInfos;
}

/// A Rust value made into the JavaScript value TypeScript knows as `T`: a string, an array of
/// strings or of result objects, a typed array or a number.
trait IntoJs: Into<JsValue> {
    fn js<T: JsCast>(self) -> T {
        self.into().unchecked_into()
    }
}

impl<V: Into<JsValue>> IntoJs for V {}

mod calls;

engram_abi::calls!(export);
use calls::export;

result! {
    /// An error as data: a pinned code and its one message text.
    #[derive(Clone)]
    pub struct ErrorData {
        pub code: Text,
        pub message: Text,
        /// The path (or pattern) the error is about, unescaped (see `engram_core::CoreError`).
        pub subject: Option<Text>,
        /// The reason shown in the message, when it has one.
        pub detail: Option<Text>,
    }
}

result! {
    /// What a call that makes one thing (a router, a table, a snapshot) returns instead of it.
    pub struct Failure {
        pub error: ErrorData,
    }
}

/// The thing a call made, or its [`Failure`], as one value (the call is typed `T | Failure`).
pub(crate) fn made<T>(r: CoreResult<T>, value: impl FnOnce(T) -> JsValue) -> JsValue {
    match r {
        Ok(v) => value(v),
        Err(e) => Failure { error: error_data_of(e) }.into(),
    }
}

fn error_of(e: CoreError) -> Option<ErrorData> {
    Some(error_data_of(e))
}

pub(crate) fn error_data_of(e: CoreError) -> ErrorData {
    let detail = (!e.detail.is_empty()).then_some(e.detail);
    ErrorData {
        code: e.code.as_str().js(),
        message: e.message.js(),
        subject: Some(e.subject.js()),
        detail: detail.map(IntoJs::js),
    }
}

/// Splits a core result into the success value and the `error` field.
fn split<T>(r: CoreResult<T>) -> (Option<T>, Option<ErrorData>) {
    match r {
        Ok(v) => (Some(v), None),
        Err(e) => (None, error_of(e)),
    }
}

/// Small per-call results cross as one string (the content, or the normalised path) and the
/// numeric fields written into `meta`, a caller-owned `Float64Array` of at least 4 numbers
/// (NaN for an absent field): no result object is built for the calls an agent makes most.
/// On failure the call returns `undefined` and `takeError()` gives the `{ code, message }`.
fn fill(meta: &mut [f64], values: &[f64]) {
    for (slot, v) in meta.iter_mut().zip(values) {
        *slot = *v;
    }
}

result! {
    /// How many files `writeMany` wrote; or `error`.
    pub struct Seeded {
        pub written: Option<u32>,
        pub error: Option<ErrorData>,
    }
}

result! {
    /// A file or directory (directories end with `/`).
    #[derive(Clone)]
    pub struct FileInfo {
        pub path: Text,
        #[wasm_bindgen(js_name = isDir)]
        pub is_dir: bool,
        pub size: Option<Number>,
        #[wasm_bindgen(js_name = modifiedAt)]
        pub modified_at: Option<Number>,
        pub version: Option<Text>,
    }
}

fn info(i: CoreInfo) -> FileInfo {
    FileInfo {
        path: i.path.js(),
        is_dir: i.is_dir,
        size: i.size.map(|s| (s as f64).js()),
        modified_at: i.modified_at.map(IntoJs::js),
        version: i.version.map(IntoJs::js),
    }
}

result! {
    /// The entries of one directory; or `error`.
    pub struct Entries {
        pub entries: Option<FileInfos>,
        pub error: Option<ErrorData>,
    }
}

impl Entries {
    fn of(r: CoreResult<Vec<CoreInfo>>) -> Entries {
        let (e, error) = split(r);
        Entries { entries: e.map(|e| e.into_iter().map(info).collect::<Vec<_>>().js()), error }
    }
}

result! {
    /// A glob's files in columns (see `engram_core::api::FileColumns`); or `error`.
    pub struct GlobOut {
        pub paths: Option<Texts>,
        pub sizes: Option<F64s>,
        pub modified: Option<F64s>,
        pub versions: Option<F64s>,
        pub truncated: Option<bool>,
        pub error: Option<ErrorData>,
    }
}

result! {
    /// Grep results in columns (see `engram_core::api::GrepColumns`); or `error`.
    pub struct GrepOut {
        pub truncated: Option<bool>,
        #[wasm_bindgen(js_name = groupPaths)]
        pub group_paths: Option<Texts>,
        #[wasm_bindgen(js_name = groupSizes)]
        pub group_sizes: Option<U32s>,
        pub lines: Option<I32s>,
        pub texts: Option<Texts>,
        pub files: Option<Texts>,
        #[wasm_bindgen(js_name = countPaths)]
        pub count_paths: Option<Texts>,
        pub counts: Option<U32s>,
        pub error: Option<ErrorData>,
    }
}

impl GlobOut {
    fn of(r: CoreResult<(api::FileColumns, bool)>) -> GlobOut {
        match r {
            Ok((c, truncated)) => GlobOut {
                paths: Some(c.paths.js()),
                sizes: Some(c.sizes.js()),
                modified: Some(c.modified.js()),
                versions: Some(c.versions.js()),
                truncated: Some(truncated),
                error: None,
            },
            Err(e) => GlobOut {
                paths: None,
                sizes: None,
                modified: None,
                versions: None,
                truncated: None,
                error: error_of(e),
            },
        }
    }
}

/// A grep result in columns; or `error`.
fn grep_out(r: CoreResult<engram_core::grep::GrepResult>) -> GrepOut {
    let (r, error) = split(r);
    let c = r.map(api::grep_columns).unwrap_or_default();
    GrepOut {
        truncated: error.is_none().then_some(c.truncated),
        group_paths: c.group_paths.map(IntoJs::js),
        group_sizes: c.group_sizes.map(IntoJs::js),
        lines: c.lines.map(IntoJs::js),
        texts: c.texts.map(IntoJs::js),
        files: c.files.map(IntoJs::js),
        count_paths: c.count_paths.map(IntoJs::js),
        counts: c.counts.map(IntoJs::js),
        error,
    }
}

result! {
    /// Where a path routes: `route` is the prefix index, or `undefined` for the default backend.
    pub struct RouteOut {
        pub route: Option<u32>,
        pub prefix: Option<Text>,
        pub path: Option<Text>,
        /// The whole path, normalised.
        pub outer: Option<Text>,
        pub error: Option<ErrorData>,
    }
}

impl RouteOut {
    fn of(r: CoreResult<engram_core::Route>) -> RouteOut {
        match r {
            Ok(r) => RouteOut {
                route: r.route.map(|i| i as u32),
                prefix: r.prefix.map(IntoJs::js),
                path: Some(r.path.js()),
                outer: Some(r.outer.js()),
                error: None,
            },
            Err(e) => RouteOut { route: None, prefix: None, path: None, outer: None, error: error_of(e) },
        }
    }
}

/// Longest-prefix router over normalised mount points.
#[wasm_bindgen]
pub struct Router {
    inner: CoreRouter,
}

/// The options of one `grep` or `grepText` call, built once (defaults as in
/// `engram_core::grep::GrepOptions::from_parts`; an invalid mode fails the call that uses them).
#[wasm_bindgen]
pub struct GrepArgs {
    options: CoreResult<GrepOptions>,
}

impl GrepArgs {
    fn options(&self) -> CoreResult<&GrepOptions> {
        self.options.as_ref().map_err(Clone::clone)
    }
}

/// A resident file table: files stay in WebAssembly memory between calls.
#[wasm_bindgen]
pub struct FileTable {
    inner: CoreTable,
    /// The error of the last call that returned `undefined`.
    error: std::cell::RefCell<Option<CoreError>>,
    /// The contents of the next `writeManyStaged`, encoded here by JavaScript (see `stage`).
    staged: Vec<u8>,
}

impl FileTable {
    fn wrap(inner: CoreTable) -> Self {
        FileTable { inner, error: std::cell::RefCell::new(None), staged: Vec::new() }
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

    fn written(&self, r: CoreResult<api::Written>, meta: &mut [f64]) -> Option<Text> {
        self.keep(r, |w| {
            fill(meta, &[w.version as f64]);
            w.path.js()
        })
    }
}

/// A table rebuilt from `snapshot()` bytes, or why they are not one. The bytes arrive as this
/// module's own copy, which the files then point into.
#[wasm_bindgen(js_name = restoreFileTable, unchecked_return_type = "FileTable | Failure")]
pub fn restore_file_table(bytes: Vec<u8>) -> JsValue {
    made(api::table_from_owned_snapshot(bytes), |inner| FileTable::wrap(inner).into())
}

impl Default for FileTable {
    fn default() -> Self {
        Self::new()
    }
}

#[wasm_bindgen]
impl FileTable {
    /// Removes every file at once, releasing their memory now rather than when the garbage
    /// collector finalizes this object (see `engram_core::FileTable::clear`).
    pub fn clear(&mut self) {
        self.inner.clear();
        self.staged = Vec::new();
    }

    #[wasm_bindgen(getter)]
    pub fn size(&self) -> u32 {
        self.inner.len() as u32
    }

    /// Changes since creation or restore (see `engram_core::FileTable::changes`).
    #[wasm_bindgen(getter)]
    pub fn changes(&self) -> f64 {
        self.inner.changes() as f64
    }

    /// The newest version handed out (see `engram_core::FileTable::last_version`).
    #[wasm_bindgen(getter, js_name = lastVersion)]
    pub fn last_version(&self) -> f64 {
        self.inner.last_version() as f64
    }

    /// Writes a file: its normalised path, `meta` = `[version]`; `undefined` on failure.
    pub fn write(
        &mut self,
        path: &str,
        data: Vec<u8>,
        modified_at: f64,
        if_version: Option<String>,
        meta: &mut [f64],
    ) -> Option<Text> {
        let r = api::write(&mut self.inner, path, data, modified_at, if_version.as_deref());
        self.written(r, meta)
    }

    #[wasm_bindgen(js_name = writeText)]
    pub fn write_text(
        &mut self,
        path: &str,
        text: String,
        modified_at: f64,
        if_version: Option<String>,
        meta: &mut [f64],
    ) -> Option<Text> {
        let r = api::write(&mut self.inner, path, text.into_bytes(), modified_at, if_version.as_deref());
        self.written(r, meta)
    }

    /// Seeding many files in one call, all or nothing (see `engram_abi::batch::write_many`), in
    /// two steps. First: room for `bytes` bytes of contents in WebAssembly memory (zeroed; what
    /// an earlier `stage` of this batch held is kept): returns where it starts. JavaScript
    /// encodes the texts of a batch straight into it and then calls `writeManyStaged`, so the
    /// contents cross once and no JavaScript buffer is made for them. Views of memory made
    /// before this call may be detached (memory can grow). Room that memory cannot give
    /// returns `undefined` (`takeError()`: `too_large`) and releases what was staged; `bytes` is
    /// a plain number so that no size wraps around 32 bits on its way in.
    pub fn stage(&mut self, bytes: f64) -> Option<u32> {
        let r = batch::stage_room(&mut self.staged, bytes);
        self.keep(r, |()| self.staged.as_ptr() as u32)
    }

    /// Then: writes the files (NUL-joined paths, one byte length per file) over the staged
    /// contents, back to back, which become the buffer the files share (`api::batch_bytes`).
    /// Every file gets `modified_at`, or its own time from `modified_each`.
    #[wasm_bindgen(js_name = writeManyStaged)]
    pub fn write_many_staged(
        &mut self,
        paths: &str,
        lengths: &[u32],
        modified_at: f64,
        modified_each: Option<Vec<f64>>,
    ) -> Seeded {
        let staged = std::mem::take(&mut self.staged);
        let used = lengths.iter().map(|&n| n as usize).sum::<usize>().min(staged.len());
        let data = api::batch_bytes(staged, used);
        let modified = modified_each.as_deref().map_or(batch::Modified::All(modified_at), batch::Modified::Each);
        let (n, error) = split(batch::write_many(&mut self.inner, paths, data, lengths, modified));
        Seeded { written: n.map(|n| n as u32), error }
    }

    /// The module's linear memory, for the views `stage` hands out pointers into.
    #[wasm_bindgen(js_name = memory)]
    pub fn memory(&self) -> JsValue {
        wasm_bindgen::memory()
    }
}

// ---- Composite (engram_core::composite): merged answers, glob asks, fan-outs ----

result! {
    /// A merged answer (see `engram_core::composite::Merged`; a pick of `0xFFFFFFFF` is a
    /// directory a route adds to a listing); or `error`.
    pub struct Merged {
        pub truncated: Option<bool>,
        pub paths: Option<Texts>,
        pub sizes: Option<U32s>,
        pub picks: Option<U32s>,
        pub renamed: Option<Texts>,
        pub error: Option<ErrorData>,
    }
}

pub(crate) fn merged(r: CoreResult<engram_core::composite::Merged>) -> Merged {
    let (m, error) = split(r);
    let m = m.unwrap_or_default();
    let ok = error.is_none();
    Merged {
        truncated: ok.then_some(m.truncated),
        paths: ok.then(|| m.paths.js()),
        sizes: ok.then(|| m.sizes.js()),
        picks: ok.then(|| m.picks.js()),
        renamed: ok.then(|| m.renamed.js()),
        error,
    }
}

result! {
    /// The mounts a composite glob fans out to, in columns: route index, pattern and inner
    /// directory of each (see `engram_core::composite::glob_asks`).
    pub struct GlobAsks {
        pub mounts: U32s,
        pub patterns: Texts,
        pub paths: Texts,
    }
}

impl GlobAsks {
    fn of(asks: Vec<engram_core::composite::GlobAsk>) -> GlobAsks {
        GlobAsks {
            mounts: asks.iter().map(|a| engram_abi::count(a.mount)).collect::<Vec<_>>().js(),
            patterns: asks.iter().map(|a| a.pattern.clone()).collect::<Vec<_>>().js(),
            paths: asks.into_iter().map(|a| a.path).collect::<Vec<_>>().js(),
        }
    }
}

// ---- Composite fan-out over resident tables (see `engram_abi::fan`) ----

result! {
    /// The sources a fan-out asks, in columns (see `engram_abi::fan::AskColumns`).
    pub struct FanAsks {
        pub mounts: I32s,
        pub paths: Texts,
        pub globbed: Bytes,
        #[wasm_bindgen(js_name = maxCounts)]
        pub max_counts: I32s,
    }
}

impl FanAsks {
    fn of(c: engram_abi::fan::AskColumns) -> FanAsks {
        FanAsks { mounts: c.mounts.js(), paths: c.paths.js(), globbed: c.globbed.js(), max_counts: c.max_counts.js() }
    }
}

result! {
    /// A fan-out glob's files in columns (see `engram_core::api::FileColumns`; outer paths) and the
    /// route each came from (-1: the default); or `error`.
    pub struct FanGlob {
        pub paths: Option<Texts>,
        pub sizes: Option<F64s>,
        pub modified: Option<F64s>,
        pub versions: Option<F64s>,
        pub mounts: Option<I32s>,
        pub truncated: Option<bool>,
        pub error: Option<ErrorData>,
    }
}

impl FanGlob {
    fn of(r: CoreResult<(api::FileColumns, Vec<i32>, bool)>) -> FanGlob {
        match r {
            Ok((c, mounts, truncated)) => FanGlob {
                paths: Some(c.paths.js()),
                sizes: Some(c.sizes.js()),
                modified: Some(c.modified.js()),
                versions: Some(c.versions.js()),
                mounts: Some(mounts.js()),
                truncated: Some(truncated),
                error: None,
            },
            Err(e) => FanGlob {
                paths: None,
                sizes: None,
                modified: None,
                versions: None,
                mounts: None,
                truncated: None,
                error: error_of(e),
            },
        }
    }
}

/// A composite glob over resident tables: `asks()`, then `add` each source's table, then
/// `finish` or `text` (once).
#[wasm_bindgen]
pub struct GlobFanOut {
    fan: engram_abi::fan::GlobFan,
}

/// A composite grep over resident tables (steps as [`GlobFanOut`]).
#[wasm_bindgen]
pub struct GrepFanOut {
    fan: engram_abi::fan::GrepFan,
}
