/**
 * Word-level checks of facts: the content words of a text (filler words dropped, crude stems
 * compared), whether a proposed fact is supported by what the user said, whether two facts say
 * the same thing, and whether redaction left a fact meaningless.
 * @module
 */
import { REDACTED } from "./redact.js";

/** English function words (and the pieces a split contraction leaves: "s", "ll", "re", …). */
export const FUNCTION_WORDS: readonly string[] = (
  "a an the and or but if of to in on at by for with without from as into about over under than then so " +
  "is are was were be been being am do does did has have had having will would shall should can could may might must " +
  "i me my mine myself we us our ours you your yours he him his she her hers it its they them their theirs " +
  "this that these those there here what which who whom whose when where why how " +
  "not no yes very just also too really quite all any some each every both either neither s t d ll m re ve"
).split(" ");

/** Words that carry no fact on their own: the function words, and the particles and
 * pronoun-like words of Chinese, Japanese and Korean (single characters, see {@link CJK}). */
const FILLER = new Set([
  ...FUNCTION_WORDS,
  ...(
    "always usually often mostly generally typically normally instead rather " +
    "user users user's assistant said says say saying told tell stated states mentioned mentions " +
    "like likes " +
    "的 了 是 在 着 过 吗 呢 吧 啊 は が を に の で と も へ や か ね よ 는 은 이 가 을 를 의 도 에 와 과 요"
  ).split(" "),
]);

/** Multi-character CJK words for "the user" and "I": a fact about the user names them so, the
 * user says "I", and neither is what the fact says. Removed before words are split. */
const CJK_PERSON = /用户|使用者|我|ユーザー|ユーザ|私|僕|俺|사용자|유저/gu;

/**
 * How a fact is framed rather than what it says: its relation (prefers, uses, lives, is called,
 * works, learns, wants) and the attribute it is about (editor, language, indentation). A fact
 * may use these without the user having said them (the user says "I always indent with tabs",
 * the fact says "Prefers tabs for indentation"); every other word must come from the user.
 * Each relation maps to its meaning class ("uses" and "prefers" say the same of a tool), which
 * deduplication compares; attributes map to `""` (no class).
 */
const FRAME = new Map<string, string>([
  ...group(
    "prefer",
    "prefer prefers preferred preferring preference preferences favorite favourite favor favors favour favours love loves enjoy enjoys fan use uses using used usage choose chooses chose chosen pick picks",
  ),
  ...group("live", "live lives living lived based located resides reside home"),
  ...group("name", "name names named called call calls"),
  ...group("work", "work works working worked job jobs employed occupation profession role position career"),
  ...group("learn", "learn learns learning learned studies study studying"),
  ...group("want", "want wants wanted wish wishes plan plans planning goal goals aim aims"),
  ...group(
    "",
    "editor ide language languages indentation indent indenting style tool tools framework frameworks library libraries " +
      "city country company employer team project projects hobby hobbies os shell setup environment code coding programming " +
      "development formatting format person people",
  ),
  // Single CJK characters of the same relations (喜欢 like, 使用 use, 叫 be called, 名字/名前/이름
  // name, 住 live, 工作/働 work, 好き like, 좋아하다 like, 하다 do, 살다/산다 live, 일 work).
  ...group("", "喜 欢 爱 用 使 叫 名 字 住 工 作 働 好 き 前 좋 하 한 해 름 살 산 일"),
]);

function group(meaning: string, words: string): [string, string][] {
  return words.split(" ").map((w) => [w, meaning]);
}

/** Words that turn a fact around ("does not use", "dislikes", "without sugar"): two facts that
 * differ in them never say the same thing. */
const NEGATION = /^(?:not|no|never|without|dislikes?|disliked|hates?|hated|avoids?|avoided|不|没|沒|别|않|못)$/u;

/** Words about credentials: a fact made only of these and a placeholder says nothing. */
const CREDENTIAL = new Set(
  (
    "api key keys apikey token tokens password passwords passwd pwd passphrase passcode secret secrets " +
    "credential credentials private access auth bearer login pin code redacted"
  ).split(" "),
);

/** Characters that are a word each: CJK ideographs, kana, hangul syllables (and the marks
 * that live inside such words: the prolonged-sound mark, the ideographic iteration mark). Per
 * character, not per dictionary word: a segmenter's dictionary differs between ICU versions and
 * splits the same characters differently in different sentences, while a restated fact keeps
 * the characters of what the user said. */
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
  return words(text).filter((w) => !FILLER.has(w));
}

/** Every word of `text` (see {@link contentWords}), filler included. */
function words(text: string): string[] {
  return tokens(text).map((t) => t.word);
}

/** Japanese and Korean grammar inside words: hiragana (particles, verb endings) and a hangul
 * syllable after the first of its word (endings: "키운다" and "키워요" are one verb). The user's
 * wording of these differs from a fact's without the fact saying anything new. */
const HIRAGANA = /^\p{Script=Hiragana}$/u;
const HANGUL = /^\p{Script=Hangul}$/u;

/** The words of `text` (see {@link contentWords}), each marked when it is grammar (see
 * {@link HIRAGANA}). Negated contractions are split ("doesn't" → "does not"). */
function tokens(text: string): { word: string; grammar: boolean }[] {
  const out: { word: string; grammar: boolean }[] = [];
  const plain = text
    .split(REDACTED)
    .join(" ")
    .normalize("NFKC")
    .toLowerCase()
    .replace(CJK_PERSON, " ")
    .replace(/\b(?:can['’]t|cannot)\b/g, "can not")
    .replace(/\bwon['’]t\b/g, "will not")
    .replace(/n['’]t\b/g, " not");
  for (const run of plain.matchAll(RUN)) {
    let previous = "";
    for (const piece of run[0].matchAll(PIECE)) {
      const word = piece[0].replace(/['’]s$/, "");
      out.push({ word, grammar: HIRAGANA.test(word) || (HANGUL.test(word) && HANGUL.test(previous)) });
      previous = word;
    }
  }
  return out;
}

/** Two words match when equal or when their stems are (see {@link stem}) and one of them is an
 * inflection ({@link isInflected}): "make" and "making"; "prefers", "preferred" and
 * "preference"; "indent" and "indentation" — but not two plain words whose stems meet ("same"
 * and "Sam", "note" and "not"), nor "java" and "javascript", nor "python3" and "python2" (a word
 * with a digit matches only itself). */
export function sameWord(a: string, b: string): boolean {
  if (a === b) return true;
  const sa = stemKey(a);
  return sa !== undefined && sa === stemKey(b) && (isInflected(a) || isInflected(b));
}

/** Whether {@link stem} removes a suffix from `word` ("named", "goes", "indentation"; not
 * "name", "same" or "go"). */
export function isInflected(word: string): boolean {
  return cutSuffix(word) !== word;
}

/** `text` with every regular-expression metacharacter escaped. */
export function regExpLiteral(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** What {@link sameWord} compares: the word's {@link stem}, or `undefined` for a word that only
 * matches itself (one with a digit, or a stem shorter than two letters). */
export function stemKey(word: string): string | undefined {
  if (/\p{N}/u.test(word)) return undefined;
  const s = stem(word);
  return s.length >= 2 ? s : undefined;
}

const SUFFIX = /(?:ations?|ings?|ions?|ences?|ances?|ments?|ed|es|s|ly)$/;

/** A crude English stem: one inflectional or derivational suffix removed (when at least three
 * letters remain, or two of a verb in "o" before "-es" or "-ing": "goes", "going" → "go"), then
 * a doubled final consonant, or the "i" of "-ies" and "-ied" ("studies", "studied" → "study"),
 * and a final "e" ("preferred" → "prefer", "making" and "make" → "mak"; "using" keeps its
 * suffix, since "us" would be too short). */
export function stem(word: string): string {
  let out = cutSuffix(word);
  if (out !== word && /([b-df-hj-np-tv-z])\1$/.test(out)) out = out.slice(0, -1);
  else if (/[^aeiou]i$/.test(out) && /(?:ies|ied)$/.test(word)) out = `${out.slice(0, -1)}y`;
  return out.length > 2 ? out.replace(/e$/, "") : out;
}

/** `word` without its suffix, when enough of it remains (see {@link stem}); else `word`. */
function cutSuffix(word: string): string {
  const cut = word.replace(SUFFIX, "");
  return cut.length >= 3 || (cut.length === 2 && cut.endsWith("o") && /(?:es|ing)$/.test(word)) ? cut : word;
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

/** True when two facts have the same content words (in any order, stems compared), neither is
 * negated where the other is not, and they contrast the same way round (see {@link sameSides}),
 * e.g. "User prefers pnpm." and "Prefers pnpm". */
export function sameContent(a: string, b: string): boolean {
  const wa = [...new Set(contentWords(a))];
  const wb = [...new Set(contentWords(b))];
  if (wa.length === 0 || wa.length !== wb.length || negated(a) !== negated(b) || !sameSides(a, b)) return false;
  return covers(wa, wb) && covers(wb, wa);
}

/** Every word of `some` matches a word of `all` ({@link sameWord}). */
function covers(some: readonly string[], all: readonly string[]): boolean {
  return some.every((w) => all.some((v) => sameWord(w, v)));
}

/** Whether a word of `text` is a negation ("not", "never", "no", …). */
export function negated(text: string): boolean {
  return words(text).some((w) => NEGATION.test(w));
}

/** A fact's words split into what frames it (the meaning classes of its relations) and what it
 * says (its values: every content word that is neither a framing word, see {@link FRAME}, nor
 * grammar, see {@link HIRAGANA}). */
function factTerms(text: string): { relations: Set<string>; values: string[] } {
  const relations = new Set<string>();
  const values: string[] = [];
  for (const w of new Set(tokens(text).flatMap((t) => (t.grammar || FILLER.has(t.word) ? [] : [t.word])))) {
    const meaning = frameOf(w);
    if (meaning === undefined) values.push(w);
    else if (meaning !== "") relations.add(meaning);
  }
  return { relations, values };
}

/** True when `word` (a content word) only frames a fact (see {@link FRAME}): a fact may use it
 * without the user having said it. */
export function isFramingWord(word: string): boolean {
  return frameOf(word) !== undefined;
}

function frameOf(word: string): string | undefined {
  return FRAME.get(word) ?? FRAME.get(word.replace(/(?:es|s)$/, ""));
}

/**
 * The first content word of `fact` that nobody said: not in `said` (the user's words, see
 * `userSupportWords`), not a framing word (relations and attributes, see {@link FRAME}) and not
 * Japanese or Korean grammar (see {@link HIRAGANA}). A fact whose only words are framing words
 * or grammar ("Prefers", "preference") says nothing the user said: its first content word is
 * returned.
 * `undefined` when the fact is the user's.
 */
export function unsaidWord(fact: string, said: ReadonlySet<string>): string | undefined {
  const pool = [...said];
  const isSaid = (w: string) => said.has(w) || pool.some((s) => sameWord(w, s));
  const values = tokens(fact).filter((t) => !t.grammar && !FILLER.has(t.word) && frameOf(t.word) === undefined);
  if (values.length === 0) return contentWords(fact)[0];
  return values.find((t) => !isSaid(t.word))?.word;
}

/** Share of two facts' values that match the other's (Dice coefficient, stems compared), above
 * which two facts whose values one covers say the same thing. Measured on the paraphrase and
 * non-duplicate pairs of `test/longterm.meaning.test.ts`. */
const SAME_MEANING_OVERLAP = 0.6;

/**
 * True when two facts say the same thing in other words: the same polarity, compatible
 * relations (they share a meaning class, or one has none: "Prefers tabs over spaces" and "I
 * always indent with tabs"), the values of one all found among the other's, and most values
 * shared ({@link SAME_MEANING_OVERLAP}). Numbers and names are values, so "Has 3 cats" is not
 * "Has 2 cats" and "Uses Rust" is not "Uses Python"; "Lives in Lyon" is not "Works in Lyon".
 */
export function sameMeaning(a: string, b: string): boolean {
  if (sameContent(a, b)) return true;
  if (negated(a) !== negated(b)) return false;
  const ta = factTerms(a);
  const tb = factTerms(b);
  if (ta.values.length === 0 || tb.values.length === 0) return false;
  if (ta.relations.size > 0 && tb.relations.size > 0 && !sameSet(ta.relations, tb.relations)) return false;
  if (!sameSides(a, b) || (!covers(ta.values, tb.values) && !covers(tb.values, ta.values))) return false;
  const matched =
    ta.values.filter((w) => tb.values.some((v) => sameWord(w, v))).length +
    tb.values.filter((w) => ta.values.some((v) => sameWord(w, v))).length;
  return matched / (ta.values.length + tb.values.length) >= SAME_MEANING_OVERLAP;
}

function sameSet<T>(a: ReadonlySet<T>, b: ReadonlySet<T>): boolean {
  return a.size === b.size && [...a].every((x) => b.has(x));
}

/** Where a fact contrasts two things ("TypeScript over JavaScript", "tabs rather than
 * spaces"), the side each value is on. */
const CONTRAST = /\b(?:over|than|instead of|versus|vs\.?)\b/i;

/** False when both facts contrast two things and a value of one side of one fact is on the
 * other side of the other ("TypeScript over JavaScript" is not "JavaScript over TypeScript"). */
function sameSides(a: string, b: string): boolean {
  const sa = a.split(CONTRAST);
  const sb = b.split(CONTRAST);
  if (sa.length !== 2 || sb.length !== 2) return true;
  const [a1, a2] = sa.map((side) => factTerms(side ?? "").values) as [string[], string[]];
  const [b1, b2] = sb.map((side) => factTerms(side ?? "").values) as [string[], string[]];
  const crossed = (x: string[], y: string[]) => x.some((w) => y.some((v) => sameWord(w, v)));
  return !crossed(a1, b2) && !crossed(a2, b1);
}

/** True when `fact` says everything `other` says and more (values `other` lacks): restating an
 * existing fact with more detail ("Prefers tabs" → "Prefers tabs over spaces"). */
export function addsDetail(fact: string, other: string): boolean {
  const t = factTerms(fact);
  const o = factTerms(other);
  return covers(o.values, t.values) && !covers(t.values, o.values);
}

/** A question: ends with a question mark, or opens with a question word and an auxiliary
 * ("How do I …", "What is …", "How to …"). */
const QUESTION =
  /[?？]\s*$|^\s*(?:how|what|why|where|when|which|who|whom|whose)\s+(?:do|does|did|is|are|was|were|can|could|should|would|will|to)\b/i;

/** True when `text` is a question: what the user asked is not something they said about
 * themselves (a small model lists the user's question among the facts). */
export function isQuestion(text: string): boolean {
  return QUESTION.test(text);
}

/** Thanks, farewells and acknowledgements: what the user says to the assistant, never about
 * themselves. */
const SMALL_TALK = /\b(?:thanks|thank you|thx|cheers|bye|goodbye|see you|got it|of course|that['’]?s (?:all|it) for (?:now|today))\b/iu;

/** True when `text` holds small talk ("Shift+Enter, of course. Thanks!"): a small model copies
 * the user's acknowledgement of an answer among the facts. */
export function isSmallTalk(text: string): boolean {
  return SMALL_TALK.test(text);
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
