/**
 * A recalled message that a fact shown in the memory block already says: "I grow tomatoes on my
 * balcony." adds nothing to "Grows tomatoes on balcony". The recalled block leaves such a line
 * out, so the prompt does not carry the same thing twice. The fact is kept rather than the line:
 * facts are the curated view (one value per slot, the newest; none a newer line updates),
 * written about the user in the third person, while recalled lines include what the user said
 * before a change.
 * @module
 */
import { contentWords, isQuestion, negated, sameWord, stemKey } from "./words.js";

/**
 * True when the fact `fact` restates the user's line `line`: the line is a statement (not a
 * question), negated as the fact is, and every content word of it is a word of the fact (stems
 * compared, see `sameWord`). A line that says more ("I moved to Lisbon last week") is kept.
 */
export function factRestatesLine(fact: string, line: string): boolean {
  return restatedBy([fact])(line);
}

/** `lines` less those a fact of `facts` restates (see {@link factRestatesLine}); order kept. */
export function notRestatedBy<T>(lines: readonly T[], facts: readonly string[], text: (line: T) => string): T[] {
  if (facts.length === 0 || lines.length === 0) return [...lines];
  const restated = restatedBy(facts);
  return lines.filter((line) => !restated(text(line)));
}

/** What a word is looked up by: its stem, or itself when it matches only itself. */
const keyOf = (word: string) => stemKey(word) ?? word;

/**
 * A test of whether a fact of `facts` restates a line, with the facts' words indexed once (a
 * memory of a thousand facts is checked against each recalled line in well under a
 * millisecond): a line's candidates are the facts holding a word of its first word's key, kept
 * while they hold each next word.
 */
function restatedBy(facts: readonly string[]): (line: string) => boolean {
  const byKey = new Map<string, Set<number>>();
  const words = facts.map((fact, i) => {
    const own = contentWords(fact);
    for (const w of own) {
      const key = keyOf(w);
      const holders = byKey.get(key);
      if (holders) holders.add(i);
      else byKey.set(key, new Set([i]));
    }
    return own;
  });
  return (line) => {
    if (isQuestion(line)) return false;
    const said = contentWords(line);
    if (said.length === 0) return false;
    let candidates: number[] | undefined;
    for (const w of said) {
      const holders = byKey.get(keyOf(w));
      const pool = candidates ?? [...(holders ?? [])];
      candidates = pool.filter((i) => holders?.has(i) && (words[i] as string[]).some((v) => sameWord(w, v)));
      if (candidates.length === 0) return false;
    }
    const lineNegated = negated(line);
    return (candidates ?? []).some((i) => negated(facts[i] as string) === lineNegated);
  };
}
