/**
 * Untrusted text for the terminal. What a model, a file, a project or a stored record holds is
 * printed, never interpreted: every character a terminal would act on, or that changes how the
 * text around it reads, is shown as visible text instead.
 *
 * - C0 controls and DEL in caret notation (`^[`, `^M`, `^?`), C1 controls as `\x9b` — so no
 *   escape sequence retitles the window, clears the screen or writes the clipboard, and no
 *   carriage return overwrites a line;
 * - bidirectional controls (U+202A–U+202E, U+2066–U+2069, U+200E/U+200F, U+061C) and every other
 *   invisible format character (zero-width spaces, tag characters, U+FEFF…) and the line and
 *   paragraph separators as `<U+202E>` — so text cannot be reordered or hidden on screen;
 *   zero-width (non-)joiners are kept between two non-ASCII letters, where scripts such as
 *   Persian and emoji sequences need them;
 * - in a single-line field ({@link inert}) newlines and tabs too, so a value cannot forge a line
 *   of the command's own output; a block ({@link inertLines}) keeps its line breaks.
 * @module
 */

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const SHOWN = /[\x00-\x1f\x7f-\x9f\p{Cf}\p{Zl}\p{Zp}]/gu;
/** The joiners scripts need between letters (Persian, Indic, emoji sequences). */
const JOINERS = new Set(["\u200c", "\u200d"]);
const JOINED = /[^\p{ASCII}]/u;
const LETTER = /[\p{L}\p{M}\p{Extended_Pictographic}]/u;

/** The code point ending just before `at`, and the one starting just after it. */
function neighbours(text: string, at: number): [string, string] {
  const lowSurrogate = at >= 2 && /[\udc00-\udfff]/.test(text.charAt(at - 1));
  const before = lowSurrogate ? text.slice(at - 2, at) : text.charAt(at - 1);
  const next = text.codePointAt(at + 1);
  return [before, next === undefined ? "" : String.fromCodePoint(next)];
}

function joinsLetters(text: string, at: number): boolean {
  return neighbours(text, at).every((ch) => ch !== "" && JOINED.test(ch) && LETTER.test(ch));
}

function shown(ch: string, text: string, at: number, keepLines: boolean): string {
  const code = ch.codePointAt(0) as number;
  if (keepLines && (ch === "\n" || ch === "\t")) return ch;
  if (code < 0x20) return `^${String.fromCharCode(code + 64)}`;
  if (code === 0x7f) return "^?";
  if (code < 0xa0) return `\\x${code.toString(16)}`;
  if (JOINERS.has(ch) && joinsLetters(text, at)) return ch;
  return `<U+${code.toString(16).toUpperCase().padStart(4, "0")}>`;
}

function render(text: string, keepLines: boolean): string {
  const value = typeof text === "string" ? text : String(text);
  return (keepLines ? value.replace(/\r\n/g, "\n") : value).replace(SHOWN, (ch, at: number, all: string) => shown(ch, all, at, keepLines));
}

/** A single-line field (a name, an id, a path, a description, a message) safe for the terminal:
 * newlines and tabs are shown (`^J`, `^I`) like every other control. */
export function inert(text: string): string {
  return render(text, false);
}

/** A block of text (an answer, a file, a diff) safe for the terminal: its newlines and tabs are
 * kept (a CRLF line end becomes a newline), everything else is shown as {@link inert} shows it. */
export function inertLines(text: string): string {
  return render(text, true);
}

/** Characters JSON leaves as they are that a terminal would act on. */
const JSON_UNSAFE = /[\x7f-\x9f\p{Cf}\p{Zl}\p{Zp}]/gu;

/** `value` as one line of JSON (`--json` output, an argument to edit) that is inert on a terminal
 * too: besides the controls JSON escapes, DEL, C1 controls and format characters are written as
 * `\uXXXX` escapes — the same JSON value, nothing interpreted when it is shown. */
export function jsonText(value: unknown): string {
  const json = JSON.stringify(value) ?? "null";
  return json.replace(JSON_UNSAFE, (ch) =>
    Array.from({ length: ch.length }, (_, i) => `\\u${ch.charCodeAt(i).toString(16).padStart(4, "0")}`).join(""),
  );
}
