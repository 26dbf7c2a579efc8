//! The composite's rules (`engram_core::composite`), typed: a mount's error rendered for the
//! outer path, grep, glob and listing answers merged, the mounts a glob is pushed down to.
//! Marshalling only.

use crate::calls::TextOut;
use crate::column::Column;
use crate::{failure, ErrorData, Failure, FileTable, GrepArgs, GrepOut, Router};
use engram_core::composite;
use engram_core::CoreError;
use napi::bindgen_prelude::{Either, Float64ArraySlice};
use napi_derive::napi;

/// A merged answer (see `engram_core::composite::Merged`; a pick of `0xFFFFFFFF` is a
/// directory a route adds to a listing): the `merged` kind of `engram_abi::calls!`.
#[napi(object, object_from_js = false)]
pub struct Merged {
    pub truncated: bool,
    pub paths: Vec<String>,
    #[napi(ts_type = "Uint32Array")]
    pub sizes: Column<u32>,
    #[napi(ts_type = "Uint32Array")]
    pub picks: Column<u32>,
    pub renamed: Vec<String>,
}

impl Merged {
    pub(crate) fn of(m: composite::Merged) -> Merged {
        Merged {
            truncated: m.truncated,
            paths: m.paths,
            sizes: Column(m.sizes),
            picks: Column(m.picks),
            renamed: m.renamed,
        }
    }
}

/// The mounts a composite glob fans out to, in columns: route index, pattern and inner
/// directory of each (see `engram_core::composite::glob_asks`).
#[napi(object, object_from_js = false)]
pub struct GlobAsks {
    #[napi(ts_type = "Uint32Array")]
    pub mounts: Column<u32>,
    pub patterns: Vec<String>,
    pub paths: Vec<String>,
}

#[napi]
pub fn glob_asks(router: &Router, pattern: String, root: String) -> GlobAsks {
    let asks = composite::glob_asks(&router.inner, &pattern, &root);
    GlobAsks {
        mounts: asks.iter().map(|a| a.mount as u32).collect(),
        patterns: asks.iter().map(|a| a.pattern.clone()).collect(),
        paths: asks.into_iter().map(|a| a.path).collect(),
    }
}

// ---- fan-out over resident tables (see `engram_core::composite::{GlobFanOut, GrepFanOut}`) ----

/// The sources a fan-out asks, in columns: route index (`-1`: the default backend), the inner
/// directory each is asked about (a StoreBackend syncs its mirror there first) and, for grep,
/// whether it applies the call's `glob` itself (1) and the `maxCount` it is asked with (`-1`:
/// none).
#[napi(object, object_from_js = false)]
pub struct FanAsks {
    #[napi(ts_type = "Int32Array")]
    pub mounts: Column<i32>,
    pub paths: Vec<String>,
    #[napi(ts_type = "Uint8Array")]
    pub globbed: Column<u8>,
    #[napi(ts_type = "Int32Array")]
    pub max_counts: Column<i32>,
}

fn fan_asks(asks: &[composite::FanAsk]) -> FanAsks {
    FanAsks {
        mounts: asks.iter().map(|a| a.mount.map_or(-1, |m| m as i32)).collect(),
        paths: asks.iter().map(|a| a.path.clone()).collect(),
        globbed: asks.iter().map(|a| u8::from(a.pattern.is_some())).collect(),
        max_counts: asks.iter().map(|a| a.max_count.map_or(-1, |n| n as i32)).collect(),
    }
}

fn mount_of(mount: i32) -> Option<usize> {
    usize::try_from(mount).ok()
}

fn spent() -> CoreError {
    CoreError::new(engram_core::ErrorCode::Unsupported, "composite", "fan-out already finished")
}

/// A composite glob over resident tables: `asks()`, then `add` each source's table, then
/// `finish` or `text` (once).
#[napi]
pub struct GlobFanOut {
    inner: Option<composite::GlobFanOut>,
}

/// A fan-out glob's files in columns (see `engram_core::api::FileColumns`; outer paths) and the
/// route each came from (`-1`: the default).
#[napi(object, object_from_js = false)]
pub struct FanGlob {
    pub paths: Vec<String>,
    #[napi(ts_type = "Float64Array")]
    pub sizes: Column<f64>,
    #[napi(ts_type = "Float64Array")]
    pub modified: Column<f64>,
    #[napi(ts_type = "Float64Array")]
    pub versions: Column<f64>,
    #[napi(ts_type = "Int32Array")]
    pub mounts: Column<i32>,
    pub truncated: bool,
}

/// A composite glob over resident tables; `root` is the normalised outer directory.
#[napi]
pub fn glob_fan_out(router: &Router, pattern: String, root: String, max_results: Option<u32>) -> GlobFanOut {
    let max = max_results.map(|n| n as usize);
    GlobFanOut { inner: Some(composite::GlobFanOut::new(&router.inner, &pattern, &root, max)) }
}

#[napi]
impl GlobFanOut {
    #[napi]
    pub fn asks(&self) -> FanAsks {
        fan_asks(self.inner.as_ref().map_or(&[], |f| f.asks()))
    }

    /// Globs the source's table; the error (a mount's for the outer path) or `null`.
    #[napi]
    pub fn add(&mut self, router: &Router, mount: i32, table: &FileTable) -> Option<ErrorData> {
        let fan = self.inner.as_mut()?;
        fan.add(&router.inner, mount_of(mount), &table.inner).err().map(|e| failure(e).error)
    }

    #[napi]
    pub fn finish(&mut self, router: &Router) -> Either<FanGlob, Failure> {
        match self.inner.take().ok_or_else(spent).and_then(|f| f.finish(&router.inner)) {
            Ok((c, from, truncated)) => Either::A(FanGlob {
                paths: c.paths,
                sizes: Column(c.sizes),
                modified: Column(c.modified),
                versions: Column(c.versions),
                mounts: from.into_iter().map(|m| m.map_or(-1, |m| m as i32)).collect(),
                truncated,
            }),
            Err(e) => Either::B(failure(e)),
        }
    }

    /// The `glob` tool's text of the merged answer.
    #[napi]
    pub fn text(&mut self, router: &Router, max_chars: u32) -> Either<TextOut, Failure> {
        match self.inner.take().ok_or_else(spent).and_then(|f| f.text(&router.inner, max_chars as usize)) {
            Ok(text) => Either::A(TextOut { text }),
            Err(e) => Either::B(failure(e)),
        }
    }
}

/// A composite grep over resident tables (steps as [`GlobFanOut`]).
#[napi]
pub struct GrepFanOut {
    inner: Option<composite::GrepFanOut>,
    error: Option<CoreError>,
}

/// A composite grep over resident tables: `args` are the call's options (their path is
/// ignored); `root` is the normalised outer directory; `text_chars`: only the tool's text of at
/// most that many characters is wanted (see `GrepFanOut::for_text`). Invalid options fail every
/// later step with their error.
#[napi]
pub fn grep_fan_out(router: &Router, args: &GrepArgs, root: String, text_chars: Option<u32>) -> GrepFanOut {
    match args.options() {
        Ok(o) => {
            let fan = composite::GrepFanOut::new(&router.inner, o, &root).for_text(text_chars.map(|n| n as usize));
            GrepFanOut { inner: Some(fan), error: None }
        }
        Err(e) => GrepFanOut { inner: None, error: Some(e) },
    }
}

#[napi]
impl GrepFanOut {
    #[napi]
    pub fn asks(&self) -> FanAsks {
        fan_asks(self.inner.as_ref().map_or(&[], |f| f.asks()))
    }

    /// Searches the source's table; the error (a mount's for the outer path) or `null`.
    #[napi]
    pub fn add(&mut self, router: &Router, mount: i32, table: &FileTable) -> Option<ErrorData> {
        if let Some(e) = &self.error {
            return Some(failure(e.clone()).error);
        }
        let fan = self.inner.as_mut()?;
        fan.add(&router.inner, mount_of(mount), &table.inner).err().map(|e| failure(e).error)
    }

    fn take(&mut self) -> Result<composite::GrepFanOut, CoreError> {
        match self.error.take() {
            Some(e) => Err(e),
            None => self.inner.take().ok_or_else(spent),
        }
    }

    #[napi]
    pub fn finish(&mut self, router: &Router) -> Either<GrepOut, Failure> {
        match self.take().and_then(|f| f.finish(&router.inner)) {
            Ok(r) => Either::A(crate::grep_out(r)),
            Err(e) => Either::B(failure(e)),
        }
    }

    /// The `grep` tool's text of the merged answer, under the output cap.
    #[napi]
    pub fn text(&mut self, router: &Router, max_chars: u32) -> Either<TextOut, Failure> {
        match self.take().and_then(|f| f.text(&router.inner, max_chars as usize)) {
            Ok(text) => Either::A(TextOut { text }),
            Err(e) => Either::B(failure(e)),
        }
    }
}

/// Where a path routes without a result object: the outer (normalised) path, with `meta` =
/// `[route (-1: the default backend), UTF-16 offset of the inner path in it (-1: the inner path
/// is "/")]`; `null` when the path is refused (`Router.route` then gives the error).
#[napi]
pub fn route_into(router: &Router, path: String, meta: Float64ArraySlice) -> Option<String> {
    let (outer, route, start) = composite::route_parts(&router.inner, &path).ok()?;
    let n = |v: Option<usize>| v.map_or(-1.0, |v| v as f64);
    crate::fill(meta, &[n(route), n(start)]);
    Some(outer)
}
