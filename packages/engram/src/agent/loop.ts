/**
 * The run loop of one agent level: model call, tool calls, repeat — with the level's stack
 * around every call. The top agent and every `task` subagent run this same loop; the thread
 * module loads and saves the top level's state.
 * @module
 */
import { z } from "zod";
import { ResumeError } from "../errors.js";
import { applyDecisions } from "../middleware/hitl.js";
import { type AgentState, type HookContext, type Middleware, type ModelResponse, chain } from "../middleware/types.js";
import type { Message, ModelRequest, ToolCall, ToolSpec, Usage } from "../models/types.js";
import { type Tool, type ToolResult, invokeTool } from "../tools/types.js";
import { DEFAULT_SYSTEM_PROMPT } from "./prompt.js";
import type { AgentLevel, RunScope } from "./runtime.js";
import { buildStack } from "./stack.js";
import type { AgentInput, AgentOutput, Interrupt } from "./types.js";

/** JSON Schemas by zod schema: tools are rebuilt per run, their schemas are not. */
const jsonSchemas = new WeakMap<object, Record<string, unknown>>();

function toolSpec(tool: Tool<never>): ToolSpec {
  let parameters = jsonSchemas.get(tool.schema);
  if (!parameters) {
    parameters = z.toJSONSchema(tool.schema as z.ZodType, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
    jsonSchemas.set(tool.schema, parameters);
  }
  return { name: tool.name, description: tool.description, parameters };
}

function abortError(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : Object.assign(new Error("the run was aborted"), { name: "AbortError" });
}

function addUsage(total: Usage, add: Usage | undefined): void {
  if (!add) return;
  total.inputTokens = (total.inputTokens ?? 0) + (add.inputTokens ?? 0);
  total.outputTokens = (total.outputTokens ?? 0) + (add.outputTokens ?? 0);
}

/** Where a level's run stands: its state, and the interrupt it is waiting on (if any). */
export interface LevelState extends AgentState {
  interrupt?: Interrupt;
}

/** What the loop asks of its caller: saving the level's state (a checkpoint at the top). */
export interface LoopHooks {
  save(state: LevelState): Promise<void>;
}

/**
 * Runs one level until the model answers without tool calls, the turn bound is reached, or a
 * reviewed tool call interrupts. `state` is changed in place.
 */
export async function runLoop(scope: RunScope, state: LevelState, input: AgentInput, hooks: LoopHooks): Promise<AgentOutput> {
  const { level, signal, events, usage } = scope;
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
  const specs = [...tools.values()].map(toolSpec);
  const system = o.systemPrompt ?? DEFAULT_SYSTEM_PROMPT;
  const model = level.model;

  const callModel = chain<ModelRequest, ModelResponse>(
    middleware,
    (m) => m.wrapModelCall,
    async (request) => {
      let message: Message | undefined;
      let turnUsage: Usage | undefined;
      for await (const ev of model.stream(request)) {
        if (ev.type === "text_delta") events.push({ type: "model_delta", text: ev.text });
        else if (ev.type === "finish") {
          message = ev.message;
          turnUsage = ev.usage;
        }
      }
      if (!message) throw new Error(`model ${model.id} finished without a message`);
      return { message, ...(turnUsage && { usage: turnUsage }) };
    },
    ctx,
  );

  const runTool = chain<ToolCall, ToolResult>(
    middleware,
    (m) => m.wrapToolCall,
    async (call) => {
      const tool = tools.get(call.name);
      if (!tool) return { content: `Error: unknown tool '${call.name}'. Available: ${[...tools.keys()].join(", ")}`, isError: true };
      return invokeTool(tool, call.args, { toolCallId: call.id, ...(signal && { signal }), run: ctx });
    },
    ctx,
  );

  /** Runs calls concurrently; returns their tool messages in the order of the calls. */
  const runTools = async (calls: ToolCall[]): Promise<Message[]> => {
    for (const call of calls) events.push({ type: "tool_start", call });
    return Promise.all(
      calls.map(async (call): Promise<Message> => {
        let r: ToolResult;
        try {
          r = await runTool(call);
        } catch (e) {
          r = { content: `Error: ${call.name} failed: ${e instanceof Error ? e.message : String(e)}`, isError: true };
        }
        events.push({ type: "tool_end", call, result: r.content, isError: r.isError ?? false });
        return { role: "tool", toolCallId: call.id, content: r.content };
      }),
    );
  };

  const finish = async (): Promise<AgentOutput> => {
    for (const m of middleware) await m.afterAgent?.(ctx);
    delete state.interrupt;
    await hooks.save(state);
    return { messages: state.messages, usage };
  };

  if ("resume" in input) {
    const last = state.messages.at(-1);
    if (!state.interrupt || !last || last.role !== "assistant")
      throw new ResumeError(`thread '${scope.threadId}' has no interrupted run to resume`);
    const resolution = applyDecisions(last, input.resume, o.interruptOn);
    if ("error" in resolution) throw new ResumeError(`cannot resume: ${resolution.error}`);
    delete state.interrupt;
    state.messages[state.messages.length - 1] = resolution.message;
    // Results of approved calls and rejections answer the calls in their original order.
    const answers = new Map([...(await runTools(resolution.run)), ...resolution.rejected].map((m) => [m.toolCallId, m]));
    for (const call of resolution.message.toolCalls ?? []) {
      const answer = answers.get(call.id);
      if (answer) state.messages.push(answer);
    }
  } else {
    for (const m of input.messages) state.messages.push({ ...m });
    for (const m of middleware) await m.beforeAgent?.(ctx);
  }
  for (let turn = 0; turn < o.maxTurns; turn++) {
    if (signal?.aborted) throw abortError(signal);
    let request: ModelRequest = { system, messages: [...state.messages], tools: specs, ...(signal && { signal }) };
    for (const m of middleware) request = (await m.beforeModel?.(request, ctx)) ?? request;
    let response = await callModel(request);
    for (const m of middleware) response = (await m.afterModel?.(response, ctx)) ?? response;
    addUsage(usage, response.usage);
    state.messages.push(response.message);
    if (pending) {
      state.interrupt = pending;
      await hooks.save(state);
      events.push({ type: "interrupt", interrupt: pending });
      return { messages: state.messages, interrupt: pending, usage };
    }
    const calls = response.message.toolCalls ?? [];
    if (calls.length === 0) return finish();
    if (signal?.aborted) throw abortError(signal);
    state.messages.push(...(await runTools(calls)));
  }
  events.push({ type: "warning", message: `stopped after maxTurns (${o.maxTurns}) model calls` });
  return finish();
}

/** A `task` subagent: a child level on a fresh state, nothing saved outside the run. */
async function runChild(_child: AgentLevel, scope: RunScope, task: string): Promise<AgentOutput> {
  const state: LevelState = { messages: [], data: {} };
  return runLoop(scope, state, { messages: [{ role: "user", content: task }] }, { save: async () => undefined });
}
