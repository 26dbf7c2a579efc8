//! The filesystem tools' text for the model (`ls`, `read_file`, `glob`, `grep`), made where the
//! work runs with the rules and the output cap of [`engram_core::format`]: a grep with 90k
//! matching lines becomes its capped text here, never one JavaScript object per match. The
//! text equals what those rules make of the structured answers of the same calls.

use crate::RootedFs;
use engram_core::format::{format_glob, format_ls, format_read, GrepText};
use engram_core::grep::GrepOptions;
use engram_core::ops::GlobOptions;
use engram_core::CoreResult;
use std::sync::atomic::AtomicBool;

impl RootedFs {
    /// The `grep` tool's text (see [`RootedFs::grep_report`]; skipped files are not shown),
    /// capped at `max_chars` UTF-16 units.
    pub fn grep_text(&self, opts: &GrepOptions, max_chars: usize, cancel: Option<&AtomicBool>) -> CoreResult<String> {
        let r = self.grep_report(opts, cancel)?.result;
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
        Ok(text.finish(&opts.pattern, r.truncated))
    }

    /// The `glob` tool's text (see [`RootedFs::glob_cancellable`]).
    pub fn glob_text(&self, opts: &GlobOptions, max_chars: usize, cancel: Option<&AtomicBool>) -> CoreResult<String> {
        let r = self.glob_cancellable(opts, cancel)?;
        Ok(format_glob(&opts.pattern, r.files.iter().map(|f| f.path.as_str()), r.truncated, max_chars))
    }

    /// The `ls` tool's text; `shown` is the path as the model gave it.
    pub fn ls_text(&self, vpath: &str, shown: &str, max_chars: usize) -> CoreResult<String> {
        let entries = self.ls(vpath)?;
        let rows = entries.iter().map(|f| (f.path.as_str(), if f.is_dir { None } else { Some(f.size.unwrap_or(0)) }));
        Ok(format_ls(shown, rows, max_chars))
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
