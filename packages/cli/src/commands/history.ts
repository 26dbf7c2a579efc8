/**
 * `engram memory history|diff|revert`: the recorded changes to the user's memory — AGENTS.md
 * files changed by the agent's tools (any thread) or by `engram memory`, and long-term facts
 * changed through the CLI — listed newest first, shown as a unified diff, reverted.
 * @module
 */
import { EngramError, type MemoryChange, restoreThrough } from "engram";
import type { Context } from "../context.js";
import { EXIT } from "../exit.js";
import type { Storage } from "../runtime.js";
import { inert, inertLines, jsonText } from "../render.js";
import { UserThreads } from "../user-threads.js";
import { withStorage } from "./open.js";

/** The thread a CLI revert restores through (the memory routes are the same in every thread). */
const CLI_THREAD = "cli";

/** Added and removed lines of a unified diff. */
export function lineCounts(diff: string): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const line of diff.split("\n")) {
    if (line.startsWith("+++") || line.startsWith("---")) continue;
    if (line.startsWith("+")) added++;
    else if (line.startsWith("-")) removed++;
  }
  return { added, removed };
}

/** One change by id, or a unique prefix of one; reports why not and returns an exit code. */
async function findChange(ctx: Context, storage: Storage, id: string): Promise<MemoryChange | number> {
  const user = ctx.loaded.config.user;
  const exact = await storage.history.get(user, id);
  if (exact) return exact;
  const matches = (await storage.history.list(user, { limit: Number.MAX_SAFE_INTEGER, onDamaged: () => {} })).filter((c) =>
    c.id.startsWith(id),
  );
  if (matches.length === 1 && matches[0]) return matches[0];
  ctx.error(
    matches.length > 1
      ? `${id} matches ${matches.length} changes; give more of the id`
      : `no memory change ${id} for ${user} (ids: engram memory history)`,
  );
  return EXIT.error;
}

/** `engram memory history [--limit N] [--json]`. */
export function memoryHistory(ctx: Context, options: { limit?: string; json?: boolean }): Promise<number> {
  const limit = options.limit === undefined ? 20 : Number(options.limit);
  if (!Number.isInteger(limit) || limit < 1) return Promise.resolve(ctx.usage("--limit must be an integer ≥ 1"));
  return withStorage(ctx, async (storage) => {
    const changes = await storage.history.list(ctx.loaded.config.user, {
      limit,
      onDamaged: (id) => ctx.warn(`memory change ${id} cannot be read (a damaged record), it is left out`),
    });
    const threads = UserThreads.of(ctx.loaded.config.user, ctx.env);
    const c = ctx.colors(ctx.stdout);
    if (!options.json && changes.length === 0) ctx.stdout.write(c.dim("no memory changes yet\n"));
    for (const change of changes) {
      const { added, removed } = lineCounts(storage.history.diff(change));
      // The thread by the name the user knows it by (its key holds the owner).
      const thread = change.threadId === undefined ? undefined : (threads.idOf(change.threadId) ?? change.threadId);
      if (options.json) {
        const { before: _b, after: _a, ...meta } = change;
        ctx.stdout.write(`${jsonText({ ...meta, ...(thread !== undefined && { threadId: thread }), added, removed })}\n`);
        continue;
      }
      const who = inert(change.actor === "revert" ? `revert of ${change.reverts}` : change.actor);
      ctx.stdout.write(
        `${inert(change.id)}  ${c.dim(new Date(change.at).toISOString())}  ${who.padEnd(6)}  ${c.dim(inert(thread ?? "-"))}  ${inert(change.target)}  ${c.green(`+${added}`)} ${c.red(`-${removed}`)}\n`,
      );
    }
    return EXIT.ok;
  });
}

/** `engram memory diff <id>`: the change as a unified diff (coloured on a terminal only). */
export function memoryDiff(ctx: Context, id: string): Promise<number> {
  return withStorage(ctx, async (storage) => {
    const change = await findChange(ctx, storage, id);
    if (typeof change === "number") return change;
    const c = ctx.colors(ctx.stdout);
    for (const line of inertLines(storage.history.diff(change)).split("\n")) {
      const coloured =
        line.startsWith("+++") || line.startsWith("---")
          ? c.bold(line)
          : line.startsWith("+")
            ? c.green(line)
            : line.startsWith("-")
              ? c.red(line)
              : line.startsWith("@@")
                ? c.cyan(line)
                : line;
      ctx.stdout.write(`${coloured}\n`);
    }
    return EXIT.ok;
  });
}

/** `engram memory revert <id>`: restores the text before the change, if nothing changed it since. */
export function memoryRevert(ctx: Context, id: string): Promise<number> {
  return withStorage(ctx, async (storage) => {
    const change = await findChange(ctx, storage, id);
    if (typeof change === "number") return change;
    if (change.kind !== "agents_md") {
      ctx.error(`${change.id} changed long-term facts; facts are not reverted from history (use engram memory add / forget)`);
      return EXIT.error;
    }
    // The backend the agent uses for that target: `/memories/` routes to the user's files,
    // `/AGENTS.md` to the project root (read-only without --write, so the revert fails there).
    if (!change.target.startsWith("/memories/") && (!storage.project || !ctx.loaded.config.write)) {
      return ctx.usage(`${change.id} changed ${change.target} of a project directory: revert it with --root <dir> --write`);
    }
    const backend = storage.backend(change.threadId ?? CLI_THREAD);
    try {
      const reverted = await storage.history.revert(ctx.loaded.config.user, change.id, restoreThrough(backend));
      const { added, removed } = lineCounts(storage.history.diff(reverted));
      ctx.stdout.write(
        `reverted ${inert(change.id)} on ${inert(change.target)} (+${added} -${removed}); recorded as ${inert(reverted.id)}\n`,
      );
      return EXIT.ok;
    } catch (e) {
      if (EngramError.hasCode(e, "conflict")) {
        ctx.error(`conflict: ${e.message}`);
        return EXIT.error;
      }
      throw e;
    }
  });
}
