//! Per-file hits merged in path order into one answer under the `maxCount` cap, in the
//! search's output mode (lines, files or counts).

use super::options::{GrepMatch, GrepOptions, GrepResult, OutputMode, MAX_COUNT};
use super::searcher::FileHits;

/// Merges per-file hits, in path order, into a [`GrepResult`] under the `maxCount` cap.
pub struct Collector {
    mode: OutputMode,
    cap: usize,
    taken: usize,
    result: GrepResult,
    matches: Vec<GrepMatch>,
    files: Vec<String>,
    /// In path order (files arrive in path order).
    counts: Vec<(String, usize)>,
}

impl Collector {
    pub fn new(opts: &GrepOptions) -> Collector {
        Collector {
            mode: opts.output_mode,
            cap: opts.max_count.unwrap_or(MAX_COUNT).min(MAX_COUNT),
            taken: 0,
            result: GrepResult::default(),
            matches: Vec::new(),
            files: Vec::new(),
            counts: Vec::new(),
        }
    }

    pub fn mode(&self) -> OutputMode {
        self.mode
    }

    /// The lines kept so far (`content` mode), in order.
    pub fn matches(&self) -> &[GrepMatch] {
        &self.matches
    }

    /// The files kept so far (`files_with_matches` mode), in path order.
    pub fn files(&self) -> &[String] {
        &self.files
    }

    /// The counts kept so far (`count` mode), in path order.
    pub fn counts(&self) -> &[(String, usize)] {
        &self.counts
    }

    /// How many more matching lines one file may usefully contribute (one more than fits, so
    /// that overflow is detected).
    pub fn limit(&self) -> usize {
        match self.mode {
            OutputMode::Content => (self.cap - self.taken).saturating_add(1),
            _ => usize::MAX,
        }
    }

    pub fn is_full(&self) -> bool {
        self.result.truncated
    }

    /// How many more lines (`content` mode) or files the cap leaves room for.
    pub(super) fn room(&self) -> usize {
        self.cap - self.taken
    }

    /// How many lines (`content` mode) or files are kept so far.
    pub(super) fn taken(&self) -> usize {
        self.taken
    }

    /// A stand-in while a search moves the collector.
    #[cfg(not(target_arch = "wasm32"))]
    pub(super) fn empty() -> Collector {
        Collector::new(&GrepOptions::default())
    }

    /// Adds one file's hits; files must arrive in path order.
    pub fn push(&mut self, hits: FileHits) {
        if self.result.truncated {
            return;
        }
        match self.mode {
            OutputMode::Content => {
                let room = self.cap - self.taken;
                if hits.count > room {
                    self.result.truncated = true;
                    let mut kept = 0;
                    for line in hits.lines {
                        if !line.context {
                            if kept == room {
                                break;
                            }
                            kept += 1;
                        }
                        self.matches.push(line);
                    }
                    self.taken = self.cap;
                } else {
                    self.taken += hits.count;
                    self.matches.extend(hits.lines);
                }
            }
            OutputMode::FilesWithMatches | OutputMode::Count => {
                if self.taken == self.cap {
                    self.result.truncated = true;
                    return;
                }
                self.taken += 1;
                if self.mode == OutputMode::Count {
                    self.counts.push((hits.path, hits.count));
                } else {
                    self.files.push(hits.path);
                }
            }
        }
    }

    pub fn finish(mut self) -> GrepResult {
        match self.mode {
            OutputMode::Content => self.result.matches = Some(self.matches),
            OutputMode::FilesWithMatches => self.result.files = Some(self.files),
            OutputMode::Count => self.result.counts = Some(self.counts.into_iter().collect()),
        }
        self.result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grep::fixtures::{lit, run};
    use std::collections::BTreeMap;

    #[test]
    fn modes_and_caps() {
        let files = [("/a", "x\nx\n"), ("/b", "y\n"), ("/c", "x\n")];
        let f = run(&files, GrepOptions { output_mode: OutputMode::FilesWithMatches, ..lit("x") }).unwrap();
        assert_eq!(f.files.unwrap(), vec!["/a", "/c"]);
        let c = run(&files, GrepOptions { output_mode: OutputMode::Count, ..lit("x") }).unwrap();
        assert_eq!(c.counts.unwrap(), BTreeMap::from([("/a".to_string(), 2), ("/c".to_string(), 1)]));
        let capped = run(&files, GrepOptions { max_count: Some(2), ..lit("x") }).unwrap();
        assert!(capped.truncated);
        assert_eq!(capped.matches.unwrap().len(), 2);
        let exact = run(&files, GrepOptions { max_count: Some(3), ..lit("x") }).unwrap();
        assert!(!exact.truncated);
        let files_cap =
            run(&files, GrepOptions { max_count: Some(1), output_mode: OutputMode::FilesWithMatches, ..lit("x") })
                .unwrap();
        assert_eq!((files_cap.files.unwrap(), files_cap.truncated), (vec!["/a".to_string()], true));
    }
}
