/**
 * The JSON grammar of a local model's replies: tool schemas as node-llama-cpp's grammar subset,
 * the reply shape (`{"tool", "arguments"}` or `{"answer"}`), and reading a reply back — the
 * complete part of one cut by the token cap included.
 * @module
 */
import { isPlainObject } from "./normalize.js";
import type { ToolSpec } from "./types.js";

/** The reply grammar: one of `{"tool": <name>, "arguments": <its schema>}` per tool, or `{"answer": string}`. */
export function replySchema(tools: readonly ToolSpec[]): Record<string, unknown> {
  return {
    oneOf: [
      ...tools.map((t) => ({
        type: "object",
        properties: { tool: { const: t.name }, arguments: toGrammarSchema(t.parameters) },
      })),
      { type: "object", properties: { answer: { type: "string" } } },
    ],
  };
}

/**
 * The complete part of a constrained reply cut by the token cap: the grammar writes the reply's
 * keys in order, so when only the closing brace is missing, its answer string or its tool's
 * arguments object is whole. Otherwise the text as it is (which does not parse).
 */
export function completedPart(text: string): string {
  const closed = `${text.trimEnd()}}`;
  try {
    JSON.parse(closed);
    return closed;
  } catch {
    return text;
  }
}

/** A parsed constrained reply; `undefined` when the text is not one (cut off by the token cap). */
export function parseReply(
  text: string,
  tools: readonly ToolSpec[],
): { answer: string } | { tool: string; args: Record<string, unknown> } | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isPlainObject(value)) return undefined;
  if (typeof value.answer === "string") return { answer: value.answer };
  const tool = tools.find((t) => t.name === value.tool);
  if (!tool || !isPlainObject(value.arguments)) return undefined;
  return { tool: tool.name, args: dropOptionalNulls(value.arguments, tool.parameters) as Record<string, unknown> };
}

/** Keywords a grammar cannot enforce: an optional property carrying one is left out of the grammar. */
const UNENFORCEABLE = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "pattern", "uniqueItems"];
const GRAMMAR_FORMATS = new Set(["date-time", "time", "date"]);
const SCALARS = new Set(["string", "number", "integer", "boolean", "null"]);
/** A grammar for "any scalar", where a schema allows anything. */
const ANY_SCALAR = { type: ["string", "number", "boolean", "null"] };

/**
 * A JSON schema as node-llama-cpp's grammar subset: `type`, `properties` (optional ones may be
 * left out: see {@link objectShapes}), `items`, `enum`, `const`, `anyOf`/`oneOf`, string lengths
 * and date formats.
 * What the subset lacks (`$ref`, `allOf`, open schemas) becomes "any scalar".
 */
export function toGrammarSchema(schema: unknown): Record<string, unknown> {
  if (!isPlainObject(schema)) return ANY_SCALAR;
  const out: Record<string, unknown> = {};
  if (typeof schema.description === "string") out.description = schema.description;
  if (schema.const !== undefined && (schema.const === null || typeof schema.const !== "object")) return { ...out, const: schema.const };
  if (Array.isArray(schema.enum)) {
    const values = schema.enum.filter((v) => v === null || typeof v !== "object");
    if (values.length > 0) return { ...out, enum: values };
  }
  const alternatives = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined;
  if (alternatives && alternatives.length > 0) return { ...out, oneOf: alternatives.map(toGrammarSchema) };
  if (Array.isArray(schema.allOf) && schema.allOf.length === 1) return toGrammarSchema(schema.allOf[0]);
  const type = schema.type;
  if (Array.isArray(type)) {
    if (type.every((t) => SCALARS.has(t as string))) return { ...out, type };
    return { ...out, oneOf: type.map((t) => toGrammarSchema({ ...schema, type: t })) };
  }
  switch (type) {
    case "string": {
      const s: Record<string, unknown> = { ...out, type: "string" };
      if (typeof schema.format === "string" && GRAMMAR_FORMATS.has(schema.format)) s.format = schema.format;
      else {
        if (typeof schema.minLength === "number") s.minLength = schema.minLength;
        if (typeof schema.maxLength === "number") s.maxLength = schema.maxLength;
      }
      return s;
    }
    case "number":
    case "integer":
    case "boolean":
    case "null":
      return { ...out, type };
    case "array": {
      const a: Record<string, unknown> = { ...out, type: "array", items: toGrammarSchema(schema.items) };
      if (typeof schema.minItems === "number") a.minItems = schema.minItems;
      if (typeof schema.maxItems === "number") a.maxItems = schema.maxItems;
      return a;
    }
    case "object": {
      const props = isPlainObject(schema.properties) ? schema.properties : {};
      if (Object.keys(props).length === 0) {
        const o: Record<string, unknown> = { ...out, type: "object", properties: {} };
        if (schema.additionalProperties !== false) {
          o.additionalProperties = isPlainObject(schema.additionalProperties) ? toGrammarSchema(schema.additionalProperties) : ANY_SCALAR;
        }
        return o;
      }
      const shapes = objectShapes(props, new Set(Array.isArray(schema.required) ? schema.required : []));
      const objects = shapes.map((properties) => ({ type: "object", properties }));
      return objects.length === 1 ? { ...out, ...objects[0] } : { ...out, oneOf: objects };
    }
    default:
      return ANY_SCALAR;
  }
}

/** Optional properties a grammar lets the model choose among, at most: each doubles the shapes. */
const MAX_CHOSEN_OPTIONAL = 5;

/**
 * The property sets an object may be written with, in the schema's key order: the required
 * properties, plus each subset of the optional ones — node-llama-cpp's object grammar writes
 * every listed property, so "optional" is one alternative per subset. Optional properties with
 * bounds a grammar cannot enforce, and those beyond the first {@link MAX_CHOSEN_OPTIONAL}, are
 * left out (the tool's default applies).
 */
function objectShapes(props: Record<string, unknown>, required: ReadonlySet<unknown>): Record<string, unknown>[] {
  const optional = Object.entries(props)
    .filter(([key, sub]) => !required.has(key) && !(isPlainObject(sub) && UNENFORCEABLE.some((k) => k in sub)))
    .slice(0, MAX_CHOSEN_OPTIONAL)
    .map(([key]) => key);
  const shapes: Record<string, unknown>[] = [];
  for (let mask = 0; mask < 2 ** optional.length; mask++) {
    const chosen = new Set(optional.filter((_, i) => mask & (1 << i)));
    const shape: Record<string, unknown> = {};
    for (const [key, sub] of Object.entries(props)) if (required.has(key) || chosen.has(key)) shape[key] = toGrammarSchema(sub);
    shapes.push(shape);
  }
  return shapes;
}

/** Removes `null` values of optional properties (a nullable optional argument left out). */
function dropOptionalNulls(value: unknown, schema: unknown): unknown {
  if (!isPlainObject(value) || !isPlainObject(schema) || !isPlainObject(schema.properties)) return value;
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (v === null && !required.has(key)) continue;
    out[key] = dropOptionalNulls(v, schema.properties[key]);
  }
  return out;
}
