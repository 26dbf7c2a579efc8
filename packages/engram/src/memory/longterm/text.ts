/**
 * Text helpers shared by capture, the updater and injection: escaping for tag-delimited prompt
 * blocks, `<uploaded_files>` removal, upload-mention stripping, duplicate keys.
 * @module
 */
import { cutAt } from "../../core/text.js";

export { escapeTags } from "../../prompt/escape.js";

const UPLOADED_BLOCK = /<uploaded_files\b[^>]*>[\s\S]*?(?:<\/uploaded_files\s*>|$)/gi;

/** Removes `<uploaded_files>…</uploaded_files>` blocks (an unterminated one runs to the end). */
export function stripUploadedFiles(text: string): string {
  return text.replace(UPLOADED_BLOCK, "").trim();
}

const EN_UPLOAD = /\b(?:upload(?:s|ed|ing)?|attach(?:ed|es|ing|ment|ments)?)\b/i;
const EN_FILE = /\b(?:files?|documents?|attachments?|pdfs?|images?|spreadsheets?|csvs?|screenshots?)\b/i;
const ZH_UPLOAD = /上传|附上|附件/;
const ZH_FILE = /文件|文档|附件|图片|表格|截图/;
const UPLOAD_PATH = /\/mnt\/user-data\/uploads|<\/?uploaded_files/i;

/** True when a sentence talks about files uploaded or attached in a conversation: those are
 * per-session and must not become long-term memory (the agent would look for them later). */
export function mentionsUpload(sentence: string): boolean {
  return (
    UPLOAD_PATH.test(sentence) ||
    (EN_UPLOAD.test(sentence) && EN_FILE.test(sentence)) ||
    (ZH_UPLOAD.test(sentence) && ZH_FILE.test(sentence))
  );
}

/** The sentences of `text`, each with what ends it (its punctuation, the line break), so that
 * joining them gives `text` back. A sentence ends at `.`, `!` or `?` followed by a space or the
 * end (so `report.pdf` stays whole), at `。！？` or at a line break. */
export function sentencesOf(text: string): string[] {
  return (text.match(/[^\n]*?(?:[.!?]+(?=\s|$)|[。！？]+|\n+|$)/g) ?? []).filter((s) => s !== "");
}

/** `text` without the sentences that {@link mentionsUpload} (see {@link sentencesOf}). */
export function stripUploadMentions(text: string): string {
  return sentencesOf(text)
    .filter((s) => !mentionsUpload(s))
    .join("")
    .replace(/[ \t]{2,}/g, " ")
    .trim();
}

/** The duplicate-detection key of a fact: trimmed, Unicode-normalised (NFKC), lower-cased, inner
 * whitespace collapsed — a practical case fold. */
export function factKey(content: string): string {
  return content.normalize("NFKC").trim().replace(/\s+/g, " ").toLowerCase();
}

/** `text` cut to at most `max` characters (code points kept whole), with `…` when cut. */
export function truncateChars(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${cutAt(text, Math.max(0, max - 1))}…`;
}
