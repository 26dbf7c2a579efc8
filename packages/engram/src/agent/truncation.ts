/**
 * A model reply cut at its output limit (`finishReason: "length"`), the `onTruncated` option:
 * a cut free-text reply is continued once (the continuation extends the cut message); a cut
 * tool call or JSON reply, a second cut, or `onTruncated: "error"` fail with a `ModelError` of
 * code `truncated`.
 * @module
 */
import { ModelError } from "../errors.js";
import type { ModelResponse } from "../middleware/types.js";
import type { CutReply, Message, ModelRequest } from "../models/types.js";
import type { ModelCallBudget } from "./run-limits.js";

/** The message that asks a model cut off at its output limit to go on. */
export const CONTINUE_PROMPT =
  "Your previous answer was cut off at the output limit. Continue exactly where it stopped, without repeating anything.";

/** One model call's reply, with what the model said of a cut. */
export type Reply = ModelResponse & CutReply;

/** What deciding about a cut reply needs: the option, the run's budget (a continuation is one
 * more model call) and the model's id for the error. */
export interface TruncationPolicy {
  onTruncated: "continue" | "error";
  budget: ModelCallBudget;
  modelId: string;
}

/** Whether a cut reply is structured output (a tool call, a JSON reply), which cannot be
 * continued as text. */
function cutIsStructured(request: ModelRequest, reply: Reply): boolean {
  return reply.structuredCut === true || request.responseFormat !== undefined || (reply.message.toolCalls?.length ?? 0) > 0;
}

/**
 * The whole reply to `request`: `call`'s first reply when it was not cut, else the cut reply
 * continued once (the continuation reserved from the budget). Throws a `truncated`
 * {@link ModelError} when it cannot be continued.
 */
export async function completeReply(
  request: ModelRequest,
  call: (request: ModelRequest) => Promise<Reply>,
  policy: TruncationPolicy,
): Promise<ModelResponse> {
  const reply = await call(request);
  const { structuredCut: _, ...first } = reply;
  if (first.finishReason !== "length") return first;
  if (cutIsStructured(request, reply) || policy.onTruncated === "error" || !policy.budget.reserve()) {
    throw new ModelError("truncated", `model ${policy.modelId} stopped at its output limit`);
  }
  const { structuredCut: __, ...next } = await call(continuation(request, first.message));
  if (next.finishReason === "length") throw new ModelError("truncated", `model ${policy.modelId} stopped at its output limit twice`);
  const message: Message = { ...next.message, content: `${first.message.content}${next.message.content}` };
  return { ...next, message };
}

/** The request that asks for the rest of `cut`. */
export function continuation(request: ModelRequest, cut: Message): ModelRequest {
  return {
    ...request,
    messages: [...request.messages, { role: "assistant", content: cut.content }, { role: "user", content: CONTINUE_PROMPT }],
  };
}
