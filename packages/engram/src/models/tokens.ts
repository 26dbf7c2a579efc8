/**
 * Token estimates without a tokenizer download, good enough for budgets (summarization
 * thresholds, memory injection, long-term fact packing), not for billing.
 *
 * The rule lives in the Rust core (`engram_core::tokens`, one home for the TypeScript functions
 * here and for prompt assembly in the core): it follows how byte-level BPE tokenizers split
 * text — letter runs (one token, plus one per `camelCase` hump and per letter pair that is rare
 * inside vocabulary words, so random base64, hex and ids cost what they do), groups of up to
 * three digits, punctuation runs, whitespace, and per-character costs for CJK, other alphabets,
 * emoji and symbols. Against OpenAI's `cl100k_base` it lands within 10% (measured ±7.1%) on
 * English prose, TypeScript and Rust code, pretty and compact JSON, base64, hex, UUID lists,
 * Chinese, Japanese, Russian, emoji, markdown (with HTML and links) and `cat -n` output.
 * `o200k_base` counts Latin-script text the same; on Chinese, Japanese, Russian and emoji it
 * needs fewer tokens, so the estimate is 18–63% above its count there (budgets err on the safe
 * side).
 *
 * {@link estimateMessagesTokens} remembers each message's content estimate and
 * {@link estimateRequestTokens} the last system prompt's, so estimating a growing conversation on
 * every model call costs only its new messages.
 *
 * Synchronous: it uses the core {@link loadCore} loaded — in Node the native addon is loaded
 * on first use; on hosts that load only WebAssembly (edge runtimes, browsers) `await loadCore()`
 * first (creating an agent does), else {@link EngramError} `core_unavailable`.
 * @module
 */
import { loadedCore } from "../core/loader.js";
import type { Core } from "../core/types.js";
import type { Message, ModelRequest } from "./types.js";

/** Tokens {@link estimateMessagesTokens} adds per message for role and framing. */
export const MESSAGE_OVERHEAD_TOKENS = 4;
/** Tokens {@link estimateMessagesTokens} adds per tool call for its framing. */
export const TOOL_CALL_OVERHEAD_TOKENS = 3;

let core: Core | undefined;

/**
 * Estimated token count of `text` (see the module comment for the rule and its accuracy).
 * Linear in the length. `""` → 0; any other text → at least 1.
 * @throws {@link EngramError} `core_unavailable` when no core is loaded and none can be loaded
 * synchronously; `invalid_argument` when `text` is not a string.
 */
export function estimateTokens(text: string): number {
  core ??= loadedCore();
  return core.estimateTokens(text);
}

/**
 * Estimated tokens of a conversation: per message its content, {@link MESSAGE_OVERHEAD_TOKENS},
 * its `toolCallId`, and per tool call the name, the JSON arguments and
 * {@link TOOL_CALL_OVERHEAD_TOKENS}.
 */
export function estimateMessagesTokens(messages: readonly Message[]): number {
  let total = 0;
  for (const m of messages) {
    total += MESSAGE_OVERHEAD_TOKENS + contentTokens(m);
    if (m.toolCallId) total += estimateTokens(m.toolCallId);
    for (const call of m.toolCalls ?? []) {
      total += TOOL_CALL_OVERHEAD_TOKENS + estimateTokens(call.name) + estimateTokens(JSON.stringify(call.args));
    }
  }
  return total;
}

/** The content estimate by message: a conversation is estimated again on every model call
 * (summarization) and its earlier messages are the same objects each time. Checked against the
 * content, so a message whose content changed is counted again. */
const contentEstimates = new WeakMap<Message, { readonly content: string; readonly tokens: number }>();

function contentTokens(m: Message): number {
  const known = contentEstimates.get(m);
  if (known !== undefined && known.content === m.content) return known.tokens;
  const tokens = estimateTokens(m.content);
  if (typeof m === "object" && m !== null) contentEstimates.set(m, { content: m.content, tokens });
  return tokens;
}

/** The last system prompt's estimate: it is usually the same text on every model call. */
let lastSystem = { text: "", tokens: 0 };

/**
 * Estimated input tokens of a whole request: the system prompt, the messages
 * ({@link estimateMessagesTokens}) and each tool's name, description and JSON schema.
 */
export function estimateRequestTokens(request: Pick<ModelRequest, "system" | "messages" | "tools">): number {
  if (request.system !== lastSystem.text) lastSystem = { text: request.system, tokens: estimateTokens(request.system) };
  let total = lastSystem.tokens + estimateMessagesTokens(request.messages);
  for (const tool of request.tools) {
    total += estimateTokens(tool.name) + estimateTokens(tool.description) + estimateTokens(JSON.stringify(tool.parameters));
  }
  return total;
}
