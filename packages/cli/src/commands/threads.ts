/**
 * `engram threads list|show|resume <id>`: the conversations saved in the database.
 * @module
 */
import type { Checkpoint, Message } from "engram";
import type { Context } from "../context.js";
import { EXIT } from "../exit.js";
import { printable } from "../terminal.js";
import { chatCommand } from "./chat.js";
import { withStorage } from "./open.js";

function preview(cp: Checkpoint): string {
  const first = cp.messages.find((m) => m.role === "user")?.content ?? "";
  const line = printable(first).replace(/\s+/g, " ").trim();
  return line.length > 60 ? `${line.slice(0, 57)}…` : line;
}

/** `engram threads list`: most recent first. */
export async function threadsList(ctx: Context, options: { json?: boolean; limit?: string }): Promise<number> {
  const limit = options.limit === undefined ? 20 : Number(options.limit);
  if (!Number.isInteger(limit) || limit < 1) return ctx.usage("--limit must be a positive integer");
  return withStorage(ctx, async (storage) => {
    const threads = [];
    let cursor: string | undefined;
    do {
      const page = await storage.checkpointer.list({ limit: 500, ...(cursor !== undefined && { cursor }) });
      threads.push(...page.threads);
      cursor = page.cursor;
    } while (cursor !== undefined);
    threads.sort((a, b) => b.savedAt - a.savedAt);
    const shown = threads.slice(0, limit);
    const rows = [];
    for (const t of shown) {
      const cp = await storage.checkpointer.get(t.threadId);
      rows.push({ ...t, messages: cp?.messages.length ?? 0, preview: cp ? preview(cp) : "" });
    }
    if (options.json) {
      for (const r of rows) ctx.stdout.write(`${JSON.stringify(r)}\n`);
      return EXIT.ok;
    }
    const c = ctx.colors(ctx.stdout);
    if (rows.length === 0) ctx.stdout.write(c.dim("no threads yet\n"));
    for (const r of rows) {
      const when = new Date(r.savedAt).toISOString().replace("T", " ").slice(0, 19);
      const wait = r.interrupted ? c.yellow(" [waits for review]") : "";
      ctx.stdout.write(`${c.bold(r.threadId)}  ${c.dim(when)}  ${r.messages} msgs${wait}  ${r.preview}\n`);
    }
    if (threads.length > shown.length) ctx.stdout.write(c.dim(`… ${threads.length - shown.length} more (--limit)\n`));
    return EXIT.ok;
  });
}

function renderMessage(ctx: Context, m: Message): string {
  const c = ctx.colors(ctx.stdout);
  if (m.role === "user") return `${c.cyan(c.bold("you"))}  ${printable(m.content)}`;
  if (m.role === "tool") {
    const text = printable(m.content.length > 300 ? `${m.content.slice(0, 300)}… (${m.content.length} chars)` : m.content);
    return c.dim(`  ← ${text.replace(/\n/g, "\n    ")}`);
  }
  const calls = (m.toolCalls ?? []).map((t) => c.dim(`  → ${printable(`${t.name} ${JSON.stringify(t.args).slice(0, 200)}`)}`));
  return [m.content ? `${c.green(c.bold("engram"))}  ${printable(m.content)}` : "", ...calls].filter(Boolean).join("\n");
}

/** `engram threads show <id>`. What the messages hold is shown inert (see {@link printable}). */
export async function threadsShow(ctx: Context, id: string, options: { json?: boolean }): Promise<number> {
  return withStorage(ctx, async (storage) => {
    const cp = await storage.checkpointer.get(id);
    if (!cp) {
      ctx.error(`no thread ${JSON.stringify(id)} (engram threads list)`);
      return EXIT.error;
    }
    if (options.json) {
      const { files: _files, ...rest } = cp;
      ctx.stdout.write(`${JSON.stringify(rest)}\n`);
      return EXIT.ok;
    }
    for (const m of cp.messages) ctx.stdout.write(`${renderMessage(ctx, m)}\n`);
    if (cp.interrupt) {
      const names = cp.interrupt.toolCalls.map((t) => t.name).join(", ");
      ctx.stdout.write(ctx.colors(ctx.stdout).yellow(`waits for review of ${names}: engram threads resume ${id}\n`));
    }
    return EXIT.ok;
  });
}

/** `engram threads resume <id>`: `chat` on that thread (a pending review is asked first). */
export async function threadsResume(ctx: Context, id: string): Promise<number> {
  const found = await withStorage(ctx, async (storage) => {
    if (await storage.checkpointer.get(id)) return EXIT.ok;
    ctx.error(`no thread ${JSON.stringify(id)} (engram threads list)`);
    return EXIT.error;
  });
  return found === EXIT.ok ? chatCommand(ctx, { thread: id }) : found;
}
