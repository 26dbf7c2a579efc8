/**
 * The `search_past_threads` tool: the model searches the user's earlier threads (their user and
 * assistant messages) for what was said or decided there, even when no long-term fact holds it.
 * Only the run's user's threads are searched, never the current one; the answer is a few
 * threads with a short snippet each. With `inject`, the same search runs without a tool call:
 * the run's first model call of a new user message gets the best snippets as a block.
 * @module
 */
import * as z from "zod/mini";
import { cutAt } from "../core/text.js";
import type { Core } from "../core/types.js";
import { type RecallBlock, fitRecallBlock, recallSnippets } from "../memory/recall/inject.js";
import { type ThreadSearchSource, searchPastThreads } from "../memory/recall/search.js";
import { MESSAGE_SEARCH_LIMIT, type MessageSearchHit } from "../memory/recall/types.js";
import type { Tool, ToolResult } from "../tools/types.js";
import { withContext } from "./memory.js";
import type { HookContext, Middleware } from "./types.js";

export const PAST_THREADS_TOOL_NAME = "search_past_threads";

/** The longest query the tool echoes back. */
const ECHOED_QUERY_CHARS = 120;

/** Options of {@link pastThreadsMiddleware}. */
export interface PastThreadsOptions {
  /** The threads' checkpointer. */
  source: ThreadSearchSource;
  core: Pick<Core, "rankBm25">;
  /** Threads per answer at most (the model may ask for fewer). */
  maxResults: number;
  /** Characters per snippet at most. */
  snippetChars: number;
}

const when = (ms: number) =>
  Number.isFinite(ms) && ms > 0 ? `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC` : "unknown time";

/** The tool's text: one block per thread, best first. */
export function formatPastThreads(query: string, hits: readonly MessageSearchHit[]): string {
  const asked = JSON.stringify(cutAt(query, ECHOED_QUERY_CHARS));
  if (hits.length === 0) return `No earlier thread of this user matches ${asked}.`;
  const blocks = hits.map(
    (h, i) => `[${i + 1}] thread ${JSON.stringify(h.threadId)}, saved ${when(h.savedAt)}, ${h.role} said:\n${h.snippet}`,
  );
  return `${hits.length} earlier thread${hits.length === 1 ? "" : "s"} match ${asked}, best first:\n\n${blocks.join("\n\n")}`;
}

/** The `search_past_threads` tool over `options.source`. */
export function pastThreadsTool(options: PastThreadsOptions): Tool<never> {
  const max = Math.min(options.maxResults, MESSAGE_SEARCH_LIMIT.max);
  const schema = z.object({
    query: z.string().check(z.minLength(1), z.maxLength(500), z.describe("Words to look for: the topic, names, terms used back then.")),
    limit: z.optional(
      z.coerce.number().check(z.int(), z.gte(1), z.lte(max), z.describe(`Threads to return, at most ${max}. Default ${max}.`)),
    ),
  });
  const tool: Tool<z.output<typeof schema>> = {
    name: PAST_THREADS_TOOL_NAME,
    description:
      "Search the user's earlier conversations (other threads) for what was said or decided there. Returns the best-matching threads, each with its id, when it was saved and a short snippet.",
    schema,
    idempotent: true,
    async run({ query, limit }, context): Promise<ToolResult> {
      const userId = context.run?.userId;
      if (userId === undefined)
        return { content: "Error: this run has no user (userId), and earlier threads are searched per user.", isError: true };
      const hits = await searchPastThreads(options.source, options.core, {
        userId,
        query,
        ...(context.run?.threadId !== undefined && { excludeThreadId: context.run.threadId }),
        limit: limit ?? max,
        snippetChars: options.snippetChars,
      });
      return { content: formatPastThreads(query, hits) };
    },
  };
  return tool as Tool<never>;
}

/** A middleware contributing {@link pastThreadsTool}. */
export function pastThreadsMiddleware(options: PastThreadsOptions): Middleware {
  return { name: "past-threads", tools: [pastThreadsTool(options)] };
}

/** Options of {@link runRecall}. */
export interface RecallInjectionOptions {
  source: ThreadSearchSource;
  core: Pick<Core, "rankBm25">;
  /** Snippets at most. */
  snippets: number;
  /** Characters per snippet at most. */
  snippetChars: number;
  /** Estimated tokens of the whole block at most. */
  maxTokens: number;
}

/** The new user message the run answers: the last message, when it is the user's. */
function newUserMessage(ctx: HookContext): string | undefined {
  const last = ctx.state.messages.at(-1);
  return last?.role === "user" && typeof last.content === "string" && last.content.trim() !== "" ? last.content : undefined;
}

/** One run's recall: the block and what it shows, searched once (at the first call). */
export type RunRecall = (ctx: HookContext) => Promise<RecallBlock>;

const NOTHING: RecallBlock = { text: "", shown: [] };

/**
 * The recall of one run: at its first call, when the run answers a new user message, that user's
 * earlier threads searched with it ({@link recallSnippets}) and the `<past_threads>` block fitted
 * ({@link fitRecallBlock}); every later call of the run gets the same. Shared by
 * {@link recallInjectionMiddleware} (which places the block) and the long-term memory block
 * (which leaves out the facts a shown message updates). A run without a user id, or a resumed
 * one, gets nothing; a failed search warns and gets nothing.
 */
export function runRecall(options: RecallInjectionOptions): RunRecall {
  let found: Promise<RecallBlock> | undefined;
  return (ctx) => {
    if (found === undefined) {
      const userId = ctx.userId;
      const query = newUserMessage(ctx);
      found =
        userId === undefined || query === undefined
          ? Promise.resolve(NOTHING)
          : recallSnippets(options.source, options.core, {
              userId,
              query,
              excludeThreadId: ctx.threadId,
              limit: options.snippets,
              snippetChars: options.snippetChars,
            }).then(
              (hits) => fitRecallBlock(hits, options.maxTokens),
              (e: unknown) => {
                ctx.warn(`earlier threads not recalled: ${e instanceof Error ? e.message : String(e)}`);
                return NOTHING;
              },
            );
    }
    return found;
  };
}

/**
 * A middleware (one per run) that places the run's recalled block (see {@link runRecall}) at the
 * end of the request's system context — after the static prompt and the memory, so their cached
 * prefix holds. The block stays the same for the run's later model calls.
 */
export function recallInjectionMiddleware(recall: RunRecall): Middleware {
  return {
    name: "past-threads-recall",
    async beforeModel(request, ctx) {
      const { text } = await recall(ctx);
      if (text === "") return;
      const context = request.systemContext ?? "";
      return withContext(request, context === "" ? text : `${context}\n\n${text}`);
    },
  };
}
