/**
 * One level's run as a record: its scope and state, the hooks its caller gave, its middleware
 * stack, tools and wrapped calls, the review a middleware asked for, and its structured answer.
 * Every part of the loop (the model turn, the tool phase, resume, the structured answer) takes
 * this record, or the piece of it that part needs, explicitly.
 * @module
 */
import { type HookContext, type Middleware, type ModelResponse, chain } from "../middleware/types.js";
import type { ModelRequest, ToolCall, ToolSpec } from "../models/types.js";
import { toolParameters } from "../tools/parameters.js";
import type { Tool, ToolResult } from "../tools/types.js";
import { type AnswerState, noAnswer, respondTool, withAnswer } from "./answer.js";
import { RESPOND_TOOL } from "./options.js";
import { RepeatedFailures } from "./repeats.js";
import type { LevelState, RunScope } from "./runtime.js";
import type { RunChild } from "./slots/subagents.js";
import { buildStack } from "./stack.js";
import type { StructuredFormat } from "./structured.js";
import { type StepHook, type ToolPhase, callTool } from "./tool-phase.js";
import { completeReply } from "./truncation.js";
import { streamReply } from "./model-call.js";
import type { Interrupt } from "./types.js";

/** What the loop asks of its caller. */
export interface LoopHooks {
  /** Saves the level's state (a checkpoint at the top; nothing for a subagent, whose state
   * its parent saves). */
  save(state: LevelState): Promise<void>;
  /** Whether this is the top level (the one that reports interrupts to the caller). */
  top: boolean;
  /** Commits the run's progress (a durable run, at the top level): called after each model turn,
   * before each tool call runs (`mark.started`) and after its result (`mark.done`). */
  step?: StepHook;
  /** The state comes from a dead run's steps: a final answer it had given ends this run. */
  adopted?: boolean;
}

/** A level's run (see the module). */
export interface LevelRun {
  /** This level's scope, with its own `suspended` and `resuming` maps. */
  scope: RunScope;
  state: LevelState;
  hooks: LoopHooks;
  ctx: HookContext;
  middleware: Middleware[];
  tools: Map<string, Tool<never>>;
  specs: ToolSpec[];
  /** One model call through the `wrapModelCall` chain (a cut reply continued or failed). */
  callModel(request: ModelRequest): Promise<ModelResponse>;
  /** The level's tool calls, as the tool phase runs them. */
  phase: ToolPhase;
  /** The review a middleware asked for during the model turn under way (HITL). */
  review: { requested?: Interrupt };
  /** The final answer's schema: the top level's `responseFormat`. */
  format: StructuredFormat | undefined;
  answer: AnswerState;
}

/** JSON Schemas by zod schema: tools are rebuilt per run, their schemas are not. */
const jsonSchemas = new WeakMap<object, Record<string, unknown>>();

/** What the model is told of a tool. */
export function toolSpec(tool: Tool<never>): ToolSpec {
  if (tool.jsonSchema) return { name: tool.name, description: tool.description, parameters: tool.jsonSchema };
  let parameters = jsonSchemas.get(tool.schema);
  if (!parameters) {
    parameters = toolParameters(tool.schema);
    jsonSchemas.set(tool.schema, parameters);
  }
  return { name: tool.name, description: tool.description, parameters };
}

/** The level's tools by name: the middleware's, the options', then the run's (MCP) unless the
 * name is taken (a warning at the top level). */
function levelTools(scope: RunScope, middleware: Middleware[]): Map<string, Tool<never>> {
  const tools = new Map<string, Tool<never>>();
  for (const t of [...middleware.flatMap((m) => m.tools ?? []), ...scope.level.options.tools]) tools.set(t.name, t);
  for (const t of scope.runTools) {
    if (tools.has(t.name)) {
      if (scope.level.depth === 0)
        scope.events.push({ type: "warning", message: `tool '${t.name}' of an MCP server is left out: the name is taken` });
    } else tools.set(t.name, t);
  }
  return tools;
}

/** The context every hook of the level gets; `interrupt` records the review asked for. */
function hookContext(scope: RunScope, state: LevelState, review: LevelRun["review"]): HookContext {
  const { signal, events } = scope;
  return {
    threadId: scope.threadId,
    ...(scope.userId !== undefined && { userId: scope.userId }),
    ...(signal && { signal }),
    depth: scope.level.depth,
    state,
    warn: (message) => events.push({ type: "warning", message }),
    interrupt: (calls) => {
      review.requested = { toolCalls: calls.map(({ call, allow }) => ({ id: call.id, name: call.name, args: call.args, allow })) };
    },
  };
}

/** Opens a level's run on `state` (changed in place by the parts of the loop). */
export function openLevel(outer: RunScope, state: LevelState, hooks: LoopHooks, runChild: RunChild): LevelRun {
  const scope: RunScope = { ...outer, suspended: new Map(), resuming: new Map() };
  const o = scope.level.options;
  const review: LevelRun["review"] = {};
  const ctx = hookContext(scope, state, review);
  const middleware = buildStack(scope, runChild);
  const tools = levelTools(scope, middleware);
  // Structured output (top level only).
  const format = hooks.top ? o.structured : undefined;
  const policy = { onTruncated: o.onTruncated, budget: scope.run.budget, modelId: scope.level.model.id };
  const runTool = chain<ToolCall, ToolResult>(
    middleware,
    (m) => m.wrapToolCall,
    (call) => callTool(tools, call, ctx),
    ctx,
  );
  const level: LevelRun = {
    scope,
    state,
    hooks,
    ctx,
    middleware,
    tools,
    specs: [],
    callModel: chain(
      middleware,
      (m) => m.wrapModelCall,
      (request) => completeReply(request, (r) => streamReply(scope, r), policy),
      ctx,
    ),
    phase: {
      state,
      runTool,
      limit: scope.run.limit,
      events: scope.events,
      repeats: new RepeatedFailures(o.maxRepeatedToolFailures),
      suspended: scope.suspended,
      ...(hooks.step && { step: hooks.step }),
    },
    review,
    format,
    answer: noAnswer(),
  };
  if (format && o.responseMode === "tool")
    tools.set(
      RESPOND_TOOL,
      respondTool(format, (c) => (level.answer = withAnswer(level.answer, c))),
    );
  level.specs = [...tools.values()].map(toolSpec);
  return level;
}
