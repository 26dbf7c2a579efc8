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
/// `Router`, `GrepArgs`). Arguments are the Rust types both bindings read from JavaScript the
/// same way: `String`, `Vec<String>`, `Option<String>`, `u32`, `Option<u32>`, `f64`, `bool`,
/// `&[u8]`, `&[u32]`, `&[i32]`, `&[f64]` (a typed array) and `&Class`. The body calls the core
/// and yields the kind's Rust value:
///
/// | kind | body yields | JavaScript gets |
/// |---|---|---|
/// | `text` | `String` | `string` |
/// | `count` | `u32` | `number` |
/// | `f64s` | `Vec<f64>` | `Float64Array` |
/// | `u32s` | `Vec<u32>` | `Uint32Array` |
/// | `text_or_error` | `CoreResult<String>` | `{ text }`, or `{ error }` |
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

        // ---- prompt assembly (engram_core::prompt) ---------------------------------------

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
