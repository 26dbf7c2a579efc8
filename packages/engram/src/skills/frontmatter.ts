/**
 * Splits a Markdown file into its YAML frontmatter and body. The frontmatter sits between a
 * first line `---` and the next line `---` (trailing spaces, CRLF and a leading BOM are allowed).
 * @module
 */

/** A file split at its frontmatter: the YAML text (without the `---` lines) and the body after it. */
export interface Frontmatter {
  yaml: string;
  body: string;
}

const OPEN = /^---[ \t]*\r?\n/;
const CLOSE = /^---[ \t]*\r?$/m;

/**
 * Splits `text` into frontmatter and body, or says why it cannot.
 * @returns `{ yaml, body }`, or `{ error }` when the file does not start with a `---` line or
 *   the frontmatter is never closed
 */
export function splitFrontmatter(text: string): Frontmatter | { error: string } {
  const src = text.startsWith("\uFEFF") ? text.slice(1) : text;
  const open = OPEN.exec(src);
  if (!open) return { error: "no YAML frontmatter (the file must start with a '---' line)" };
  const rest = src.slice(open[0].length);
  const close = CLOSE.exec(rest);
  if (!close) return { error: "the YAML frontmatter is not closed by a '---' line" };
  const yaml = rest.slice(0, close.index);
  let body = rest.slice(close.index + close[0].length);
  if (body.startsWith("\n")) body = body.slice(1);
  return { yaml, body };
}
