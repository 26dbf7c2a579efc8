//! A composite fan-out over resident tables as both bindings hold it (see
//! `engram_core::composite::{GlobFanOut, GrepFanOut}`): `asks`, then `add` each asked source's
//! table, then `finish` or `text` once. A step after that is the `unsupported` error "fan-out
//! already finished" (an `add`: nothing, as it had nothing to add to).

use engram_core::api::FileColumns;
use engram_core::composite::{self, FanAsk};
use engram_core::grep::{GrepOptions, GrepResult};
use engram_core::{CoreError, CoreResult, ErrorCode, FileTable, Router};

fn spent() -> CoreError {
    CoreError::new(ErrorCode::Unsupported, "composite", "fan-out already finished")
}

/// A source's route index as JavaScript gives it (`-1`: the default backend).
fn mount_of(mount: i32) -> Option<usize> {
    usize::try_from(mount).ok()
}

/// A route index as JavaScript gets it (`-1`: the default backend).
fn mount_index(mount: Option<usize>) -> i32 {
    mount.map_or(-1, |m| i32::try_from(m).unwrap_or(i32::MAX))
}

/// The sources a fan-out asks, in columns: route index (`-1`: the default backend), the inner
/// directory each is asked about and, for grep, whether it applies the call's `glob` itself
/// (1) and the `maxCount` it is asked with (`-1`: none).
pub struct AskColumns {
    pub mounts: Vec<i32>,
    pub paths: Vec<String>,
    pub globbed: Vec<u8>,
    pub max_counts: Vec<i32>,
}

fn ask_columns(asks: &[FanAsk]) -> AskColumns {
    AskColumns {
        mounts: asks.iter().map(|a| mount_index(a.mount)).collect(),
        paths: asks.iter().map(|a| a.path.clone()).collect(),
        globbed: asks.iter().map(|a| u8::from(a.pattern.is_some())).collect(),
        max_counts: asks.iter().map(|a| a.max_count.map_or(-1, |n| i32::try_from(n).unwrap_or(i32::MAX))).collect(),
    }
}

/// A composite glob over resident tables.
pub struct GlobFan(Option<composite::GlobFanOut>);

impl GlobFan {
    /// `root` is the normalised outer directory.
    pub fn new(router: &Router, pattern: &str, root: &str, max_results: Option<u32>) -> GlobFan {
        let max = max_results.map(|n| n as usize);
        GlobFan(Some(composite::GlobFanOut::new(router, pattern, root, max)))
    }

    pub fn asks(&self) -> AskColumns {
        ask_columns(self.0.as_ref().map_or(&[], |f| f.asks()))
    }

    /// Globs the source's table; the error (a mount's, for the outer path), if any.
    pub fn add(&mut self, router: &Router, mount: i32, table: &FileTable) -> Option<CoreError> {
        self.0.as_mut()?.add(router, mount_of(mount), table).err()
    }

    /// The files in columns (outer paths), the route each came from (`-1`: the default) and
    /// whether the answer is truncated.
    pub fn finish(&mut self, router: &Router) -> CoreResult<(FileColumns, Vec<i32>, bool)> {
        let (files, from, truncated) = self.0.take().ok_or_else(spent)?.finish(router)?;
        Ok((files, from.into_iter().map(mount_index).collect(), truncated))
    }

    /// The `glob` tool's text of the merged answer.
    pub fn text(&mut self, router: &Router, max_chars: u32) -> CoreResult<String> {
        self.0.take().ok_or_else(spent)?.text(router, max_chars as usize)
    }
}

/// A composite grep over resident tables; options that are not valid fail every step with
/// their error.
pub struct GrepFan(CoreResult<Option<composite::GrepFanOut>>);

impl GrepFan {
    /// `options`: the call's (their path is ignored); `root`: the normalised outer directory;
    /// `text_chars`: only the tool's text of at most that many characters is wanted (see
    /// `engram_core::composite::GrepFanOut::for_text`).
    pub fn new(router: &Router, options: CoreResult<&GrepOptions>, root: &str, text_chars: Option<u32>) -> GrepFan {
        let text_chars = text_chars.map(|n| n as usize);
        GrepFan(options.map(|o| Some(composite::GrepFanOut::new(router, o, root).for_text(text_chars))))
    }

    fn take(&mut self) -> CoreResult<composite::GrepFanOut> {
        match &mut self.0 {
            Ok(f) => f.take().ok_or_else(spent),
            Err(e) => Err(e.clone()),
        }
    }

    pub fn asks(&self) -> AskColumns {
        ask_columns(self.0.as_ref().ok().and_then(Option::as_ref).map_or(&[], |f| f.asks()))
    }

    /// Searches the source's table; the error (a mount's, for the outer path, or the options'),
    /// if any.
    pub fn add(&mut self, router: &Router, mount: i32, table: &FileTable) -> Option<CoreError> {
        match &mut self.0 {
            Ok(f) => f.as_mut()?.add(router, mount_of(mount), table).err(),
            Err(e) => Some(e.clone()),
        }
    }

    pub fn finish(&mut self, router: &Router) -> CoreResult<GrepResult> {
        self.take()?.finish(router)
    }

    /// The `grep` tool's text of the merged answer, under the output cap.
    pub fn text(&mut self, router: &Router, max_chars: u32) -> CoreResult<String> {
        self.take()?.text(router, max_chars as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_finished_fan_out_refuses_its_next_step() {
        let router = Router::new(&["/m".to_string()]).unwrap();
        let table = FileTable::new();
        let mut glob = GlobFan::new(&router, "**/*.md", "/", None);
        assert_eq!(glob.asks().mounts, vec![-1, 0]);
        assert!(glob.add(&router, -1, &table).is_none());
        assert!(glob.add(&router, 0, &table).is_none());
        assert!(glob.finish(&router).is_ok());
        assert_eq!(glob.text(&router, 100).unwrap_err().code, ErrorCode::Unsupported);
        assert!(glob.add(&router, -1, &table).is_none());
        assert!(glob.asks().mounts.is_empty());
    }

    #[test]
    fn invalid_grep_options_fail_every_step() {
        let router = Router::new(&Vec::<String>::new()).unwrap();
        let bad = CoreError::new(ErrorCode::InvalidPattern, "(", "unclosed group");
        let mut grep = GrepFan::new(&router, Err(bad.clone()), "/", None);
        assert!(grep.asks().mounts.is_empty());
        assert_eq!(grep.add(&router, -1, &FileTable::new()), Some(bad.clone()));
        assert_eq!(grep.finish(&router).unwrap_err(), bad);
        assert_eq!(grep.text(&router, 10).unwrap_err(), bad);
    }
}
