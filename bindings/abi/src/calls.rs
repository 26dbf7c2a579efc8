//! The table of calls: each declared once, here, and exported by both bindings.

/// Every call both bindings export, declared once: its documentation (which becomes the
/// TypeScript declaration's), its JavaScript name, its arguments and the kind of its result.
/// A binding expands the table with `engram_abi::calls!(export)`, where its own `export!` macro
/// has one arm per result kind that says how a value of that kind crosses (see
/// `bindings/node/src/calls.rs`, `bindings/wasm/src/calls.rs`) and wraps the entry in the
/// binding's attribute (`#[napi]`, `#[wasm_bindgen]`).
///
/// An entry is `fn name as "jsName" (args) -> kind { body }`, or the same inside
/// `impl Class { ... }` for a method of the binding's class of that name (`FileTable`,
/// `Router`, `GrepArgs`, `GlobFanOut`, `GrepFanOut`). Arguments are the Rust types both
/// bindings read from JavaScript the same way: `String`, `Vec<String>`, `Option<String>`,
/// `u32`, `Option<u32>`, `i32`, `f64`, `bool`, `Option<bool>`, `&[u8]`, `&[u32]`, `&[i32]`,
/// `&[f64]` (a typed array) and `&Class`. The body calls the core and yields the kind's Rust
/// value:
///
/// | kind | body yields | JavaScript gets |
/// |---|---|---|
/// | `text` | `String` | `string` |
/// | `texts` | `Vec<String>` | `string[]` |
/// | `count` | `u32` | `number` |
/// | `f64s` | `Vec<f64>` | `Float64Array` |
/// | `u32s` | `Vec<u32>` | `Uint32Array` |
/// | `bytes` | `Vec<u8>` | `Uint8Array` (native: a `Buffer`) |
/// | `bytes_or_none` | `Option<Vec<u8>>` | `Uint8Array`, or `null` (native) / `undefined` (WASM) |
/// | `text_and_count` | `(String, u32)` | `{ text, count }` |
/// | `text_and_u32s` | `(String, Vec<u32>)` | `{ text, numbers: Uint32Array }` |
/// | `text_or_error` | `CoreResult<String>` | `{ text }`, or `{ error }` |
/// | `u32s_or_failure` | `CoreResult<Vec<u32>>` | `Uint32Array`, or `Failure` (`{ error }`) |
/// | `bytes_or_failure` | `CoreResult<Vec<u8>>` | `Uint8Array`, or `Failure` |
/// | `count_or_failure` | `CoreResult<u32>` | `number`, or `Failure` |
/// | `error` | `CoreError` | `ErrorData` (`{ code, message, subject?, detail? }`) |
/// | `error_or_none` | `Option<CoreError>` | `ErrorData`, or `null` / `undefined` |
/// | `text_meta` | `CoreResult<(String, [f64; N])>` | `string`, the numbers written into `meta` |
/// | `text_meta_or_none` | `Option<(String, [f64; N])>` | as `text_meta`, or none (no error kept) |
/// | `entries` | `CoreResult<Vec<FileInfo>>` | `{ entries }`, or `{ error }` |
/// | `file_columns` | `CoreResult<(api::FileColumns, bool)>` | `GlobOut` (columns), or `{ error }` |
/// | `grep_columns` | `CoreResult<GrepResult>` | `GrepOut` (columns), or `{ error }` |
/// | `route` | `CoreResult<Route>` | `RouteOut`, or `{ error }` |
/// | `merged` | `CoreResult<composite::Merged>` | `Merged` (columns), or `{ error }` |
/// | `glob_asks` | `Vec<composite::GlobAsk>` | `GlobAsks` (columns) |
/// | `fan_asks` | `fan::AskColumns` | `FanAsks` (columns) |
/// | `fan_glob` | `CoreResult<(api::FileColumns, Vec<i32>, bool)>` | `FanGlob` (columns), or `{ error }` |
/// | `new Class` | the binding's `Class` | an instance of `Class` |
/// | `router_or_failure` | `CoreResult<Router>` (the binding's) | a `Router`, or `Failure` |
///
/// `impl Class { constructor (args) { body } }` is the class's JavaScript constructor (`new
/// Class(args)`); the body yields the binding's `Class`.
///
/// `text_meta` is for the file table's most frequent calls: no result object crosses. The
/// binding appends the argument `meta` (a caller-owned `Float64Array` of at least 4 numbers,
/// so the entry's arguments take no trailing comma) and writes the numbers into it; on failure
/// the call returns nothing and the table keeps the error for `takeError()`. A `FileTable`
/// method taking `&mut self` may change the table's content: the native binding then reports
/// the table's memory to V8 after the body (`FileTable::account`).
///
/// The body is marshalling only (index and width conversions, a rule's arguments assembled):
/// the rule it calls lives in `engram-core`. An entry's documentation is written as
/// `#[doc = "..."]` lines, one per line of text: a `///` comment reaches the bindings' macros
/// as a raw string literal, which napi-rs and wasm-bindgen copy into the declarations with its
/// `r"` prefix.
#[macro_export]
macro_rules! calls {
    ($export:ident) => {
        // ---- text and numbers ------------------------------------------------------------

        $export! {
            #[doc = "`cat -n` formatting of raw lines starting at 1-based `firstLine`."]
            fn format_numbered as "formatNumbered" (content: String, first_line: u32) -> text {
                $crate::engram_core::read::format_numbered(&content, first_line as usize)
            }
        }

        $export! {
            #[doc = "Estimated tokens of `text` under a byte-level BPE tokenizer (see `engram_core::tokens`)."]
            fn estimate_tokens as "estimateTokens" (text: String) -> count {
                $crate::count($crate::engram_core::tokens::estimate_tokens(&text))
            }
        }

        $export! {
            #[doc = "Estimated tokens of each text (as `estimateTokens`), in order: one crossing for a list."]
            fn estimate_tokens_each as "estimateTokensEach" (texts: Vec<String>) -> u32s {
                texts.iter().map(|t| $crate::count($crate::engram_core::tokens::estimate_tokens(t))).collect()
            }
        }

        $export! {
            #[doc = "BM25 relevance of each document to `query`, in document order."]
            fn rank_bm25 as "rankBm25" (query: String, documents: Vec<String>) -> f64s {
                $crate::engram_core::bm25::rank(&query, &documents)
            }
        }

        $export! {
            #[doc = "Secrets replaced by `[REDACTED]`, labels kept (see `engram_core::redact`): the text"]
            #[doc = "and how many secrets were replaced."]
            fn redact_secrets as "redactSecrets" (text: String) -> text_and_count {
                let r = $crate::engram_core::redact::redact(&text);
                (r.text, $crate::count(r.count))
            }
        }

        // ---- paths and errors ------------------------------------------------------------

        $export! {
            #[doc = "A virtual path, normalised (see `engram_core::path::normalize`)."]
            fn normalize_path as "normalizePath" (path: String) -> text_or_error {
                $crate::engram_core::path::normalize(&path)
            }
        }

        $export! {
            #[doc = "Which paths a glob admits, as indices into `paths` (`kind`: `\"glob\"` or `\"grep\"`,"]
            #[doc = "see `engram_abi::filter_paths`)."]
            fn filter_paths as "filterPaths" (kind: String, pattern: String, root: String, paths: Vec<String>) -> u32s_or_failure {
                $crate::filter_paths(&kind, &pattern, &root, &paths)
            }
        }

        $export! {
            #[doc = "The canonical error for a pinned error code (an unknown code is `unsupported`)."]
            fn error_data as "errorData" (code: String, subject: String, detail: String) -> error {
                $crate::engram_core::api::error_data(&code, &subject, &detail)
            }
        }

        $export! {
            #[doc = "A snapshot with deltas applied in order (concatenated in `deltas`, sizes in `lengths`),"]
            #[doc = "or why the input is damaged (see `engram_core::delta::apply_deltas`)."]
            fn apply_file_deltas as "applyFileDeltas" (snapshot: &[u8], deltas: &[u8], lengths: &[u32]) -> bytes_or_failure {
                $crate::engram_core::delta::apply_deltas_packed(snapshot, deltas, lengths)
            }
        }

        // ---- prompt assembly (engram_core::prompt) ---------------------------------------

        $export! {
            #[doc = "The `<agent_memory>` section: per source its path, kind (0 missing, 1 text, 2 error"]
            #[doc = "message, 3 an earlier rendering) and text. `numbers`: per source, the UTF-16 start and"]
            #[doc = "end of its part in `text` (`0, 0` when it adds nothing)."]
            fn memory_section as "memorySection" (
                paths: Vec<String>,
                kinds: &[u8],
                texts: Vec<String>,
                max_tokens_per_source: u32,
            ) -> text_and_u32s {
                use $crate::engram_core::prompt::{self, Source};
                let sources: Vec<Source> = texts.iter().zip(kinds).map(|(t, &k)| Source::from_kind(k, t)).collect();
                let section = prompt::memory_section(&paths, &sources, max_tokens_per_source as usize);
                let bytes: Vec<usize> = section.parts.iter().flat_map(|&(a, b)| [a, b]).collect();
                let parts = prompt::utf16_offsets(&section.text, &bytes);
                (section.text, parts)
            }
        }

        $export! {
            #[doc = "Section tags neutralised (see `engram_core::prompt::neutralize_section_tags`)."]
            fn neutralize_section_tags as "neutralizeSectionTags" (text: String) -> text {
                $crate::engram_core::prompt::neutralize_section_tags(&text).into_owned()
            }
        }

        $export! {
            #[doc = "`&`, `<`, `>` and disguised tag openers escaped, for short fields."]
            fn escape_tags as "escapeTags" (text: String) -> text {
                $crate::engram_core::prompt::escape_tags(&text)
            }
        }

        $export! {
            #[doc = "`escapeTags`, then every run of whitespace one space, trimmed (a skills-index field)."]
            fn escape_field as "escapeField" (text: String) -> text {
                $crate::engram_core::prompt::escape_field(&text)
            }
        }

        $export! {
            #[doc = "The skills index, or `\"\"` when there are no skills."]
            fn skills_section as "skillsSection" (names: Vec<String>, descriptions: Vec<String>, paths: Vec<String>) -> text {
                $crate::engram_core::prompt::skills_section(&names, &descriptions, &paths)
            }
        }

        $export! {
            #[doc = "The long-term `<memory>` block. `summaries`: the six summaries in order; facts in"]
            #[doc = "columns (`sourceErrors[i]` `\"\"` when none); ranked by `scores` when given (one per"]
            #[doc = "fact), else by relevance to `query` (by confidence when it is blank)."]
            #[allow(clippy::too_many_arguments)]
            fn facts_block as "factsBlock" (
                summaries: Vec<String>,
                contents: Vec<String>,
                categories: Vec<String>,
                confidences: &[f64],
                source_errors: Vec<String>,
                scores: &[f64],
                query: String,
                max_tokens: u32,
                correction_tokens: u32,
            ) -> text {
                use $crate::engram_core::prompt::{facts_block_columns, FactBudget, FactColumns};
                let columns = FactColumns {
                    summaries: &summaries,
                    contents: &contents,
                    categories: &categories,
                    confidences,
                    source_errors: &source_errors,
                    scores,
                    query: &query,
                };
                let budget = FactBudget { max_tokens: max_tokens as usize, correction_tokens: correction_tokens as usize };
                facts_block_columns(columns, budget)
            }
        }

        $export! {
            #[doc = "Per fact, its confidence plus its BM25 relevance to `query` scaled to 0–1 (see"]
            #[doc = "`engram_core::prompt::relevance_scores`)."]
            fn relevance_scores as "relevanceScores" (query: String, contents: Vec<String>, confidences: &[f64]) -> f64s {
                $crate::engram_core::prompt::relevance_scores_columns(&query, &contents, confidences)
            }
        }

        // ---- the file tools' text for the model (engram_core::format) ----------------------

        $export! {
            #[doc = "Grep output from columns (see `engram_core::format::format_grep_columns`); what the"]
            #[doc = "search skipped as `skippedPaths[i]` for `skippedReasons[i]`."]
            #[allow(clippy::too_many_arguments)]
            fn format_grep as "formatGrep" (
                pattern: String,
                mode: String,
                paths: Vec<String>,
                numbers: &[i32],
                texts: Vec<String>,
                truncated: bool,
                skipped_paths: Vec<String>,
                skipped_reasons: Vec<String>,
                max_chars: u32,
            ) -> text {
                use $crate::engram_core::format;
                let mode = $crate::engram_core::grep::OutputMode::parse(&mode).unwrap_or_default();
                let skipped = format::skipped_pairs(&skipped_paths, &skipped_reasons);
                format::format_grep_columns(&pattern, mode, &paths, numbers, &texts, truncated, &skipped, max_chars as usize)
            }
        }

        $export! {
            #[doc = "`ls` output; a negative size marks a directory; entries it could not name as"]
            #[doc = "`skippedPaths[i]` for `skippedReasons[i]`."]
            fn format_ls as "formatLs" (
                shown: String,
                paths: Vec<String>,
                sizes: &[f64],
                skipped_paths: Vec<String>,
                skipped_reasons: Vec<String>,
                max_chars: u32,
            ) -> text {
                use $crate::engram_core::format;
                let skipped = format::skipped_pairs(&skipped_paths, &skipped_reasons);
                format::format_ls_columns(&shown, &paths, sizes, &skipped, max_chars as usize)
            }
        }

        $export! {
            #[doc = "`glob` output; what the walk skipped as `skippedPaths[i]` for `skippedReasons[i]`."]
            fn format_glob as "formatGlob" (
                pattern: String,
                paths: Vec<String>,
                truncated: bool,
                skipped_paths: Vec<String>,
                skipped_reasons: Vec<String>,
                max_chars: u32,
            ) -> text {
                use $crate::engram_core::format;
                let skipped = format::skipped_pairs(&skipped_paths, &skipped_reasons);
                format::format_glob(&pattern, paths.iter().map(String::as_str), truncated, &skipped, max_chars as usize)
            }
        }

        $export! {
            #[doc = "`read_file` output from a read result."]
            fn format_read as "formatRead" (
                shown: String,
                content: String,
                offset: u32,
                total_lines: u32,
                lines: u32,
                limit: u32,
                max_chars: u32,
            ) -> text {
                let r = $crate::engram_core::read::ReadResult {
                    content,
                    total_lines: total_lines as usize,
                    offset: offset as usize,
                    lines: lines as usize,
                };
                $crate::engram_core::format::format_read(&shown, &r, limit as usize, max_chars as usize)
            }
        }

        $export! {
            #[doc = "Any tool output cut to `maxChars` UTF-16 units with the truncation note."]
            fn cap_output as "capOutput" (text: String, max_chars: u32) -> text {
                $crate::engram_core::format::cap_output(text, max_chars as usize)
            }
        }

        // ---- the composite (engram_core::composite): mount errors, fan-out merges -----------

        $export! {
            #[doc = "A mounted backend's error seen from outside the mount (see"]
            #[doc = "`engram_core::composite::mount_error`), or none when it passes on unchanged."]
            fn mount_error as "mountError" (
                code: String,
                message: String,
                subject: Option<String>,
                detail: Option<String>,
                prefix: String,
                request: String,
            ) -> error_or_none {
                use $crate::engram_core::composite::{mount_error, BackendError};
                let e = BackendError { code: &code, message: &message, subject: subject.as_deref(), detail: detail.as_deref() };
                mount_error(&e, &prefix, &request)
            }
        }

        $export! {
            #[doc = "Merges the grep answers of a composite's backends (see"]
            #[doc = "`engram_core::composite::merge_grep_columns` for the columns)."]
            #[allow(clippy::too_many_arguments)]
            fn merge_grep as "mergeGrep" (
                router: &Router,
                output_mode: String,
                max_count: Option<u32>,
                path_glob: Option<String>,
                root: String,
                mounts: &[i32],
                truncated: &[u8],
                counts: &[u32],
                paths: String,
                sizes: &[u32],
                context: &[u8],
            ) -> merged {
                use $crate::engram_core::composite::{self, GrepMerge, PartColumns};
                let cols = PartColumns { mounts, truncated, counts, sizes, context };
                $crate::engram_core::grep::OutputMode::parse(&output_mode).and_then(|mode| {
                    let max_count = max_count.map(|n| n as usize);
                    let o = GrepMerge { mode, max_count, path_glob: path_glob.as_deref(), root: &root };
                    composite::merge_grep_columns(&router.inner, &cols, composite::split_paths(&paths), &o)
                })
            }
        }

        $export! {
            #[doc = "Merges the glob answers of a composite's backends; `pattern` filters the mounts'"]
            #[doc = "answers (absent: paths are only prefixed)."]
            #[allow(clippy::too_many_arguments)]
            fn merge_glob as "mergeGlob" (
                router: &Router,
                pattern: Option<String>,
                root: String,
                max_results: Option<u32>,
                mounts: &[i32],
                truncated: &[u8],
                counts: &[u32],
                paths: String,
            ) -> merged {
                use $crate::engram_core::composite::{self, PartColumns};
                let cols = PartColumns { mounts, truncated, counts, sizes: &[], context: &[] };
                let max = max_results.map(|n| n as usize);
                let parts = composite::split_paths(&paths);
                composite::merge_glob_columns(&router.inner, &cols, parts, pattern.as_deref(), &root, max)
            }
        }

        $export! {
            #[doc = "A directory listing as the composite shows it (see `engram_core::composite::merge_ls`)."]
            fn merge_ls as "mergeLs" (router: &Router, dir: String, mount: Option<u32>, paths: String) -> merged {
                use $crate::engram_core::composite;
                composite::merge_ls(&router.inner, &dir, mount.map(|m| m as usize), &composite::split_paths(&paths))
            }
        }

        $export! {
            #[doc = "The routes strictly below a normalised directory, in construction order."]
            fn mounts_under as "mountsUnder" (router: &Router, dir: String) -> u32s {
                let mounts = $crate::engram_core::composite::mounts_under(&router.inner, &dir);
                mounts.into_iter().map(|i| $crate::count(i)).collect()
            }
        }

        $export! {
            #[doc = "A composite `ls` of the normalised directory `dir` answered from the resident table of"]
            #[doc = "the backend it routes to (`mount`, -1 for the default; `inner` as that backend sees"]
            #[doc = "`dir`) in one call (see `engram_core::composite::ls_table`)."]
            fn ls_table as "lsTable" (router: &Router, dir: String, mount: i32, inner: String, table: &FileTable) -> entries {
                let mount = usize::try_from(mount).ok();
                $crate::engram_core::composite::ls_table(&router.inner, &dir, mount, &inner, &table.inner)
            }
        }

        $export! {
            #[doc = "The mounts a composite glob is pushed down to, in columns: route index, pattern and"]
            #[doc = "inner directory of each (see `engram_core::composite::glob_asks`)."]
            fn glob_asks as "globAsks" (router: &Router, pattern: String, root: String) -> glob_asks {
                $crate::engram_core::composite::glob_asks(&router.inner, &pattern, &root)
            }
        }

        $export! {
            #[doc = "A router over the mount points, in route order, or an invalid prefix's error."]
            fn create_router as "createRouter" (prefixes: Vec<String>) -> router_or_failure {
                $crate::engram_core::Router::new(&prefixes).map(|inner| Router { inner })
            }
        }

        $export! {
            impl Router {
                #[doc = "Where a path routes: `route` is the prefix index, or none for the default backend."]
                fn route as "route" (&self, path: String) -> route {
                    self.inner.route(&path)
                }
            }
        }

        $export! {
            #[doc = "Where a path routes without a result object: the outer (normalised) path, with `meta` ="]
            #[doc = "`[route (-1: the default backend), UTF-16 offset of the inner path in it (-1: the inner"]
            #[doc = "path is \"/\")]`; none when the path is refused (`Router.route` then gives the error)."]
            fn route_into as "routeInto" (router: &Router, path: String) -> text_meta_or_none {
                let n = |v: Option<usize>| v.map_or(-1.0, |v| v as f64);
                let parts = $crate::engram_core::composite::route_parts(&router.inner, &path).ok();
                parts.map(|(outer, route, start)| (outer, [n(route), n(start)]))
            }
        }

        $export! {
            impl GrepArgs {
                #[doc = "The options of one `grep` or `grepText` call, built once (defaults as in"]
                #[doc = "`engram_core::grep::GrepOptions::from_parts`; an invalid mode fails the call that uses them)."]
                #[allow(clippy::too_many_arguments)]
                constructor (
                    pattern: String,
                    path: Option<String>,
                    glob: Option<String>,
                    regex: Option<bool>,
                    ignore_case: Option<bool>,
                    max_count: Option<u32>,
                    output_mode: Option<String>,
                    context: Option<u32>,
                ) {
                    use $crate::engram_core::grep::GrepOptions;
                    let mode = output_mode.as_deref();
                    GrepArgs { options: GrepOptions::from_parts(pattern, path, glob, regex, ignore_case, max_count, mode, context) }
                }
            }
        }

        $export! {
            impl Router {
                #[doc = "The mount points, in route order."]
                fn prefixes as "prefixes" (&self) -> texts {
                    self.inner.prefixes().to_vec()
                }
            }
        }

        // ---- fan-out over resident tables (engram_abi::fan): nothing crosses per mount but
        // the table handle ------------------------------------------------------------------

        $export! {
            #[doc = "A composite glob over resident tables; `root` is the normalised outer directory."]
            fn glob_fan_out as "globFanOut" (router: &Router, pattern: String, root: String, max_results: Option<u32>) -> new GlobFanOut {
                GlobFanOut { fan: $crate::fan::GlobFan::new(&router.inner, &pattern, &root, max_results) }
            }
        }

        $export! {
            #[doc = "A composite grep over resident tables: `args` are the call's options (their path is"]
            #[doc = "ignored); `root` is the normalised outer directory; `textChars`: only the tool's text of"]
            #[doc = "at most that many characters is wanted. Invalid options fail every later step."]
            fn grep_fan_out as "grepFanOut" (router: &Router, args: &GrepArgs, root: String, text_chars: Option<u32>) -> new GrepFanOut {
                GrepFanOut { fan: $crate::fan::GrepFan::new(&router.inner, args.options(), &root, text_chars) }
            }
        }

        $export! {
            impl GlobFanOut {
                #[doc = "The sources to `add`, in columns."]
                fn asks as "asks" (&self) -> fan_asks {
                    self.fan.asks()
                }
            }
        }

        $export! {
            impl GlobFanOut {
                #[doc = "Globs the source's table (`mount`: its route, -1 for the default backend); the"]
                #[doc = "error (a mount's, for the outer path), or none."]
                fn add as "add" (&mut self, router: &Router, mount: i32, table: &FileTable) -> error_or_none {
                    self.fan.add(&router.inner, mount, &table.inner)
                }
            }
        }

        $export! {
            impl GlobFanOut {
                #[doc = "The merged files in columns (outer paths) and the route each came from (-1: the default)."]
                fn finish as "finish" (&mut self, router: &Router) -> fan_glob {
                    self.fan.finish(&router.inner)
                }
            }
        }

        $export! {
            impl GlobFanOut {
                #[doc = "The `glob` tool's text of the merged answer."]
                fn text as "text" (&mut self, router: &Router, max_chars: u32) -> text_or_error {
                    self.fan.text(&router.inner, max_chars)
                }
            }
        }

        $export! {
            impl GrepFanOut {
                #[doc = "The sources to `add`, in columns."]
                fn asks as "asks" (&self) -> fan_asks {
                    self.fan.asks()
                }
            }
        }

        $export! {
            impl GrepFanOut {
                #[doc = "Searches the source's table (`mount`: its route, -1 for the default backend); the"]
                #[doc = "error (a mount's, for the outer path, or the options'), or none."]
                fn add as "add" (&mut self, router: &Router, mount: i32, table: &FileTable) -> error_or_none {
                    self.fan.add(&router.inner, mount, &table.inner)
                }
            }
        }

        $export! {
            impl GrepFanOut {
                #[doc = "The merged grep answer in columns."]
                fn finish as "finish" (&mut self, router: &Router) -> grep_columns {
                    self.fan.finish(&router.inner)
                }
            }
        }

        $export! {
            impl GrepFanOut {
                #[doc = "The `grep` tool's text of the merged answer, under the output cap."]
                fn text as "text" (&mut self, router: &Router, max_chars: u32) -> text_or_error {
                    self.fan.text(&router.inner, max_chars)
                }
            }
        }

        // ---- the file table's methods -----------------------------------------------------

        $export! {
            impl FileTable {
                #[doc = "An empty table."]
                constructor () {
                    FileTable::wrap($crate::engram_core::FileTable::new())
                }
            }
        }

        $export! {
            impl FileTable {
                #[doc = "The error of the last call that returned none (then cleared)."]
                fn take_error as "takeError" (&self) -> error_or_none {
                    self.error.borrow_mut().take()
                }
            }
        }

        $export! {
            impl FileTable {
                #[doc = "Lines of a file: the content, `meta` = `[totalLines, offset, lines]`."]
                fn read as "read" (&self, path: String, offset: u32, limit: Option<u32>) -> text_meta {
                    let r = self.inner.read(&path, offset as usize, limit.map(|l| l as usize));
                    r.map(|r| (r.content, [r.total_lines as f64, r.offset as f64, r.lines as f64]))
                }
            }
        }

        $export! {
            impl FileTable {
                #[doc = "Metadata: the path (directories end with `/`), `meta` = `[isDir (1 or 0), size,"]
                #[doc = "modifiedAt, version]` (NaN when absent)."]
                fn stat as "stat" (&self, path: String) -> text_meta {
                    $crate::engram_core::api::stat(&self.inner, &path).map(|(i, version)| {
                        let nan = f64::NAN;
                        let size = i.size.map_or(nan, |s| s as f64);
                        let version = version.map_or(nan, |v| v as f64);
                        (i.path, [f64::from(u8::from(i.is_dir)), size, i.modified_at.unwrap_or(nan), version])
                    })
                }
            }
        }

        $export! {
            impl FileTable {
                #[doc = "Replaces text in a file: its normalised path, `meta` = `[occurrences, version]`."]
                #[allow(clippy::too_many_arguments)]
                fn edit as "edit" (
                    &mut self,
                    path: String,
                    old_string: String,
                    new_string: String,
                    replace_all: bool,
                    modified_at: f64,
                    if_version: Option<String>
                ) -> text_meta {
                    let o = $crate::engram_core::ops::EditOptions { path, old_string, new_string, replace_all, modified_at, if_version };
                    $crate::engram_core::api::edit(&mut self.inner, &o).map(|r| (r.path, [r.occurrences as f64, r.version as f64]))
                }
            }
        }

        $export! {
            impl FileTable {
                #[doc = "Appends bytes to a file (created when missing): its normalised path, `meta` = `[version]`."]
                fn append as "append" (&mut self, path: String, data: &[u8], modified_at: f64) -> text_meta {
                    $crate::engram_core::api::append(&mut self.inner, &path, data, modified_at).map(|w| (w.path, [w.version as f64]))
                }
            }
        }

        $export! {
            impl FileTable {
                #[doc = "Deletes a file or a directory with everything below it: how many files went."]
                fn delete as "delete" (&mut self, path: String) -> count_or_failure {
                    self.inner.delete(&path).map($crate::count)
                }
            }
        }

        $export! {
            impl FileTable {
                #[doc = "The entries of one directory (directories end with `/`)."]
                fn ls as "ls" (&self, path: String) -> entries {
                    self.inner.ls(&path)
                }
            }
        }

        $export! {
            impl FileTable {
                #[doc = "Grep (see `GrepArgs`), in columns (see `engram_core::api::GrepColumns`)."]
                fn grep as "grep" (&self, args: &GrepArgs) -> grep_columns {
                    args.options().and_then(|o| self.inner.grep(o))
                }
            }
        }

        $export! {
            impl FileTable {
                #[doc = "A glob's files in columns (see `engram_core::api::FileColumns`)."]
                fn glob as "glob" (&self, pattern: String, path: Option<String>, max_results: Option<u32>) -> file_columns {
                    let o = $crate::engram_core::ops::GlobOptions { pattern, path, max_results: max_results.map(|n| n as usize) };
                    $crate::engram_core::api::glob_columns(&self.inner, &o)
                }
            }
        }

        $export! {
            impl FileTable {
                #[doc = "The raw bytes of a file, or none when it is missing or a directory."]
                fn read_bytes as "readBytes" (&self, path: String) -> bytes_or_none {
                    self.inner.read_bytes(&path).ok().map(|d| d.to_vec())
                }
            }
        }

        $export! {
            impl FileTable {
                #[doc = "The files written since the counters `lastVersion`/`changes` (a delta record), or"]
                #[doc = "none when only a full snapshot describes the change (see `engram_core::delta`)."]
                fn delta_since as "deltaSince" (&self, last_version: f64, changes: f64) -> bytes_or_none {
                    let mark = $crate::engram_core::delta::Mark { last_version: last_version as u64, changes: changes as u64 };
                    self.inner.delta_since(mark)
                }
            }
        }

        $export! {
            impl FileTable {
                #[doc = "Every file, compactly, for a checkpoint."]
                fn snapshot as "snapshot" (&self) -> bytes {
                    self.inner.snapshot()
                }
            }
        }

        $export! {
            impl FileTable {
                #[doc = "The `grep` tool's text, capped at `maxChars` UTF-16 units."]
                fn grep_text as "grepText" (&self, args: &GrepArgs, max_chars: u32) -> text_or_error {
                    args.options().and_then(|o| self.inner.grep_text(o, max_chars as usize))
                }
            }
        }

        $export! {
            impl FileTable {
                #[doc = "The `glob` tool's text."]
                fn glob_text as "globText" (
                    &self,
                    pattern: String,
                    path: Option<String>,
                    max_results: Option<u32>,
                    max_chars: u32,
                ) -> text_or_error {
                    let max_results = max_results.map(|n| n as usize);
                    let o = $crate::engram_core::ops::GlobOptions { pattern, path, max_results };
                    self.inner.glob_text(&o, max_chars as usize)
                }
            }
        }

        $export! {
            impl FileTable {
                #[doc = "The `ls` tool's text; `shown` is the path as the model gave it."]
                fn ls_text as "lsText" (&self, path: String, shown: String, max_chars: u32) -> text_or_error {
                    self.inner.ls_text(&path, &shown, max_chars as usize)
                }
            }
        }

        $export! {
            impl FileTable {
                #[doc = "The `read_file` tool's text; `shown` is the path as the model gave it."]
                fn read_text as "readText" (
                    &self,
                    path: String,
                    shown: String,
                    offset: u32,
                    limit: u32,
                    max_chars: u32,
                ) -> text_or_error {
                    self.inner.read_text(&path, &shown, offset as usize, limit as usize, max_chars as usize)
                }
            }
        }
    };
}
