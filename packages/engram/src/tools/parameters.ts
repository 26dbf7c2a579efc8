/**
 * The JSON Schema a model is given for a tool's arguments: zod's, less what tells the model
 * nothing and is sent with every request — the `$schema` draft marker, and the bounds zod puts
 * on every integer (±(2^53 − 1)), which no argument comes near. Bounds a tool sets itself stay.
 * @module
 */
import * as z from "zod/mini";

function withoutNoise(node: unknown, top: boolean): unknown {
  if (Array.isArray(node)) return node.map((item) => withoutNoise(item, false));
  if (typeof node !== "object" || node === null) return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (top && key === "$schema") continue;
    if (key === "maximum" && value === Number.MAX_SAFE_INTEGER) continue;
    if (key === "minimum" && value === Number.MIN_SAFE_INTEGER) continue;
    out[key] = withoutNoise(value, false);
  }
  return out;
}

/** The arguments' JSON Schema of a tool whose arguments `schema` describes. */
export function toolParameters(schema: z.core.$ZodType): Record<string, unknown> {
  return withoutNoise(z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }), true) as Record<string, unknown>;
}
