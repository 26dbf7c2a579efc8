/**
 * A thread's history in the command: `engram threads history <id>` lists its points (each
 * committed step of its runs), `engram threads fork <id> --at <step>` starts a new thread from
 * one, and `/rewind <step>` in `chat` sets the thread back to one. Steps are named by a short id
 * (`<8 hex>:<seq>`, the run and the step in it); point ids come from the database and are shown
 * inert.
 * @module
 */
import { type Checkpointer, EngramError, type HistoryPoint, forkThread, listHistory, loadCore, rewindThread } from "engram";
import type { Context } from "../context.js";
import { EXIT } from "../exit.js";
import { inert, jsonText } from "../render.js";
import { newThreadId, threadIdProblem } from "../threads-id.js";
import type { Storage } from "../runtime.js";
import { UserThreads } from "../user-threads.js";
import { withStorage } from "./open.js";

/** The short name of a point: the run id's first 8 characters after `run-`, and the step. */
export function shortStep(point: Pick<HistoryPoint, "runId" | "seq">): string {
  const run = point.runId.startsWith("run-") ? point.runId.slice(4) : point.runId;
  return `${run.slice(0, 8)}:${point.seq}`;
}

/** The point `step` names (its full id, or its short name when only one point has it). */
export function findStep(points: readonly HistoryPoint[], step: string): HistoryPoint | string {
  const exact = points.find((p) => p.id === step);
  if (exact) return exact;
  const short = points.filter((p) => shortStep(p) === step);
  if (short.length === 1) return short[0] as HistoryPoint;
  if (short.length > 1) return `step ${JSON.stringify(step)} names ${short.length} points: give its full id (--json lists them)`;
  return `no step ${JSON.stringify(step)} in this thread's history`;
}

const KINDS: Record<HistoryPoint["kind"], string> = {
  turn: "model turn",
  call: "tool call",
  result: "tool result",
  state: "state",
};

/** One listed point, for the terminal (everything from the database shown inert). */
export function pointLine(ctx: Context, p: HistoryPoint): string {
  const c = ctx.colors(ctx.stdout);
  const when = new Date(p.savedAt).toISOString().replace("T", " ").slice(0, 19);
  const mark = p.current ? c.green(" ← current") : "";
  return `${c.bold(inert(shortStep(p)))}  ${c.dim(when)}  ${KINDS[p.kind].padEnd(11)}  ${p.messages} msgs${mark}`;
}

/** The user's thread `id`: its checkpoint key, or the exit code after saying it has none. */
async function threadKey(ctx: Context, checkpointer: Checkpointer, id: string): Promise<string | number> {
  const found = await UserThreads.of(ctx.loaded.config.user, ctx.env).find(checkpointer, id);
  if (!found) return ctx.usage(`no thread ${JSON.stringify(id)} of user ${ctx.loaded.config.user} (engram threads list)`);
  return found.key;
}

/** `engram threads history <id>`: the points kept, oldest first. */
export async function threadsHistory(ctx: Context, id: string, options: { json?: boolean }): Promise<number> {
  return withStorage(ctx, async (storage) => {
    const key = await threadKey(ctx, storage.checkpointer, id);
    if (typeof key === "number") return key;
    const points = await listHistory(storage.checkpointer, key);
    if (options.json) {
      for (const p of points) ctx.stdout.write(`${jsonText({ ...p, step: shortStep(p) })}\n`);
      return EXIT.ok;
    }
    const c = ctx.colors(ctx.stdout);
    if (points.length === 0) ctx.stdout.write(c.dim("no history yet (steps are kept by runs that commit them)\n"));
    for (const p of points) ctx.stdout.write(`${pointLine(ctx, p)}\n`);
    if (points.length > 0) ctx.stdout.write(c.dim(`engram threads fork ${inert(id)} --at <step> · /rewind <step> in engram chat\n`));
    return EXIT.ok;
  });
}

/** `engram threads fork <id> --at <step> [--as <new>]`: a new thread of the user at that point. */
export async function threadsFork(ctx: Context, id: string, options: { at?: string; as?: string; json?: boolean }): Promise<number> {
  if (options.at === undefined) return ctx.usage("--at <step> is required (engram threads history <id> lists the steps)");
  const bad = threadIdProblem(options.as, ctx.loaded.config.user);
  if (bad) return ctx.usage(bad.replace("--thread", "--as"));
  return withStorage(ctx, async (storage) => {
    const key = await threadKey(ctx, storage.checkpointer, id);
    if (typeof key === "number") return key;
    const found = findStep(await listHistory(storage.checkpointer, key), options.at as string);
    if (typeof found === "string") return ctx.usage(found);
    const threads = UserThreads.of(ctx.loaded.config.user, ctx.env);
    const forked = options.as ?? newThreadId();
    try {
      await forkThread(storage.checkpointer, key, found.id, threads.key(forked), await loadCore());
    } catch (e) {
      if (EngramError.hasCode(e, "conflict")) return ctx.usage(`thread ${JSON.stringify(forked)} exists already: choose another --as`);
      throw e;
    }
    if (options.json) ctx.stdout.write(`${jsonText({ threadId: forked, from: id, step: shortStep(found), messages: found.messages })}\n`);
    else
      ctx.stdout.write(
        `${inert(forked)}  forked from ${inert(id)} at ${inert(shortStep(found))} (${found.messages} msgs): engram chat --thread ${inert(forked)}\n`,
      );
    return EXIT.ok;
  });
}

/** `/rewind [step]` in chat: without a step, the thread's recent points; with one, the thread
 * set back to it. Returns the lines to print. */
export async function rewindCommand(ctx: Context, storage: Storage, threadKey: string, step: string | undefined): Promise<string[]> {
  const c = ctx.colors(ctx.stdout);
  const { checkpointer } = storage;
  const points = await listHistory(checkpointer, threadKey);
  if (step === undefined) {
    if (points.length === 0) return [c.dim("no history yet")];
    const recent = points.slice(-10);
    return [
      ...(points.length > recent.length ? [c.dim(`… ${points.length - recent.length} earlier (engram threads history)`)] : []),
      ...recent.map((p) => pointLine(ctx, p)),
      c.dim("/rewind <step> sets the thread back to that step"),
    ];
  }
  const found = findStep(points, step);
  if (typeof found === "string") return [c.red(inert(found))];
  try {
    // The thread's backend as its runs have it: files they wrote in the root or the database go back.
    const done = await rewindThread(checkpointer, threadKey, found.id, await loadCore(), { backend: storage.backend(threadKey) });
    const files = done.filesRestored.length > 0 ? `; files put back: ${done.filesRestored.map((f) => inert(f)).join(", ")}` : "";
    return [c.yellow(`rewound to ${inert(shortStep(found))}: ${done.messagesAfter} msgs (were ${done.messagesBefore})${files}`)];
  } catch (e) {
    if (EngramError.hasCode(e, "conflict")) return [c.red(`not rewound: ${inert(e.message)}`)];
    throw e;
  }
}
