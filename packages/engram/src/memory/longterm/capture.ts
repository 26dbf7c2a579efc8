/**
 * What of a finished run is worth remembering: the user's messages and the assistant's final
 * replies, without tool traffic or uploaded-file listings, plus whether the user corrected or
 * approved the assistant recently (English and Chinese phrases).
 * @module
 */
import type { Message } from "../../models/types.js";
import { stripUploadedFiles } from "./text.js";

/** A conversation as the memory updater sees it. */
export interface CapturedConversation {
  /** User messages and final assistant replies, in order. */
  messages: Message[];
  /** A recent user message corrects the assistant ("that's wrong", "不对"). */
  correction: boolean;
  /** A recent user message approves ("exactly", "完全正确"); only when there is no correction. */
  reinforcement: boolean;
  /** A recent user message asks to forget or delete something remembered ("forget that I…",
   * "忘掉"); lets an update remove many facts at once. Absent = false. */
  forget?: boolean;
}

/** How many of the last user messages {@link detectSignals} inspects. */
export const SIGNAL_WINDOW = 6;

const CORRECTION: readonly RegExp[] = [
  /\bthat(?:'s|’s| is| was) (?:not (?:right|correct|what i (?:asked|meant|wanted))|wrong|incorrect)\b/i,
  /\b(?:you(?:'re|’re| are) wrong|you misunderstood|you got it wrong|you misread)\b/i,
  /\b(?:not what i (?:asked for|meant|wanted)|no,? i meant|i said\b.*\bnot\b)/i,
  /\b(?:try again|redo it|redo this|do it again|start over)\b/i,
  /不对(?!称|劲)|错了|不是这样|不是这个意思|你理解错了|你理解有误|你搞错了|重试|重新来|重做|换一种|改用|我说的是/,
];

const REINFORCEMENT: readonly RegExp[] = [
  /\byes[,.!]? (?:exactly|perfect|that's right|that is right|correct)\b/i,
  /\b(?:exactly(?: right| correct)?|perfect)\s*(?:[.!?]|$)/i,
  /\bthat(?:'s|’s| is) (?:exactly )?(?:right|correct|what i (?:wanted|needed|meant))\b/i,
  /\b(?:keep (?:doing )?(?:it|that)(?: up)?|just like (?:that|this)|well done|great job|this is (?:great|helpful|what i wanted))\b/i,
  /就是这样|完全正确|就是这个意思|正是我想要的|继续保持|做得好|非常好|太好了/,
];

const FORGET: readonly RegExp[] = [
  /\b(?:forget|unlearn|stop remembering|don'?t remember|do not remember)\b/i,
  /\b(?:delete|remove|erase|drop|clear)\b.{0,40}\b(?:memory|memories|remember(?:ed)?|facts?|what you know)\b/i,
  /\b(?:no longer|not anymore|any ?more)\b.{0,30}$/i,
  /忘掉|忘记|别记|不要记|删除.{0,10}(?:记忆|记住)/,
];

/** Keeps user messages and final assistant replies (assistant messages without tool calls),
 * drops tool messages, removes `<uploaded_files>` blocks, and drops messages left empty. A user
 * turn that held only uploads is dropped with the assistant reply that answered it. */
export function filterForMemory(messages: readonly Message[]): Message[] {
  const kept: Message[] = [];
  let skipReply = false;
  for (const m of messages) {
    if (!m || typeof m !== "object" || typeof m.content !== "string") continue; // tolerate damaged history
    if (m.role === "user") {
      const content = stripUploadedFiles(m.content);
      skipReply = content === "";
      if (content !== "") kept.push({ role: "user", content });
    } else if (m.role === "assistant" && !(m.toolCalls && m.toolCalls.length > 0)) {
      const content = stripUploadedFiles(m.content);
      if (!skipReply && content !== "") kept.push({ role: "assistant", content });
      skipReply = false;
    }
  }
  return kept;
}

/** Correction and reinforcement among the last {@link SIGNAL_WINDOW} user messages. */
export function detectSignals(messages: readonly Message[]): { correction: boolean; reinforcement: boolean } {
  const recent = messages.filter((m) => m.role === "user").slice(-SIGNAL_WINDOW);
  const correction = recent.some((m) => CORRECTION.some((re) => re.test(m.content)));
  const reinforcement = !correction && recent.some((m) => REINFORCEMENT.some((re) => re.test(m.content)));
  return { correction, reinforcement };
}

/** True when one of the last {@link SIGNAL_WINDOW} user messages asks to forget something. */
export function detectForget(messages: readonly Message[]): boolean {
  return messages
    .filter((m) => m.role === "user")
    .slice(-SIGNAL_WINDOW)
    .some((m) => FORGET.some((re) => re.test(m.content)));
}

/**
 * The part of a run worth remembering, or `undefined` when no user message is left after
 * filtering (nothing to learn from). A run without a final assistant reply — stopped at
 * `maxTurns`, interrupted, or answered with an empty message — is still captured: what the user
 * said is what memory keeps. Anything that is not an array of messages captures nothing.
 */
export function captureConversation(messages: readonly Message[]): CapturedConversation | undefined {
  if (!Array.isArray(messages)) return undefined;
  const kept = filterForMemory(messages);
  if (!kept.some((m) => m.role === "user")) return undefined;
  return { messages: kept, ...detectSignals(kept), forget: detectForget(kept) };
}
