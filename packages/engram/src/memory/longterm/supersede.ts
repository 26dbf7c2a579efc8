/**
 * Which stored facts a new fact replaces: every fact of the same one-value slot (see
 * `slots.ts`: name, location, job, employer, age, a favourite, a count), and the fact the model
 * named in `replaces` when it is about the same thing and the user spoke of a change. A model
 * that names a fact at random (small models do) cannot delete an unrelated fact: the named one
 * must share a word with the new fact, and the user must have said something like "now",
 * "moved", "switched" or "no longer". The same change cue decides which stored facts a newer
 * message the user wrote updates (see {@link lineUpdatesFact}): the memory block leaves those out
 * when the recalled message is shown beside it.
 * @module
 */
import type { Message } from "../../models/types.js";
import type { Fact } from "./schema.js";
import { lastConfirmed, slotOf } from "./slots.js";
import { resolveFactId } from "./update-schema.js";
import { contentWords, isFramingWord, isQuestion, sameWord } from "./words.js";

/** Words by which a user says that something changed. */
const CHANGE_CUE =
  /\b(?:now|moved|moving|switched|switching|changed|changing|no longer|any ?more|instead|left|quit|gave up|upgraded|migrated|replaced|actually|these days|not .{0,20} but)\b/iu;

/** True when one of the user's messages speaks of a change (see {@link CHANGE_CUE}). */
export function userSpeaksOfChange(messages: readonly Message[]): boolean {
  return messages.some((m) => m.role === "user" && CHANGE_CUE.test(m.content));
}

/** What {@link supersededFacts} found. */
export interface Superseded {
  /** Ids of `candidates` the new fact replaces. */
  ids: string[];
  /** Why a replacement the model named was refused. */
  notes: string[];
}

/**
 * The facts of `candidates` that `content` (a new fact, not a duplicate of any of them)
 * replaces: those of its slot, and `named` (an id as the model wrote it, resolved through
 * `shortIds`) when it shares a content word with the new fact and `change` (the user spoke of a
 * change, see {@link userSpeaksOfChange}) or it is of the same slot.
 */
export function supersededFacts(
  content: string,
  named: string | undefined,
  candidates: readonly Fact[],
  options: { shortIds?: ReadonlyMap<string, string>; change: boolean },
): Superseded {
  const slot = slotOf(content);
  const ids = slot === undefined ? [] : candidates.filter((f) => slotOf(f.content) === slot).map((f) => f.id);
  const notes: string[] = [];
  if (named !== undefined && named.trim() !== "") {
    const id = options.shortIds ? resolveFactId(named, options.shortIds) : candidates.find((f) => f.id === named)?.id;
    const old = candidates.find((f) => f.id === id);
    if (!old) notes.push(`replacement of ${JSON.stringify(named)} ignored: no such fact`);
    else if (!ids.includes(old.id)) {
      const words = contentWords(content);
      const related = contentWords(old.content).some((w) => words.some((v) => sameWord(w, v)));
      if (!related) notes.push(`replacement of ${old.id} by ${JSON.stringify(content)} ignored: they are about different things`);
      else if (!options.change)
        notes.push(`replacement of ${old.id} by ${JSON.stringify(content)} ignored: the user did not speak of a change`);
      else ids.push(old.id);
    }
  }
  return { ids, notes };
}

/** Something the user said, and when (epoch ms): a recalled message of an earlier thread. */
export interface UserLine {
  text: string;
  at: number;
}

/** Shared words, besides change cues and framing, by which a line is about the same thing as a
 * fact: one ("cat") is too little ("My cat now eats only wet food" does not rename the cat). */
const UPDATE_OVERLAP = 2;

/** The words by which a line and a fact are compared: content words less framing words
 * ("works", "uses", "team") and change cues ("now", "moved"). */
function topicWords(text: string): string[] {
  return [...new Set(contentWords(text))].filter((w) => !isFramingWord(w) && !CHANGE_CUE.test(w));
}

/** Words by which the user says they stopped something, and the word naming it ("I gave up
 * Spanish", "I quit Acme", "I no longer use Vim"). */
const STOPPED =
  /\b(?:gave up|given up|give up|quit|stopped|dropped|left|no longer \p{L}+)\s+(?:(?:my|the|our|at|on|with|using|learning|playing|doing)\s+)?([\p{L}\p{N}][\p{L}\p{N}'’-]*)/giu;

/**
 * True when `line` updates `fact`: the user said it after the fact was last confirmed, it is a
 * statement (not a question) that speaks of a change (see {@link userSpeaksOfChange}), and it
 * shares at least {@link UPDATE_OVERLAP} words with the fact ({@link topicWords}, stems
 * compared), or says the user stopped what one of the fact's words names ({@link STOPPED}).
 * "Lena's football practice moved to Fridays" updates "Lena's practice is on Thursdays" said a
 * week before, and "I gave up Spanish; I'm learning Japanese now" updates "Learning Spanish on
 * Duolingo"; "My cat now eats wet food" does not update "Has a cat named Tiger".
 */
export function lineUpdatesFact(line: UserLine, fact: Pick<Fact, "content" | "createdAt" | "confirmedAt">): boolean {
  const confirmed = Date.parse(lastConfirmed(fact));
  if (!(line.at > confirmed) || isQuestion(line.text) || !CHANGE_CUE.test(line.text)) return false;
  const said = topicWords(line.text);
  const topics = topicWords(fact.content);
  const shared = topics.filter((w) => said.some((v) => sameWord(w, v)));
  if (shared.length >= UPDATE_OVERLAP) return true;
  const stopped = [...line.text.matchAll(STOPPED)].map((m) => (m[1] as string).toLowerCase());
  return stopped.some((w) => topics.some((t) => sameWord(t, w)));
}

/** `facts` less those a line of `lines` updates (see {@link lineUpdatesFact}); order kept. */
export function notUpdatedBy<T extends Pick<Fact, "content" | "createdAt" | "confirmedAt">>(
  facts: readonly T[],
  lines: readonly UserLine[],
): T[] {
  if (lines.length === 0) return [...facts];
  return facts.filter((f) => !lines.some((line) => lineUpdatesFact(line, f)));
}
