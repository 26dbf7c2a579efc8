/**
 * Resume: what a run picks up — at the thread, the steps a dead run committed (folded into the
 * checkpoint before anything runs); at a level, before its first model turn, the tool phase a
 * dead run left open (its committed results, its interrupted calls), the review an interrupted
 * run waits on (the decisions checked, the review taken, then the reviewed calls run or the
 * subagents that asked resumed), and a final answer a dead run had already given.
 * @module
 */
import type { Core } from "../core/types.js";
import { EngramError, ResumeError } from "../errors.js";
import { type Decision, applyDecisions } from "../middleware/hitl.js";
import type { Message } from "../models/types.js";
import type { Checkpoint, Checkpointer } from "./checkpointer.js";
import type { LevelRun } from "./level.js";
import type { HistoryOperations, StepOperations } from "./run-steps.js";
import { OPEN_TOOLS, type OpenTools, adoptSteps } from "./step-log.js";
import { PENDING_TOOLS, type PendingTools, closeToolPhase, finishOpenPhase, runToolCalls, sortOpenCalls } from "./tool-phase.js";
import type { Interrupt, StopReason } from "./types.js";

/** What resuming works on: the level's scope, state, hooks, tool phase and tools. */
export type ResumingLevel = Pick<LevelRun, "scope" | "state" | "hooks" | "phase" | "tools">;

/** The decisions meant for the subagent of `taskCallId`, with that prefix removed. */
export function decisionsFor(decisions: Record<string, Decision>, taskCallId: string): Record<string, Decision> {
  const prefix = `${taskCallId}/`;
  return Object.fromEntries(Object.entries(decisions).flatMap(([id, d]) => (id.startsWith(prefix) ? [[id.slice(prefix.length), d]] : [])));
}

/** Every pending call has a decision it allows; checked before anything runs. */
export function checkDecisions(interrupt: Interrupt, decisions: Record<string, Decision>): void {
  for (const call of interrupt.toolCalls) {
    const d = decisions[call.id];
    if (!d || typeof d !== "object") throw new ResumeError(`cannot resume: no decision for tool call '${call.id}' (${call.name})`);
    if (!call.allow.includes(d.type)) {
      throw new ResumeError(`cannot resume: '${String(d.type)}' is not allowed for ${call.name} (allowed: ${call.allow.join(", ")})`);
    }
  }
}

/**
 * Closes the tool phase a dead run left open (top level): its results stand, a call that had
 * started without one is answered as interrupted (an idempotent tool runs again), the others
 * run now. Answers `"interrupted"` when a subagent stopped for review meanwhile.
 */
export async function closeOpenPhase(level: ResumingLevel): Promise<StopReason | undefined> {
  const { state, tools } = level;
  const open = level.hooks.top ? (state.data[OPEN_TOOLS] as OpenTools | undefined) : undefined;
  if (!open) return undefined;
  delete state.data[OPEN_TOOLS];
  const calls = state.messages.at(-1)?.toolCalls ?? [];
  const sorted = sortOpenCalls(open, calls, (name) => tools.get(name)?.idempotent === true);
  const results = await finishOpenPhase(level.phase, sorted);
  return closeToolPhase(level.phase, calls, results) ? "interrupted" : undefined;
}

/**
 * Takes the review: the thread is saved without it before any reviewed call runs, so of two
 * resumes in two processes one saves first and the other stops here (a `ResumeError`), or
 * loads a thread with nothing to resume — an approved call runs at most once. (A process that
 * dies before the calls end leaves them unanswered; the next run answers them as interrupted.)
 */
export async function takeReview(level: Pick<ResumingLevel, "scope" | "state" | "hooks">): Promise<void> {
  const { [PENDING_TOOLS]: _, ...data } = level.state.data;
  try {
    await level.hooks.save({ messages: level.state.messages, data });
  } catch (e) {
    if (!EngramError.hasCode(e, "conflict")) throw e;
    throw new ResumeError(
      `thread '${level.scope.threadId}' was resumed or saved by another run since this one loaded it: these decisions were not applied`,
      { cause: e },
    );
  }
}

/** Resumes into the subagents that asked; the calls that completed keep their results. Answers
 * whether a subagent stopped for review again. */
async function resumeSubagents(level: ResumingLevel, last: Message, pending: PendingTools, decisions: Record<string, Decision>) {
  const { scope, state } = level;
  for (const [taskCallId, suspension] of Object.entries(pending.suspended)) {
    scope.resuming.set(taskCallId, { suspension, decisions: decisionsFor(decisions, taskCallId) });
  }
  delete state.data[PENDING_TOOLS];
  delete state.interrupt;
  const calls = (last.toolCalls ?? []).filter((c) => c.id in pending.suspended);
  const results = await runToolCalls(level.phase, calls);
  scope.resuming.clear();
  return closeToolPhase(level.phase, last.toolCalls ?? [], new Map([...Object.entries(pending.done), ...results]));
}

/** Runs this level's reviewed calls as decided (edited arguments, rejections answered).
 * Answers whether a subagent stopped for review. */
async function runReviewed(level: ResumingLevel, last: Message, decisions: Record<string, Decision>) {
  const { state } = level;
  const resolution = applyDecisions(last, decisions, level.scope.level.options.interruptOn);
  if ("error" in resolution) throw new ResumeError(`cannot resume: ${resolution.error}`);
  delete state.interrupt;
  state.messages[state.messages.length - 1] = resolution.message;
  const results = await runToolCalls(level.phase, resolution.run);
  for (const m of resolution.rejected) results.set(m.toolCallId as string, m);
  return closeToolPhase(level.phase, resolution.message.toolCalls ?? [], results);
}

/** Continues an interrupted run with `decisions` (a {@link ResumeError} when there is nothing to
 * resume or a decision is missing or not allowed). Answers `"interrupted"` when a subagent
 * stopped for review again. */
export async function resumeReview(level: ResumingLevel, decisions: Record<string, Decision>): Promise<StopReason | undefined> {
  const { state } = level;
  const last = state.messages.at(-1);
  if (!state.interrupt || !last || last.role !== "assistant")
    throw new ResumeError(`thread '${level.scope.threadId}' has no interrupted run to resume`);
  checkDecisions(state.interrupt, decisions);
  if (level.hooks.top) await takeReview(level);
  const pending = state.data[PENDING_TOOLS] as PendingTools | undefined;
  const suspended = pending ? await resumeSubagents(level, last, pending, decisions) : await runReviewed(level, last, decisions);
  return suspended ? "interrupted" : undefined;
}

/** Whether the state comes from a dead run that had given its final answer (nothing is left
 * to do for it). */
export function adoptedAnswer(level: Pick<ResumingLevel, "state" | "hooks">): boolean {
  const last = level.state.messages.at(-1);
  return level.hooks.adopted === true && last?.role === "assistant" && !last.toolCalls?.length;
}

/** Where a thread's dead run is looked for, and where it goes. */
export interface DeadRunSource {
  checkpointer: Checkpointer;
  threadId: string;
  /** The checkpointer's step operations (this run holds the thread's claim). */
  steps: StepOperations;
  /** Set when the thread keeps its steps as history points. */
  history: HistoryOperations | undefined;
  core: Core;
}

/**
 * Steps left by a run whose owner is dead, folded into the thread and saved as its checkpoint
 * before anything runs, so that whatever follows extends them. Answers the checkpoint the run
 * starts from and, when a dead run was adopted, how many steps it had committed.
 */
export async function adoptDeadRun(
  from: DeadRunSource,
  saved: Checkpoint | undefined,
): Promise<{ saved: Checkpoint | undefined; adopted?: { steps: number } }> {
  const { checkpointer, threadId } = from;
  const left = await from.steps.getSteps(threadId);
  if (left.length === 0) return { saved };
  let base = saved;
  if (base && !base.files && base.filesRef) base = await checkpointer.get(threadId);
  const run = adoptSteps(base, left, from.core);
  if (!run) return { saved: base };
  await checkpointer.put(
    threadId,
    { ...run.checkpoint, revision: base?.revision ?? 0, ...(from.history && run.head && { history: run.head }) },
    from.history && { keepSteps: run.runId },
  );
  return { saved: await checkpointer.get(threadId), adopted: { steps: run.steps } };
}
