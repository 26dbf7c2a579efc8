/**
 * One run of the top agent on a thread: load the thread's checkpoint and backend, run the loop,
 * stream its events, save the thread.
 * @module
 */
import { EngramError, ModelError, ResumeError } from "../errors.js";
import { Channel } from "./channel.js";
import type { Core } from "../core/types.js";
import type { Message } from "../models/types.js";
import type { Checkpoint } from "./checkpointer.js";
import { checkInput } from "./input.js";
import { type LevelState, runLoop } from "./loop.js";
import { memorySourceBackend } from "../memory/sources/backend.js";
import { type AgentLevel, type RunScope, memoryIdentity } from "./runtime.js";
import { ConcurrencyLimit, ModelCallBudget } from "./run-limits.js";
import { type StepOperations, type ThreadClaim, hasHistoryOperations, hasStepOperations } from "./run-steps.js";
import { checkRetention, pruneHistory } from "./history.js";
import { WriteRecorder } from "./file-writes.js";
import { StepLog, adoptSteps } from "./step-log.js";
import { keepResident, residentRef, resolveThreadBackend, saveWithFiles } from "./thread-backend.js";
import type { AgentEvent, AgentInput, AgentOutput, RunOptions, StopReason } from "./types.js";

/** Streams one run of `level` (the top agent) on the thread of `opts`. Without `events`, only
 * the final event is produced (what `invoke` reads). */
export async function* runThread(
  level: AgentLevel,
  input: AgentInput,
  opts: RunOptions = {},
  events = true,
): AsyncGenerator<AgentEvent, void> {
  checkInput(input);
  const { services } = level;
  const threadId = opts.threadId ?? `thread-${crypto.randomUUID()}`;
  const core = await services.core;
  // Until this run's turn, nothing of the thread is read: it starts from what the runs ahead of
  // it saved. The turn ends when the run has saved, whether or not its events are read.
  const leave = await services.turns.enter(threadId, opts.signal);
  // A durable run holds the thread while it runs: its steps are its own until it ends, and a
  // run started meanwhile elsewhere is refused (`conflict`) instead of working on top of them.
  const steps = level.options.durability === "step" && hasStepOperations(services.checkpointer) ? services.checkpointer : undefined;
  let claim: ThreadClaim | undefined;
  const end = async () => {
    await claim?.release().catch(() => undefined);
    leave();
  };
  let started: Started;
  try {
    claim = await steps?.claimThread(threadId);
    started = await startRun(level, input, opts, threadId, core, events, steps);
  } catch (e) {
    await end();
    throw e;
  }
  const { done, channel, state, scope } = started;
  void done.then(end, end);
  yield* channel.drainUntil(done);
  let output: AgentOutput;
  try {
    output = await done;
  } catch (e) {
    // The stream still ends with a final event saying why, then the error is thrown.
    const stopReason: StopReason = opts.signal?.aborted
      ? "cancelled"
      : e instanceof ModelError && e.code === "truncated"
        ? "truncated"
        : "error";
    if (!(e instanceof ResumeError))
      yield { type: "final", output: { messages: state.messages, usage: scope.run.usage, stopReason }, stopReason };
    throw e;
  }
  yield { type: "final", output, stopReason: output.stopReason };
}

/** The message that ends a cancelled run's turn in its thread. */
export const CANCELLED_TURN = "(cancelled before the answer was finished)";

/** A run under way: its events, its state and scope, and its end (after its save). */
interface Started {
  done: Promise<AgentOutput>;
  channel: Channel<AgentEvent>;
  state: LevelState;
  scope: RunScope;
}

/** Loads the thread (checkpoint and backend) and starts the loop on it. */
async function startRun(
  level: AgentLevel,
  input: AgentInput,
  opts: RunOptions,
  threadId: string,
  core: Core,
  events: boolean,
  steps: StepOperations | undefined,
): Promise<Started> {
  const o = level.options;
  const { services } = level;
  const { checkpointer } = services;
  // With the thread's files still loaded here, the checkpoint comes without them when they are
  // the stored ones (nothing read, copied or compared).
  const known = residentRef(services.backendOwners, threadId);
  let saved = await (known ? checkpointer.get(threadId, { knownFiles: known }) : checkpointer.get(threadId));
  // Steps left by a run whose owner is dead (this run holds the claim): folded into the thread
  // and saved as its checkpoint before anything runs, so that whatever follows extends them.
  let adopted: { steps: number } | undefined;
  // Steps kept as the thread's history by each save (see `history.ts`).
  const kept = steps && o.history !== false && hasHistoryOperations(steps) ? steps : undefined;
  const retention = checkRetention(o.history || undefined);
  if (steps) {
    const left = await steps.getSteps(threadId);
    if (left.length > 0) {
      if (saved && !saved.files && saved.filesRef) saved = await checkpointer.get(threadId);
      const run = adoptSteps(saved, left, core);
      if (run) {
        await checkpointer.put(
          threadId,
          { ...run.checkpoint, revision: saved?.revision ?? 0, ...(kept && run.head && { history: run.head }) },
          kept && { keepSteps: run.runId },
        );
        saved = await checkpointer.get(threadId);
        adopted = { steps: run.steps };
      }
    }
  }
  const resolved = await resolveThreadBackend(
    o.backend,
    { threadId, ...(opts.userId !== undefined && { userId: opts.userId }) },
    saved,
    core,
    services.backendOwners,
    // The whole checkpoint again, when the loaded files cannot be used after all: the run then
    // starts from it (messages and revision too), whatever another process saved meanwhile.
    async () => (saved = await checkpointer.get(threadId)),
  );
  const threadFiles = resolved.files;
  // What tools, memory and skills use: the thread's backend, with the memory sources' write
  // rules (redaction; changes recorded when `memoryHistory` is on) and operations traced when
  // tracing is on.
  // What the run's writes replace outside the thread, for a rewind to put back.
  const recorder = kept && new WriteRecorder();
  let backend = memorySourceBackend(
    recorder ? recorder.wrap(resolved.backend) : resolved.backend,
    core,
    o.memorySources,
    o.memoryHistory && {
      history: o.memoryHistory,
      userId: memoryIdentity(services, { threadId, ...(opts.userId !== undefined && { userId: opts.userId }) }).userId,
      threadId,
      runId: `run-${crypto.randomUUID()}`,
    },
  );
  if (o.tracing) backend = o.tracing.backend(backend);
  const runTools = await services.mcpTools();
  const state: LevelState = {
    messages: saved?.messages ?? [],
    data: saved?.data ?? {},
    ...(saved?.interrupt && { interrupt: saved.interrupt }),
  };
  const channel = new Channel<AgentEvent>(!events);
  if (adopted)
    channel.push({
      type: "warning",
      message: `resumed the run of thread '${threadId}' whose process ended after ${adopted.steps} committed step${adopted.steps === 1 ? "" : "s"}`,
    });
  const scope: RunScope = {
    level,
    threadId,
    ...(opts.userId !== undefined && { userId: opts.userId }),
    ...(opts.signal && { signal: opts.signal }),
    backend,
    core,
    events: channel,
    usage: {},
    run: { budget: new ModelCallBudget(o.maxModelCalls), limit: new ConcurrencyLimit(o.maxParallelToolCalls), usage: {} },
    runTools,
    path: "",
    suspended: new Map(),
    resuming: new Map(),
  };
  // Saves are compare-and-swap on the revision this run loaded (0: a new thread): a save by
  // another process meanwhile makes this run's save a `conflict`, never an overwrite. A
  // checkpointer that reports no revisions saves unconditionally.
  let revision = saved ? saved.revision : 0;
  const history = kept && { head: saved?.history, maxDepth: retention.maxPoints, ...(recorder && { writes: () => recorder.take() }) };
  const log = steps && new StepLog(steps, threadId, revision ?? 0, state, threadFiles, history);
  const save = async (s: LevelState) => {
    // The thread's user is saved with it: recall searches only that user's threads.
    const cp: Checkpoint = {
      messages: s.messages,
      data: s.data,
      savedAt: Date.now(),
      ...(opts.userId !== undefined && { userId: opts.userId }),
    };
    if (s.interrupt) cp.interrupt = s.interrupt;
    if (revision !== undefined) cp.revision = revision;
    // The saved state is a history point: the run's last step, committed first if it is not yet.
    const head = kept && (await log?.seal(s));
    if (head) cp.history = head;
    // Only the files written since the last save, when the checkpointer appends deltas.
    try {
      // The next save starts from this one (a checkpointer without revisions: unconditional).
      revision = await saveWithFiles(checkpointer, threadId, cp, threadFiles, kept && log && { keepSteps: log.runId });
    } catch (e) {
      if (!EngramError.hasCode(e, "conflict")) throw e;
      throw new EngramError(
        "conflict",
        `thread '${threadId}' was saved by another run while this one was under way: this run's messages and files were not saved (run it again to continue from that save). ${e.message}`,
        { cause: e },
      );
    }
    // The checkpoint dropped the thread's steps: the next ones extend it.
    log?.committed(revision, s);
    // Points retention no longer lists go (a failure leaves them, to go at a later save).
    if (kept)
      await pruneHistory(kept, threadId, retention, head || undefined).catch((e: unknown) =>
        scope.events.push({ type: "warning", message: `thread history not pruned: ${e instanceof Error ? e.message : String(e)}` }),
      );
    // Saved: the next run of this thread reuses the loaded files instead of restoring them.
    if (threadFiles && resolved.own) keepResident(services.backendOwners, threadId, threadFiles);
  };
  const hooks = {
    save,
    top: true,
    ...(log && { step: (s: LevelState, mark?: Parameters<StepLog["record"]>[1]) => log.record(s, mark) }),
    ...(adopted && { adopted: true }),
  };
  const run =
    adopted && "messages" in input && input.messages.length > 0 && leftUnfinished(state)
      ? finishDeadRunFirst(scope, state, input, hooks)
      : runLoop(scope, state, input, hooks);
  const done = run.catch(async (e: unknown) => {
    // A refused resume changed nothing: the thread keeps waiting for valid decisions. Otherwise
    // keep what completed; dangling tool calls are answered by the patch middleware next time. A
    // cancelled run says so in the thread, for whoever reads it next (the model, `threads show`).
    if (opts.signal?.aborted && !(e instanceof ResumeError)) state.messages.push({ role: "assistant", content: CANCELLED_TURN });
    let refused = e instanceof ResumeError;
    if (!refused) {
      try {
        await save({ messages: state.messages, data: state.data });
      } catch (err) {
        refused = EngramError.hasCode(err, "conflict");
      }
    }
    // A run refused with `conflict` leaves nothing behind: its steps go too.
    if (refused) await log?.discard().catch(() => undefined);
    throw e;
  });
  return { done, channel, state, scope };
}

/** Whether the run adopted into `state` had yet to answer: its input, a model turn's calls or
 * their results are the thread's last messages (an answer or a review ends a run). */
function leftUnfinished(state: LevelState): boolean {
  const last = state.messages.at(-1);
  return !!last && !state.interrupt && (last.role !== "assistant" || (last.toolCalls?.length ?? 0) > 0);
}

/**
 * New messages on a thread whose dead run had not answered: the dead run goes on to its answer
 * first, as it would have without the crash, and the messages follow it — rather than joining
 * a task half done, whose input the model might then never answer. When the dead run stops
 * otherwise (a review, a limit), the new messages are not added and a warning says so.
 */
async function finishDeadRunFirst(
  scope: RunScope,
  state: LevelState,
  input: { messages: Message[] },
  hooks: Parameters<typeof runLoop>[3],
): Promise<AgentOutput> {
  const { adopted: _, ...after } = hooks;
  const resumed = await runLoop(scope, state, { messages: [] }, hooks);
  if (resumed.stopReason !== "done") {
    scope.events.push({
      type: "warning",
      message: `the resumed run stopped (${resumed.stopReason}) before its answer: the new messages were not added to the thread; send them again once it ends`,
    });
    return resumed;
  }
  return runLoop(scope, state, input, after);
}
