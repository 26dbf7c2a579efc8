/**
 * The one backend contract (DESIGN §4): every backend — State, Store, Filesystem, Composite —
 * implements it with the same paths, ordering and error codes.
 *
 * Errors, in two kinds:
 * - What goes wrong with a file or a path resolves to `{ error: { code, message } }`, with the
 *   same code in every backend: a missing file, a directory, a path that is malformed, escapes
 *   the root or is longer than the backend can hold, a failed edit match, a `conflict`. Paths and
 *   patterns come from models; these answers are theirs to read.
 * - A call a program gets wrong rejects with an `EngramError` `invalid_argument` and
 *   changes nothing: an argument of the wrong type (a path, pattern, `oldString` or `newString`
 *   that is not a string; content that is neither a string nor a `Uint8Array`), or a
 *   `CompositeBackend` route that is not a backend (thrown at construction). A store that
 *   fails (an unreachable database) rejects with its `store_error`.
 * @module
 */
import type {
  EditResult,
  FileInfo,
  GlobResult,
  GrepOptions,
  GrepResult,
  LsResult,
  ReadOptions,
  ReadResult,
  Result,
} from "../core/types.js";

/** Options of {@link Backend.write}. */
export interface BackendWriteOptions {
  /** Compare-and-swap: fail with `conflict` unless the file's current version equals this
   * (`"0"` = the file must not exist). Default: unconditional. */
  ifVersion?: string;
}

/** Options of {@link Backend.edit}. */
export interface BackendEditOptions extends BackendWriteOptions {
  /** Replace every occurrence instead of requiring exactly one. Default: `false`. */
  replaceAll?: boolean;
}

/** Options of {@link Backend.grep}: everything {@link GrepOptions} has but the pattern. */
export type BackendGrepOptions = Omit<GrepOptions, "pattern">;

/** Options of {@link Backend.glob}. */
export interface BackendGlobOptions {
  /** Directory relative patterns are matched from. Default: `/`. */
  path?: string;
  /** Cap on results; `truncated` tells when hit. Default: no cap. */
  maxResults?: number;
}

/** A filesystem tool call whose text for the model a backend may make itself (the `toolText`
 * capability, see capabilities.ts). `path` is as the model gave it. */
export type ToolTextRequest =
  | { op: "ls"; path: string }
  | { op: "read"; path: string; offset: number; limit: number }
  | { op: "glob"; pattern: string; path: string }
  | { op: "grep"; pattern: string; options: BackendGrepOptions };

/** What {@link Backend.read} answers: the lines, and, when the backend knows it, the version of
 * the file they were read from (taken together with them, so it never names other content). */
export type BackendReadResult = ReadResult & { version?: string };

/** Options of {@link Backend.execute}. */
export interface ExecuteOptions {
  /** Wall-clock limit; every process of the command is killed when it passes. Default: the
   * backend's (2 minutes for a sandboxed `FilesystemBackend`). */
  timeoutMs?: number;
  /** Working directory, a path of this backend. Default: `/`. */
  cwd?: string;
  /** Variables the command gets besides the harmless ones (locale, terminal, `PATH`); nothing
   * else of the agent's environment reaches it. */
  env?: Record<string, string>;
  /** Kills the command (every process of it) when it fires. */
  signal?: AbortSignal;
}

/** How a command run by {@link Backend.execute} ended. */
export interface ExecuteResult {
  /** stdout and stderr interleaved; over the backend's cap, its head and tail with a line saying
   * how much was left out between them. */
  output: string;
  /** The exit status; `null` when a signal ended the command. */
  exitCode: number | null;
  /** Output was cut to the cap. */
  truncated: boolean;
  /** The timeout killed it. */
  timedOut: boolean;
  /** The signal fired and killed it. */
  cancelled: boolean;
}

/** A file's metadata including its version (which changes on every write). */
export type VersionedFileInfo = FileInfo & { version: string };

/** The contract every file backend implements. */
export interface Backend {
  /** One directory level, sorted by path; directories end with `/`. */
  ls(path: string): Promise<Result<LsResult>>;
  /** Raw lines (no numbers) by 0-based `offset` and `limit`. */
  read(path: string, options?: ReadOptions): Promise<Result<BackendReadResult>>;
  /** The whole file as bytes. */
  readBytes(path: string): Promise<Result<{ data: Uint8Array }>>;
  /** Creates or overwrites a file, creating parent directories. */
  write(path: string, content: string | Uint8Array, options?: BackendWriteOptions): Promise<Result<{ path: string; version: string }>>;
  /** Appends to a file, creating it when missing. Optional: callers fall back to read + write. */
  append?(path: string, content: string | Uint8Array): Promise<Result<{ path: string; version: string }>>;
  /** Exact-string replacement; one match required unless `replaceAll`; CRLF files keep CRLF. */
  edit(path: string, oldString: string, newString: string, options?: BackendEditOptions): Promise<Result<EditResult>>;
  /** Literal (or `regex: true`) search, sorted by path. */
  grep(pattern: string, options?: BackendGrepOptions): Promise<Result<GrepResult>>;
  /** Files matching a glob, sorted by path. */
  glob(pattern: string, options?: BackendGlobOptions): Promise<Result<GlobResult>>;
  /** Deletes a file, or a directory with everything beneath it. */
  delete(path: string): Promise<Result<{ deleted: number }>>;
  /** Metadata of a file (with `version`) or a directory. */
  stat(path: string): Promise<Result<{ info: FileInfo }>>;
  /** Optional, for backends whose directories can be symbolic links: the path of the file a
   * write to `path` reaches, as this backend names it (links among the parent directories
   * resolved; the last component as named). Callers that decide by path what a write is (a
   * memory source, say) decide on this one. Default: absent (every path is its own). */
  realPath?(path: string): Promise<Result<{ path: string }>>;
  /** Optional: runs a shell command over this backend's files. A backend that has it gives the
   * agent an `execute` tool; one that runs commands must confine them to what the backend may
   * reach (see `FilesystemBackend`'s `execute` option). `unsupported` where it cannot run one. */
  execute?(command: string, options?: ExecuteOptions): Promise<Result<ExecuteResult>>;
}
