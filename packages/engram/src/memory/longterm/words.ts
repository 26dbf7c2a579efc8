/**
 * Word-level checks of facts: the content words of a text (filler words dropped, crude stems
 * compared), whether a proposed fact is supported by what the user said, whether two facts say
 * the same thing, and whether redaction left a fact meaningless.
 * @module
 */
import { REDACTED } from "./redact.js";

/** Words that carry no fact on their own (English; other languages pass through). */
const FILLER = new Set(
  (
    "a an the and or but if of to in on at by for with from as into about over under than then so " +
    "is are was were be been being am do does did has have had having will would shall should can could may might must " +
    "i me my mine myself we us our ours you your yours he him his she her hers it its they them their theirs " +
    "this that these those there here what which who whom whose when where why how " +
    "not no yes very just also too really quite all any some each every both either neither " +
    "user users user's assistant said says say saying told tell stated states mentioned mentions " +
    "like likes s t d ll m re ve"
  ).split(" "),
);

/** Words about credentials: a fact made only of these and a placeholder says nothing. */
const CREDENTIAL = new Set(
  (
    "api key keys apikey token tokens password passwords passwd pwd passphrase passcode secret secrets " +
    "credential credentials private access auth bearer login pin code redacted"
  ).split(" "),
);

/** Characters that are a word each: CJK ideographs, kana, hangul syllables (and the marks
 * that live inside such words: the prolonged-sound mark, the ideographic iteration mark). Per
 * character, not per dictionary word: a segmenter's dictionary (Intl.Segmenter) differs between
 * ICU versions and runtimes and splits the same characters differently in different sentences,
 * while a restated fact keeps the characters of what the user said. */
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u30fc\u3005]/u;
/** A run of letters, marks and digits (an inner apostrophe kept: "don't", "user's"). */
const RUN = /[\p{L}\p{M}\p{N}]+(?:['’][\p{L}]+)?/gu;
/** Inside a run: one CJK character, or a stretch of anything else ("rust", "3", "python3"). */
const PIECE = new RegExp(`${CJK.source}|(?:(?!${CJK.source})[^])+`, "gu");

/**
 * The content words of `text`: lower-cased (NFKC) letters and digits, filler words and redaction
 * placeholders dropped. Each CJK character is a word of its own, and numbers and words of other
 * scripts inside a CJK run stay words ("用户有3只猫" → 用 户 有 3 只 猫; "Rust를" → rust 를).
 */
export function contentWords(text: string): string[] {
  const out: string[] = [];
  const plain = text.split(REDACTED).join(" ").normalize("NFKC").toLowerCase();
  for (const run of plain.matchAll(RUN)) {
    for (const piece of run[0].matchAll(PIECE)) {
      const word = piece[0].replace(/['’]s$/, "");
      if (!FILLER.has(word)) out.push(word);
    }
  }
  return out;
}

/** Two words match when equal, or when one is a prefix of the other of at least 3 characters
 * ("use"/"uses"), or they share a prefix of at least 5 ("prefers"/"preference"); words with a
 * digit only when equal. */
export function sameWord(a: string, b: string): boolean {
  if (a === b) return true;
  if (/\p{N}/u.test(a) || /\p{N}/u.test(b)) return false; // "python3" is not "python2"
  const [short, long] = a.length <= b.length ? [a, b] : [b, a];
  if (short.length >= 3 && long.startsWith(short)) return true;
  let n = 0;
  while (n < short.length && short[n] === long[n]) n++;
  return n >= 5;
}

/** Share (0–1) of `fact`'s content words that occur in `source` (1 for a fact without content
 * words: such a fact is judged by `isMeaningless` instead). */
export function supportShare(fact: string, source: readonly string[] | ReadonlySet<string>): number {
  const words = contentWords(fact);
  if (words.length === 0) return 1;
  const pool = [...source];
  const exact = source instanceof Set ? source : new Set(pool);
  let found = 0;
  for (const w of words) if (exact.has(w) || pool.some((s) => sameWord(w, s))) found++;
  return found / words.length;
}

/** True when two facts have the same content words (in any order, stems compared), e.g.
 * "User prefers pnpm." and "Prefers pnpm". */
export function sameContent(a: string, b: string): boolean {
  const wa = [...new Set(contentWords(a))];
  const wb = [...new Set(contentWords(b))];
  if (wa.length === 0 || wa.length !== wb.length) return false;
  return wa.every((w) => wb.some((v) => sameWord(w, v))) && wb.every((w) => wa.some((v) => sameWord(w, v)));
}

/**
 * True when a fact says nothing once secrets are redacted: no content word at all, or it holds
 * a redaction placeholder and fewer than two content words remain besides credential words
 * ("My API key is [REDACTED]", "password=[REDACTED]").
 */
export function isMeaningless(text: string): boolean {
  const words = contentWords(text);
  if (words.length === 0) return true;
  if (!text.includes(REDACTED)) return false;
  return words.filter((w) => !CREDENTIAL.has(w)).length < 2;
}
