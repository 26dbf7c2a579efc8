/**
 * A recalled message that a fact shown in the memory block already says: "I grow tomatoes on my
 * balcony." adds nothing to "Grows tomatoes on balcony". The recalled block leaves such a line
 * out, so the prompt does not carry the same thing twice. The fact is kept rather than the line:
 * facts are the curated view (one value per slot, the newest; none a newer line updates),
 * written about the user in the third person, while recalled lines include what the user said
 * before a change.
 * @module
 */
import { contentWords, isQuestion, negated, sameWord } from "./words.js";

/**
 * True when the fact `fact` restates the user's line `line`: the line is a statement (not a
 * question), negated as the fact is, and every content word of it is a word of the fact (stems
 * compared, see `sameWord`). A line that says more ("I moved to Lisbon last week") is kept.
 */
export function factRestatesLine(fact: string, line: string): boolean {
  if (isQuestion(line) || negated(line) !== negated(fact)) return false;
  const said = contentWords(line);
  if (said.length === 0) return false;
  const words = contentWords(fact);
  return said.every((w) => words.some((v) => sameWord(w, v)));
}

/** `lines` less those a fact of `facts` restates (see {@link factRestatesLine}); order kept. */
export function notRestatedBy<T>(lines: readonly T[], facts: readonly string[], text: (line: T) => string): T[] {
  if (facts.length === 0) return [...lines];
  return lines.filter((line) => !facts.some((f) => factRestatesLine(f, text(line))));
}
