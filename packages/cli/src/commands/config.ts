/**
 * `engram config`: the effective configuration and where each value came from.
 * @module
 */
import { describeConfig } from "../config.js";
import type { Context } from "../context.js";
import { EXIT } from "../exit.js";

/** Prints `key  value  source` rows (or one JSON object with `--json`). */
export function configCommand(ctx: Context, options: { json?: boolean }): number {
  const rows = describeConfig(ctx.loaded);
  if (options.json) {
    const out = Object.fromEntries(rows.map((r) => [r.key, { value: r.value, source: r.source }]));
    ctx.stdout.write(`${JSON.stringify({ home: ctx.loaded.home, files: ctx.loaded.files, config: out })}\n`);
    return EXIT.ok;
  }
  const c = ctx.colors(ctx.stdout);
  const width = Math.max(...rows.map((r) => r.key.length));
  const valueWidth = Math.min(48, Math.max(...rows.map((r) => r.value.length)));
  for (const r of rows) {
    const value = r.source === "default" ? c.dim(r.value.padEnd(valueWidth)) : r.value.padEnd(valueWidth);
    ctx.stdout.write(`${c.bold(r.key.padEnd(width))}  ${value}  ${c.dim(r.source)}\n`);
  }
  ctx.stdout.write(c.dim(`home ${ctx.loaded.home}; files read: ${ctx.loaded.files.join(", ") || "none"}\n`));
  return EXIT.ok;
}
