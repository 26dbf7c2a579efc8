/**
 * Structured output (`responseFormat`): the schema the run's final answer must match, in the
 * two forms the agent needs — a JSON Schema for the model and a validator for the answer.
 * @module
 */
import { type SchemaDraft, Validator } from "@cfworker/json-schema";
import * as z from "zod/mini";
import { ConfigError } from "../errors.js";
import { parseParams } from "../zod.js";

/** The final answer's schema, ready for the loop. */
export interface StructuredFormat {
  /** The name models are given (`responseFormat.name`). */
  name: string;
  /** Sent to the model as is. */
  jsonSchema: Record<string, unknown>;
  /** The answer as the schema parses it, or the validation errors in words for the model. */
  validate(value: unknown): { ok: true; value: unknown } | { ok: false; errors: string };
}

const isZod = (v: unknown): v is z.core.$ZodType =>
  typeof v === "object" && v !== null && "_zod" in v && typeof (v as { safeParse?: unknown }).safeParse === "function";

function zodValidator(schema: z.core.$ZodType): StructuredFormat["validate"] {
  return (value) => {
    const r = z.safeParse(schema, value, parseParams());
    if (r.success) return { ok: true, value: r.data };
    return { ok: false, errors: r.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ") };
  };
}

/** The JSON Schema draft a schema declares in `$schema`; 2020-12 when it names none. */
function draftOf(schema: Record<string, unknown>): SchemaDraft {
  const declared = typeof schema.$schema === "string" ? schema.$schema : "";
  for (const draft of ["4", "7", "2019-09"] as const) if (declared.includes(draft.length === 1 ? `draft-0${draft}` : draft)) return draft;
  return "2020-12";
}

/** Keywords that apply subschemas: their errors only say that a subschema failed, which the
 * subschema's own errors say better. */
const APPLICATORS = new Set([
  "properties",
  "patternProperties",
  "additionalProperties",
  "items",
  "prefixItems",
  "additionalItems",
  "contains",
  "unevaluatedProperties",
  "unevaluatedItems",
  "dependentSchemas",
  "allOf",
  "$ref",
]);

/** A JSON Schema validator (`@cfworker/json-schema`: drafts 4 to 2020-12, no code generation,
 * so it runs on edge runtimes too). The value is taken as is. Throws for a schema it cannot
 * use (an unresolvable `$ref`). */
function jsonSchemaValidator(schema: Record<string, unknown>): StructuredFormat["validate"] {
  const validator = new Validator(schema, draftOf(schema), false);
  validator.validate(null); // resolves every `$ref` now, so a broken one fails at build time
  return (value) => {
    const r = validator.validate(value);
    if (r.valid) return { ok: true, value };
    const leaves = r.errors.filter(
      (e) => !APPLICATORS.has(e.keyword) || !r.errors.some((d) => d.instanceLocation.startsWith(`${e.instanceLocation}/`)),
    );
    const errors = (leaves.length > 0 ? leaves : r.errors).map(
      (e) => `${e.instanceLocation.replace(/^#\/?/, "").replaceAll("/", ".") || "(root)"}: ${e.error}`,
    );
    return { ok: false, errors: [...new Set(errors)].join("; ") };
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
    return { name, jsonSchema, validate: zodValidator(schema) };
  }
  const jsonSchema = schema as Record<string, unknown>;
  let validate: StructuredFormat["validate"];
  try {
    validate = jsonSchemaValidator(jsonSchema);
  } catch (e) {
    throw new ConfigError("responseFormat", `is not a usable JSON Schema: ${e instanceof Error ? e.message : String(e)}`);
  }
  return { name, jsonSchema, validate };
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
