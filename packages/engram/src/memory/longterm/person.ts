/**
 * Facts are written in the third person about the user. Inside the `<memory>` block a fact in
 * the first person ("I prefer tabs") reads as the assistant's own preference, and small models
 * often copy the user's sentence as it was said. Such facts are rewritten, not refused (they are
 * the user's facts): "I prefer tabs" → "The user prefers tabs", "My name is Dana" → "The user's
 * name is Dana", "我喜欢Rust" → "用户喜欢Rust", "私はRustが好き" → "ユーザーはRustが好き",
 * "저는 Rust를 좋아한다" → "사용자는 Rust를 좋아한다". First person plural ("we", "our") is
 * left as it is: it names the user's team, not the assistant. A fact the model wrote without
 * its subject ("Lives in Montreal") that the user said of someone or something of theirs ("My
 * sister lives in Montreal") gets its owner back (see {@link withOwner}).
 * @module
 */
import { contentWords, sameWord } from "./words.js";

/** Verbs that follow "I" unchanged in the third person: modals, and past forms that do not end in
 * "-ed". */
const UNCHANGED = new Set(
  (
    "can could will would shall should may might must cannot can't won't wouldn't couldn't shouldn't " +
    "was had did went got made wrote built left took came became began knew thought ran spent saw said " +
    "bought found grew lost met taught sold sent felt kept told understood chose"
  ).split(" "),
);

/** Irregular third-person forms. */
const IRREGULAR: Record<string, string> = { am: "is", "'m": "is", have: "has", "'ve": "has", do: "does", go: "goes", be: "is" };
const CONTRACTION: Record<string, string> = {
  "'d": "would",
  "'ll": "will",
  "'m not": "isn't",
  "don't": "doesn't",
  "don’t": "doesn’t",
  "haven't": "hasn't",
  "haven’t": "hasn’t",
};

/** Adverbs that may stand between "I" and the verb ("I always indent"). */
const ADVERBS =
  "always|usually|often|mostly|generally|typically|normally|never|also|still|really|just|sometimes|rarely|mainly|only|currently|now|already";

/** `verb` in the third person singular. */
function thirdPersonVerb(verb: string): string {
  const lower = verb.toLowerCase();
  if (IRREGULAR[lower]) return IRREGULAR[lower];
  if (CONTRACTION[lower]) return CONTRACTION[lower];
  if (UNCHANGED.has(lower) || /ed$/.test(lower) || !/^[a-z]+$/.test(lower)) return verb;
  if (/(?:s|x|z|ch|sh|o)$/.test(lower)) return `${verb}es`;
  if (/[^aeiou]y$/.test(lower)) return `${verb.slice(0, -1)}ies`;
  return `${verb}s`;
}

/** "I" and its verb: a contraction ("I'm", "I've" …), or adverbs and a verb. */
const SUBJECT = new RegExp(`\\bI(?:(['’](?:m not|m|ve|d|ll))|\\s+((?:(?:${ADVERBS})\\s+)*)([A-Za-z]+(?:['’]t)?))\\b`, "g");

function rewriteSubject(_: string, contraction: string | undefined, adverbs: string | undefined, verb: string | undefined): string {
  if (contraction !== undefined) return `the user ${thirdPersonVerb(contraction.replace("’", "'"))}`;
  return `the user ${adverbs ?? ""}${thirdPersonVerb(verb ?? "")}`;
}

const OBJECT: [RegExp, string][] = [
  [/\bmy\b/gi, "the user's"],
  [/\bmine\b/gi, "the user's"],
  [/\bmyself\b/gi, "the user"],
  [/\bme\b/gi, "the user"],
];

const CJK: [RegExp, string][] = [
  [/我(?!们|們)/gu, "用户"],
  [/(?:私|僕|俺)(?=[はがのもをに])/gu, "ユーザー"],
  [/(?<![\p{L}])(?:저|나)(?=[는가도])/gu, "사용자"],
  [/(?<![\p{L}])(?:제|내)(?=가)/gu, "사용자"],
  [/(?<![\p{L}])(?:저의|나의|제|내)(?=\s)/gu, "사용자의"],
];

/** `fact` in the third person about the user (see the module comment); unchanged when it has
 * no first-person word. Idempotent. */
export function thirdPerson(fact: string): string {
  let out = fact.replace(SUBJECT, rewriteSubject);
  for (const [pattern, replacement] of OBJECT) out = out.replace(pattern, replacement);
  for (const [pattern, replacement] of CJK) out = out.replace(pattern, replacement);
  if (out === fact) return fact;
  return out.replace(/^(\s*)the user/, "$1The user");
}

/** Possessives by which the user speaks of someone or something of theirs. */
const POSSESSIVE = "(?:my|our)";
/** Up to three words naming it ("sister", "daughter Amara", "main service"). */
const OWNED = "((?:[\\p{L}\\p{N}'’-]+\\s+){0,2}?[\\p{L}\\p{N}'’-]+)";

/**
 * `fact` with its owner put back when the model left it out: a fact with no subject that starts
 * with a verb in the third person ("Lives in Montreal", "Turns seven in December") reads as the
 * user's, yet the user said it of someone or something of theirs ("My sister lives in
 * Montreal"): it becomes "The user's sister lives in Montreal". The rest of the fact must be what
 * the user said after that verb (stems compared). Unchanged otherwise, and for the user's name
 * ("My name is Jo" is the user's own).
 */
export function withOwner(fact: string, said: readonly string[]): string {
  const m = /^([A-Za-z]+s)\s+(.+)$/u.exec(fact.trim());
  if (!m) return fact;
  const verb = (m[1] as string).toLowerCase();
  const rest = contentWords(m[2] as string);
  if (rest.length === 0) return fact;
  const spoken = new RegExp(`\\b${POSSESSIVE}\\s+${OWNED}\\s+${verb}\\b([^.!?;]*)`, "giu");
  for (const text of said) {
    for (const [, owned, clause] of text.matchAll(spoken)) {
      if (/\bnames?\b/iu.test(owned as string)) continue;
      const after = contentWords(clause as string);
      if (rest.every((w) => after.some((v) => sameWord(w, v))))
        return `The user's ${owned} ${fact.trim().replace(/^\p{Lu}/u, (c) => c.toLowerCase())}`;
    }
  }
  return fact;
}
