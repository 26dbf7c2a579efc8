/**
 * The run loop of one agent level: model call, tool calls, repeat — with the level's stack
 * around every call. The top agent and every `task` subagent run this same loop; the thread
 * module loads and saves the top level's state, and a subagent's state travels inside its
 * parent's (so an interrupt deep in a chain of subagents is checkpointed with the thread and
 * a resume continues inside the subagent that asked).
 * @module
 */
import * as z from "zod/mini";
import { EngramError, ModelError, ResumeError } from "../errors.js";
import { type Decision, applyDecisions } from "../middleware/hitl.js";
import { type HookContext, type Middleware, type ModelResponse, chain } from "../middleware/types.js";
import type { CutReply, Message, ModelRequest, ToolCall, ToolSpec, Usage } from "../models/types.js";
import { toolParameters } from "../tools/parameters.js";
import { type Tool, type ToolResult, invokeTool } from "../tools/types.js";
import { DEFAULT_SYSTEM_PROMPT } from "./prompt.js";
import type { LevelState, RunScope, Suspension } from "./runtime.js";
import { RESPOND_TOOL } from "./options.js";
import { abortError } from "./abort.js";
import { addUsage } from "./usage.js";
import { RepeatedFailures } from "./repeats.js";
import { buildStack } from "./stack.js";
import { OPEN_TOOLS, type OpenTools, type StepMark, interruptedCallNotice } from "./step-log.js";
import { FORMAT_PROMPT, type StructuredFormat, jsonOf, retryPrompt } from "./structured.js";
import type { AgentInput, AgentOutput, Interrupt, StopReason } from "./types.js";

/** JSON Schemas by zod schema: tools are rebuilt per run, their schemas are not. */
const jsonSchemas = new WeakMap<object, Record<string, unknown>>();

function toolSpec(tool: Tool<never>): ToolSpec {
  if (tool.jsonSchema) return { name: tool.name, description: tool.description, parameters: tool.jsonSchema };
  let parameters = jsonSchemas.get(tool.schema);
  if (!parameters) {
    parameters = toolParameters(tool.schema);
    jsonSchemas.set(tool.schema, parameters);
  }
  return { name: tool.name, description: tool.description, parameters };
}

/** Where a run's structured final answer stands. */
interface StructuredAnswer {
  value?: unknown;
  done: boolean;
  /** Wrong answers so far, and the last one's validation errors. */
  failures: number;
  errors?: string;
}

/** The tool that ends a run with its final answer (`responseMode: "tool"`). */
function respondTool(format: StructuredFormat, answer: StructuredAnswer): Tool<never> {
  const tool: Tool<unknown> = {
    name: RESPOND_TOOL,
    description: "Gives your final answer, as the arguments. Call it once, when the task is done; it ends your work.",
    schema: z.unknown(),
    jsonSchema: format.jsonSchema,
    async run(input) {
      const checked = format.validate(input);
      if (checked.ok) {
        answer.value = checked.value;
        answer.done = true;
        return { content: "Final answer recorded." };
      }
      // The loop fails the run at the second wrong answer (a tool's exception would only
      // become an error result).
      answer.failures++;
      answer.errors = checked.errors;
      return {
        content: `Error: the answer does not match the required schema: ${checked.errors}. Call ${RESPOND_TOOL} again.`,
        isError: true,
      };
    },
  };
  return tool as Tool<never>;
}

/** The message that asks a model cut off at its output limit to go on. */
export const CONTINUE_PROMPT =
  "Your previous answer was cut off at the output limit. Continue exactly where it stopped, without repeating anything.";

/** Where `state.data` keeps the tool phase a subagent's review interrupted. */
const PENDING_TOOLS = "engram.pendingTools";

/** A tool phase waiting on subagents: results of the calls that completed, and the subagents
 * that stopped for review, by `task` call id. */
interface PendingTools {
  done: Record<string, Message>;
  suspended: Record<string, Suspension>;
}

export type { LevelState } from "./runtime.js";

/** What the loop asks of its caller. */
export interface LoopHooks {
  /** Saves the level's state (a checkpoint at the top; nothing for a subagent, whose state
   * its parent saves). */
  save(state: LevelState): Promise<void>;
  /** Whether this is the top level (the one that reports interrupts to the caller). */
  top: boolean;
  /** Commits the run's progress (a durable run, at the top level): called after each model turn,
   * before each tool call runs (`mark.started`) and after its result (`mark.done`). */
  step?(state: LevelState, mark?: StepMark): Promise<void>;
  /** The state comes from a dead run's steps: a final answer it had given ends this run. */
  adopted?: boolean;
}

/** The decisions meant for the subagent of `taskCallId`, with that prefix removed. */
function decisionsFor(decisions: Record<string, Decision>, taskCallId: string): Record<string, Decision> {
  const prefix = `${taskCallId}/`;
  return Object.fromEntries(Object.entries(decisions).flatMap(([id, d]) => (id.startsWith(prefix) ? [[id.slice(prefix.length), d]] : [])));
}

/** The interrupt a parent surfaces for its suspended subagents: their calls, qualified by the
 * `task` call id, each with the identity of the subagent that made it. */
function combinedInterrupt(suspended: Record<string, Suspension>): Interrupt {
  return {
    toolCalls: Object.entries(suspended).flatMap(([taskCallId, s]) =>
      (s.state.interrupt?.toolCalls ?? []).map((c) => ({
        ...c,
        id: `${taskCallId}/${c.id}`,
        subagent: c.subagent ?? { name: s.name, depth: s.depth, path: s.path },
      })),
    ),
  };
}

/** Every pending call has a decision it allows; checked before anything runs. */
function checkDecisions(interrupt: Interrupt, decisions: Record<string, Decision>): void {
  for (const call of interrupt.toolCalls) {
    const d = decisions[call.id];
    if (!d || typeof d !== "object") throw new ResumeError(`cannot resume: no decision for tool call '${call.id}' (${call.name})`);
    if (!call.allow.includes(d.type)) {
      throw new ResumeError(`cannot resume: '${String(d.type)}' is not allowed for ${call.name} (allowed: ${call.allow.join(", ")})`);
    }
  }
}

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
  const scope: RunScope = { ...outer, suspended: new Map(), resuming: new Map() };
  const { level, signal, events, usage, run } = scope;
  const o = level.options;
  let pending: Interrupt | undefined;
  const ctx: HookContext = {
    threadId: scope.threadId,
    ...(scope.userId !== undefined && { userId: scope.userId }),
    ...(signal && { signal }),
    depth: level.depth,
    state,
    warn: (message) => events.push({ type: "warning", message }),
    interrupt: (calls) => {
      pending = { toolCalls: calls.map(({ call, allow }) => ({ id: call.id, name: call.name, args: call.args, allow })) };
    },
  };
  const middleware: Middleware[] = buildStack(scope, runChild);
  const tools = new Map<string, Tool<never>>();
  for (const t of [...middleware.flatMap((m) => m.tools ?? []), ...o.tools]) tools.set(t.name, t);
  for (const t of scope.runTools) {
    if (tools.has(t.name)) {
      if (level.depth === 0) events.push({ type: "warning", message: `tool '${t.name}' of an MCP server is left out: the name is taken` });
    } else tools.set(t.name, t);
  }
  // Structured output (top level only): the validated final answer, and the attempts it took.
  const structured = hooks.top ? o.structured : undefined;
  const answer: StructuredAnswer = { done: false, failures: 0 };
  const repeats = new RepeatedFailures(o.maxRepeatedToolFailures);
  if (structured && o.responseMode === "tool") tools.set(RESPOND_TOOL, respondTool(structured, answer));
  const specs = [...tools.values()].map(toolSpec);
  const system = o.systemPrompt ?? DEFAULT_SYSTEM_PROMPT;
  const model = level.model;
  const output = (stopReason: StopReason): AgentOutput => ({
    messages: state.messages,
    ...(state.interrupt && { interrupt: state.interrupt }),
    // The top level's usage is the run's; a subagent's, its own and its subagents'.
    usage: hooks.top ? run.usage : usage,
    stopReason,
    ...(answer.done && { structuredResponse: answer.value }),
  });

  /** One model call (reserved from the run's budget by the caller), in a slot of the run's
   * concurrency limit. */
  const stream = (request: ModelRequest): Promise<ModelResponse & CutReply> => run.limit.run(() => streamInSlot(request));
  const streamInSlot = async (request: ModelRequest): Promise<ModelResponse & CutReply> => {
    let message: Message | undefined;
    let turnUsage: Usage | undefined;
    let finishReason: string | undefined;
    let structuredCut = false;
    for await (const ev of model.stream(request)) {
      if (ev.type === "text_delta") events.push({ type: "model_delta", text: ev.text });
      else if (ev.type === "status")
        events.push({ type: "model_status", stage: ev.stage, ...(ev.tokens !== undefined && { tokens: ev.tokens }) });
      else if (ev.type === "finish") {
        message = ev.message;
        turnUsage = ev.usage;
        finishReason = (ev as { finishReason?: string }).finishReason;
        structuredCut = ev.structuredCut === true;
      }
    }
    if (!message) throw new ModelError("bad_response", `model ${model.id} finished without a message`);
    addUsage(usage, turnUsage);
    addUsage(run.usage, turnUsage);
    return { message, ...(turnUsage && { usage: turnUsage }), ...(finishReason !== undefined && { finishReason }), structuredCut };
  };

  const callModel = chain<ModelRequest, ModelResponse>(
    middleware,
    (m) => m.wrapModelCall,
    async (request) => {
      const { structuredCut, ...first } = await stream(request);
      if (first.finishReason !== "length") return first;
      // Structured output (a tool call, a JSON reply) cut off cannot be continued as text.
      const structured = structuredCut || request.responseFormat !== undefined || (first.message.toolCalls?.length ?? 0) > 0;
      if (structured || o.onTruncated === "error" || !run.budget.reserve()) {
        throw new ModelError("truncated", `model ${model.id} stopped at its output limit`);
      }
      // Continue once: the continuation extends the cut-off message.
      const { structuredCut: _, ...next } = await stream({
        ...request,
        messages: [...request.messages, { role: "assistant", content: first.message.content }, { role: "user", content: CONTINUE_PROMPT }],
      });
      if (next.finishReason === "length") throw new ModelError("truncated", `model ${model.id} stopped at its output limit twice`);
      const message: Message = { ...next.message, content: `${first.message.content}${next.message.content}` };
      return { ...next, message };
    },
    ctx,
  );

  const runTool = chain<ToolCall, ToolResult>(
    middleware,
    (m) => m.wrapToolCall,
    async (call) => {
      const tool = tools.get(call.name);
      if (!tool) return { content: `Error: unknown tool '${call.name}'. Available: ${[...tools.keys()].join(", ")}`, isError: true };
      if (call.argsError) {
        // The model's arguments could not be read even after repair: say exactly why, so it can retry.
        return {
          content: `Error: invalid arguments for ${call.name}: ${call.argsError}. Call it again with a valid JSON object.`,
          isError: true,
        };
      }
      return invokeTool(tool, call.args, { toolCallId: call.id, ...(signal && { signal }), run: ctx });
    },
    ctx,
  );

  /** Runs calls, each in a slot of the run's concurrency limit; returns tool messages by call
   * id. `task` calls whose subagent stopped for review land in `scope.suspended` instead. */
  const runTools = async (calls: ToolCall[]): Promise<Map<string, Message>> => {
    for (const call of calls) events.push({ type: "tool_start", call });
    const failed = new Set<string>();
    const results = await Promise.all(
      calls.map((call) =>
        run.limit.run(async (): Promise<[string, Message] | undefined> => {
          let r: ToolResult;
          // Recorded before it runs: a crash from here on is never followed by a silent re-run.
          if (hooks.step) await hooks.step(state, { started: call.id });
          try {
            r = await runTool(call);
          } catch (e) {
            r = { content: `Error: ${call.name} failed: ${e instanceof Error ? e.message : String(e)}`, isError: true };
          }
          if (scope.suspended.has(call.id)) return undefined;
          if (r.isError) failed.add(call.id);
          events.push({
            type: "tool_end",
            call,
            result: r.content,
            isError: r.isError ?? false,
            ...(r.attachments?.length && { attachments: r.attachments }),
          });
          const message: Message = { role: "tool", toolCallId: call.id, content: r.content };
          if (hooks.step) await hooks.step(state, { done: [call.id, message] });
          return [call.id, message];
        }),
      ),
    );
    // In the model's order, so that which call succeeded last does not depend on timing.
    calls.forEach((call, i) => {
      const message = results[i]?.[1];
      const note = message && repeats.record(call, failed.has(call.id));
      if (note) message.content += note;
    });
    return new Map(results.filter((r): r is [string, Message] => r !== undefined));
  };

  /** Ends a tool phase: answers the calls in the model's order, or — when a subagent stopped
   * for review — saves the phase and surfaces the subagent's interrupt. */
  const endToolPhase = async (calls: ToolCall[], results: Map<string, Message>): Promise<AgentOutput | undefined> => {
    if (scope.suspended.size === 0) {
      for (const call of calls) {
        const answer = results.get(call.id);
        if (answer) state.messages.push(answer);
      }
      return undefined;
    }
    const phase: PendingTools = { done: Object.fromEntries(results), suspended: Object.fromEntries(scope.suspended) };
    scope.suspended.clear();
    state.data[PENDING_TOOLS] = phase;
    state.interrupt = combinedInterrupt(phase.suspended);
    return interrupted();
  };

  const interrupted = async (): Promise<AgentOutput> => {
    await hooks.save(state);
    if (hooks.top && state.interrupt) events.push({ type: "interrupt", interrupt: state.interrupt });
    return output("interrupted");
  };

  const finish = async (stopReason: StopReason): Promise<AgentOutput> => {
    for (const m of middleware) await m.afterAgent?.(ctx);
    delete state.interrupt;
    await hooks.save(state);
    return output(stopReason);
  };

  // A tool phase a dead run left open: its results stand, a call that had started without one
  // is answered as interrupted (an idempotent tool runs again), the others run now.
  const open = hooks.top ? (state.data[OPEN_TOOLS] as OpenTools | undefined) : undefined;
  if (open) {
    delete state.data[OPEN_TOOLS];
    const calls = state.messages.at(-1)?.toolCalls ?? [];
    const results = new Map<string, Message>(Object.entries(open.done));
    const again: ToolCall[] = [];
    for (const call of calls) {
      if (results.has(call.id)) continue;
      if (!open.started.includes(call.id) || tools.get(call.name)?.idempotent === true) {
        again.push(call);
        continue;
      }
      const notice: Message = { role: "tool", toolCallId: call.id, content: interruptedCallNotice(call.name) };
      results.set(call.id, notice);
      events.push({
        type: "warning",
        message: `tool call ${call.name} (${call.id}) was interrupted by the end of its process: not run again`,
      });
      if (hooks.step) await hooks.step(state, { done: [call.id, notice] });
    }
    for (const [id, m] of await runTools(again)) results.set(id, m);
    const stopped = await endToolPhase(calls, results);
    if (stopped) return stopped;
  }
  const adoptedAnswer = hooks.adopted && state.messages.at(-1)?.role === "assistant" && !state.messages.at(-1)?.toolCalls?.length;
  if ("resume" in input) {
    const last = state.messages.at(-1);
    if (!state.interrupt || !last || last.role !== "assistant")
      throw new ResumeError(`thread '${scope.threadId}' has no interrupted run to resume`);
    checkDecisions(state.interrupt, input.resume);
    // The review is taken before any reviewed call runs: the thread is saved without it, so of
    // two resumes in two processes one saves first and the other stops here, or loads a thread
    // with nothing to resume — an approved call runs at most once. (A process that dies before
    // the calls end leaves them unanswered; the next run answers them as interrupted.)
    if (hooks.top) {
      const { [PENDING_TOOLS]: _, ...data } = state.data;
      try {
        await hooks.save({ messages: state.messages, data });
      } catch (e) {
        if (!EngramError.hasCode(e, "conflict")) throw e;
        throw new ResumeError(
          `thread '${scope.threadId}' was resumed or saved by another run since this one loaded it: these decisions were not applied`,
          { cause: e },
        );
      }
    }
    const phase = state.data[PENDING_TOOLS] as PendingTools | undefined;
    if (phase) {
      // Resume into the subagents that asked; the calls that completed keep their results.
      for (const [taskCallId, suspension] of Object.entries(phase.suspended)) {
        scope.resuming.set(taskCallId, { suspension, decisions: decisionsFor(input.resume, taskCallId) });
      }
      delete state.data[PENDING_TOOLS];
      delete state.interrupt;
      const calls = (last.toolCalls ?? []).filter((c) => c.id in phase.suspended);
      const results = await runTools(calls);
      scope.resuming.clear();
      const all = new Map([...Object.entries(phase.done), ...results]);
      const stopped = await endToolPhase(last.toolCalls ?? [], all);
      if (stopped) return stopped;
    } else {
      const resolution = applyDecisions(last, input.resume, o.interruptOn);
      if ("error" in resolution) throw new ResumeError(`cannot resume: ${resolution.error}`);
      delete state.interrupt;
      state.messages[state.messages.length - 1] = resolution.message;
      const results = await runTools(resolution.run);
      for (const m of resolution.rejected) results.set(m.toolCallId as string, m);
      const stopped = await endToolPhase(resolution.message.toolCalls ?? [], results);
      if (stopped) return stopped;
    }
  } else {
    // A dead run that had given its final answer: nothing is left to do for it.
    if (adoptedAnswer && input.messages.length === 0) return finish("done");
    for (const m of input.messages) state.messages.push({ ...m });
    for (const m of middleware) await m.beforeAgent?.(ctx);
    if (hooks.step) await hooks.step(state);
  }
  /** One model turn through the stack; its message joins the thread. */
  const turn = async (extra: Partial<ModelRequest> = {}): Promise<ModelResponse> => {
    let request: ModelRequest = { system, messages: [...state.messages], tools: specs, ...extra, ...(signal && { signal }) };
    if (o.modelSettings) request = { ...request, settings: o.modelSettings };
    for (const m of middleware) request = (await m.beforeModel?.(request, ctx)) ?? request;
    let response = await callModel(request);
    for (const m of middleware) response = (await m.afterModel?.(response, ctx)) ?? response;
    state.messages.push(response.message);
    if (hooks.step) await hooks.step(state);
    return response;
  };

  /** Counts a wrong final answer: the first goes back to the model, the second fails the run. */
  const rejectAnswer = (errors: string) => {
    answer.failures++;
    answer.errors = errors;
    checkAnswers();
  };
  const checkAnswers = () => {
    if (answer.failures >= 2)
      throw new EngramError(
        "invalid_response",
        `the model's final answer does not match responseFormat: ${answer.errors ?? "(no answer)"}`,
      );
  };

  /** Native mode: the final answer in the schema — the model's own if it is valid JSON, else
   * asked for with `request.responseFormat` (errors sent back once). */
  const nativeAnswer = async (message: Message, format: StructuredFormat): Promise<StopReason | undefined> => {
    let content = message.content;
    for (let attempt = 0; attempt < 3; attempt++) {
      const json = jsonOf(content);
      const checked = json && format.validate(json.value);
      if (checked?.ok) {
        answer.value = checked.value;
        answer.done = true;
        return undefined;
      }
      let prompt = FORMAT_PROMPT;
      if (attempt > 0 || checked) {
        const errors = checked ? checked.errors : "the answer is not a JSON object";
        rejectAnswer(errors);
        prompt = retryPrompt(errors);
      }
      if (signal?.aborted) throw abortError(signal);
      if (!run.budget.reserve()) return "max_model_calls";
      state.messages.push({ role: "user", content: prompt });
      content = (await turn({ tools: [], responseFormat: { name: format.name, schema: format.jsonSchema } })).message.content;
    }
    return undefined;
  };

  for (let n = 0; n < o.maxTurns; n++) {
    if (signal?.aborted) throw abortError(signal);
    // Reserved before the call, so that levels running side by side cannot all pass.
    if (!run.budget.reserve()) return finish("max_model_calls");
    const response = await turn();
    if (pending) {
      state.interrupt = pending;
      pending = undefined;
      return interrupted();
    }
    const calls = response.message.toolCalls ?? [];
    if (calls.length === 0) {
      if (!structured) return finish("done");
      if (o.responseMode === "native") return finish((await nativeAnswer(response.message, structured)) ?? "done");
      // Tool mode: an answer in prose is valid only as the schema's JSON; else, once, a reminder.
      const json = jsonOf(response.message.content);
      const checked = json && structured.validate(json.value);
      if (checked?.ok) {
        answer.value = checked.value;
        answer.done = true;
        return finish("done");
      }
      rejectAnswer(checked ? checked.errors : `no ${RESPOND_TOOL} call`);
      state.messages.push({ role: "user", content: `Give your final answer by calling ${RESPOND_TOOL}.` });
      continue;
    }
    if (signal?.aborted) throw abortError(signal);
    const repeated = calls.find((call) => repeats.exhausted(call));
    if (repeated) {
      state.messages.push(...repeats.notRun(calls, repeated));
      events.push({
        type: "warning",
        message: `stopped: the model asked again for ${repeated.name} with the arguments that failed ${repeats.limit} times in a row`,
      });
      return finish("repeated_tool_failure");
    }
    const stopped = await endToolPhase(calls, await runTools(calls));
    if (stopped) return stopped;
    if (answer.done) return finish("done");
    checkAnswers();
    if (run.budget.exhausted) return finish("max_model_calls");
  }
  return finish("max_turns");
}

/** A `task` subagent's run: its state lives in memory and, when it stops for review, inside
 * the parent's state. */
function runChild(scope: RunScope, input: AgentInput, state: LevelState): Promise<AgentOutput> {
  return runLoop(scope, state, input, { save: async () => undefined, top: false });
}
