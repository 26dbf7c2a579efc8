/**
 * Token estimates without a tokenizer download, good enough for budgets (summarization
 * thresholds, memory injection), not for billing.
 *
 * The heuristic, per Unicode code point:
 * - ASCII and Latin (below U+0370: Latin-1, Latin Extended, IPA, combining marks): ¼ token,
 *   i.e. ~4 characters per token as BPE tokenizers give English text and code;
 * - CJK — Han ideographs, kana, Hangul, Bopomofo, CJK symbols and punctuation, fullwidth
 *   forms: 1 token each (BPE vocabularies rarely merge them);
 * - astral code points (emoji, CJK Extension B and beyond): 2 tokens each, as byte-level BPE
 *   spends 2–3 tokens on a 4-byte character (an emoji ZWJ sequence counts each of its parts);
 *   a lone surrogate: 1 token;
 * - everything else in the BMP (Greek, Cyrillic, Arabic, Indic scripts, general punctuation,
 *   …): ½ token, since those scripts merge less than Latin.
 *
 * The sum is rounded up, so any non-empty text is at least 1 token. Against OpenAI's
 * `cl100k_base` this lands within ~15% on English prose, code, Chinese, Japanese, Russian and
 * mixed text; it overestimates newer vocabularies (`o200k_base`) on CJK and Cyrillic.
 * @module
 */
import type { Message, ModelRequest } from "./types.js";

/** Tokens {@link estimateMessagesTokens} adds per message for role and framing. */
export const MESSAGE_OVERHEAD_TOKENS = 4;
/** Tokens {@link estimateMessagesTokens} adds per tool call for its framing. */
export const TOOL_CALL_OVERHEAD_TOKENS = 3;

/** True for the CJK blocks counted as one token per character. */
function isCjk(c: number): boolean {
  return (
    (c >= 0x2e80 && c <= 0x9fff) || // radicals, CJK symbols & punctuation, kana, Bopomofo, Ext A, unified ideographs
    (c >= 0x1100 && c <= 0x11ff) || // Hangul Jamo
    (c >= 0xa960 && c <= 0xa97f) || // Hangul Jamo Extended-A
    (c >= 0xac00 && c <= 0xd7ff) || // Hangul syllables, Jamo Extended-B
    (c >= 0xf900 && c <= 0xfaff) || // CJK compatibility ideographs
    (c >= 0xfe30 && c <= 0xfe4f) || // CJK compatibility forms
    (c >= 0xff00 && c <= 0xffef) // halfwidth and fullwidth forms
  );
}

/**
 * Estimated token count of `text` (see the module comment for the heuristic).
 * Linear in the length, no allocation. `""` → 0.
 */
export function estimateTokens(text: string): number {
  let quarters = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x370) quarters += 1;
    else if (c >= 0xd800 && c <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++; // a surrogate pair is one (astral) code point
        quarters += 8;
      } else quarters += 4;
    } else if (c >= 0xdc00 && c <= 0xdfff) quarters += 4;
    else quarters += isCjk(c) ? 4 : 2;
  }
  return Math.ceil(quarters / 4);
}

/**
 * Estimated tokens of a conversation: per message its content, {@link MESSAGE_OVERHEAD_TOKENS},
 * its `toolCallId`, and per tool call the name, the JSON arguments and
 * {@link TOOL_CALL_OVERHEAD_TOKENS}.
 */
export function estimateMessagesTokens(messages: readonly Message[]): number {
  let total = 0;
  for (const m of messages) {
    total += MESSAGE_OVERHEAD_TOKENS + estimateTokens(m.content);
    if (m.toolCallId) total += estimateTokens(m.toolCallId);
    for (const call of m.toolCalls ?? []) {
      total += TOOL_CALL_OVERHEAD_TOKENS + estimateTokens(call.name) + estimateTokens(JSON.stringify(call.args));
    }
  }
  return total;
}

/**
 * Estimated input tokens of a whole request: the system prompt, the messages
 * ({@link estimateMessagesTokens}) and each tool's name, description and JSON schema.
 */
export function estimateRequestTokens(request: Pick<ModelRequest, "system" | "messages" | "tools">): number {
  let total = estimateTokens(request.system) + estimateMessagesTokens(request.messages);
  for (const tool of request.tools) {
    total += estimateTokens(tool.name) + estimateTokens(tool.description) + estimateTokens(JSON.stringify(tool.parameters));
  }
  return total;
}
