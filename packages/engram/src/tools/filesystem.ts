/**
 * The filesystem tools the agent calls: `ls`, `read_file`, `write_file`, `edit_file`, `glob`,
 * `grep` and `delete`, over any {@link Backend}.
 * @module
 */
import * as z from "zod/mini";
import type { Backend, ToolTextRequest } from "../backends/protocol.js";
import { type CoreSource, coreRef } from "../backends/core-ref.js";
import type { Core } from "../core/types.js";
import { createExecuteTool } from "./execute.js";
import { DEFAULT_MAX_OUTPUT_CHARS, errorResult, toolText } from "./format.js";
import type { Tool, ToolResult } from "./types.js";

/** Names of the filesystem tools; their results are never evicted (they paginate instead). */
export const FILESYSTEM_TOOL_NAMES = ["ls", "read_file", "write_file", "edit_file", "glob", "grep", "delete"] as const;
/** The filesystem tools that change nothing. */
const READ_ONLY_TOOLS = new Set(["ls", "read_file", "glob", "grep"]);

/** Options of {@link createFilesystemTools}. */
export interface FilesystemToolsOptions {
  backend: Backend;
  /** The core to use for formatting. Default: {@link loadCore}'s choice. */
  core?: Core | Promise<Core>;
  /** Cap on one tool output, in characters. Default: 80,000. */
  maxOutputChars?: number;
  /** Lines `read_file` returns when the model gives no limit. Default: 100. */
  defaultReadLimit?: number;
  /** Matches (or files) `grep` returns when the model gives no max_count. Default: 1000. */
  defaultGrepMaxCount?: number;
}

/** Accepts `path` as an alias of `file_path` (models mix them up). */
function withPathAlias<T extends z.core.$ZodLooseShape>(shape: T) {
  return z.pipe(
    z.transform((raw: unknown) => {
      if (raw && typeof raw === "object" && !("file_path" in raw) && "path" in raw) {
        const { path, ...rest } = raw as Record<string, unknown>;
        return { ...rest, file_path: path };
      }
      return raw;
    }),
    z.object(shape),
  );
}

/** `schema` with a description for the model. */
const described = <T extends z.ZodMiniType>(schema: T, description: string): T => schema.check(z.describe(description));

const lineIndex = z.coerce.number().check(z.int(), z.gte(0));
const count = z.coerce.number().check(z.int(), z.gt(0));
const flag = z.pipe(
  z.transform((v: unknown) => (v === "true" ? true : v === "false" ? false : v)),
  z.boolean(),
);
const path = (description: string) => described(z._default(z.string(), "/"), description);

const schemas = {
  ls: z.object({ path: path("Directory to list (absolute, e.g. /src).") }),
  read_file: withPathAlias({
    file_path: described(z.string(), "Absolute path of the file."),
    offset: described(z.optional(lineIndex), "0-based line to start at. Default 0."),
    limit: described(z.optional(count), "How many lines to read. Default 100."),
  }),
  write_file: withPathAlias({
    file_path: described(z.string(), "Absolute path of the file to create or overwrite."),
    content: described(z.string(), "The complete new content."),
  }),
  edit_file: withPathAlias({
    file_path: described(z.string(), "Absolute path of the file."),
    old_string: described(z.string(), "Exact text to replace (must be unique unless replace_all)."),
    new_string: described(z.string(), "Replacement text."),
    replace_all: described(z._default(flag, false), "Replace every occurrence."),
  }),
  glob: z.object({
    pattern: described(z.string(), "Glob such as **/*.ts; * stays within one directory, ** crosses them."),
    path: path("Directory the pattern is relative to."),
  }),
  grep: z.object({
    pattern: described(z.string(), "Text to find (literal unless regex is true)."),
    path: path("Directory or file to search."),
    glob: described(z.nullish(z.string()), "Only files matching this glob (e.g. *.py)."),
    output_mode: described(
      z._default(z.enum(["files_with_matches", "content", "count"]), "files_with_matches"),
      "files_with_matches, content (matching lines) or count.",
    ),
    max_count: described(z.optional(count), "Stop after this many matches (files in files_with_matches mode)."),
    regex: described(z._default(flag, false), "Treat pattern as a regular expression."),
    ignore_case: described(z._default(flag, false), "Case-insensitive."),
    context: described(z.optional(lineIndex), "Lines of context around each match (content mode)."),
  }),
  delete: withPathAlias({ file_path: described(z.string(), "File or directory to delete (directories recursively).") }),
};

/** Builds the seven filesystem tools over a backend, and `execute` when the backend runs commands. */
export function createFilesystemTools(options: FilesystemToolsOptions): Tool<never>[] {
  const { backend } = options;
  const core = coreRef(options.core as CoreSource);
  const max = options.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS;
  const readLimit = options.defaultReadLimit ?? 100;
  const grepMax = options.defaultGrepMaxCount ?? 1000;
  const text = async (content: string): Promise<ToolResult> => ({ content: (await core()).capOutput(content, max) });
  const made = async (request: ToolTextRequest) => toolText(backend, await core(), request, max);

  const tools = [
    tool("ls", "List one directory: files with sizes, directories ending in /.", schemas.ls, ({ path }) => made({ op: "ls", path })),
    tool(
      "read_file",
      "Read a file with line numbers (cat -n). Use offset and limit to page through long files.",
      schemas.read_file,
      ({ file_path, offset = 0, limit = readLimit }) => made({ op: "read", path: file_path, offset, limit }),
    ),
    tool("write_file", "Create or overwrite a file with the given content.", schemas.write_file, async ({ file_path, content }) => {
      const r = await backend.write(file_path, content);
      return r.error ? errorResult(r.error) : text(`Wrote ${r.path}`);
    }),
    tool(
      "edit_file",
      "Replace exact text in a file. old_string must match exactly once unless replace_all is true.",
      schemas.edit_file,
      async ({ file_path, old_string, new_string, replace_all }) => {
        const r = await backend.edit(file_path, old_string, new_string, { replaceAll: replace_all });
        if (r.error) return errorResult(r.error);
        return text(`Replaced ${r.occurrences} occurrence${r.occurrences === 1 ? "" : "s"} in ${r.path}`);
      },
    ),
    tool("glob", "Find files by glob pattern, sorted by path.", schemas.glob, ({ pattern, path }) => made({ op: "glob", pattern, path })),
    tool(
      "grep",
      "Search file contents (literal text by default). Returns matching files, lines or counts.",
      schemas.grep,
      ({ pattern, path, glob, output_mode, max_count, regex, ignore_case, context }) =>
        made({
          op: "grep",
          pattern,
          options: {
            path,
            ...(glob ? { glob } : {}),
            outputMode: output_mode,
            maxCount: max_count ?? grepMax,
            regex,
            ignoreCase: ignore_case,
            ...(context !== undefined ? { context } : {}),
          },
        }),
    ),
    tool("delete", "Delete a file, or a directory and everything in it.", schemas.delete, async ({ file_path }) => {
      const r = await backend.delete(file_path);
      return r.error ? errorResult(r.error) : text(`Deleted ${file_path} (${r.deleted} file${r.deleted === 1 ? "" : "s"})`);
    }),
  ];
  // The read-only tools can run again after a crash without changing anything.
  for (const t of tools) if (READ_ONLY_TOOLS.has(t.name)) t.idempotent = true;
  const execute = createExecuteTool(backend);
  return (execute ? [...tools, execute] : tools) as Tool<never>[];
}

function tool<S extends z.ZodMiniType>(
  name: string,
  description: string,
  schema: S,
  run: (input: z.output<S>) => Promise<ToolResult>,
): Tool<z.output<S>> {
  return { name, description, schema: schema as unknown as z.core.$ZodType<z.output<S>>, run: (input) => run(input) };
}
