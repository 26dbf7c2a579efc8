/**
 * `engram threads list|show|resume <id>`: the user's conversations saved in the database (see
 * {@link UserThreads}: another user's threads are not there).
 * @module
 */
import { type Checkpoint, EngramError, type Message } from "engram";
import type { Context } from "../context.js";
import { EXIT, describeError } from "../exit.js";
import { inert, inertLines, jsonText } from "../render.js";
import type { Storage } from "../runtime.js";
import { UserThreads } from "../user-threads.js";
import { runState } from "../interrupted-run.js";
import { chatCommand } from "./chat.js";
import { withStorage } from "./open.js";

function preview(cp: Checkpoint): string {
  const first = cp.messages.find((m) => m.role === "user")?.content ?? "";
  const line = inert(first.replace(/\s+/g, " ").trim());
  return line.length > 60 ? `${line.slice(0, 57)}…` : line;
}

/** The threads of the configured user. */
export function userThreads(ctx: Context): UserThreads {
  return UserThreads.of(ctx.loaded.config.user, ctx.env);
}

/** The answer for a thread the user does not have — the same whether it exists for another
 * user or not at all. */
function noThread(ctx: Context, id: string): number {
  return ctx.usage(`no thread ${JSON.stringify(id)} of user ${ctx.loaded.config.user} (engram threads list)`);
}

/** The checkpoint of one listed thread; a damaged one is named in a warning and skipped. */
async function readListed(ctx: Context, storage: Storage, id: string, key: string): Promise<Checkpoint | undefined> {
  try {
    return await storage.checkpointer.get(key);
  } catch (e) {
    if (!EngramError.hasCode(e, "store_error")) throw e;
    ctx.warn(`thread ${id} cannot be read, it is left out: ${describeError(e)}`);
    return undefined;
  }
}

/** `engram threads list`: most recent first. */
export async function threadsList(ctx: Context, options: { json?: boolean; limit?: string }): Promise<number> {
  const limit = options.limit === undefined ? 20 : Number(options.limit);
  if (!Number.isInteger(limit) || limit < 1) return ctx.usage("--limit must be a positive integer");
  return withStorage(ctx, async (storage) => {
    const threads = await userThreads(ctx).list(storage.checkpointer);
    threads.sort((a, b) => b.savedAt - a.savedAt);
    const rows = [];
    let more = 0;
    for (const t of threads) {
      if (rows.length === limit) {
        more++;
        continue;
      }
      const cp = await readListed(ctx, storage, t.threadId, t.key);
      if (!cp) continue;
      const { key: _key, ...info } = t;
      const run = await runState(storage.checkpointer, t.key, cp.revision);
      rows.push({ ...info, messages: cp.messages.length, ...(run && { run }), preview: preview(cp) });
    }
    if (options.json) {
      for (const r of rows) ctx.stdout.write(`${jsonText(r)}\n`);
      return EXIT.ok;
    }
    const c = ctx.colors(ctx.stdout);
    if (rows.length === 0) ctx.stdout.write(c.dim("no threads yet\n"));
    for (const r of rows) {
      const when = new Date(r.savedAt).toISOString().replace("T", " ").slice(0, 19);
      const wait = r.interrupted
        ? c.yellow(" [waits for review]")
        : r.run
          ? c.yellow(
              ` [${r.run.state === "interrupted" ? `interrupted (step ${r.run.step}): engram threads resume ${inert(r.threadId)}` : "running"}]`,
            )
          : "";
      ctx.stdout.write(`${c.bold(inert(r.threadId))}  ${c.dim(when)}  ${r.messages} msgs${wait}  ${r.preview}\n`);
    }
    if (more > 0) ctx.stdout.write(c.dim(`… ${more} more (--limit)\n`));
    return EXIT.ok;
  });
}

function renderMessage(ctx: Context, m: Message): string {
  const c = ctx.colors(ctx.stdout);
  if (m.role === "user") return `${c.cyan(c.bold("you"))}  ${inertLines(m.content)}`;
  if (m.role === "tool") {
    const text = inertLines(m.content.length > 300 ? `${m.content.slice(0, 300)}… (${m.content.length} chars)` : m.content);
    return c.dim(`  ← ${text.replace(/\n/g, "\n    ")}`);
  }
  const calls = (m.toolCalls ?? []).map((t) => c.dim(`  → ${inert(t.name)} ${inert(jsonText(t.args).slice(0, 200))}`));
  return [m.content ? `${c.green(c.bold("engram"))}  ${inertLines(m.content)}` : "", ...calls].filter(Boolean).join("\n");
}

/** `engram threads show <id>`. What the messages hold is shown inert (see {@link inertLines}). */
export async function threadsShow(ctx: Context, id: string, options: { json?: boolean }): Promise<number> {
  return withStorage(ctx, async (storage) => {
    const found = await userThreads(ctx).find(storage.checkpointer, id);
    if (!found) return noThread(ctx, id);
    const cp = found.checkpoint;
    if (options.json) {
      const { files: _files, ...rest } = cp;
      ctx.stdout.write(`${jsonText(rest)}\n`);
      return EXIT.ok;
    }
    for (const m of cp.messages) ctx.stdout.write(`${renderMessage(ctx, m)}\n`);
    if (cp.interrupt) {
      const names = cp.interrupt.toolCalls.map((t) => inert(t.name)).join(", ");
      ctx.stdout.write(ctx.colors(ctx.stdout).yellow(`waits for review of ${names}: engram threads resume ${inert(id)}\n`));
    }
    return EXIT.ok;
  });
}

/** Turns shown before `threads resume` chats on. */
const RESUME_TURNS = 3;

/** The thread's last `turns` turns: its messages from the `turns`-th last user message on. */
export function lastTurns(messages: readonly Message[], turns: number): Message[] {
  let start = messages.length;
  for (let i = messages.length - 1, seen = 0; i >= 0 && seen < turns; i--) {
    if (messages[i]?.role === "user") {
      start = i;
      seen++;
    }
  }
  return messages.slice(start);
}

/** `engram threads resume <id>`: the thread's last turns (inert, as `threads show` prints them),
 * then `chat` on it (a pending review is asked first; a run that died under way goes on first). */
export async function threadsResume(ctx: Context, id: string): Promise<number> {
  const found = await withStorage(ctx, async (storage) => {
    const thread = await userThreads(ctx).find(storage.checkpointer, id);
    if (!thread) return noThread(ctx, id);
    const { messages } = thread.checkpoint;
    const recent = lastTurns(messages, RESUME_TURNS);
    const earlier = messages.length - recent.length;
    if (earlier > 0) ctx.stdout.write(ctx.colors(ctx.stdout).dim(`… ${earlier} earlier messages (engram threads show ${inert(id)})\n`));
    for (const m of recent) ctx.stdout.write(`${renderMessage(ctx, m)}\n`);
    return EXIT.ok;
  });
  return found === EXIT.ok ? chatCommand(ctx, { thread: id }) : found;
}
