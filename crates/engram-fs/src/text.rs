//! The filesystem tools' text for the model (`ls`, `read_file`, `glob`, `grep`), made where the
//! work runs with the rules and the output cap of [`engram_core::format`]: a grep with 90k
//! matching lines becomes its capped text here, never one JavaScript object per match. The
//! text equals what those rules make of the structured answers of the same calls.

use crate::walk::Skip;
use crate::RootedFs;
use engram_core::format::{format_glob, format_ls, format_read, skipped_note, with_note, GrepText};
use engram_core::grep::{GrepOptions, GrepResult};
use engram_core::ops::GlobOptions;
use engram_core::CoreResult;
use std::sync::atomic::AtomicBool;

impl RootedFs {
    /// The `grep` tool's text (see [`RootedFs::grep_report`]), capped at `max_chars` UTF-16
    /// units; what the search skipped is named in a closing note (see
    /// [`engram_core::format::skipped_note`]).
    pub fn grep_text(&self, opts: &GrepOptions, max_chars: usize, cancel: Option<&AtomicBool>) -> CoreResult<String> {
        let report = self.grep_report(opts, cancel)?;
        let note = skipped_note(&pairs(&report.skipped));
        let r = report.result;
        Ok(with_note(|cap| grep_answer_text(&r, &opts.pattern, cap), note.as_deref(), max_chars))
    }

    /// The `glob` tool's text (see [`RootedFs::glob_report`]), with the same closing note as
    /// [`RootedFs::grep_text`] for what the walk skipped.
    pub fn glob_text(&self, opts: &GlobOptions, max_chars: usize, cancel: Option<&AtomicBool>) -> CoreResult<String> {
        let report = self.glob_report(opts, cancel)?;
        let skipped = pairs(&report.skipped);
        let r = report.result;
        Ok(format_glob(&opts.pattern, r.files.iter().map(|f| f.path.as_str()), r.truncated, &skipped, max_chars))
    }

    /// The `ls` tool's text; `shown` is the path as the model gave it. Entries no virtual path
    /// can name are named in a closing note (see [`engram_core::format::unlisted_note`]).
    pub fn ls_text(&self, vpath: &str, shown: &str, max_chars: usize) -> CoreResult<String> {
        let report = self.ls_report(vpath)?;
        let rows =
            report.entries.iter().map(|f| (f.path.as_str(), if f.is_dir { None } else { Some(f.size.unwrap_or(0)) }));
        Ok(format_ls(shown, rows, &pairs(&report.skipped), max_chars))
    }

    /// The `read_file` tool's text; `shown` is the path as the model gave it.
    pub fn read_text(
        &self,
        vpath: &str,
        shown: &str,
        offset: usize,
        limit: usize,
        max_chars: usize,
    ) -> CoreResult<String> {
        let r = self.read(vpath, offset, Some(limit))?;
        Ok(format_read(shown, &r, limit, max_chars))
    }
}

/// A grep answer as the tool's text under `max_chars` (the rules of [`GrepText`]).
fn grep_answer_text(r: &GrepResult, pattern: &str, max_chars: usize) -> String {
    let mut text = GrepText::new(max_chars);
    if let Some(matches) = &r.matches {
        for m in matches {
            if text.full() {
                break;
            }
            text.push_match(&m.path, m.line, m.context, &m.text);
        }
    } else if let Some(counts) = &r.counts {
        for (path, n) in counts {
            if text.full() {
                break;
            }
            text.push_count(path, *n);
        }
    } else {
        for path in r.files.iter().flatten() {
            if text.full() {
                break;
            }
            text.push_file(path);
        }
    }
    text.finish(pattern, r.truncated)
}

/// Skipped entries as `(path, reason)`, as the core's notes take them.
fn pairs(skipped: &[Skip]) -> Vec<(&str, &str)> {
    skipped.iter().map(|k| (k.path.as_str(), k.reason)).collect()
}
