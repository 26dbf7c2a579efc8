/**
 * The answer of a grammar-constrained reply, `{"answer": "<text>"}`, decoded while the reply is
 * generated, so that a local model's answer streams although its reply is JSON. Any other reply
 * (a tool call) yields nothing.
 * @module
 */
import { jsonrepair } from "jsonrepair";
import { isPlainObject } from "./normalize.js";

/** The reply has started its answer string. */
const ANSWER_START = /^\s*\{\s*"answer"\s*:\s*"/;
/** An escape sequence the text so far ends inside of (`\`, `\u`, `\u0`, …). */
const OPEN_ESCAPE = /\\(?:u[0-9a-fA-F]{0,3})?$/;
/** A high surrogate at the end: its pair is still to come. */
const OPEN_SURROGATE = /[\uD800-\uDBFF]$/;

/** Feeds generated text in, gets the answer text it adds out. */
export class AnswerStream {
  #raw = "";
  #shown = "";

  /** Adds a chunk of the reply; returns the answer text it completes (often `""`). */
  push(chunk: string): string {
    this.#raw += chunk;
    const answer = partialAnswer(this.#raw);
    if (answer === undefined) return "";
    const stable = answer.replace(OPEN_SURROGATE, "");
    if (stable.length <= this.#shown.length || !stable.startsWith(this.#shown)) return "";
    const added = stable.slice(this.#shown.length);
    this.#shown = stable;
    return added;
  }
}

/** The answer string as far as it is written, or `undefined` while the reply is no answer. */
function partialAnswer(raw: string): string | undefined {
  if (!ANSWER_START.test(raw)) return undefined;
  try {
    const value: unknown = JSON.parse(jsonrepair(raw.replace(OPEN_ESCAPE, "")));
    return isPlainObject(value) && typeof value.answer === "string" ? value.answer : undefined;
  } catch {
    return undefined;
  }
}
