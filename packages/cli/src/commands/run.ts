/**
 * `engram run "task"`: one non-interactive run for scripts. Human-readable output by default
 * (answer on stdout, tool lines on stderr), `--json` for one event per line on stdout. Reviews
 * are approved with `--yes`, rejected with `--deny`, else the run stops with exit code 5.
 * @module
 */
import { type AgentEvent, type AgentInput, type Decision, type Interrupt, ResumeError, type StopReason, resume } from "engram";
import type { Context } from "../context.js";
import { EXIT, describeError, exitCodeFor, exitCodeForError } from "../exit.js";
import { Permissions } from "../permissions.js";
import { inert, jsonText } from "../render.js";
import { closeAgent, openAgent } from "../runtime.js";
import { EventRenderer } from "../terminal.js";
import { newThreadId, threadIdProblem } from "../threads-id.js";
import { UserThreads } from "../user-threads.js";
import { runState, runStateNote } from "../interrupted-run.js";
import { openSession } from "./open.js";

/** Options of `engram run`. */
export interface RunCommandOptions {
  thread?: string;
  json?: boolean;
  yes?: boolean;
  deny?: boolean;
}

/** The JSON line of an agent event (`--json`): the event as is, `final` without the whole thread. */
export function jsonEvent(ev: AgentEvent, threadId: string): Record<string, unknown> {
  if (ev.type === "final") {
    const last = ev.output.messages.at(-1);
    return {
      type: "final",
      threadId,
      stopReason: ev.stopReason,
      text: last?.role === "assistant" ? last.content : "",
      usage: ev.output.usage ?? {},
      exitCode: exitCodeFor(ev.stopReason),
      ...(ev.output.interrupt && { interrupt: ev.output.interrupt }),
    };
  }
  return { ...ev };
}

/** The decisions on `interrupt`: the user's rules first, then `--yes` (`yes`) or `--deny`;
 * `undefined` when a call is left to a human (neither flag was given). */
function decide(interrupt: Interrupt, yes: boolean | undefined, permissions: Permissions): Record<string, Decision> | undefined {
  const decisions: Record<string, Decision> = {};
  for (const call of interrupt.toolCalls) {
    const ruled = permissions.decide(call);
    if (ruled) decisions[call.id] = ruled;
    else if (yes === undefined) return undefined;
    else if (yes && call.allow.includes("approve")) decisions[call.id] = { type: "approve" };
    else decisions[call.id] = { type: "reject", message: yes ? "approval is not allowed for this tool" : "rejected by --deny" };
  }
  return decisions;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** Runs the command; resolves to the exit code. */
export async function runCommand(ctx: Context, taskWords: string[], options: RunCommandOptions): Promise<number> {
  const { config } = ctx.loaded;
  if (options.yes && options.deny) return ctx.usage("--yes and --deny cannot be used together");
  const badThread = threadIdProblem(options.thread, config.user);
  if (badThread) return ctx.usage(badThread);
  let task = taskWords.join(" ").trim();
  if (task === "-" || (task === "" && !process.stdin.isTTY && !options.thread)) task = (await readStdin()).trim();
  const emit = (obj: Record<string, unknown>) => ctx.stdout.write(`${jsonText(obj)}\n`);
  const renderer = new EventRenderer(ctx.stdout, ctx.stderr, ctx.colors(ctx.stderr));
  const fail = (e: unknown) => {
    if (options.json) emit({ type: "error", code: (e as { code?: string }).code ?? "error", message: describeError(e) });
    else ctx.error(describeError(e));
    return exitCodeForError(e);
  };

  const opened = openSession(ctx, fail);
  if (typeof opened === "number") return opened;
  const { model, storage } = opened;
  const threadId = options.thread ?? newThreadId();
  // The thread's checkpoint key: a new thread of the user unless they have one of this name.
  const threads = UserThreads.of(config.user, ctx.env);
  let threadKey = threads.key(threadId);
  const warn = (m: string) => (options.json ? emit({ type: "warning", message: m }) : renderer.warn(m));
  const agent = openAgent(storage, model, warn);
  const permissions = new Permissions(config.permissions);
  const flagged = options.yes ? true : options.deny ? false : undefined;
  const controller = new AbortController();
  let interrupts = 0;
  const onSigint = () => {
    interrupts++;
    if (interrupts === 1) controller.abort();
    else process.exit(EXIT.cancelled);
  };
  process.on("SIGINT", onSigint);
  process.on("SIGTERM", onSigint);

  let code: number = EXIT.ok;
  try {
    let input: AgentInput;
    const found = await threads.find(storage.checkpointer, threadId);
    const saved = found?.checkpoint;
    threadKey = found?.key ?? threadKey;
    if (saved?.interrupt) {
      if (!options.yes && !options.deny) {
        return fail(
          new Error(`thread ${threadId} waits for a review: rerun with --yes or --deny, or use engram threads resume ${threadId}`),
        );
      }
      input = resume(decide(saved.interrupt, options.yes === true, permissions) ?? {});
      if (options.json) emit({ type: "review", decisions: (input as { resume: unknown }).resume });
      if (task !== "") ctx.error("the pending review is decided first; the task is not sent (run it again)");
    } else if (
      task === "" &&
      options.thread !== undefined &&
      (await runState(storage.checkpointer, threadKey, saved?.revision))?.state === "interrupted"
    ) {
      // A run that died under way: it goes on from its last committed step.
      const run = await runState(storage.checkpointer, threadKey, saved?.revision);
      if (run) warn(`resuming thread ${threadId}: its run was ${runStateNote(run)}`);
      input = { messages: [] };
    } else {
      // Asked to decide a review on a thread the user does not have (another user's, or none).
      if (!saved && task === "" && options.thread !== undefined && (options.yes || options.deny))
        return ctx.usage(`no thread ${JSON.stringify(threadId)} of user ${config.user} (engram threads list)`);
      // Asked to decide a review that is not there (another process decided it meanwhile).
      if (task === "" && options.thread !== undefined && (options.yes || options.deny))
        return fail(new ResumeError(`thread ${threadId} has no pending review to decide (decided already, or none was asked)`));
      if (task === "") return ctx.usage('no task: engram run "what to do" (or pipe it on stdin)');
      input = { messages: [{ role: "user", content: task }] };
    }
    if (options.json) emit({ type: "start", threadId, userId: config.user, model: model.id });
    for (;;) {
      let stopReason: StopReason = "error";
      let interrupt: Interrupt | undefined;
      if (!options.json) renderer.begin();
      try {
        for await (const ev of agent.stream(input, { threadId: threadKey, userId: config.user, signal: controller.signal })) {
          if (options.json) emit(jsonEvent(ev, threadId));
          else renderer.event(ev);
          if (ev.type === "final") {
            stopReason = ev.stopReason;
            interrupt = ev.output.interrupt;
          }
        }
      } catch (e) {
        renderer.newline();
        if (stopReason === "cancelled") {
          if (!options.json) ctx.error("cancelled");
          code = EXIT.cancelled;
          break;
        }
        code = stopReason === "truncated" ? EXIT.truncated : fail(e);
        if (stopReason === "truncated" && !options.json) ctx.error(describeError(e));
        break;
      }
      const decisions = stopReason === "interrupted" && interrupt ? decide(interrupt, flagged, permissions) : undefined;
      if (decisions) {
        if (options.json) emit({ type: "review", decisions });
        else
          for (const [id, d] of Object.entries(decisions))
            ctx.stderr.write(`${d.type === "approve" ? "approved" : "rejected"} ${inert(id)}\n`);
        input = resume(decisions);
        continue;
      }
      code = exitCodeFor(stopReason);
      if (!options.json && stopReason !== "done") {
        const hint =
          stopReason === "interrupted"
            ? `waiting for review of ${interrupt?.toolCalls.map((c) => c.name).join(", ")}: engram run --thread ${threadId} --yes|--deny`
            : stopReason.replace("_", " ");
        ctx.error(`stopped: ${hint}`);
      }
      break;
    }
  } catch (e) {
    code = fail(e);
  } finally {
    process.removeListener("SIGINT", onSigint);
    process.removeListener("SIGTERM", onSigint);
    if (!options.json) renderer.spinner.start("saving memory");
    try {
      await closeAgent(agent, config.user);
    } catch (e) {
      warn(`memory: ${describeError(e)}`);
    }
    renderer.spinner.stop();
    storage.close();
  }
  if (!options.json && code === EXIT.ok) ctx.stderr.write(ctx.colors(ctx.stderr).dim(`thread ${inert(threadId)}\n`));
  return code;
}
