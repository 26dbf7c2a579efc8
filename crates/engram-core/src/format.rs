//! The text the model reads from the filesystem tools (`ls`, `read_file`, `glob`, `grep`):
//! listings, `cat -n` reads, grouped grep output, the notes for empty and truncated results, and
//! the one cap on output size. Lengths are counted in UTF-16 code units, as JavaScript strings
//! are, so the cap cuts where the TypeScript layer always did.
//!
//! Two entry points per tool: the `*_text` methods of [`FileTable`] search or read and format in
//! one pass, stopping as soon as the capped text is decided (a grep with 90k matching lines
//! formats no more of them than fit the cap); the free functions format results that another
//! backend returned (the same rules, one implementation).

use crate::error::CoreResult;
use crate::grep::{self, Collector, GrepOptions, OutputMode};
use crate::ops::GlobOptions;
use crate::read::{self, ReadResult};
use crate::table::{FileInfo, FileTable};
use crate::text::utf16_len;

/// `n` with `,` between groups of three digits (`80,000`), as `toLocaleString("en-US")`.
fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Cuts `text` to `max` UTF-16 units on a line boundary where possible (the last `\n` at or
/// before `max`, when it lies past `max / 2`), never inside a surrogate pair, and adds a note.
/// Text within the cap is returned as is.
pub fn cap_output(text: String, max: usize) -> String {
    // A UTF-16 unit per byte at most: text within the cap in bytes is within it.
    if text.len() <= max {
        return text;
    }
    // ASCII (the usual tool text): units are bytes, and the scan below is one `memrchr`.
    if text.is_ascii() {
        let end = match memchr::memrchr(b'\n', &text.as_bytes()[..=max]) {
            Some(newline) if 2 * newline > max => newline,
            _ => max,
        };
        return truncated(&text[..end], max);
    }
    cap_scan(text, max)
}

/// [`cap_output`] for any text: one pass over its characters.
fn cap_scan(text: String, max: usize) -> String {
    // One pass up to unit `max`: the last newline at or before it, and the byte at which each
    // candidate cut falls.
    let mut units = 0usize;
    let mut newline: Option<(usize, usize)> = None; // (unit index, byte index)
    let mut cut_at_max: Option<usize> = None; // bytes of the chars ending at or before `max`
    let mut over = false;
    for (b, c) in text.char_indices() {
        if units > max {
            over = true;
            break;
        }
        if c == '\n' {
            newline = Some((units, b));
        }
        let next = units + c.len_utf16();
        if next > max && cut_at_max.is_none() {
            cut_at_max = Some(b);
        }
        units = next;
    }
    if !over && units <= max {
        return text;
    }
    let end = match newline {
        Some((u, b)) if 2 * u > max => b,
        _ => cut_at_max.unwrap_or(text.len()),
    };
    truncated(&text[..end], max)
}

/// The kept part of a text cut at `max` units, and the note saying so.
fn truncated(kept: &str, max: usize) -> String {
    format!("{kept}\n\n[Output truncated at {} characters: narrow the path, pattern or line range.]", grouped(max))
}

/// Most skipped entries a grep's note names; the others are counted.
const SKIPPED_NAMED: usize = 5;
/// Most entries a search keeps in its skipped list (the smallest paths): a list this long may
/// have lost some, so its note counts the rest as "at least".
pub const SKIPPED_KEPT: usize = 100;

/// The note a grep's or a glob's text ends with when the search could not look into some files
/// (too large, unreadable, a name no virtual path can hold): `(path, reason)` pairs, smallest
/// paths first. Without it an empty or short answer would read as the whole story. `None` when
/// nothing was skipped.
pub fn skipped_note(skipped: &[(&str, &str)]) -> Option<String> {
    note_naming("not searched", skipped)
}

/// The note an `ls` text ends with when the directory holds entries no virtual path can name.
pub fn unlisted_note(skipped: &[(&str, &str)]) -> Option<String> {
    note_naming("not listed", skipped)
}

fn note_naming(what: &str, skipped: &[(&str, &str)]) -> Option<String> {
    if skipped.is_empty() {
        return None;
    }
    let named: Vec<String> = skipped
        .iter()
        .take(SKIPPED_NAMED)
        .map(|(path, reason)| format!("{path} ({})", reason.replace('_', " ")))
        .collect();
    let mut note = format!("Note: {what}: {}", named.join(", "));
    if skipped.len() > SKIPPED_NAMED {
        let at_least = if skipped.len() >= SKIPPED_KEPT { "at least " } else { "" };
        note.push_str(&format!(" and {at_least}{} more", skipped.len() - SKIPPED_NAMED));
    }
    Some(note)
}

/// Skipped entries given as two columns (as the bindings receive them), paired for
/// [`skipped_note`]; a reason missing from a shorter column pairs nothing.
pub fn skipped_pairs<'a>(paths: &'a [String], reasons: &'a [String]) -> Vec<(&'a str, &'a str)> {
    paths.iter().map(String::as_str).zip(reasons.iter().map(String::as_str)).collect()
}

/// A tool's text followed by a note, within `max` UTF-16 units in all: `text(cap)` makes the
/// text under the cap the note leaves. A note too long to leave room is itself cut by the cap.
pub fn with_note(text: impl FnOnce(usize) -> String, note: Option<&str>, max: usize) -> String {
    let Some(note) = note else { return text(max) };
    let reserved = utf16_len(note) + 2;
    if reserved >= max {
        return cap_output(format!("{}\n\n{note}", text(max)), max);
    }
    format!("{}\n\n{note}", text(max - reserved))
}

/// Builds the model's text line by line, counting UTF-16 units, so a producer can stop once the
/// cap has decided the outcome.
struct Lines {
    out: String,
    units: usize,
    max: usize,
    empty: bool,
}

impl Lines {
    fn new(max: usize) -> Lines {
        Lines { out: String::new(), units: 0, max, empty: true }
    }

    fn push(&mut self, parts: &[&str]) {
        if !self.empty {
            self.out.push('\n');
            self.units += 1;
        }
        self.empty = false;
        for p in parts {
            self.out.push_str(p);
            self.units += utf16_len(p);
        }
    }

    /// Past the cap: nothing added later can change the capped text.
    fn full(&self) -> bool {
        self.units > self.max
    }

    fn finish(self) -> String {
        if self.units <= self.max {
            return self.out;
        }
        cap_output(self.out, self.max)
    }
}

/// Grep output: content lines grouped under a `path:` header (`  12: text`, context lines
/// `  11- text`), or one file per line, or `path: count`; a note when the search stopped at the
/// maximum count; `No matches found for pattern '…'` when empty.
pub struct GrepText {
    lines: Lines,
    current: Option<String>,
    done: usize,
}

const GREP_MORE: &str =
    "Note: the search stopped at the maximum count; there are more matches. Narrow the search or raise max_count.";

impl GrepText {
    pub fn new(max_chars: usize) -> GrepText {
        GrepText { lines: Lines::new(max_chars), current: None, done: 0 }
    }

    /// One content line (`context`: a line around a match).
    pub fn push_match(&mut self, path: &str, line: usize, context: bool, text: &str) {
        if self.current.as_deref() != Some(path) {
            self.lines.push(&[path, ":"]);
            self.current = Some(path.to_string());
        }
        let mut number = itoa::Buffer::new();
        self.lines.push(&["  ", number.format(line), if context { "- " } else { ": " }, text]);
    }

    pub fn push_file(&mut self, path: &str) {
        self.lines.push(&[path]);
    }

    pub fn push_count(&mut self, path: &str, count: usize) {
        self.lines.push(&[path, ": ", itoa::Buffer::new().format(count)]);
    }

    /// Whether the capped text is already decided.
    pub fn full(&self) -> bool {
        self.lines.full()
    }

    /// Formats what the collector kept since the last call; whether the search should go on
    /// (the text is not decided yet): the `progress` of a search that feeds this text.
    pub(crate) fn wants_more(&mut self, c: &Collector) -> bool {
        self.update(c);
        !self.full()
    }

    /// Formats what the collector kept since the last call.
    fn update(&mut self, c: &Collector) {
        match c.mode() {
            OutputMode::Content => {
                for m in &c.matches()[self.done..] {
                    if self.full() {
                        break;
                    }
                    self.push_match(&m.path, m.line, m.context, &m.text);
                    self.done += 1;
                }
            }
            OutputMode::FilesWithMatches => {
                for f in &c.files()[self.done..] {
                    if self.full() {
                        break;
                    }
                    self.push_file(f);
                    self.done += 1;
                }
            }
            OutputMode::Count => {
                for (f, n) in &c.counts()[self.done..] {
                    if self.full() {
                        break;
                    }
                    self.push_count(f, *n);
                    self.done += 1;
                }
            }
        }
    }

    /// The capped text. `truncated`: the search stopped at its maximum count.
    pub fn finish(mut self, pattern: &str, truncated: bool) -> String {
        if self.lines.empty {
            return cap_output(format!("No matches found for pattern '{pattern}'"), self.lines.max);
        }
        if truncated && !self.full() {
            self.lines.push(&[""]);
            self.lines.push(&[GREP_MORE]);
        }
        self.lines.finish()
    }
}

/// `ls` output: one entry per line, `path (directory)` or `path (N bytes)`.
pub fn format_ls<'a>(
    shown: &str,
    entries: impl IntoIterator<Item = (&'a str, Option<u64>)>,
    skipped: &[(&str, &str)],
    max_chars: usize,
) -> String {
    let body = |cap: usize| {
        let mut lines = Lines::new(cap);
        for (p, size) in entries {
            if lines.full() {
                break;
            }
            match size {
                None => lines.push(&[p, " (directory)"]),
                Some(n) => lines.push(&[p, " (", itoa::Buffer::new().format(n), " bytes)"]),
            }
        }
        if lines.empty {
            return cap_output(format!("No files found in {shown}"), cap);
        }
        lines.finish()
    };
    with_note(body, unlisted_note(skipped).as_deref(), max_chars)
}

/// `glob` output: one path per line, a note when more files match; `skipped`: what the walk
/// could not look into, `(path, reason)`, named in a closing note (see [`skipped_note`]).
pub fn format_glob<'a>(
    pattern: &str,
    paths: impl IntoIterator<Item = &'a str>,
    truncated: bool,
    skipped: &[(&str, &str)],
    max_chars: usize,
) -> String {
    let body = |cap: usize| {
        let mut lines = Lines::new(cap);
        for p in paths {
            if lines.full() {
                break;
            }
            lines.push(&[p]);
        }
        if lines.empty {
            return cap_output(format!("No files found matching pattern '{pattern}'"), cap);
        }
        if truncated && !lines.full() {
            lines.push(&[""]);
            lines.push(&["Note: more files match; narrow the pattern or the path."]);
        }
        lines.finish()
    };
    with_note(body, skipped_note(skipped).as_deref(), max_chars)
}

/// `read_file` output: `cat -n` rows, a note on how to continue when `limit` lines were read
/// and more follow, or a note for an empty file or an offset past the end. `shown` is the path
/// as the model gave it. Notes are capped like any other text.
pub fn format_read(shown: &str, r: &ReadResult, limit: usize, max_chars: usize) -> String {
    if r.total_lines == 0 {
        return cap_output(format!("System reminder: '{shown}' exists but is empty."), max_chars);
    }
    if r.lines == 0 {
        let note = format!(
            "Note: offset {} is past the end of '{shown}' ({} lines). Use an offset below {}.",
            r.offset, r.total_lines, r.total_lines
        );
        return cap_output(note, max_chars);
    }
    let mut out = read::format_numbered_until(&r.content, r.offset + 1, max_chars);
    let next = r.offset + r.lines;
    if next < r.total_lines && r.lines >= limit {
        use std::fmt::Write;
        let _ = write!(out, "\n\n[Lines {}-{next} of {}. Continue with offset={next}.]", r.offset + 1, r.total_lines);
    }
    cap_output(out, max_chars)
}

/// Grep output from columns (the typed bindings' form of another backend's result): `mode` is
/// `content` (`paths`, `numbers` = line numbers, negative for context lines, and `texts`, one
/// per line), `files_with_matches` (`paths`) or `count` (`paths` and `numbers` = counts);
/// `skipped`: what the search could not look into, `(path, reason)`, named in a closing note
/// (see [`skipped_note`]).
#[allow(clippy::too_many_arguments)]
pub fn format_grep_columns(
    pattern: &str,
    mode: OutputMode,
    paths: &[String],
    numbers: &[i32],
    texts: &[String],
    truncated: bool,
    skipped: &[(&str, &str)],
    max_chars: usize,
) -> String {
    let body = |cap: usize| {
        let mut text = GrepText::new(cap);
        for (i, p) in paths.iter().enumerate() {
            if text.full() {
                break;
            }
            let n = numbers.get(i).copied().unwrap_or(0);
            match mode {
                OutputMode::Content => {
                    text.push_match(p, n.unsigned_abs() as usize, n < 0, texts.get(i).map_or("", String::as_str))
                }
                OutputMode::FilesWithMatches => text.push_file(p),
                OutputMode::Count => text.push_count(p, n.max(0) as usize),
            }
        }
        text.finish(pattern, truncated)
    };
    with_note(body, skipped_note(skipped).as_deref(), max_chars)
}

/// `ls` output from columns: `sizes[i]` is the size of file `paths[i]`, negative for a
/// directory.
pub fn format_ls_columns(
    shown: &str,
    paths: &[String],
    sizes: &[f64],
    skipped: &[(&str, &str)],
    max_chars: usize,
) -> String {
    let entries = paths.iter().enumerate().map(|(i, p)| {
        let size = sizes.get(i).copied().unwrap_or(0.0);
        (p.as_str(), (size >= 0.0).then_some(size as u64))
    });
    format_ls(shown, entries, skipped, max_chars)
}

impl FileTable {
    /// The `grep` tool's text, searched and formatted in one pass under the output cap.
    pub fn grep_text(&self, opts: &GrepOptions, max_chars: usize) -> CoreResult<String> {
        let root = self.search_root(opts)?;
        let files = self.files_under(&root).map(|(k, f)| (k, &f.data[..]));
        let mut text = GrepText::new(max_chars);
        let collector = grep::grep_with(files, &root, opts, |c| text.wants_more(c))?;
        text.update(&collector);
        Ok(text.finish(&opts.pattern, collector.is_full()))
    }

    /// The `glob` tool's text (see [`FileTable::glob`]).
    pub fn glob_text(&self, opts: &GlobOptions, max_chars: usize) -> CoreResult<String> {
        let mut paths = Vec::new();
        let truncated = self.glob_each(opts, |p, _| paths.push(p))?;
        Ok(format_glob(&opts.pattern, paths, truncated, &[], max_chars))
    }

    /// The `ls` tool's text; `shown` is the path as the model gave it.
    pub fn ls_text(&self, input: &str, shown: &str, max_chars: usize) -> CoreResult<String> {
        let entries = self.ls(input)?;
        Ok(format_ls(shown, entries.iter().map(entry), &[], max_chars))
    }

    /// The `read_file` tool's text; `shown` is the path as the model gave it.
    pub fn read_text(
        &self,
        input: &str,
        shown: &str,
        offset: usize,
        limit: usize,
        max_chars: usize,
    ) -> CoreResult<String> {
        let r = self.read(input, offset, Some(limit))?;
        Ok(format_read(shown, &r, limit, max_chars))
    }
}

fn entry(f: &FileInfo) -> (&str, Option<u64>) {
    (f.path.as_str(), if f.is_dir { None } else { Some(f.size.unwrap_or(0)) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(files: &[(&str, &str)]) -> FileTable {
        let mut t = FileTable::new();
        for (p, c) in files {
            t.write(p, c.as_bytes().to_vec(), 1.0, None).unwrap();
        }
        t
    }

    #[test]
    fn skipped_note_names_five_and_counts_the_rest() {
        assert_eq!(skipped_note(&[]), None);
        assert_eq!(skipped_note(&[("/big.txt", "too_large")]).unwrap(), "Note: not searched: /big.txt (too large)");
        let paths: Vec<String> = (0..7).map(|i| format!("/f{i}")).collect();
        let many: Vec<(&str, &str)> = paths.iter().map(|p| (p.as_str(), "unreadable")).collect();
        let note = skipped_note(&many).unwrap();
        assert!(note.contains("/f4 (unreadable)") && !note.contains("/f5"), "{note}");
        assert!(note.ends_with(" and 2 more"), "{note}");
        // A list as long as a search keeps may have lost entries: the rest is a lower bound.
        let kept: Vec<String> = (0..SKIPPED_KEPT).map(|i| format!("/f{i:03}")).collect();
        let full: Vec<(&str, &str)> = kept.iter().map(|p| (p.as_str(), "too_large")).collect();
        assert!(skipped_note(&full).unwrap().ends_with(" and at least 95 more"));
        assert!(skipped_note(&full[..99]).unwrap().ends_with(" and 94 more"));
    }

    #[test]
    fn a_note_takes_its_room_from_the_cap() {
        let body = |cap: usize| cap_output("é line\n".repeat(50), cap);
        assert_eq!(with_note(body, None, 100), body(100));
        let note = "Note: not searched: /😀 (invalid name)";
        let reserved = utf16_len(note) + 2;
        for max in [0, 1, 10, reserved - 1, reserved, reserved + 1, 60, 100, 399, 400, 1000] {
            let text = with_note(body, Some(note), max);
            if max > reserved {
                // The text capped at what the note leaves, then the note: within `max` when
                // the text fits (no truncation notice added).
                assert_eq!(text, format!("{}\n\n{note}", body(max - reserved)), "{max}");
                if max - reserved >= 400 {
                    assert!(utf16_len(&text) <= max, "{max}");
                }
            } else {
                assert_eq!(text, cap_output(format!("{}\n\n{note}", body(max)), max), "{max}");
            }
        }
    }

    fn grep_opts(pattern: &str, mode: OutputMode) -> GrepOptions {
        GrepOptions { pattern: pattern.into(), output_mode: mode, ..Default::default() }
    }

    proptest::proptest! {
        #[test]
        fn cap_shortcuts_equal_the_full_pass(
            text in proptest::collection::vec(proptest::prop_oneof![proptest::strategy::Just('a'), proptest::strategy::Just('\n'), proptest::strategy::Just('é'), proptest::strategy::Just('😀')], 0..60),
            ascii in proptest::bool::ANY,
            max in 0usize..70,
        ) {
            let text: String = text.into_iter().filter(|c| !ascii || c.is_ascii()).collect();
            proptest::prop_assert_eq!(cap_output(text.clone(), max), cap_scan(text, max));
        }
    }

    #[test]
    fn cap_cuts_on_a_line_boundary_or_at_the_cap() {
        assert_eq!(cap_output("short".into(), 10), "short");
        assert_eq!(cap_output("0123456789".into(), 10), "0123456789");
        let note = "\n\n[Output truncated at 10 characters: narrow the path, pattern or line range.]";
        assert_eq!(cap_output("012345\n789abc".into(), 10), format!("012345{note}"));
        // A newline before max / 2 is not used: cut at the cap.
        assert_eq!(cap_output("01\n3456789abc".into(), 10), format!("01\n3456789{note}"));
        // A newline exactly at the cap counts.
        assert_eq!(cap_output("0123456789\nab".into(), 10), format!("0123456789{note}"));
        // Never inside a surrogate pair: the emoji is two units.
        assert_eq!(cap_output("012345678😀x".into(), 10), format!("012345678{note}"));
        assert_eq!(cap_output("é".repeat(12), 10), format!("{}{note}", "é".repeat(10)));
        assert!(cap_output("x".repeat(100_001), 80_000)
            .ends_with("[Output truncated at 80,000 characters: narrow the path, pattern or line range.]"));
        assert_eq!(grouped(1_234_567), "1,234,567");
        assert_eq!(grouped(999), "999");
    }

    #[test]
    fn grep_text_groups_by_file_with_notes() {
        let t = table(&[("/a.ts", "x\ny\nx\n"), ("/b.ts", "none\n"), ("/c/d.ts", "1\nx\n3\n")]);
        let content = t.grep_text(&grep_opts("x", OutputMode::Content), 1000).unwrap();
        assert_eq!(content, "/a.ts:\n  1: x\n  3: x\n/c/d.ts:\n  2: x");
        let ctx = GrepOptions { context: 1, ..grep_opts("x", OutputMode::Content) };
        assert_eq!(
            t.grep_text(&ctx, 1000).unwrap(),
            "/a.ts:\n  1: x\n  2- y\n  3: x\n/c/d.ts:\n  1- 1\n  2: x\n  3- 3"
        );
        assert_eq!(t.grep_text(&grep_opts("x", OutputMode::FilesWithMatches), 1000).unwrap(), "/a.ts\n/c/d.ts");
        assert_eq!(t.grep_text(&grep_opts("x", OutputMode::Count), 1000).unwrap(), "/a.ts: 2\n/c/d.ts: 1");
        let capped = GrepOptions { max_count: Some(1), ..grep_opts("x", OutputMode::Content) };
        assert_eq!(t.grep_text(&capped, 1000).unwrap(), format!("/a.ts:\n  1: x\n\n{GREP_MORE}"));
        assert_eq!(
            t.grep_text(&grep_opts("zzz", OutputMode::Content), 1000).unwrap(),
            "No matches found for pattern 'zzz'"
        );
        let missing = GrepOptions { path: Some("/nope".into()), ..grep_opts("x", OutputMode::Content) };
        assert_eq!(t.grep_text(&missing, 1000).unwrap_err().code, crate::ErrorCode::FileNotFound);
    }

    #[test]
    fn grep_text_stops_once_the_cap_decides() {
        let files: Vec<(String, String)> = (0..500).map(|i| (format!("/f{i:03}.txt"), "hit\n".repeat(100))).collect();
        let mut t = FileTable::new();
        for (p, c) in &files {
            t.write(p, c.as_bytes().to_vec(), 1.0, None).unwrap();
        }
        let opts = GrepOptions { max_count: Some(10_000), ..grep_opts("hit", OutputMode::Content) };
        let full = t.grep(&opts).unwrap();
        let mut reference = GrepText::new(usize::MAX);
        for m in full.matches.as_ref().unwrap() {
            reference.push_match(&m.path, m.line, m.context, &m.text);
        }
        let reference = cap_output(reference.finish("hit", full.truncated), 2000);
        assert_eq!(t.grep_text(&opts, 2000).unwrap(), reference);
        assert!(reference.ends_with("characters: narrow the path, pattern or line range.]"));
    }

    #[test]
    fn ls_glob_and_read_text() {
        let t = table(&[("/src/a.ts", "one\ntwo\nthree\n"), ("/src/lib/b.ts", ""), ("/README.md", "# hi\n")]);
        assert_eq!(t.ls_text("/src", "src", 1000).unwrap(), "/src/a.ts (14 bytes)\n/src/lib/ (directory)");
        assert_eq!(FileTable::new().ls_text("/", "/", 1000).unwrap(), "No files found in /");
        let unnamed = [("/src/~$draft.ts", "invalid_name")];
        assert_eq!(
            format_ls("src", [("/src/a.ts", Some(14))], &unnamed, 1000),
            "/src/a.ts (14 bytes)\n\nNote: not listed: /src/~$draft.ts (invalid name)"
        );
        assert_eq!(
            format_ls("src", [], &unnamed, 1000),
            "No files found in src\n\nNote: not listed: /src/~$draft.ts (invalid name)"
        );
        let g = |pattern: &str| GlobOptions { pattern: pattern.into(), ..Default::default() };
        assert_eq!(t.glob_text(&g("**/*.ts"), 1000).unwrap(), "/src/a.ts\n/src/lib/b.ts");
        assert_eq!(t.glob_text(&g("*.py"), 1000).unwrap(), "No files found matching pattern '*.py'");
        let capped = GlobOptions { max_results: Some(1), ..g("**") };
        assert_eq!(
            t.glob_text(&capped, 1000).unwrap(),
            "/README.md\n\nNote: more files match; narrow the pattern or the path."
        );
        // What a walk skipped closes the text, found files or not, and takes its room from the cap.
        let skipped = [("/locked/", "permission_denied")];
        let note = "Note: not searched: /locked/ (permission denied)";
        assert_eq!(
            format_glob("*.py", [], false, &skipped, 1000),
            format!("No files found matching pattern '*.py'\n\n{note}")
        );
        let many = ["/a/1.ts", "/a/2.ts", "/a/3.ts"];
        assert_eq!(
            format_glob("**", many, true, &skipped, 1000),
            format!("{}\n\nNote: more files match; narrow the pattern or the path.\n\n{note}", many.join("\n"))
        );
        let tight = format_glob("**", many, false, &skipped, note.len() + 2 + 7);
        assert!(tight.starts_with("/a/1.ts") && tight.ends_with(note) && !tight.contains("/a/3.ts"), "{tight}");
        assert_eq!(
            t.read_text("/src/a.ts", "/src/a.ts", 0, 2, 1000).unwrap(),
            "     1\tone\n     2\ttwo\n\n[Lines 1-2 of 3. Continue with offset=2.]"
        );
        assert_eq!(t.read_text("/src/a.ts", "/src/a.ts", 1, 5, 1000).unwrap(), "     2\ttwo\n     3\tthree");
        assert_eq!(
            t.read_text("/src/lib/b.ts", "b.ts", 0, 5, 1000).unwrap(),
            "System reminder: 'b.ts' exists but is empty."
        );
        assert_eq!(
            t.read_text("/src/a.ts", "a", 9, 5, 1000).unwrap(),
            "Note: offset 9 is past the end of 'a' (3 lines). Use an offset below 3."
        );
        let long = "x".repeat(100);
        let t = table(&[("/l", &format!("{long}\n").repeat(1000))]);
        let capped = t.read_text("/l", "/l", 0, 1000, 500).unwrap();
        let uncapped = cap_output(read::format_numbered(&format!("{long}\n").repeat(1000), 1), 500);
        assert_eq!(capped, uncapped);
    }
}
