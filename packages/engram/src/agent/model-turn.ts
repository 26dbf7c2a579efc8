/**
 * The model turn: the request built from the level's thread, through the `beforeModel` hooks,
 * the `wrapModelCall` chain (`model-call.ts` at its core) and the `afterModel` hooks; the
 * reply's message joins the thread (and is committed, in a durable run).
 * @module
 */
import type { ModelResponse } from "../middleware/types.js";
import type { ModelRequest } from "../models/types.js";
import type { LevelRun } from "./level.js";
import { DEFAULT_SYSTEM_PROMPT } from "./prompt.js";

/** One model turn through the level's stack (`extra` overrides the request's fields); its
 * message joins the thread. */
export async function modelTurn(level: LevelRun, extra: Partial<ModelRequest> = {}): Promise<ModelResponse> {
  const { state, ctx, middleware } = level;
  const { systemPrompt, modelSettings } = level.scope.level.options;
  const signal = level.scope.signal;
  let request: ModelRequest = {
    system: systemPrompt ?? DEFAULT_SYSTEM_PROMPT,
    messages: [...state.messages],
    tools: level.specs,
    ...extra,
    ...(signal && { signal }),
  };
  if (modelSettings) request = { ...request, settings: modelSettings };
  for (const m of middleware) request = (await m.beforeModel?.(request, ctx)) ?? request;
  let response = await level.callModel(request);
  for (const m of middleware) response = (await m.afterModel?.(response, ctx)) ?? response;
  state.messages.push(response.message);
  if (level.hooks.step) await level.hooks.step(state);
  return response;
}
