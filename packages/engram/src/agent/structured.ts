/**
 * Structured output (`responseFormat`): the schema the run's final answer must match, in the
 * two forms the agent needs — a JSON Schema for the model and a validator for the answer.
 * @module
 */
import * as z from "zod";
import { ConfigError } from "../errors.js";

/** The final answer's schema, ready for the loop. */
export interface StructuredFormat {
  /** The name models are given (`responseFormat.name`). */
  name: string;
  /** Sent to the model as is. */
  jsonSchema: Record<string, unknown>;
  /** The answer as the schema parses it, or the validation errors in words for the model. */
  validate(value: unknown): { ok: true; value: unknown } | { ok: false; errors: string };
}

const isZod = (v: unknown): v is z.ZodType =>
  typeof v === "object" && v !== null && "_zod" in v && typeof (v as { safeParse?: unknown }).safeParse === "function";

function validator(schema: z.ZodType) {
  return (value: unknown): ReturnType<StructuredFormat["validate"]> => {
    const r = schema.safeParse(value);
    if (r.success) return { ok: true, value: r.data };
    return { ok: false, errors: r.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ") };
  };
}

/** Builds the format of a `responseFormat` option (a zod 4 schema or a JSON Schema object).
 * Throws a {@link ConfigError} for a schema that cannot be used. */
export function structuredFormat(schema: unknown): StructuredFormat {
  const name = "final_response";
  if (isZod(schema)) {
    let jsonSchema: Record<string, unknown>;
    try {
      jsonSchema = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
    } catch (e) {
      throw new ConfigError("responseFormat", `cannot be described as JSON Schema: ${e instanceof Error ? e.message : String(e)}`);
    }
    return { name, jsonSchema, validate: validator(schema) };
  }
  let parsed: z.ZodType;
  try {
    parsed = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
  } catch (e) {
    throw new ConfigError("responseFormat", `is not a usable JSON Schema: ${e instanceof Error ? e.message : String(e)}`);
  }
  return { name, jsonSchema: schema as Record<string, unknown>, validate: validator(parsed) };
}

/** The JSON value of a model's answer text (a ```json fence allowed), or `undefined`. */
export function jsonOf(text: string): { value: unknown } | undefined {
  const body = text
    .trim()
    .replace(/^```(?:json)?\s*/i, "")
    .replace(/\s*```$/, "");
  if (!/^[[{]/.test(body)) return undefined;
  try {
    return { value: JSON.parse(body) };
  } catch {
    return undefined;
  }
}

/** Asks for the final answer in the schema (after an answer in prose). */
export const FORMAT_PROMPT = "Now give your final answer as a single JSON object matching the required schema, with nothing else.";

/** Sends validation errors back to the model (once). */
export const retryPrompt = (errors: string) =>
  `Your final answer does not match the required schema: ${errors}. Answer again with only the corrected JSON object.`;
