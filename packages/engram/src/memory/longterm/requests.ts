/**
 * What the user asked the assistant to do is not a fact about them. A small model lists a
 * request among the facts in the request's own words ("Explain what a closure is in one
 * sentence", "Quickest way to check memory use of a dataframe"); such a fact is refused. A fact
 * drawn from a request is kept when it says something else ("Uses Django" from "Can you fix the
 * test in my Django app?"), and a standing instruction ("Could you always use tabs?") is a
 * preference, not a request.
 * @module
 */
import { sentencesOf } from "./text.js";
import { contentWords, isFramingWord, isQuestion, sameWord } from "./words.js";

/** Verbs that ask the assistant for something. A fact may repeat them ("Reminds the user
 * what…"); they are not what the request is about. */
const REQUEST_VERBS = new Set(
  (
    "explain explains write writes make makes show shows tell tells give gives help helps list lists translate translates " +
    "summarize summarizes summarise summarises draft drafts suggest suggests recommend recommends compare compares " +
    "rewrite rewrites turn turns convert converts generate generates create creates describe describes remind reminds"
  ).split(" "),
);

/** A request that opens a sentence, after greetings and connectives: "can you …", an
 * imperative of {@link REQUEST_VERBS}, "remind me what …" ("remind me to …" is the user's own
 * plan, and stays a possible fact). */
const REQUEST_OPENING = new RegExp(
  String.raw`^\s*(?:(?:hi|hey|hello|ok|okay|so|and|also|now|then|quick one)\b[\s,:!]*)*` +
    String.raw`(?:(?:can|could|would|will)\s+you\b|(?:please\s+)?(?:explain|write|make|show|tell|give|help|list|translate|summari[sz]e|draft|suggest|recommend|compare|rewrite|turn|convert|generate|create|describe)\b|remind\s+me\b[\s:,]*(?:what|how|which|where|when|who|whom|why|whether|if)\b)`,
  "iu",
);

/** Words of a standing instruction: a request that holds from now on is how the user likes
 * things done. */
const STANDING = /\b(?:always|never|from now on|every time|in future|going forward)\b/iu;

/** True when `sentence` asks the assistant for something once: a question, or a request (see
 * {@link REQUEST_OPENING}) that is not a standing instruction. */
export function isRequest(sentence: string): boolean {
  return (isQuestion(sentence) || REQUEST_OPENING.test(sentence)) && !STANDING.test(sentence);
}

/** The words a request and a fact are compared by: content words less framing words ("uses",
 * "prefers") and {@link REQUEST_VERBS}. */
function subjectWords(text: string): string[] {
  return contentWords(text).filter((w) => !isFramingWord(w) && !REQUEST_VERBS.has(w));
}

/** True when each word of `a` is a word of `b` (stems compared, see `sameWord`). */
const within = (a: readonly string[], b: readonly string[]) => a.every((w) => b.some((v) => sameWord(w, v)));

/**
 * True when `fact` restates a request the user made in `userTexts`: a sentence of theirs that
 * {@link isRequest}, with the same words as the fact (each way, framing and request verbs left
 * aside), and no statement of theirs says all of the fact's words. "Splits windows vertically"
 * restates "How do I split a window vertically?"; "Works on a Django app" does not restate "Can
 * you fix the failing test in my Django app?".
 */
export function restatesRequest(fact: string, userTexts: readonly string[]): boolean {
  const own = subjectWords(fact);
  if (own.length === 0) return false;
  const sentences = userTexts.flatMap(sentencesOf);
  const requests = sentences.filter(isRequest);
  const restated = requests.some((sentence) => {
    const asked = subjectWords(sentence);
    return within(own, asked) && within(asked, own);
  });
  // Said as a statement too ("I split windows vertically."): the user's own fact.
  return restated && !sentences.some((sentence) => !isRequest(sentence) && within(own, subjectWords(sentence)));
}
