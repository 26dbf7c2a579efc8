/**
 * Escaping for text placed inside the system prompt's tagged sections, one rule set for every
 * section (memory, skills, long-term facts, the memory-update prompt).
 *
 * Section tags are found on a normalised view of the text, so near misses cannot open or close
 * a section either: Unicode compatibility forms (NFKC: full-width `＜／ｍｅｍｏｒｙ＞`,
 * mathematical letters), invisible format characters (zero-width space and joiners, soft
 * hyphen, bidi controls, variation selectors), any letter case, whitespace inside the tag
 * (`</ memory >`, `</MEMORY\t>`) and HTML character references for `<`, `/` and `>`
 * (`&#60;`, `&#x3C;`, `&LT`, `&sol;`). The opener of every such tag is replaced by the one
 * canonical escape `&lt;`.
 * @module
 */

/** Every tag Engram uses to delimit a section of the system prompt. */
export const PROMPT_SECTION_TAGS = ["agent_memory", "memory_guidelines", "memory", "skills", "skill"] as const;

/** The canonical escape of a tag opener; text already escaped this way is left alone. */
const ESCAPED_OPENER = "&lt;";

/** Characters that render as nothing: Unicode format characters (Cf) and the other default
 * ignorables (combining grapheme joiner, Hangul fillers, Mongolian selectors, variation
 * selectors). */
const IGNORABLE = /^(?:\p{Cf}|\p{Variation_Selector}|\u034F|\u17B4|\u17B5|\u180F|[\u115F\u1160\u3164\uFFA0])$/u;

/** HTML character references for `<`, `>` and `/` (named, decimal, hex; `;` optional). */
const ENTITY = /^&(?:(lt)|(gt)|(sol)|#0*(60|62|47)(?![0-9])|#x0*(3c|3e|2f)(?![0-9a-f]));?/i;

/** A section-tag opener at the start of a normalised view (sticky). */
const SECTION_TAG = new RegExp(`<\\s*/?\\s*(?:${PROMPT_SECTION_TAGS.join("|")})(?![\\p{L}\\p{N}_])`, "uy");

/** Characters a tag opener can start with in the original text: `<`, the two compatibility
 * forms NFKC maps to it (full-width, small) and `&` (a character reference). */
const OPENER_START = /[<&\uFF1C\uFE64]/g;

/** Non-space units of the view an opener spans at most: `<`, `/`, the longest tag name and the
 * character after it. Spaces and ignorables do not count, so any amount of them still matches. */
const OPENER_SPAN = 3 + Math.max(...PROMPT_SECTION_TAGS.map((t) => t.length));

const SPACE = /^\s$/u;

/** The text from `start` as a tag parser that forgives everything would see it, up to
 * {@link OPENER_SPAN} non-space units, with, for each UTF-16 unit of the view, the range of
 * the original text it came from. */
function normalisedView(text: string, start: number): { view: string; from: number[]; to: number[] } {
  let view = "";
  let significant = 0;
  const from: number[] = [];
  const to: number[] = [];
  const emit = (s: string, start: number, end: number) => {
    view += s;
    for (let k = 0; k < s.length; k++) {
      from.push(start);
      to.push(end);
      if (!SPACE.test(s[k] as string)) significant++;
    }
  };
  for (let i = start; i < text.length && significant < OPENER_SPAN; ) {
    const cp = text.codePointAt(i) as number;
    const len = cp > 0xffff ? 2 : 1;
    const ch = text.slice(i, i + len);
    if (ch === "&") {
      const m = ENTITY.exec(text.slice(i, i + 12));
      if (m) {
        const num = (m[4] ?? (m[5] ? String(Number.parseInt(m[5], 16)) : "")) || "";
        const decoded = m[1] || num === "60" ? "<" : m[2] || num === "62" ? ">" : "/";
        emit(decoded, i, i + m[0].length);
        i += m[0].length;
        continue;
      }
    }
    if (!IGNORABLE.test(ch)) emit(ch.normalize("NFKC").toLowerCase(), i, i + len);
    i += len;
  }
  return { view, from, to };
}

/** Original ranges of every section-tag opener, canonical `&lt;` escapes excluded. Only the
 * places that can start one are normalised (linear in the text, as a whole-text view was not
 * in practice: ~0.4 s per MB of AGENTS.md). */
function tagOpeners(text: string): [number, number][] {
  const out: [number, number][] = [];
  let after = 0;
  for (const candidate of text.matchAll(OPENER_START)) {
    const i = candidate.index ?? 0;
    if (i < after) continue;
    const { view, from, to } = normalisedView(text, i);
    SECTION_TAG.lastIndex = 0;
    if (!SECTION_TAG.test(view)) continue;
    const start = from[0] as number;
    const end = to[0] as number;
    after = end;
    if (text.slice(start, end) !== ESCAPED_OPENER) out.push([start, end]);
  }
  return out;
}

/**
 * Neutralises only the section tags, for long Markdown (AGENTS.md) where `<` is common and must
 * stay readable: nothing inside can open or close a section of the prompt, however the tag is
 * disguised (see the module notes). Idempotent.
 */
export function neutralizeSectionTags(text: string): string {
  const openers = tagOpeners(text);
  if (openers.length === 0) return text;
  let out = "";
  let copied = 0;
  for (const [start, end] of openers) {
    out += text.slice(copied, start) + ESCAPED_OPENER;
    copied = end;
  }
  return out + text.slice(copied);
}

/** Escapes `&`, `<` and `>` — and disguised section-tag openers (full-width, entity-encoded
 * after escaping is impossible, …) — for short fields (facts, skill names, descriptions, paths). */
export function escapeTags(text: string): string {
  return neutralizeSectionTags(text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;"));
}
