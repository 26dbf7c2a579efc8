/**
 * Reading a configuration file without trusting it: at most {@link MAX_CONFIG_FILE_BYTES}, a
 * regular file only (a FIFO or a device such as `/dev/zero` is refused without blocking or
 * reading), and for a project file never through a symbolic link that leaves the project. Errors
 * never show the file's content (a link could point at a secret): a JSON error gives its line and
 * column only.
 * @module
 */
import { closeSync, constants, fstatSync, openSync, readSync, realpathSync } from "node:fs";
import { isAbsolute, relative, sep } from "node:path";
import { ConfigError } from "engram";

/** The largest configuration file read (a real one is well under a kilobyte). */
export const MAX_CONFIG_FILE_BYTES = 1024 * 1024;

/** Whether `path` is `dir` or inside it (both already without symbolic links). */
export function within(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

function unreadable(path: string, why: string): ConfigError {
  return new ConfigError("(file)", `cannot read ${path}: ${why}`);
}

/** `path` with its links resolved, refused when that leaves `project` (when given). */
function target(path: string, project: string | undefined): string {
  let real: string;
  try {
    real = realpathSync(path);
  } catch (e) {
    throw unreadable(path, (e as NodeJS.ErrnoException).code ?? "not found");
  }
  if (project !== undefined && !within(real, realpathSync(project))) {
    throw unreadable(path, `it is a symbolic link out of the project directory ${project} (a project file must be inside it)`);
  }
  return real;
}

/**
 * The text of the configuration file `path`. `project`: the directory a project file must stay
 * in, links resolved.
 * @throws ConfigError when it cannot be read, leaves `project`, is not a regular file, or is
 * larger than {@link MAX_CONFIG_FILE_BYTES}.
 */
export function readConfigText(path: string, project?: string): string {
  const real = target(path, project);
  let fd: number;
  try {
    // O_NOFOLLOW: the path was just resolved; a link swapped in since is not followed.
    // O_NONBLOCK: opening a FIFO with no writer returns at once (it is refused below).
    fd = openSync(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    throw unreadable(path, (e as NodeJS.ErrnoException).code ?? "open failed");
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw unreadable(path, "not a regular file");
    if (stat.size > MAX_CONFIG_FILE_BYTES) throw unreadable(path, `larger than ${MAX_CONFIG_FILE_BYTES} bytes`);
    // One byte more than the cap tells a file that grew since fstat.
    const buffer = Buffer.alloc(MAX_CONFIG_FILE_BYTES + 1);
    let length = 0;
    let read: number;
    do {
      read = readSync(fd, buffer, length, buffer.length - length, null);
      length += read;
    } while (read > 0 && length < buffer.length);
    if (length > MAX_CONFIG_FILE_BYTES) throw unreadable(path, `larger than ${MAX_CONFIG_FILE_BYTES} bytes`);
    return buffer.toString("utf8", 0, length);
  } finally {
    closeSync(fd);
  }
}

/** Line and column (1-based) of the character at `offset` in `text`. */
function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const lineStart = before.lastIndexOf("\n") + 1;
  return { line: before.split("\n").length, column: offset - lineStart + 1 };
}

/**
 * `text` parsed as JSON.
 * @throws ConfigError naming the line and column of the error when the engine gives one, and
 * nothing of the text.
 */
export function parseConfigJson(text: string, path: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    // The engine's message quotes the text; only the offset it names is used.
    const offset = /\bposition (\d+)/.exec(e instanceof Error ? e.message : "")?.[1];
    const at = offset === undefined ? undefined : lineAndColumn(text, Number(offset));
    throw new ConfigError("(file)", `${path} is not valid JSON${at ? ` (line ${at.line}, column ${at.column})` : ""}`);
  }
}
