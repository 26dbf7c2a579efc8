/**
 * Slot 5: when a model call's input would exceed `maxInputTokens × threshold`, the older
 * messages are appended to `/conversation_history/<thread>.md` (appended, never rewritten),
 * summarised by the model, and replaced by that summary; the most recent messages stay verbatim.
 * @module
 */
import type { Middleware } from "./types.js";
import type { RunContext } from "../tools/types.js";
import type { Backend } from "../backends/protocol.js";
import { appendTo } from "../backends/append.js";
import { sharedTokenCounter } from "../models/tokens.js";
import type { ChatModel, Message } from "../models/types.js";

export interface SummarizationOptions {
  model: ChatModel;
  backend: Backend;
  /** The input budget of one call. Default: the model's own ({@link ChatModel.maxInputTokens}),
   * else 128,000 (`DEFAULT_MAX_INPUT_TOKENS`). */
  maxInputTokens?: number | undefined;
  threshold: number;
  keepMessages: number;
  beforeSummarize?: (dropped: Message[], context: RunContext) => void | Promise<void>;
}

const SUMMARY_PROMPT =
  "You compress conversations. Summarise the conversation below so the work can continue from the summary alone: " +
  "keep decisions, facts, file paths, open questions and the user's preferences; drop pleasantries. Answer with the summary only.";

/** The input budget when neither the options nor the model give one. */
export const DEFAULT_MAX_INPUT_TOKENS = 128_000;

/** The input budget of one call: the explicit one, else the model's, else the default. Asked
 * before every call: a model may learn its size late (a local model when it loads, a provider
 * from an error). */
export async function inputBudget(model: ChatModel, explicit: number | undefined): Promise<number> {
  return explicit ?? (await model.maxInputTokens?.()) ?? DEFAULT_MAX_INPUT_TOKENS;
}

/** Where a thread's history goes (thread ids become safe file names). */
export function historyPath(threadId: string): string {
  return `/conversation_history/${threadId.replace(/[^A-Za-z0-9_.-]/g, "_") || "thread"}.md`;
}

function transcript(messages: Message[]): string {
  return messages
    .map((m) => {
      const calls = m.toolCalls?.length
        ? `\n(tool calls: ${m.toolCalls.map((c) => `${c.name} ${JSON.stringify(c.args)}`).join("; ")})`
        : "";
      return `## ${m.role}${m.toolCallId ? ` (${m.toolCallId})` : ""}\n\n${m.content}${calls}\n`;
    })
    .join("\n");
}

export function summarizationMiddleware(o: SummarizationOptions): Middleware {
  return {
    name: "summarization",
    async beforeModel(request, ctx) {
      const budget = (await inputBudget(o.model, o.maxInputTokens)) * o.threshold;
      // The system context (memory, skills) counts too.
      if (sharedTokenCounter.request(request) <= budget) return;
      const messages = ctx.state.messages;
      let cut = messages.length - o.keepMessages;
      // Never split a tool call from its results: the kept tail starts at a non-tool message.
      while (cut > 0 && messages[cut]?.role === "tool") cut--;
      if (cut <= 0) return;
      const dropped = messages.slice(0, cut);
      await o.beforeSummarize?.(dropped, ctx);
      const path = historyPath(ctx.threadId);
      const saved = await appendTo(o.backend, path, `${transcript(dropped)}\n`);
      if (saved.error) ctx.warn(`conversation history could not be saved to ${path}: ${saved.error.message}`);
      const summary = await o.model.invoke({
        system: SUMMARY_PROMPT,
        messages: [{ role: "user", content: transcript(dropped) }],
        tools: [],
        ...(ctx.signal && { signal: ctx.signal }),
      });
      const count = ((ctx.state.data.summarizations as number | undefined) ?? 0) + 1;
      ctx.state.data.summarizations = count;
      ctx.state.messages = [
        { role: "user", content: `[Summary of the earlier conversation; the full history is in ${path}]\n\n${summary.message.content}` },
        ...messages.slice(cut),
      ];
      return { ...request, messages: [...ctx.state.messages] };
    },
  };
}
