/**
 * What each configuration of the memory evaluation sends to the model, counted in o200k tokens
 * (`js-tiktoken`, as the prompt rows count), whatever model answers: the static system prompt,
 * the volatile context (the `<memory>` block), the messages with their tool calls, and the tool
 * schemas. A wrapper around the model counts every request it is given, the agent's turns apart
 * from the memory extraction (the requests that ask for a JSON object).
 * @module
 */
import { getEncoding } from "js-tiktoken";
import type { ChatModel, ModelRequest } from "../../../packages/engram/src/index.js";

const o200k = getEncoding("o200k_base");

/** o200k tokens of `text`. */
export function textTokens(text: string): number {
  return text === "" ? 0 : o200k.encode(text).length;
}

/** o200k tokens of what the model reads in `request`. */
export function requestTokens(request: ModelRequest): number {
  let n = textTokens(request.system) + textTokens(request.systemContext ?? "");
  for (const t of request.tools) n += textTokens(JSON.stringify({ name: t.name, description: t.description, parameters: t.parameters }));
  for (const m of request.messages) {
    n += textTokens(m.content);
    for (const c of m.toolCalls ?? []) n += textTokens(c.name) + textTokens(JSON.stringify(c.args));
  }
  return n;
}

/** Tokens sent so far, by purpose. */
export interface TokenTally {
  /** The agent's turns: `calls` requests, `tokens` o200k tokens in all. */
  agent: { calls: number; tokens: number };
  /** The system context of the first of those requests (`""` when none). */
  firstContext: string;
  /** Memory extraction (requests with a `responseFormat`). */
  extraction: { calls: number; tokens: number };
}

/** `model`, counting what it is sent into a tally that `take` returns and restarts. */
export function meteredModel(model: ChatModel): { model: ChatModel; take: () => TokenTally } {
  let tally: TokenTally = fresh();
  const count = (request: ModelRequest) => {
    const part = request.responseFormat ? tally.extraction : tally.agent;
    if (part === tally.agent && part.calls === 0) tally.firstContext = request.systemContext ?? "";
    part.calls++;
    part.tokens += requestTokens(request);
  };
  const metered: ChatModel = {
    id: model.id,
    invoke: (request) => {
      count(request);
      return model.invoke(request);
    },
    stream: (request) => {
      count(request);
      return model.stream(request);
    },
    ...(model.maxInputTokens && { maxInputTokens: () => model.maxInputTokens?.() }),
  };
  return {
    model: metered,
    take: () => {
      const out = tally;
      tally = fresh();
      return out;
    },
  };
}

function fresh(): TokenTally {
  return { agent: { calls: 0, tokens: 0 }, firstContext: "", extraction: { calls: 0, tokens: 0 } };
}
