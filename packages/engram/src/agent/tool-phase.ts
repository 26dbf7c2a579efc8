/**
 * The tool phase of a model turn: its tool calls run (each in a slot of the run's concurrency
 * limit, marked as started before it runs and done after, for durable runs), their results
 * answered in the model's order — or, when a `task` subagent stopped for review, the phase kept
 * in the level's state to be resumed. Also what becomes of a phase a dead run left open: a call
 * that had started without a result is answered as interrupted unless its tool is idempotent.
 * @module
 */
import type { Message, ToolCall } from "../models/types.js";
import { type RunContext, type Tool, type ToolResult, invokeTool } from "../tools/types.js";
import type { RepeatedFailures } from "./repeats.js";
import type { ConcurrencyLimit } from "./run-limits.js";
import type { LevelState, Suspension } from "./runtime.js";
import { type OpenTools, type StepMark, interruptedCallNotice } from "./step-log.js";
import type { EventSink, Interrupt } from "./types.js";

/** Commits a level's progress (a durable run): see `LoopHooks.step`. */
export type StepHook = (state: LevelState, mark?: StepMark) => Promise<void>;

/** What a tool phase works with, all of it the level's. */
export interface ToolPhase {
  state: LevelState;
  /** One call through the level's `wrapToolCall` chain. */
  runTool(call: ToolCall): Promise<ToolResult>;
  limit: ConcurrencyLimit;
  events: EventSink;
  repeats: RepeatedFailures;
  /** `task` calls of this phase whose subagent stopped for review (the subagents slot fills it). */
  suspended: Map<string, Suspension>;
  step?: StepHook;
}

/** Where `state.data` keeps the tool phase a subagent's review interrupted. */
export const PENDING_TOOLS = "engram.pendingTools";

/** A tool phase waiting on subagents: results of the calls that completed, and the subagents
 * that stopped for review, by `task` call id. */
export interface PendingTools {
  done: Record<string, Message>;
  suspended: Record<string, Suspension>;
}

/** The innermost step of a tool call: the tool, run with the model's arguments — or the error
 * result that tells the model what was wrong with the call. */
export async function callTool(tools: ReadonlyMap<string, Tool<never>>, call: ToolCall, run: RunContext): Promise<ToolResult> {
  const tool = tools.get(call.name);
  if (!tool) return { content: `Error: unknown tool '${call.name}'. Available: ${[...tools.keys()].join(", ")}`, isError: true };
  if (call.argsError) {
    // The model's arguments could not be read even after repair: say exactly why, so it can retry.
    return {
      content: `Error: invalid arguments for ${call.name}: ${call.argsError}. Call it again with a valid JSON object.`,
      isError: true,
    };
  }
  return invokeTool(tool, call.args, { toolCallId: call.id, ...(run.signal && { signal: run.signal }), run });
}

/** One call in a slot of the run's limit: its tool message, or `undefined` when its subagent
 * stopped for review. */
async function runCall(phase: ToolPhase, call: ToolCall, failed: Set<string>): Promise<[string, Message] | undefined> {
  // Recorded before it runs: a crash from here on is never followed by a silent re-run.
  if (phase.step) await phase.step(phase.state, { started: call.id });
  let r: ToolResult;
  try {
    r = await phase.runTool(call);
  } catch (e) {
    r = { content: `Error: ${call.name} failed: ${e instanceof Error ? e.message : String(e)}`, isError: true };
  }
  if (phase.suspended.has(call.id)) return undefined;
  if (r.isError) failed.add(call.id);
  phase.events.push({
    type: "tool_end",
    call,
    result: r.content,
    isError: r.isError ?? false,
    ...(r.attachments?.length && { attachments: r.attachments }),
  });
  const message: Message = { role: "tool", toolCallId: call.id, content: r.content };
  if (phase.step) await phase.step(phase.state, { done: [call.id, message] });
  return [call.id, message];
}

/** Runs `calls`, each in a slot of the run's concurrency limit; returns tool messages by call
 * id. `task` calls whose subagent stopped for review land in `phase.suspended` instead. */
export async function runToolCalls(phase: ToolPhase, calls: ToolCall[]): Promise<Map<string, Message>> {
  for (const call of calls) phase.events.push({ type: "tool_start", call });
  const failed = new Set<string>();
  const results = await Promise.all(calls.map((call) => phase.limit.run(() => runCall(phase, call, failed))));
  // In the model's order, so that which call succeeded last does not depend on timing.
  calls.forEach((call, i) => {
    const message = results[i]?.[1];
    const note = message && phase.repeats.record(call, failed.has(call.id));
    if (note) message.content += note;
  });
  return new Map(results.filter((r): r is [string, Message] => r !== undefined));
}

/** The interrupt a parent surfaces for its suspended subagents: their calls, qualified by the
 * `task` call id, each with the identity of the subagent that made it. */
export function combinedInterrupt(suspended: Record<string, Suspension>): Interrupt {
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

/**
 * Ends a tool phase: the results join the thread in the model's order (answers `false`), or —
 * when a subagent stopped for review — the phase is kept in `state.data` ({@link PENDING_TOOLS})
 * with the subagents' combined interrupt on the state (answers `true`: the level stops).
 */
export function closeToolPhase(phase: ToolPhase, calls: ToolCall[], results: Map<string, Message>): boolean {
  const { state, suspended } = phase;
  if (suspended.size === 0) {
    for (const call of calls) {
      const answer = results.get(call.id);
      if (answer) state.messages.push(answer);
    }
    return false;
  }
  const pending: PendingTools = { done: Object.fromEntries(results), suspended: Object.fromEntries(suspended) };
  suspended.clear();
  state.data[PENDING_TOOLS] = pending;
  state.interrupt = combinedInterrupt(pending.suspended);
  return true;
}

/** The calls of a phase a dead run left open, sorted: those with a committed result, those to
 * run (never started, or of an idempotent tool), and those interrupted mid-run. */
export interface OpenCalls {
  results: Map<string, Message>;
  rerun: ToolCall[];
  interrupted: ToolCall[];
}

/** Sorts the calls of an open phase (see {@link OpenCalls}); `idempotent` tells a tool that
 * may run again. */
export function sortOpenCalls(open: OpenTools, calls: ToolCall[], idempotent: (name: string) => boolean): OpenCalls {
  const results = new Map<string, Message>(Object.entries(open.done));
  const rerun: ToolCall[] = [];
  const interrupted: ToolCall[] = [];
  for (const call of calls) {
    if (results.has(call.id)) continue;
    if (!open.started.includes(call.id) || idempotent(call.name)) rerun.push(call);
    else interrupted.push(call);
  }
  return { results, rerun, interrupted };
}

/** Finishes a phase a dead run left open: its results stand, an interrupted call is answered
 * as such (with a warning), the others run now. Returns every result by call id. */
export async function finishOpenPhase(phase: ToolPhase, open: OpenCalls): Promise<Map<string, Message>> {
  const results = new Map(open.results);
  for (const call of open.interrupted) {
    const notice: Message = { role: "tool", toolCallId: call.id, content: interruptedCallNotice(call.name) };
    results.set(call.id, notice);
    phase.events.push({
      type: "warning",
      message: `tool call ${call.name} (${call.id}) was interrupted by the end of its process: not run again`,
    });
    if (phase.step) await phase.step(phase.state, { done: [call.id, notice] });
  }
  for (const [id, m] of await runToolCalls(phase, open.rerun)) results.set(id, m);
  return results;
}
