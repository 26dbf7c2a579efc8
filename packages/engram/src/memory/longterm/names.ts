/**
 * Whose name a name fact holds. A small model fills the prompt's "Is called …" with any name the
 * user mentioned ("I adopted a dog named Pixel" became "Is called Pixel"), and a name fact is
 * read as the user's own. Such a fact is refused when the user gave that name to someone or
 * something else ("a dog named Pixel", "my cat Miso") and never to themselves ("I'm Pixel",
 * "call me Pixel", "my name is Pixel").
 * @module
 */
import { slotOf } from "./slots.js";
import { regExpLiteral } from "./words.js";

/** The name a name-slot fact gives: the words after "called", "named", "name is", "goes by",
 * "name to". */
const NAME_VALUE = /\b(?:called|named|name is|goes by|name to)\s+(.+)$/iu;

/** The first word of the name a name fact gives, or `undefined` for any other fact. */
export function factName(content: string): string | undefined {
  if (slotOf(content) !== "name") return undefined;
  const value = NAME_VALUE.exec(content.trim())?.[1];
  return value?.match(/[\p{L}\p{N}][\p{L}\p{N}'’-]*/u)?.[0];
}

/**
 * Why the name fact `content` is not the user's name, or `undefined` when it may be (it is not
 * a name fact, the user named themselves so, or never named anything else so). `said`: what the
 * user said in the conversation, one text per message.
 */
export function otherOnesName(content: string, said: readonly string[]): string | undefined {
  const name = factName(content);
  if (name === undefined) return undefined;
  const n = regExpLiteral(name);
  const self = new RegExp(
    `\\b(?:I'?m|I am|call me|I go by|my (?:full |first |last |sur)?name(?:'s| is)|name to|this is|it'?s)\\s+(?:called |named |now )?${n}\\b|^\\s*${n}\\s+here\\b`,
    "iu",
  );
  if (said.some((t) => self.test(t))) return undefined;
  const other = new RegExp(`\\b(?:named|called)\\s+${n}\\b|\\b(?:my|our|his|her|their)\\s+(?:[\\p{L}-]+\\s+){1,2}${n}\\b`, "iu");
  return said.some((t) => other.test(t)) ? `${JSON.stringify(name)} is the name of someone or something else the user spoke of` : undefined;
}
