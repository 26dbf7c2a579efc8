/**
 * One run of the top agent on a thread: load the thread's checkpoint and backend, run the loop,
 * stream its events, save the thread.
 * @module
 */
import { EngramError, ModelError, ResumeError } from "../errors.js";
import { Channel } from "./channel.js";
import { adoptDeadRun } from "./resume.js";
import { ThreadSaves } from "./thread-save.js";
import type { Backend } from "../backends/protocol.js";
import type { Core } from "../core/types.js";
import type { Message } from "../models/types.js";
import { checkInput } from "./input.js";
import { type LevelState, runLoop } from "./loop.js";
import { memorySourceBackend } from "../memory/sources/backend.js";
import { type AgentLevel, type RunScope, memoryIdentity } from "./runtime.js";
import { ConcurrencyLimit, ModelCallBudget } from "./run-limits.js";
import { type StepOperations, type ThreadClaim, hasHistoryOperations, hasStepOperations } from "./run-steps.js";
import { checkRetention } from "./history.js";
import { WriteRecorder } from "./file-writes.js";
import { StepLog } from "./step-log.js";
import { residentRef, resolveThreadBackend } from "./thread-backend.js";
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
  // Steps kept as the thread's history by each save (see `history.ts`).
  const kept = steps && o.history !== false && hasHistoryOperations(steps) ? steps : undefined;
  const retention = checkRetention(o.history || undefined);
  // A dead run's steps (this run holds the claim) become the thread's checkpoint first.
  const dead = steps && (await adoptDeadRun({ checkpointer, threadId, steps, history: kept, core }, saved));
  if (dead) saved = dead.saved;
  const adopted = dead?.adopted;
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
  // What the run's writes replace outside the thread, for a rewind to put back.
  const recorder = kept && new WriteRecorder();
  const backend = runBackend(level, recorder ? recorder.wrap(resolved.backend) : resolved.backend, core, threadId, opts);
  const runTools = await services.mcpTools();
  const state: LevelState = {
    messages: saved?.messages ?? [],
    data: saved?.data ?? {},
    ...(saved?.interrupt && { interrupt: saved.interrupt }),
  };
  const channel = runChannel(events, threadId, adopted);
  const scope = topScope(level, threadId, opts, { backend, core, events: channel, runTools });
  // Saves are compare-and-swap on the revision this run loaded (0: a new thread): a save by
  // another process meanwhile makes this run's save a `conflict`, never an overwrite. A
  // checkpointer that reports no revisions saves unconditionally.
  const revision = saved ? saved.revision : 0;
  const history = kept && { head: saved?.history, maxDepth: retention.maxPoints, ...(recorder && { writes: () => recorder.take() }) };
  const log = steps && new StepLog(steps, threadId, revision ?? 0, state, threadFiles, history);
  const saves = new ThreadSaves(
    {
      checkpointer,
      threadId,
      ...(opts.userId !== undefined && { userId: opts.userId }),
      files: threadFiles,
      ownFiles: resolved.own === true,
      backendOwners: services.backendOwners,
      ...(log && { log }),
      ...(kept && { history: { ops: kept, retention } }),
      events: channel,
    },
    revision,
  );
  const done = startLoop(scope, state, input, saves, adopted !== undefined).catch((e: unknown) =>
    afterFailure(e, state, saves, opts.signal),
  );
  return { done, channel, state, scope };
}

/** What a run that threw leaves: a refused resume changed nothing (the thread keeps waiting for
 * valid decisions); otherwise what completed is saved — dangling tool calls are answered by the
 * patch middleware next time, and a cancelled run says so in the thread, for whoever reads it
 * next (the model, `threads show`). A run refused with `conflict` leaves nothing behind: its
 * steps go too. Rethrows `e`. */
async function afterFailure(e: unknown, state: LevelState, saves: ThreadSaves, signal: AbortSignal | undefined): Promise<never> {
  if (signal?.aborted && !(e instanceof ResumeError)) state.messages.push({ role: "assistant", content: CANCELLED_TURN });
  let refused = e instanceof ResumeError;
  if (!refused) {
    try {
      await saves.save({ messages: state.messages, data: state.data });
    } catch (err) {
      refused = EngramError.hasCode(err, "conflict");
    }
  }
  if (refused) await saves.to.log?.discard().catch(() => undefined);
  throw e;
}

/** What tools, memory and skills use: the thread's backend, with the memory sources' write
 * rules (redaction; changes recorded when `memoryHistory` is on) and operations traced when
 * tracing is on. */
function runBackend(level: AgentLevel, backend: Backend, core: Core, threadId: string, opts: RunOptions): Backend {
  const o = level.options;
  const wrapped = memorySourceBackend(
    backend,
    core,
    o.memorySources,
    o.memoryHistory && {
      history: o.memoryHistory,
      userId: memoryIdentity(level.services, { threadId, ...(opts.userId !== undefined && { userId: opts.userId }) }).userId,
      threadId,
      runId: `run-${crypto.randomUUID()}`,
    },
  );
  return o.tracing ? o.tracing.backend(wrapped) : wrapped;
}

/** The run's events; a run that adopted a dead run's steps starts by saying so. */
function runChannel(events: boolean, threadId: string, adopted: { steps: number } | undefined): Channel<AgentEvent> {
  const channel = new Channel<AgentEvent>(!events);
  if (adopted)
    channel.push({
      type: "warning",
      message: `resumed the run of thread '${threadId}' whose process ended after ${adopted.steps} committed step${adopted.steps === 1 ? "" : "s"}`,
    });
  return channel;
}

/** Runs the top level's loop with the run's saves and steps; a dead run that had yet to answer
 * goes on first when new messages come. */
function startLoop(scope: RunScope, state: LevelState, input: AgentInput, saves: ThreadSaves, adopted: boolean): Promise<AgentOutput> {
  const { log } = saves.to;
  const hooks = {
    save: (s: LevelState) => saves.save(s),
    top: true,
    ...(log && { step: (s: LevelState, mark?: Parameters<StepLog["record"]>[1]) => log.record(s, mark) }),
    ...(adopted && { adopted: true }),
  };
  return adopted && "messages" in input && input.messages.length > 0 && leftUnfinished(state)
    ? finishDeadRunFirst(scope, state, input, hooks)
    : runLoop(scope, state, input, hooks);
}

/** The top level's scope for one run: one budget and one concurrency limit for the whole run. */
function topScope(
  level: AgentLevel,
  threadId: string,
  opts: RunOptions,
  parts: Pick<RunScope, "backend" | "core" | "events" | "runTools">,
): RunScope {
  const o = level.options;
  return {
    level,
    threadId,
    ...(opts.userId !== undefined && { userId: opts.userId }),
    ...(opts.signal && { signal: opts.signal }),
    ...parts,
    usage: {},
    run: { budget: new ModelCallBudget(o.maxModelCalls), limit: new ConcurrencyLimit(o.maxParallelToolCalls), usage: {} },
    path: "",
    suspended: new Map(),
    resuming: new Map(),
  };
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
