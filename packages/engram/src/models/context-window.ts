/**
 * How many tokens a provider's model can take: a table of known hosted models, and the size a
 * provider states when a request outgrows it. Local servers (Ollama, llama.cpp, LM Studio) serve
 * a context set at load time, not the model's trained length, so only their errors tell it.
 * @module
 */
import { ModelError } from "../errors.js";

/** Context windows (input + output tokens) of hosted model families, by model-name prefix. */
const KNOWN_CONTEXT_WINDOWS: ReadonlyArray<readonly [prefix: string, tokens: number]> = [
  ["gpt-5", 400_000],
  ["gpt-4.1", 1_047_576],
  ["gpt-4o", 128_000],
  ["chatgpt-4o", 128_000],
  ["gpt-4-turbo", 128_000],
  ["gpt-4-32k", 32_768],
  ["gpt-4", 8_192],
  ["gpt-3.5-turbo", 16_385],
  ["o1-mini", 128_000],
  ["o1", 200_000],
  ["o3", 200_000],
  ["o4-mini", 200_000],
  ["claude", 200_000],
  ["gemini-1.5-pro", 2_097_152],
  ["gemini-1.5-flash", 1_048_576],
  ["gemini-2.0", 1_048_576],
  ["gemini-2.5", 1_048_576],
];

/**
 * The context window of a known hosted model, or `undefined`. A name matches a prefix that is
 * the whole name or is followed by `-`, `:` or `@` (a version or date), the longest such prefix
 * winning; a provider path before the last `/` (`openai/gpt-4o`) is ignored.
 */
export function knownContextWindow(model: string): number | undefined {
  const name = model.slice(model.lastIndexOf("/") + 1).toLowerCase();
  let best: readonly [string, number] | undefined;
  for (const entry of KNOWN_CONTEXT_WINDOWS) {
    const [prefix] = entry;
    const boundary = name.length === prefix.length || /[-:@]/.test(name[prefix.length] ?? "");
    if (name.startsWith(prefix) && boundary && (!best || prefix.length > best[0].length)) best = entry;
  }
  return best?.[1];
}

/** How providers state the context size in a `context_length` error. */
const STATED_SIZE = [
  /maximum context length is (\d+)/i, // OpenAI, vLLM
  /"n_ctx"\s*:\s*(\d+)/, // llama.cpp server
  /\bn_ctx\s*[=:]?\s*(\d+)/,
  /context (?:length|window|size) of (?:only )?(\d+)/i, // LM Studio
  /tokens? > (\d+) maximum/i, // Anthropic
];

/** The context size a `context_length` error states in its message or the response `body` it
 * came from (llama.cpp states it only in a field of the body), or `undefined`. */
export function contextWindowInError(error: unknown, body = ""): number | undefined {
  if (!(error instanceof ModelError) || error.code !== "context_length") return undefined;
  const text = `${error.message}\n${body}`;
  for (const pattern of STATED_SIZE) {
    const n = Number(pattern.exec(text)?.[1]);
    if (Number.isSafeInteger(n) && n > 0) return n;
  }
  return undefined;
}

/**
 * A provider model's input budget: the explicit window, else one a provider stated in an error,
 * else the table's; less the output cap when one is set.
 */
export class ContextWindow {
  readonly #explicit: number | undefined;
  readonly #known: number | undefined;
  #stated: number | undefined;

  constructor(model: string, explicit: number | undefined) {
    this.#explicit = explicit;
    this.#known = knownContextWindow(model);
  }

  /** Remembers the size a `context_length` error states (other errors are ignored). */
  learn(error: unknown, body = ""): void {
    const stated = contextWindowInError(error, body);
    if (stated !== undefined) this.#stated = stated;
  }

  /** The most input tokens a call can take, with `maxOutputTokens` reserved for the reply. */
  maxInputTokens(maxOutputTokens: number | undefined): number | undefined {
    const window = this.#explicit ?? this.#stated ?? this.#known;
    if (window === undefined) return undefined;
    return Math.max(1, window - (maxOutputTokens ?? 0));
  }
}
