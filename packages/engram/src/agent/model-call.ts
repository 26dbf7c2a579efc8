/**
 * One model call as the loop makes it: streamed, in a slot of the run's concurrency limit, its
 * deltas and status sent out as events and its usage counted.
 * @module
 */
import { ModelError } from "../errors.js";
import type { Message, ModelRequest, Usage } from "../models/types.js";
import type { RunScope } from "./runtime.js";
import type { Reply } from "./truncation.js";
import { addUsage } from "./usage.js";

/** One model call (reserved from the run's budget by the caller), in a slot of the run's
 * concurrency limit: deltas and status go out as events, usage is added to the level's and the
 * run's. */
export function streamReply(scope: RunScope, request: ModelRequest): Promise<Reply> {
  return scope.run.limit.run(() => streamInSlot(scope, request));
}

async function streamInSlot(scope: RunScope, request: ModelRequest): Promise<Reply> {
  const { events, level } = scope;
  let message: Message | undefined;
  let usage: Usage | undefined;
  let finishReason: string | undefined;
  let structuredCut = false;
  for await (const ev of level.model.stream(request)) {
    if (ev.type === "text_delta") events.push({ type: "model_delta", text: ev.text });
    else if (ev.type === "status")
      events.push({ type: "model_status", stage: ev.stage, ...(ev.tokens !== undefined && { tokens: ev.tokens }) });
    else if (ev.type === "finish") {
      message = ev.message;
      usage = ev.usage;
      finishReason = (ev as { finishReason?: string }).finishReason;
      structuredCut = ev.structuredCut === true;
    }
  }
  if (!message) throw new ModelError("bad_response", `model ${level.model.id} finished without a message`);
  addUsage(scope.usage, usage);
  addUsage(scope.run.usage, usage);
  return { message, ...(usage && { usage }), ...(finishReason !== undefined && { finishReason }), structuredCut };
}
