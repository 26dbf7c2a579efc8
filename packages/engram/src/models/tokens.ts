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
 * {@link estimateMessagesTokens} and {@link estimateRequestTokens} remember what they counted
 * (one {@link TokenCounter} for the process, which the summarization check shares), so
 * estimating a growing conversation on every model call costs only its new messages.
 *
 * Synchronous: it uses the core {@link loadCore} loaded — in Node the native addon is loaded
 * on first use; on hosts that load only WebAssembly (edge runtimes, browsers) `await loadCore()`
 * first (creating an agent does), else {@link EngramError} `core_unavailable`.
 * @module
 */
import { loadedCore } from "../core/loader.js";
import type { Core } from "../core/types.js";
import type { Message, ModelRequest, ToolSpec } from "./types.js";

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
  return sharedTokenCounter.messages(messages);
}

/**
 * Estimated input tokens of a whole request: the system prompt, the messages
 * ({@link estimateMessagesTokens}) and each tool's name, description and JSON schema.
 */
export function estimateRequestTokens(request: Pick<ModelRequest, "system" | "messages" | "tools">): number {
  return sharedTokenCounter.request({ system: request.system, messages: request.messages, tools: request.tools });
}

/**
 * @internal Token estimates that remember what they counted: a message by object (while its
 * content, tool calls and tool-call id are the same), a tool by its JSON schema object (with its
 * name and description), and the last system prompt and system context by value — so counting
 * a conversation before every model call costs only what is new since the last count.
 */
export class TokenCounter {
  readonly #messages = new WeakMap<
    Message,
    { content: string; toolCalls: Message["toolCalls"]; toolCallId: string | undefined; n: number }
  >();
  readonly #tools = new WeakMap<object, { name: string; description: string; n: number }>();
  /** The last system prompt and system context, each compared by value (no hashing). */
  readonly #texts = [
    { text: "", n: 0 },
    { text: "", n: 0 },
  ];

  /** {@link estimateRequestTokens} of `request`, plus its `systemContext` (memory, skills)
   * counted as a text of its own. */
  request(request: Pick<ModelRequest, "system" | "systemContext" | "messages" | "tools">): number {
    let total = this.#text(0, request.system) + this.#text(1, request.systemContext ?? "") + this.messages(request.messages);
    for (const tool of request.tools) total += this.#tool(tool);
    return total;
  }

  /** {@link estimateMessagesTokens} of `messages`. */
  messages(messages: readonly Message[]): number {
    let total = 0;
    for (const m of messages) total += this.#message(m);
    return total;
  }

  #text(slot: 0 | 1, value: string): number {
    const last = this.#texts[slot] as { text: string; n: number };
    if (last.text !== value) {
      last.n = estimateTokens(value);
      last.text = value;
    }
    return last.n;
  }

  #message(m: Message): number {
    const seen = typeof m === "object" && m !== null ? this.#messages.get(m) : undefined;
    if (seen && seen.content === m.content && seen.toolCalls === m.toolCalls && seen.toolCallId === m.toolCallId) return seen.n;
    let n = MESSAGE_OVERHEAD_TOKENS + estimateTokens(m.content);
    if (m.toolCallId) n += estimateTokens(m.toolCallId);
    for (const call of m.toolCalls ?? []) {
      n += TOOL_CALL_OVERHEAD_TOKENS + estimateTokens(call.name) + estimateTokens(JSON.stringify(call.args));
    }
    if (typeof m === "object" && m !== null)
      this.#messages.set(m, { content: m.content, toolCalls: m.toolCalls, toolCallId: m.toolCallId, n });
    return n;
  }

  #tool(tool: ToolSpec): number {
    const key = typeof tool.parameters === "object" && tool.parameters !== null ? tool.parameters : undefined;
    const seen = key && this.#tools.get(key);
    if (seen && seen.name === tool.name && seen.description === tool.description) return seen.n;
    const n = estimateTokens(tool.name) + estimateTokens(tool.description) + estimateTokens(JSON.stringify(tool.parameters));
    if (key) this.#tools.set(key, { name: tool.name, description: tool.description, n });
    return n;
  }
}

/** @internal The process's counter: the public estimates and the summarization check share it
 * (tools and system prompts repeat across agents and runs). */
export const sharedTokenCounter = new TokenCounter();
