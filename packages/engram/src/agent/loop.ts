/**
 * The run loop of one agent level: resume what the run picks up, then model turn, tool phase,
 * repeat — with the level's stack around every call. The top agent and every `task` subagent
 * run this same loop; the thread module loads and saves the top level's state, and a
 * subagent's state travels inside its parent's (so an interrupt deep in a chain of subagents is
 * checkpointed with the thread and a resume continues inside the subagent that asked).
 *
 * The parts, each a module taking the level's record ({@link LevelRun}) or a piece of it:
 * `level.ts` (the record), `resume.ts`, `model-turn.ts` (with `model-call.ts` and
 * `truncation.ts`), `tool-phase.ts`, `answer.ts` (the structured answer), `run-limits.ts`.
 * @module
 */
import type { ModelResponse } from "../middleware/types.js";
import { abortError } from "./abort.js";
import type { Message } from "../models/types.js";
import { checkAnswers, nativeAnswerStep, proseAnswerStep } from "./answer.js";
import { type LevelRun, type LoopHooks, openLevel } from "./level.js";
import { modelTurn } from "./model-turn.js";
import { adoptedAnswer, closeOpenPhase, resumeReview } from "./resume.js";
import { reserveModelCall } from "./run-limits.js";
import type { LevelState, RunScope } from "./runtime.js";
import type { StructuredFormat } from "./structured.js";
import { closeToolPhase, runToolCalls } from "./tool-phase.js";
import type { AgentInput, AgentOutput, StopReason } from "./types.js";

export type { LevelState } from "./runtime.js";
export type { LoopHooks } from "./level.js";
export { CONTINUE_PROMPT } from "./truncation.js";

/**
 * Runs one level until the model answers without tool calls, a bound is reached, or a
 * reviewed tool call (here or in a subagent) interrupts. `state` is changed in place.
 */
export function runLoop(outer: RunScope, state: LevelState, input: AgentInput, hooks: LoopHooks): Promise<AgentOutput> {
  const { tracing } = outer.level.options;
  if (!tracing) return runLevel(outer, state, input, hooks);
  const { level, threadId } = outer;
  return tracing.run({ name: level.name, threadId, depth: level.depth }, async (span) => {
    const out = await runLevel(outer, state, input, hooks);
    span.setAttribute("engram.stop_reason", out.stopReason);
    return out;
  });
}

async function runLevel(outer: RunScope, state: LevelState, input: AgentInput, hooks: LoopHooks): Promise<AgentOutput> {
  const level = openLevel(outer, state, hooks, runChild);
  const picked = await start(level, input);
  return end(level, picked ?? (await runTurns(level)));
}

/** What the run picks up before its first turn (see `resume.ts`), or the new messages it
 * starts with; a stop reason when that already ends it. */
async function start(level: LevelRun, input: AgentInput): Promise<StopReason | undefined> {
  const stopped = await closeOpenPhase(level);
  if (stopped) return stopped;
  if ("resume" in input) return resumeReview(level, input.resume);
  // A dead run that had given its final answer: nothing is left to do for it.
  if (adoptedAnswer(level) && input.messages.length === 0) return "done";
  const { state, middleware, ctx, hooks } = level;
  for (const m of input.messages) state.messages.push({ ...m });
  for (const m of middleware) await m.beforeAgent?.(ctx);
  if (hooks.step) await hooks.step(state);
  return undefined;
}

/** Model turns until one ends the level, or `maxTurns`. */
async function runTurns(level: LevelRun): Promise<StopReason> {
  const { run, signal } = level.scope;
  for (let n = 0; n < level.scope.level.options.maxTurns; n++) {
    // Reserved before the call, so that levels running side by side cannot all pass.
    if (!reserveModelCall(run.budget, signal)) return "max_model_calls";
    const stopped = await afterTurn(level, await modelTurn(level));
    if (stopped) return stopped;
  }
  return "max_turns";
}

/** What a model turn's reply leads to: a review, the final answer, or its tool phase. */
async function afterTurn(level: LevelRun, response: ModelResponse): Promise<StopReason | undefined> {
  const { review, state } = level;
  if (review.requested) {
    state.interrupt = review.requested;
    delete review.requested;
    return "interrupted";
  }
  const calls = response.message.toolCalls ?? [];
  if (calls.length > 0) return toolTurn(level, response.message);
  if (!level.format) return "done";
  if (level.scope.level.options.responseMode === "native") return nativeAnswer(level, response.message, level.format);
  const step = proseAnswerStep(level.answer, level.format, response.message.content);
  level.answer = step.answer;
  if (step.prompt === undefined) return "done";
  state.messages.push({ role: "user", content: step.prompt });
  return undefined;
}

/** The tool phase of a turn — unless a call already failed too often in a row (the level
 * stops without running any) — then what its results leave. */
async function toolTurn(level: LevelRun, message: Message): Promise<StopReason | undefined> {
  const { scope, phase, state } = level;
  const calls = message.toolCalls ?? [];
  if (scope.signal?.aborted) throw abortError(scope.signal);
  const repeated = calls.find((call) => phase.repeats.exhausted(call));
  if (repeated) {
    state.messages.push(...phase.repeats.notRun(calls, repeated));
    scope.events.push({
      type: "warning",
      message: `stopped: the model asked again for ${repeated.name} with the arguments that failed ${phase.repeats.limit} times in a row`,
    });
    return "repeated_tool_failure";
  }
  if (closeToolPhase(phase, calls, await runToolCalls(phase, calls))) return "interrupted";
  if (level.answer.done) return "done";
  checkAnswers(level.answer);
  if (scope.run.budget.exhausted) return "max_model_calls";
  return undefined;
}

/** Native mode: the final answer in the schema — the model's own if it is valid JSON, else
 * asked for with `request.responseFormat` (errors sent back once). */
async function nativeAnswer(level: LevelRun, message: Message, format: StructuredFormat): Promise<StopReason> {
  const { run, signal } = level.scope;
  let content = message.content;
  for (let attempt = 0; attempt < 3; attempt++) {
    const step = nativeAnswerStep(level.answer, format, content, attempt);
    level.answer = step.answer;
    if (step.prompt === undefined) return "done";
    if (!reserveModelCall(run.budget, signal)) return "max_model_calls";
    level.state.messages.push({ role: "user", content: step.prompt });
    content = (await modelTurn(level, { tools: [], responseFormat: { name: format.name, schema: format.jsonSchema } })).message.content;
  }
  return "done";
}

/** Ends the level: `"interrupted"` saves the state with its interrupt (reported at the top);
 * anything else runs the `afterAgent` hooks and saves the state without one. */
async function end(level: LevelRun, stopReason: StopReason): Promise<AgentOutput> {
  const { state, hooks, scope } = level;
  if (stopReason === "interrupted") {
    await hooks.save(state);
    if (hooks.top && state.interrupt) scope.events.push({ type: "interrupt", interrupt: state.interrupt });
    return output(level, stopReason);
  }
  for (const m of level.middleware) await m.afterAgent?.(level.ctx);
  delete state.interrupt;
  await hooks.save(state);
  return output(level, stopReason);
}

function output(level: LevelRun, stopReason: StopReason): AgentOutput {
  const { state, hooks, scope, answer } = level;
  return {
    messages: state.messages,
    ...(state.interrupt && { interrupt: state.interrupt }),
    // The top level's usage is the run's; a subagent's, its own and its subagents'.
    usage: hooks.top ? scope.run.usage : scope.usage,
    stopReason,
    ...(answer.done && { structuredResponse: answer.value }),
  };
}

/** A `task` subagent's run: its state lives in memory and, when it stops for review, inside
 * the parent's state. */
function runChild(scope: RunScope, input: AgentInput, state: LevelState): Promise<AgentOutput> {
  return runLoop(scope, state, input, { save: async () => undefined, top: false });
}
