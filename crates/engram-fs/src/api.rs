//! The JSON face of [`RootedFs`] that the N-API binding exposes unchanged, in the same shapes as
//! `engram_core::api` (one JSON string per call, errors as `{ "error": { code, message } }`).

use crate::{FsOptions, RootedFs};
use engram_core::api::{error_json, grep_json, parse, to_json};
use engram_core::grep::GrepOptions;
use engram_core::ops::{EditOptions, GlobOptions};
use serde_json::json;

/// Opens a handle from `{ root, maxFileBytes, respectGitignore }`; the error is JSON text.
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

pub fn write(fs: &RootedFs, path: &str, data: &[u8], if_version: Option<&str>) -> String {
    to_json(fs.write(path, data, if_version).map(|info| json!({ "path": info.path, "version": info.version })))
}

pub fn edit(fs: &RootedFs, options: &str) -> String {
    to_json(parse::<EditOptions>(options).and_then(|o| fs.edit(&o)))
}

pub fn delete(fs: &RootedFs, path: &str) -> String {
    to_json(fs.delete(path).map(|n| json!({ "deleted": n })))
}

pub fn grep(fs: &RootedFs, options: &str) -> String {
    grep_json(parse::<GrepOptions>(options).and_then(|o| fs.grep(&o)))
}

pub fn glob(fs: &RootedFs, options: &str) -> String {
    to_json(parse::<GlobOptions>(options).and_then(|o| fs.glob(&o)))
}
