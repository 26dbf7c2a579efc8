/**
 * The replayed sessions' replies are context for extraction, capped short to keep a CPU run
 * bounded: a reply cut at that cap is kept as it is (the agent would otherwise ask the model to
 * continue, then fail the turn, and the user's turn would never reach the memory). Structured
 * requests (the memory extraction's JSON) and tool calls are passed through untouched, so a cut
 * extraction still counts as the failure it is.
 * @module
 */
import type { ChatModel, ModelRequest, ModelResult, ModelStreamEvent } from "../../../packages/engram/src/index.js";

/** Whether a cut reply to `request` is plain text that may stand as it is. */
function keepable(request: ModelRequest, finishReason: string | undefined, toolCalls: number): boolean {
  return finishReason === "length" && request.responseFormat === undefined && toolCalls === 0;
}

/** `model`, whose free-text replies cut at the output limit are reported as finished. */
export function keepCutReplies(model: ChatModel): ChatModel {
  return {
    id: model.id,
    invoke: async (request): Promise<ModelResult> => {
      const reply = await model.invoke(request);
      if (!keepable(request, reply.finishReason, reply.message.toolCalls?.length ?? 0)) return reply;
      const { structuredCut: _, ...rest } = reply;
      return { ...rest, finishReason: "stop" };
    },
    stream: (request) => keepCutEvents(request, model.stream(request)),
    ...(model.maxInputTokens && { maxInputTokens: () => model.maxInputTokens?.() }),
  };
}

async function* keepCutEvents(request: ModelRequest, events: AsyncIterable<ModelStreamEvent>): AsyncGenerator<ModelStreamEvent> {
  for await (const ev of events) {
    if (ev.type === "finish" && keepable(request, ev.finishReason, ev.message.toolCalls?.length ?? 0)) {
      const { structuredCut: _, ...rest } = ev;
      yield { ...rest, finishReason: "stop" };
    } else yield ev;
  }
}
