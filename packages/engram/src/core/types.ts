/**
 * The `Core` API: what both the native addon and the WebAssembly build offer, in TypeScript
 * shapes. Results are data: either the result fields or `{ error: { code, message } }`.
 * @module
 */

/** The pinned error codes of the backend contract; one message text per code. */
export type ErrorCode =
  | "file_not_found"
  | "is_directory"
  | "invalid_path"
  | "path_escape"
  | "permission_denied"
  | "string_not_found"
  | "multiple_matches"
  | "too_large"
  | "invalid_pattern"
  /** A regex that would need more backtracking than one search may do on this text (grep on
   * the JS thread is bounded); a simpler pattern or a narrower path will do. */
  | "pattern_too_expensive"
  | "conflict"
  /** Another writer held the lock longer than the lock timeout; retry later. */
  | "busy"
  | "unsupported";

/** An error returned as data. */
export interface ErrorData {
  code: ErrorCode;
  message: string;
  /** What the error is about: a path (the pattern, for `invalid_pattern`), as given, where the
   * message shows it escaped. Every error the core renders carries it; a custom backend may
   * leave it out. A composite route renders its mounts' errors again from it (never by editing
   * the message). */
  subject?: string;
  /** The reason shown in the message, when it has one. */
  detail?: string;
}

/** Either the fields of `T` or an `error`, never both; narrow with `if (r.error)`. */
export type Result<T> = (T & { error?: undefined }) | ({ error: ErrorData } & { [K in keyof T]?: undefined });

/** Which build of the Rust core is in use. */
export type CoreKind = "native" | "wasm";

/** A file or directory. Directory paths end with `/`. */
export interface FileInfo {
  path: string;
  isDir: boolean;
  /** Size in bytes (files only). */
  size?: number;
  /** Milliseconds since the epoch (files only). */
  modifiedAt?: number;
  /** Changes on every write (files only). */
  version?: string;
}

/** Options of {@link CoreFileTable.write}. */
export interface WriteOptions {
  /** Modification time in milliseconds since the epoch. Default: `Date.now()`. */
  modifiedAt?: number;
  /** Compare-and-swap: the write fails with `conflict` unless the file's version equals this
   * (`"0"` = the file must not exist yet). Default: unconditional. */
  ifVersion?: string;
}

/** Options of {@link CoreFileTable.read}. */
export interface ReadOptions {
  /** 0-based first line. Default: `0`. */
  offset?: number;
  /** Maximum number of lines. Default: all remaining lines. */
  limit?: number;
}

/** Lines of a file, raw (no line numbers). */
export interface ReadResult {
  /** The lines joined by their original terminators, without the last line's terminator. */
  content: string;
  totalLines: number;
  /** 0-based index of the first returned line. */
  offset: number;
  /** Number of lines in `content`. At most 100,000 lines are returned per read (also without a
   * `limit`), and content over 10 MiB is `too_large`: read fewer lines. */
  lines: number;
}

/** Output modes of grep. */
export type GrepOutputMode = "content" | "files_with_matches" | "count";

/** Options of {@link CoreFileTable.grep}. */
export interface GrepOptions {
  /** Literal text, or a regular expression when `regex` is true. */
  pattern: string;
  /** Directory or file to search. Default: `/`. */
  path?: string;
  /** Only files matching this glob: a pattern without `/` matches the file name at any depth,
   * one with `/` the path below `path`. Default: all files. */
  glob?: string;
  /** Treat `pattern` as a regular expression (linear-time engine). A pattern over 4096 bytes,
   * or one whose program is too large (e.g. `[a-z]{20000}`, a huge alternation), is refused with
   * `invalid_pattern` before any search. Unicode-aware: `\w`, `\d`, `\s`, `\b`, case folding,
   * `\p{…}` general categories, scripts and binary properties; `\p{Age=…}` and the segmentation
   * properties (`Word_Break`, `Grapheme_Cluster_Break`, `Sentence_Break`) are not built in and are
   * `invalid_pattern`. A search that would need more than a bounded amount of backtracking work
   * on the text searched (a pattern that makes the DFA thrash, e.g. `a[ab]{20}c` on megabytes of
   * `a`s and `b`s) fails with `pattern_too_expensive`. Default: `false`. */
  regex?: boolean;
  /** Case-insensitive matching. Default: `false`. */
  ignoreCase?: boolean;
  /** Cap on matching lines (`content`) or files (other modes); `truncated` tells when hit.
   * Never above 10,000, which is also the default. */
  maxCount?: number;
  /** Default: `"content"`. */
  outputMode?: GrepOutputMode;
  /** Context lines before and after each match (`content` mode), at most 100. Default: `0`. */
  context?: number;
}

/** One line of grep output. */
export interface GrepMatch {
  path: string;
  /** 1-based line number. */
  line: number;
  text: string;
  /** Present and true for a context line rather than a match. */
  context?: boolean;
}

/** Grep results; which field is present depends on the output mode. */
export interface GrepResult {
  matches?: GrepMatch[];
  files?: string[];
  counts?: Record<string, number>;
  truncated: boolean;
  /** Files or directories the search could not look into (FilesystemBackend: over
   * `maxFileSizeMb`, unreadable, too deep), smallest paths first, at most 100. Absent when none. */
  skipped?: GrepSkip[];
}

/** One entry a grep, glob or ls skipped, and why. */
export interface GrepSkip {
  path: string;
  /** `too_large`, `permission_denied`, `unreadable`, `too_deep` or `invalid_name` (a file whose
   * name no virtual path can hold: not UTF-8, a control character or backslash, a leading `~`,
   * a drive letter; `path` shows it escaped). */
  reason: string;
}

/** One directory level, sorted by path; directories end with `/`. */
export interface LsResult {
  entries: FileInfo[];
  /** Entries no virtual path can name (FilesystemBackend: not UTF-8, a control character or
   * backslash, a leading `~`; reason `invalid_name`, the name shown escaped), smallest first, at
   * most 100. Absent when none. */
  skipped?: GrepSkip[];
}

/** Options of {@link CoreFileTable.glob}. */
export interface GlobOptions {
  /** `*` and `?` never cross `/`; `**`, `[...]` and `{a,b}` are supported; dotfiles match.
   * A pattern starting with `/` is anchored at the root. */
  pattern: string;
  /** Directory relative patterns are matched from. Default: `/`. */
  path?: string;
  /** Cap on results; `truncated` tells when hit. Default: no cap. */
  maxResults?: number;
}

/** Files matching a glob, sorted by path. */
export interface GlobResult {
  files: FileInfo[];
  truncated: boolean;
  /** Directories or entries the walk could not look into (FilesystemBackend: unreadable, too
   * deep, a name no virtual path can hold), smallest paths first, at most 100. Absent when none. */
  skipped?: GrepSkip[];
}

/** Options of {@link CoreFileTable.edit}. */
export interface EditOptions {
  path: string;
  oldString: string;
  newString: string;
  /** Replace every occurrence instead of requiring exactly one. Default: `false`. */
  replaceAll?: boolean;
  /** Default: `Date.now()`. */
  modifiedAt?: number;
  /** Compare-and-swap on the file's version, as in {@link WriteOptions.ifVersion}. */
  ifVersion?: string;
}

/** The outcome of an edit. */
export interface EditResult {
  path: string;
  occurrences: number;
  version: string;
}

/** Where a path routes: `route` is the index of the matching prefix, or `null` for the default. */
export interface Route {
  route: number | null;
  prefix: string | null;
  /** The path as the mounted backend sees it. */
  path: string;
  /** The whole path, normalised. */
  outer: string;
}

/** A longest-prefix router over mount points such as `/memories/`. */
export interface CoreRouter {
  /** The normalised prefixes (trailing `/`), in construction order. */
  readonly prefixes: readonly string[];
  route(path: string): Result<Route>;
  // ---- composite fan-out (crates/engram-core/src/composite.rs) ----
  /** Merges the grep answers of a composite's backends as if one tree had been searched:
   * mount paths prefixed, paths a route hides dropped from the default backend's answer,
   * `pathGlob` applied to the mounts' outer paths, path order, one `maxCount` over the whole. */
  mergeGrep(parts: readonly MountPart<GrepResult>[], options: GrepMergeOptions): Result<GrepResult>;
  /** Merges glob answers: mount paths prefixed and, with `pattern`, kept only where it admits
   * the outer path (relative to `root`, or anchored); shadowed default paths dropped; path
   * order; at most `maxResults` (default: no cap). */
  mergeGlob(parts: readonly MountPart<GlobResult>[], options: { pattern?: string; root: string; maxResults?: number }): Result<GlobResult>;
  /** The mounts a composite glob at the normalised directory `root` fans out to, each with the
   * narrowest pattern and inner directory that still holds every match. */
  globAsks(pattern: string, root: string): GlobAsk[];
  /** Lists the normalised directory `dir` as a composite shows it. With `mount` (a route
   * index), `entries` are that mount's listing and get its prefix; with `null`, they are the
   * default backend's: entries a route hides are dropped and the first directory of each
   * route below `dir` is added. Path order. What the listing `skipped` is carried as its
   * entries are. */
  mergeLs(dir: string, mount: number | null, listing: Readonly<LsResult>): Result<LsResult>;
  /** The route indices strictly below the normalised directory `dir`, in construction order. */
  mountsUnder(dir: string): number[];
  // ---- composite fan-out over resident tables (CompositeBackend; composite.rs GlobFanOut) ----
  /** A composite glob at the normalised directory `root` answered from core file tables: give
   * each of {@link CoreFanOut.asks} its table, then take the merged answer once. The answer
   * equals the per-backend fan-out's (push-down, shadowing, one `maxResults` cap). A pattern
   * the core refuses (say, with a lone surrogate) is the `{ error }`. */
  globFanOut(pattern: string, root: string, maxResults?: number): Result<{ fan: CoreFanOut<FanGlobResult> }>;
  /** A composite grep at the normalised directory `root` (`options.path` is ignored), as
   * {@link CoreRouter.globFanOut}. With `textChars`, only the `grep` tool's text of at most that
   * many characters is wanted: each source stops searching once its own lines fill it, `text()`
   * answers as without, and `finish()` fails (`unsupported`). Default: the whole answer. */
  grepFanOut(options: GrepOptions, root: string, textChars?: number): Result<{ fan: CoreFanOut<GrepResult> }>;
  /** A composite `ls` of the normalised directory `dir` in one call, from the core file table
   * of the backend `dir` routes to (`mount`: its route index, `null` for the default backend;
   * `inner`: `dir` as that backend sees it). As {@link CoreRouter.mergeLs} over that backend's
   * own listing; a mount's error names the outer path. */
  lsTable(dir: string, mount: number | null, inner: string, table: CoreFileTable): Result<{ entries: FileInfo[] }>;
}

/** A fan-out in progress (see {@link CoreRouter.globFanOut}). */
export interface CoreFanOut<T> {
  /** The sources to give, the default backend (`mount: null`) first when it is asked; `path`
   * is the source's own directory the call reaches. For grep, also how a source is asked when
   * it is searched through its own `grep` instead (CompositeBackend's per-backend path):
   * `globbed` — with the call's `glob` (else none); `maxCount` — with this cap (`undefined`:
   * none). Unused for glob. */
  readonly asks: readonly FanAsk[];
  /** Searches `table` as the source `mount`: the error (a mount's names the outer path) or
   * `undefined`. */
  add(mount: number | null, table: CoreFileTable): ErrorData | undefined;
  /** The merged answer (outer paths); ends the fan-out. */
  finish(): Result<T>;
  /** The tool's text of the merged answer, capped at `maxChars`; ends the fan-out. */
  text(maxChars: number): Result<{ text: string }>;
  /** Ends the fan-out without an answer. */
  dispose(): void;
}

/** One source of a fan-out (see {@link CoreFanOut.asks}). */
export interface FanAsk {
  mount: number | null;
  path: string;
  globbed: boolean;
  maxCount: number | undefined;
}

/** A fan-out glob's answer with the route each file came from (`-1`: the default backend). */
export interface FanGlobResult extends GlobResult {
  sources: ArrayLike<number>;
}

/** One backend's answer in a composite fan-out: `mount` is the route index, or `null` for
 * the default backend (whose paths are outer already). */
export interface MountPart<T> {
  mount: number | null;
  result: T;
}

/** Options of {@link CoreRouter.mergeGrep}. */
export interface GrepMergeOptions {
  /** Default: `"content"`. */
  outputMode?: GrepOutputMode;
  /** One cap over the merged answer, at most the core's ceiling (10,000) as in one search.
   * Default: that ceiling. */
  maxCount?: number;
  /** A grep `glob` containing `/`, relative to `root`: applied here to the mounts' outer paths
   * (the mounts were searched without it). Default: none. */
  pathGlob?: string;
  /** The search directory (outer, normalised). */
  root: string;
}

/** What one mount is asked for when a composite glob fans out. */
export interface GlobAsk {
  mount: number;
  pattern: string;
  /** The mount's inner directory. */
  path: string;
}

/** Where a file table stood (its version and change counters), for {@link CoreFileTable.deltaSince}. */
export interface FileTableMark {
  readonly lastVersion: number;
  readonly changes: number;
}

/**
 * Files resident inside the core, updated incrementally: nothing is copied across the boundary
 * except the arguments and results of each call.
 */
export interface CoreFileTable {
  /** Number of files. */
  readonly size: number;
  /** Counts every change (write, append, edit, delete) since the table was created or
   * restored; an equal count means equal contents, so a checkpoint can skip the table. */
  readonly changes: number;
  /** The table's counters now, to take {@link CoreFileTable.deltaSince} against later. */
  mark(): FileTableMark;
  /** The files written since `mark`, as a delta record for {@link Core.applyFileDeltas} (no
   * files when nothing changed), or `undefined` when only a full snapshot describes the change:
   * a file was deleted since, or `mark` is another table's. */
  deltaSince(mark: FileTableMark): Uint8Array | undefined;
  write(path: string, content: string | Uint8Array, options?: WriteOptions): Result<{ path: string; version: string }>;
  /** Writes many files in one call (seeding a thread's files): each content crosses the
   * boundary once, straight into the table. All or nothing: on the first failing file the error
   * names its path and no file is written. A path given twice keeps its last content. `written`
   * counts the files. A file's modification time is its entry's third element, else
   * `options.modifiedAt` (default: now). The entries take the versions after the table's
   * {@link FileTableMark.lastVersion}, in order: entry `i` is version `lastVersion + 1 + i`. */
  writeMany(
    files: Iterable<readonly [path: string, content: string | Uint8Array, modifiedAt?: number]>,
    options?: { modifiedAt?: number },
  ): Result<{ written: number }>;
  /** Appends to a file, creating it when missing; only the new bytes cross the boundary. */
  append(path: string, content: string | Uint8Array, options?: { modifiedAt?: number }): Result<{ path: string; version: string }>;
  read(path: string, options?: ReadOptions): Result<ReadResult>;
  /** Raw bytes of a file; `undefined` when missing or a directory. */
  readBytes(path: string): Uint8Array | undefined;
  ls(path: string): Result<{ entries: FileInfo[] }>;
  stat(path: string): Result<{ info: FileInfo }>;
  /** Deletes a file, or a directory with everything beneath it. */
  delete(path: string): Result<{ deleted: number }>;
  edit(options: EditOptions): Result<EditResult>;
  grep(options: GrepOptions): Result<GrepResult>;
  /** Files matching a glob, sorted by path. Each file's `version` is the table's version as a
   * decimal string, or what `versionOf` names it (a backend whose files carry versions of their
   * own, such as a store's revisions). */
  glob(options: GlobOptions, versionOf?: (tableVersion: number) => string): Result<GlobResult>;
  /** Every file with its metadata, compactly, for a thread checkpoint
   * (see {@link Core.restoreFileTable}). */
  snapshot(): Uint8Array;
  /** Removes every file at once and releases the memory they hold now, rather than when the
   * table is garbage collected (on WASM, memory that only a collection gives back). One change:
   * a {@link CoreFileTable.deltaSince} across it is `undefined`. */
  clear(): void;
  // ---- tool text: what the model reads, made in one core call ----
  /** The `grep` tool's text (grouped `path:` / `  12: line` output, file list or counts, with
   * the notes for no matches and for a search stopped at `maxCount`), cut to `maxChars` UTF-16
   * units by {@link Core.capOutput}'s rule. The search stops once the capped text is decided, so
   * a grep with many matches never builds them as objects. */
  grepText(options: GrepOptions, maxChars: number): Result<{ text: string }>;
  /** The `glob` tool's text: one path per line, capped. */
  globText(options: GlobOptions, maxChars: number): Result<{ text: string }>;
  /** The `ls` tool's text: `path (N bytes)` / `path (directory)` lines, capped; `shown` is the
   * path as the model gave it (for the empty-listing note). */
  lsText(path: string, shown: string, maxChars: number): Result<{ text: string }>;
  /** The `read_file` tool's text: `cat -n` rows and a note on how to continue, capped; `shown`
   * is the path as the model gave it. */
  readText(path: string, shown: string, options: { offset: number; limit: number }, maxChars: number): Result<{ text: string }>;
  // ---- end tool text ----
  /** Releases the table's memory now instead of at garbage collection. */
  dispose(): void;
}

/** The Rust core, native or WebAssembly: the same API either way. */
export interface Core {
  readonly kind: CoreKind;
  /** Normalises a virtual path (`invalid_path` / `path_escape` on bad input). */
  normalizePath(path: string): Result<{ path: string }>;
  /** `cat -n` formatting: the 1-based number right-aligned in 6 columns, a tab, the line;
   * lines over 5000 characters continue on rows `N.1`, `N.2`, ... */
  formatNumbered(content: string, firstLine: number): string;
  // ---- tool text: the same rules as the CoreFileTable `*Text` methods, for results another
  // backend returned ----
  /** The `grep` tool's text for a grep result, capped at `maxChars` UTF-16 units; what the
   * search skipped (`result.skipped`) is named in a closing note within the cap. */
  formatGrep(pattern: string, result: GrepResult, maxChars: number): string;
  /** The `ls` tool's text for a listing; `shown` is the path as the model gave it; entries it
   * could not name (`result.skipped`) are named in a closing note within the cap. */
  formatLs(shown: string, result: Readonly<LsResult>, maxChars: number): string;
  /** The `glob` tool's text for a glob result, capped at `maxChars` UTF-16 units; what the walk
   * skipped (`result.skipped`) is named in a closing note within the cap, as for grep. */
  formatGlob(pattern: string, result: GlobResult, maxChars: number): string;
  /** The `read_file` tool's text for a read of at most `limit` lines. */
  formatRead(shown: string, result: ReadResult, limit: number, maxChars: number): string;
  /** `text` when within `maxChars` UTF-16 units; otherwise cut on the last line break at or
   * before the cap (when past half of it), never inside a surrogate pair, with a note naming
   * the cap. */
  capOutput(text: string, maxChars: number): string;
  // ---- end tool text ----
  /** Throws {@link EngramError} when a prefix is not a valid path. */
  createRouter(prefixes: readonly string[]): CoreRouter;
  createFileTable(): CoreFileTable;
  /** Rebuilds a table from {@link CoreFileTable.snapshot} bytes; throws {@link EngramError} on a
   * corrupt snapshot (nothing partial is returned). */
  restoreFileTable(snapshot: Uint8Array): CoreFileTable;
  /** `snapshot` with `deltas` ({@link CoreFileTable.deltaSince} records) applied in order: the
   * snapshot of the table the last delta was taken from, byte for byte. Throws
   * {@link EngramError} on a damaged snapshot or delta (nothing partial is returned). */
  applyFileDeltas(snapshot: Uint8Array, deltas: readonly Uint8Array[]): Uint8Array;
  /** The canonical error for a code, for errors raised outside the core. */
  errorData(code: ErrorCode, subject: string, detail?: string): ErrorData;
  /** A mounted backend's error as a composite reports it: rendered again for the outer path
   * from its `subject` (`prefix` + subject), or — for an error without one, as a custom
   * backend may return — the canonical error of its code about `request` (the outer path
   * asked for) with the backend's message as the detail. An error about a pattern, or with a
   * code the core does not pin, is returned unchanged. */
  mountError(error: ErrorData, prefix: string, request: string): ErrorData;
  /** Keeps the normalised `paths` that a pattern admits, with exactly the core's rules:
   * `"glob"` as {@link CoreFileTable.glob}, `"grep"` as the `glob` option of grep. */
  filterPaths(kind: "glob" | "grep", pattern: string, root: string, paths: string[]): Result<{ paths: string[] }>;
  /** Okapi BM25 relevance (k1 = 1.2, b = 0.75) of each document to `query`, in document order;
   * every score is finite and `>= 0`, and `0` when a document shares no token with the query.
   * Tokens are lower-cased Unicode words, plus one token per CJK character. */
  rankBm25(query: string, documents: readonly string[]): number[];
  /** `text` with every recognised secret (API keys and tokens of about 150 formats, private
   * keys, credentials in URLs and headers, secret-like assignments, passwords stated in prose)
   * replaced by `[REDACTED]`, labels kept; `count` is how many were replaced. Idempotent. */
  redactSecrets(text: string): Redaction;
  /** Estimated tokens of `text` under a byte-level BPE tokenizer: within 10% of OpenAI's
   * `cl100k_base` on prose, code, JSON, base64, hex, UUIDs, CJK, Cyrillic, emoji and markdown
   * (engram_core::tokens). Linear, no allocation in the core. `""` → 0. */
  estimateTokens(text: string): number;
  /** {@link Core.estimateTokens} of each text, in order, in one call: counting a conversation's
   * messages crosses into the core once, not once per message. */
  estimateTokensEach(texts: readonly string[]): number[];
  // ---- prompt assembly (engram_core::prompt): the rules for the prompt's tagged sections ----
  /** `text` with every section-tag opener (`<memory>`, `</agent_memory>`, `<skills>`, … however
   * disguised: case, spacing, full-width and other NFKC forms, invisible characters, HTML
   * references) replaced by `&lt;`; other markup untouched. Idempotent. */
  neutralizeSectionTags(text: string): string;
  /** `&`, `<`, `>` escaped as `&amp;`, `&lt;`, `&gt;`, and disguised openers neutralised. */
  escapeTags(text: string): string;
  /** {@link Core.escapeTags}, then every run of whitespace (newlines included) one space,
   * trimmed: a field of the skills index stays on its line. */
  escapeField(text: string): string;
  /** The `<agent_memory>` section of the sources, in order: per present source `### path` and
   * its text, neutralised and cut to `maxTokensPerSource` with a visible note (or, for an
   * error, the reason; or a part an earlier call rendered), with each part's range. */
  memorySection(sources: readonly MemorySourceInput[], maxTokensPerSource: number): MemorySectionResult;
  /** The skills index (a short guide and one escaped `<skill>` entry per skill), or `""`. */
  skillsSection(skills: readonly { name: string; description: string; path: string }[]): string;
  /** The long-term `<memory>` block within its budget (corrections first from their own
   * budget, then summaries, then facts by score), or `""`. */
  factsBlock(input: FactsBlockInput): string;
  /** Per fact, its confidence plus its BM25 relevance to `query` divided by the best BM25 score
   * (a 0–1 relevance); the confidences alone when `query` is blank or nothing matches. The
   * ranking {@link Core.factsBlock} uses for a `query`. */
  relevanceScores(query: string, facts: readonly { content: string; confidence: number }[]): number[];
  // ---- end prompt assembly ----
}

/** One source of {@link Core.memorySection}: missing (left out), its text, the reason it could
 * not be read, or its part as an earlier call rendered it (passed through). */
export type MemorySourceInput = { path: string; kind: "missing" } | { path: string; kind: "text" | "error" | "rendered"; text: string };

/** The result of {@link Core.memorySection}. */
export interface MemorySectionResult {
  /** `<agent_memory>`, the parts separated by blank lines (or `(No memory loaded)`), `</agent_memory>`. */
  text: string;
  /** Per source, the start and end (UTF-16 offsets into `text`, for `slice`) of its part;
   * `0, 0` when the source adds nothing. */
  parts: ArrayLike<number>;
}

/** What {@link Core.factsBlock} packs. */
export interface FactsBlockInput {
  /** The six summaries in order: work, personal, current focus, recent months, earlier,
   * background (`""` = none). */
  summaries: readonly string[];
  facts: readonly { content: string; category: string; confidence: number; sourceError?: string | undefined }[];
  /** A score per fact, higher first. Default: confidence, plus BM25 relevance to `query`. */
  scores?: readonly number[] | undefined;
  /** The current request, for relevance ranking when `scores` is not given. Default: none. */
  query?: string | undefined;
  /** Upper bound of the block's estimated tokens, tags included. */
  maxTokens: number;
  /** Tokens that corrections may use, taken first. */
  correctionTokens: number;
}

/** The result of {@link Core.redactSecrets}. */
export interface Redaction {
  text: string;
  /** How many secrets were replaced. */
  count: number;
}
