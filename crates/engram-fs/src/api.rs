//! The JSON face of [`RootedFs`] that the N-API binding exposes unchanged, in the same shapes as
//! `engram_core::api` (one JSON string per call, errors as `{ "error": { code, message } }`).

use crate::{FsOptions, RootedFs};
use engram_core::api::{error_json, grep_json, parse, to_json};
use engram_core::grep::GrepOptions;
use engram_core::ops::{EditOptions, GlobOptions};
use serde_json::json;
use std::sync::atomic::AtomicBool;

/// Opens a handle from `{ root, maxFileBytes, respectGitignore, maxResults, durability,
/// lockTimeoutMs }`; the error is JSON text.
pub fn open(options: &str) -> Result<RootedFs, String> {
    parse::<FsOptions>(options).and_then(RootedFs::open).map_err(|e| error_json(&e))
}

pub fn ls(fs: &RootedFs, path: &str) -> String {
    to_json(fs.ls(path).map(|entries| json!({ "entries": entries })))
}

pub fn stat(fs: &RootedFs, path: &str) -> String {
    to_json(fs.stat(path).map(|info| json!({ "info": info })))
}

pub fn read(fs: &RootedFs, path: &str, offset: usize, limit: Option<usize>) -> String {
    to_json(fs.read(path, offset, limit))
}

/// The bytes, or the JSON error text.
pub fn read_bytes(fs: &RootedFs, path: &str) -> Result<Vec<u8>, String> {
    fs.read_bytes(path).map_err(|e| error_json(&e))
}

/// The bytes and their version, or the JSON error text.
pub fn read_versioned(fs: &RootedFs, path: &str) -> Result<(Vec<u8>, String), String> {
    fs.read_versioned(path).map_err(|e| error_json(&e))
}

pub fn write(fs: &RootedFs, path: &str, data: &[u8], if_version: Option<&str>) -> String {
    to_json(fs.write(path, data, if_version).map(|info| json!({ "path": info.path, "version": info.version })))
}

pub fn edit(fs: &RootedFs, options: &str) -> String {
    to_json(parse::<EditOptions>(options).and_then(|o| fs.edit(&o)))
}

pub fn delete(fs: &RootedFs, path: &str, if_version: Option<&str>) -> String {
    to_json(fs.delete_if(path, if_version).map(|n| json!({ "deleted": n })))
}

pub fn rename(fs: &RootedFs, from: &str, to: &str, if_version: Option<&str>) -> String {
    to_json(fs.rename(from, to, if_version).map(|info| json!({ "path": info.path })))
}

/// The grep answer in `engram_core::api::grep_json`'s shape, plus `skipped` when any.
pub fn grep(fs: &RootedFs, options: &str, cancel: Option<&AtomicBool>) -> String {
    let report = match parse::<GrepOptions>(options).and_then(|o| fs.grep_report(&o, cancel)) {
        Ok(r) => r,
        Err(e) => return error_json(&e),
    };
    let text = grep_json(Ok(report.result));
    if report.skipped.is_empty() {
        return text;
    }
    // grep_json always yields one JSON object: add the field before its closing brace.
    let skipped = serde_json::to_string(&report.skipped).unwrap_or_else(|_| "[]".into());
    match text.strip_suffix('}') {
        Some(head) => format!("{head},\"skipped\":{skipped}}}"),
        None => text,
    }
}

pub fn glob(fs: &RootedFs, options: &str, cancel: Option<&AtomicBool>) -> String {
    to_json(parse::<GlobOptions>(options).and_then(|o| fs.glob_cancellable(&o, cancel)))
}
