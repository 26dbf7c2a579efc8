/**
 * `engram config`: the effective configuration and where each value came from.
 * @module
 */
import { describeConfig } from "../config.js";
import type { Context } from "../context.js";
import { EXIT } from "../exit.js";
import { inert, jsonText } from "../render.js";

/** Prints `key  value  source` rows (or one JSON object with `--json`). */
export function configCommand(ctx: Context, options: { json?: boolean }): number {
  const rows = describeConfig(ctx.loaded);
  if (options.json) {
    const out = Object.fromEntries(rows.map((r) => [r.key, { value: r.value, source: r.source }]));
    ctx.stdout.write(`${jsonText({ home: ctx.loaded.home, files: ctx.loaded.files, config: out })}\n`);
    return EXIT.ok;
  }
  const c = ctx.colors(ctx.stdout);
  const width = Math.max(...rows.map((r) => r.key.length));
  const values = rows.map((r) => inert(r.value));
  const valueWidth = Math.min(48, Math.max(...values.map((v) => v.length)));
  for (const [i, r] of rows.entries()) {
    const value = (values[i] ?? "").padEnd(valueWidth);
    ctx.stdout.write(`${c.bold(r.key.padEnd(width))}  ${r.source === "default" ? c.dim(value) : value}  ${c.dim(inert(r.source))}\n`);
  }
  const files = ctx.loaded.files.map((f) => inert(f)).join(", ");
  ctx.stdout.write(c.dim(`home ${inert(ctx.loaded.home)}; files read: ${files || "none"}\n`));
  return EXIT.ok;
}
