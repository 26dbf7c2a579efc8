//! The composite's results (`engram_core::composite`) as the `merged`, `glob_asks`, `fan_asks`
//! and `fan_glob` kinds of `engram_abi::calls!` give them to JavaScript, and the fan-out
//! classes. Marshalling only.

use crate::column::Column;
use engram_abi::fan;
use engram_core::api::FileColumns;
use engram_core::composite;
use napi_derive::napi;

/// A merged answer (see `engram_core::composite::Merged`; a pick of `0xFFFFFFFF` is a
/// directory a route adds to a listing).
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

impl GlobAsks {
    pub(crate) fn of(asks: Vec<composite::GlobAsk>) -> GlobAsks {
        GlobAsks {
            mounts: asks.iter().map(|a| engram_abi::count(a.mount)).collect(),
            patterns: asks.iter().map(|a| a.pattern.clone()).collect(),
            paths: asks.into_iter().map(|a| a.path).collect(),
        }
    }
}

/// The sources a fan-out asks, in columns (see `engram_abi::fan::AskColumns`).
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

impl FanAsks {
    pub(crate) fn of(c: fan::AskColumns) -> FanAsks {
        FanAsks {
            mounts: Column(c.mounts),
            paths: c.paths,
            globbed: Column(c.globbed),
            max_counts: Column(c.max_counts),
        }
    }
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

impl FanGlob {
    pub(crate) fn of((c, mounts, truncated): (FileColumns, Vec<i32>, bool)) -> FanGlob {
        FanGlob {
            paths: c.paths,
            sizes: Column(c.sizes),
            modified: Column(c.modified),
            versions: Column(c.versions),
            mounts: Column(mounts),
            truncated,
        }
    }
}

/// A composite glob over resident tables: `asks()`, then `add` each source's table, then
/// `finish` or `text` (once).
#[napi]
pub struct GlobFanOut {
    pub(crate) fan: fan::GlobFan,
}

/// A composite grep over resident tables (steps as [`GlobFanOut`]).
#[napi]
pub struct GrepFanOut {
    pub(crate) fan: fan::GrepFan,
}
