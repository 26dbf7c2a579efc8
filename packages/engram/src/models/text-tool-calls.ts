/**
 * Tool calls written as text. Small local models (Qwen2.5-Coder, Llama 3.x instruct behind a
 * server whose chat template does not catch them) often answer a tool request with the call as
 * text instead of a native `tool_calls` entry. This module recognises the formats they use and
 * turns them into calls — only for tools that were offered:
 * - Hermes / Qwen tags: `<tool_call>{"name": …, "arguments": {…}}</tool_call>`, one or more
 *   (a last unclosed tag counts);
 * - fenced JSON: ```` ```json {"name": …, "arguments"|"parameters": {…}} ``` ````, one or more
 *   blocks, each an object or an array of objects;
 * - bare JSON, the whole reply (optionally after Llama's `<|python_tag|>`): one object, an
 *   array, or several objects separated by `;` or newlines — Llama 3.x's
 *   `{"name": …, "parameters": {…}}`.
 * @module
 */
import { jsonrepair } from "jsonrepair";
import { isPlainObject, toolCall } from "./normalize.js";
import type { ModelResult, ToolCall } from "./types.js";

/** One call found in text; `args` is as written (an object or JSON text). */
export interface TextToolCall {
  name: string;
  args: unknown;
}

/** What {@link parseTextToolCalls} found. */
export interface TextToolCalls {
  calls: TextToolCall[];
  /** The text with the recognised calls removed, trimmed. */
  content: string;
}

const TAG_OPEN = "<tool_call>";
const TAG_CLOSE = "</tool_call>";
const PYTHON_TAG = "<|python_tag|>";
const FENCE = "```";
/** Where a text tool call can start; a stream holds text back from the first of these. */
const MARKERS = [TAG_OPEN, FENCE, PYTHON_TAG] as const;

/**
 * The tool calls written in `text`, or `undefined` when it holds none naming an offered tool
 * (blocks naming other tools stay in the text).
 */
export function parseTextToolCalls(text: string, offered: ReadonlySet<string>): TextToolCalls | undefined {
  return parseCalls(text, offered, false);
}

/** {@link TextToolCalls} of a reply that may have been cut at the output limit. */
export interface MaybeCutTextToolCalls extends TextToolCalls {
  /** A call was cut: none is returned, and its unfinished JSON is left out of `content`. */
  cut: boolean;
}

/**
 * {@link parseTextToolCalls}, for a reply that may have been `cut` at the output limit: then its
 * calls count only when complete as written — valid JSON, tags and fences closed — never
 * repaired (a repaired cut call would run with arguments the model never finished); when one
 * was cut, no call is returned and `content` is the text around the calls.
 */
export function readTextToolCalls(text: string, offered: ReadonlySet<string>, cut: boolean): MaybeCutTextToolCalls | undefined {
  const found = parseCalls(text, offered, false);
  if (!found || !cut) return found && { ...found, cut: false };
  const complete = parseCalls(text, offered, true);
  if (complete && complete.calls.length === found.calls.length) return { ...complete, cut: false };
  return { calls: [], content: found.content, cut: true };
}

/** `strict`: only complete calls (no JSON repair, no unclosed tag). */
function parseCalls(text: string, offered: ReadonlySet<string>, strict: boolean): TextToolCalls | undefined {
  if (offered.size === 0) return undefined;
  const tagged = parseTagged(text, offered, strict);
  if (tagged) return tagged;
  const fenced = parseFenced(text, offered, strict);
  if (fenced) return fenced;
  return parseBare(text, offered, strict);
}

/** `<tool_call>…</tool_call>` blocks; the last may be unclosed (unless `strict`). */
function parseTagged(text: string, offered: ReadonlySet<string>, strict: boolean): TextToolCalls | undefined {
  if (!text.includes(TAG_OPEN)) return undefined;
  const calls: TextToolCall[] = [];
  let content = "";
  let pos = 0;
  while (pos < text.length) {
    const open = text.indexOf(TAG_OPEN, pos);
    if (open < 0) break;
    const start = open + TAG_OPEN.length;
    const close = text.indexOf(TAG_CLOSE, start);
    const end = close < 0 ? text.length : close;
    const found = close < 0 && strict ? undefined : callsIn(text.slice(start, end), offered, strict);
    const after = close < 0 ? text.length : close + TAG_CLOSE.length;
    content += text.slice(pos, open);
    if (found) calls.push(...found);
    else content += text.slice(open, after);
    pos = after;
  }
  content += text.slice(pos);
  return calls.length > 0 ? { calls, content: content.trim() } : undefined;
}

/** ```` ``` ```` blocks (any or no language tag) whose body is a call or an array of calls; the
 * last may be unclosed (unless `strict`). */
function parseFenced(text: string, offered: ReadonlySet<string>, strict: boolean): TextToolCalls | undefined {
  // The last block may be unclosed (unless `strict`), as a tag may.
  const fence = strict ? /```[\w-]*[ \t]*\r?\n?([\s\S]*?)```/g : /```[\w-]*[ \t]*\r?\n?([\s\S]*?)(?:```|$)/g;
  const calls: TextToolCall[] = [];
  let content = "";
  let pos = 0;
  for (let m = fence.exec(text); m; m = fence.exec(text)) {
    const found = callsIn(m[1] ?? "", offered, strict);
    if (!found) continue;
    calls.push(...found);
    content += text.slice(pos, m.index);
    pos = m.index + m[0].length;
  }
  content += text.slice(pos);
  return calls.length > 0 ? { calls, content: content.trim() } : undefined;
}

/** The whole reply is JSON calls (after an optional `<|python_tag|>`). */
function parseBare(text: string, offered: ReadonlySet<string>, strict: boolean): TextToolCalls | undefined {
  let body = text.trim();
  if (body.startsWith(PYTHON_TAG)) body = body.slice(PYTHON_TAG.length).trim();
  if (!body.startsWith("{") && !body.startsWith("[")) return undefined;
  const found = callsIn(body, offered, strict);
  return found ? { calls: found, content: "" } : undefined;
}

/**
 * The calls in a JSON region — one object, an array, or objects separated by `;`/newlines —
 * when every item is a call object and at least one names an offered tool; otherwise undefined.
 */
function callsIn(region: string, offered: ReadonlySet<string>, strict: boolean): TextToolCall[] | undefined {
  const items = jsonValues(region.trim(), strict);
  if (!items || items.length === 0) return undefined;
  const calls: TextToolCall[] = [];
  for (const item of items.flatMap((v) => (Array.isArray(v) ? v : [v]))) {
    const call = asCall(item);
    if (!call) return undefined;
    if (offered.has(call.name)) calls.push(call);
  }
  return calls.length > 0 ? calls : undefined;
}

/** `{ name, arguments | parameters }` (also `{ function: { name, arguments } }`) as a call. */
function asCall(value: unknown): TextToolCall | undefined {
  if (!isPlainObject(value)) return undefined;
  const inner = isPlainObject(value.function) ? value.function : value;
  if (typeof inner.name !== "string" || !inner.name) return undefined;
  const args = inner.arguments !== undefined ? inner.arguments : inner.parameters;
  if (args !== undefined && args !== null && typeof args !== "string" && !isPlainObject(args)) return undefined;
  return { name: inner.name, args: args ?? {} };
}

/** The JSON values in `text`: one value, or several separated by `;` or line breaks. */
function jsonValues(text: string, strict: boolean): unknown[] | undefined {
  if (!text) return undefined;
  const whole = parseJson(text, strict);
  if (whole !== undefined) return [whole];
  const parts = splitTopLevel(text);
  if (parts.length < 2) return undefined;
  const values: unknown[] = [];
  for (const part of parts) {
    const value = parseJson(part, strict);
    if (value === undefined) return undefined;
    values.push(value);
  }
  return values;
}

/** JSON.parse, then (unless `strict`) `jsonrepair` for an object or array text; `undefined`
 * when neither works. */
function parseJson(text: string, strict: boolean): unknown {
  const t = text.trim();
  if (!t.startsWith("{") && !t.startsWith("[")) return undefined;
  try {
    return JSON.parse(t);
  } catch {
    if (strict) return undefined;
    try {
      const repaired: unknown = JSON.parse(jsonrepair(t));
      return typeof repaired === "object" && repaired !== null ? repaired : undefined;
    } catch {
      return undefined;
    }
  }
}

/** Splits `a; b` / `a\nb` at top level (outside strings and brackets). */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let inString = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") depth--;
    else if (depth === 0 && (c === ";" || c === "\n")) {
      if (text.slice(start, i).trim()) parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  if (text.slice(start).trim()) parts.push(text.slice(start));
  return parts;
}

/**
 * Streams text while holding back whatever might be a text tool call, so a call is never shown
 * as text: from the first marker (`<tool_call>`, a fence, `<|python_tag|>`, or `{`/`[` opening
 * the reply) everything is held until the end, and a tail that could start a marker waits for
 * the next delta. At the end, the held text is parsed: calls come out, the rest is released.
 */
export class TextToolCallStream {
  /** Text released so far. */
  #released = "";
  /** Text not released yet. */
  #pending = "";
  #holding = false;
  readonly #offered: ReadonlySet<string>;

  constructor(offered: ReadonlySet<string>) {
    this.#offered = offered;
  }

  /** Adds a delta; returns the text that can be shown now (`""` when none). */
  push(delta: string): string {
    this.#pending += delta;
    if (this.#holding) return "";
    const text = this.#pending;
    let cut = text.length;
    for (const marker of MARKERS) {
      const at = text.indexOf(marker);
      if (at >= 0 && at < cut) cut = at;
    }
    if (this.#released.trim() === "") {
      const first = text.search(/\S/);
      if (first >= 0 && first < cut && (text[first] === "{" || text[first] === "[")) cut = first;
    }
    if (cut < text.length) {
      this.#holding = true;
    } else {
      // Hold a tail that could be the start of a marker.
      for (let n = Math.min(text.length, 13); n > 0; n--) {
        const tail = text.slice(text.length - n);
        if (MARKERS.some((m) => m.length > n && m.startsWith(tail))) {
          cut = text.length - n;
          break;
        }
      }
    }
    const out = text.slice(0, cut);
    this.#pending = text.slice(cut);
    this.#released += out;
    return out;
  }

  /**
   * Ends the stream: the calls found in the held text (none when `parse` is false, e.g. because
   * the model made native calls), the text still to show, and the final content (everything
   * shown, in order). `cut`: the reply was cut at the output limit (see {@link readTextToolCalls}).
   */
  end(parse = true, cut = false): { calls: TextToolCall[]; text: string; content: string; cut: boolean } {
    const held = this.#pending;
    this.#pending = "";
    const parsed = parse && this.#holding ? readTextToolCalls(held, this.#offered, cut) : undefined;
    const text = parsed ? parsed.content : held;
    this.#released += text;
    return { calls: parsed?.calls ?? [], text, content: this.#released, cut: parsed?.cut ?? false };
  }
}

/** An id for a call read from text (the text has none). */
export function newCallId(): string {
  return `call_${globalThis.crypto.randomUUID().replace(/-/g, "").slice(0, 24)}`;
}

/** Calls read from text, as tool calls. */
export function textToolCalls(calls: readonly TextToolCall[]): ToolCall[] {
  return calls.map((c) => toolCall(newCallId(), c.name, c.args));
}

/**
 * A whole reply with the tool calls written in its text read (when it made no native ones):
 * `stop` becomes `tool_calls`, and so does `length` when every call is complete; a cut call
 * leaves the reply `structuredCut`, its JSON out of the content.
 */
export function withTextToolCalls(result: ModelResult, offered: ReadonlySet<string>): ModelResult {
  if (result.message.toolCalls) return result;
  const cut = result.finishReason === "length";
  const parsed = readTextToolCalls(result.message.content, offered, cut);
  if (!parsed) return result;
  if (parsed.cut) return { ...result, message: { role: "assistant", content: parsed.content }, structuredCut: true };
  const out: ModelResult = { ...result, message: { role: "assistant", content: parsed.content, toolCalls: textToolCalls(parsed.calls) } };
  if (out.finishReason === "stop" || cut) out.finishReason = "tool_calls";
  return out;
}
