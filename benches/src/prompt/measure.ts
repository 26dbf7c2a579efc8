/**
 * What a request costs and what of it a prefix cache can serve: its o200k token count, and the
 * bytes it shares, from the start, with the request before it.
 *
 * A request is read in the order providers render it — the tool schemas, then the messages —
 * as the JSON text of each piece as it went over the wire. Tokens count the text the model
 * reads: each tool's name, description and parameter schema (as JSON), each message's content,
 * and each tool call's name and arguments.
 */
import { getEncoding } from "js-tiktoken";
import type { WireBody, WireMessage } from "./server.js";

const o200k = getEncoding("o200k_base");

/** The parts of a request, in order; a change invalidates its part and every part after it. */
export type Part = "tools" | "instructions" | "context" | "conversation";

export interface Piece {
  part: Part;
  /** For `context`: the section (its opening tag, e.g. `agent_memory`); for `conversation`: the message's role. */
  section: string;
  text: string;
}

function contentText(m: WireMessage): string {
  if (typeof m.content === "string") return m.content;
  if (Array.isArray(m.content)) return m.content.map((p) => (typeof p?.text === "string" ? p.text : "")).join("");
  return "";
}

/** The context message's top-level sections: each opens with a tag at a line start
 * (`<agent_memory>`) and runs to the next one; text before the first belongs to it. */
function sections(text: string): { section: string; start: number }[] {
  const out: { section: string; start: number }[] = [];
  const re = /(^|\n)<([a-z_]+)[ >]/g;
  let from = 0;
  for (;;) {
    re.lastIndex = from;
    const m = re.exec(text);
    if (!m) break;
    const name = m[2] as string;
    out.push({ section: name, start: out.length === 0 ? 0 : m.index + (m[1] as string).length });
    const close = text.indexOf(`</${name}>`, m.index);
    from = close < 0 ? m.index + m[0].length : close + name.length + 3;
  }
  return out;
}

/** The request's pieces in render order. System messages: the first is the static instructions,
 * any later one the context (memory, skills, facts), one piece per section; the rest is the
 * conversation, one piece per message. */
export function pieces(body: WireBody): Piece[] {
  const out: Piece[] = [{ part: "tools", section: "tools", text: JSON.stringify(body.tools ?? []) }];
  let systems = 0;
  let conversation = false;
  for (const m of body.messages) {
    const text = JSON.stringify(m);
    if (m.role !== "system" || conversation) {
      conversation = true;
      out.push({ part: "conversation", section: m.role, text });
    } else if (systems++ === 0) {
      out.push({ part: "instructions", section: "instructions", text });
    } else {
      const content = contentText(m);
      const found = sections(content);
      if (found.length === 0) found.push({ section: "context", start: 0 });
      // JSON escaping is per character: the escaped slices add up to the message's JSON text.
      found.forEach((f, i) => {
        const slice = JSON.stringify(content.slice(f.start, found[i + 1]?.start ?? content.length)).slice(1, -1);
        out.push({ part: "context", section: f.section, text: (i === 0 ? '{"role":"system","content":"' : "") + slice });
      });
      out.push({ part: "context", section: (found.at(-1) as { section: string }).section, text: '"}' });
    }
  }
  return out;
}

/** o200k tokens of what the model reads in `body`. */
export function promptTokens(body: WireBody): number {
  let n = 0;
  for (const t of body.tools ?? []) n += o200k.encode(JSON.stringify(t.function)).length;
  for (const m of body.messages) {
    n += o200k.encode(contentText(m)).length;
    for (const c of m.tool_calls ?? []) n += o200k.encode(c.function.name).length + o200k.encode(c.function.arguments).length;
  }
  return n;
}

export interface Shared {
  /** Bytes of `current` equal, from its start, to `previous`, over its length. */
  share: number;
  /** Where the first difference is (the part and section), or `undefined` when none. */
  firstChange?: { part: Part; section: string };
}

/** How much of `current` repeats `previous` byte for byte from the start, and where it first differs. */
export function shared(previous: WireBody, current: WireBody): Shared {
  const a = pieces(previous);
  const b = pieces(current);
  const total = b.reduce((n, p) => n + p.text.length, 0);
  let same = 0;
  for (let i = 0; i < b.length; i++) {
    // Past the previous request's end: everything after is new, nothing of it changed.
    if (i >= a.length) return { share: same / total };
    const x = (a[i] as Piece).text;
    const y = (b[i] as Piece).text;
    if (x === y) {
      same += y.length;
      continue;
    }
    let k = 0;
    while (k < x.length && k < y.length && x.charCodeAt(k) === y.charCodeAt(k)) k++;
    same += k;
    // A piece that only grew (the previous one is its prefix and nothing follows it in the
    // previous request) is an append, not a change: the conversation growing by a message.
    if (k === x.length && i === a.length - 1) return { share: same / total };
    const piece = b[i] as Piece;
    return { share: same / total, firstChange: { part: piece.part, section: piece.section } };
  }
  return { share: same / total };
}
