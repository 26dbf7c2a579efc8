/**
 * The memory update, defined once (zod) and used three ways:
 *
 * 1. the JSON schema sent with the extraction request (`request.responseFormat`), so providers
 *    and local grammars constrain the answer to it ({@link UPDATE_JSON_SCHEMA});
 * 2. the example in the extraction prompt ({@link UPDATE_EXAMPLE}, generated from that JSON
 *    schema's `examples`), and the shape the current memory is shown in ({@link memoryView});
 * 3. the parser, which validates each section and each fact against the same sub-schemas, on
 *    its own (see `parse.ts`).
 * @module
 */
import * as z from "zod/mini";
import { FACT_CATEGORIES, HISTORY_SECTIONS, type MemoryData, USER_SECTIONS } from "./schema.js";

/** How many new facts and removals one update may carry (longer lists are cut). */
export const MAX_UPDATE_FACTS = 10;
/** Longest fact text (and correction note) an update may propose, in characters. */
export const MAX_FACT_CHARS = 200;
/** Longest fact id an update may name in `replaces`, in characters. */
export const MAX_FACT_ID_CHARS = 40;
/** Longest summary an update may propose, in characters. */
export const MAX_SUMMARY_CHARS = 800;

/** One summary section of the update, and of the current memory as shown to the model. */
export const sectionSchema = z
  .object({
    summary: z.string().check(z.maxLength(MAX_SUMMARY_CHARS), z.meta({ examples: [""] })),
    shouldUpdate: z.boolean().check(z.meta({ examples: [false] })),
  })
  .check(z.describe("The whole new summary text when shouldUpdate is true; otherwise leave it as it is."));

/** One new fact the model proposes. */
export const factSchema = z.object({
  content: z
    .string()
    .check(
      z.minLength(1),
      z.maxLength(MAX_FACT_CHARS),
      z.describe("One self-contained statement the USER made or confirmed."),
      z.meta({ examples: ["Prefers TypeScript over JavaScript"] }),
    ),
  category: z.enum(FACT_CATEGORIES).check(z.meta({ examples: ["preference"] })),
  confidence: z.number().check(z.gte(0), z.lte(1), z.meta({ examples: [0.9] })),
  replaces: z
    .string()
    .check(
      z.maxLength(MAX_FACT_ID_CHARS),
      z.describe('The id of the fact in the current memory that this one changes or contradicts; "" when none.'),
      z.meta({ examples: [""] }),
    ),
  sourceError: z
    .optional(z.string().check(z.maxLength(MAX_FACT_CHARS)))
    .check(z.describe('For "correction" facts: what the assistant got wrong.')),
});

/** The user-context sections of an update. */
export const userSectionsSchema = z.object({
  workContext: sectionSchema,
  personalContext: sectionSchema,
  topOfMind: sectionSchema,
});

/** The history sections of an update. */
export const historySectionsSchema = z.object({
  recentMonths: sectionSchema,
  earlierContext: sectionSchema,
  longTermBackground: sectionSchema,
});

/** The facts of the extraction prompt's example answer. */
const EXAMPLE_FACTS = [
  { content: "Prefers TypeScript over JavaScript", category: "preference", confidence: 0.9, replaces: "" },
  { content: "Works as a nurse in Porto", category: "context", confidence: 0.95, replaces: "" },
  { content: "Is called Sam", category: "context", confidence: 0.95, replaces: "" },
] as const;

/** The contents of the facts in the extraction prompt's example answer: a model that answers
 * with them (and the user said none of them) copied the example. */
export const EXAMPLE_FACT_CONTENTS: readonly string[] = EXAMPLE_FACTS.map((f) => f.content);

/** The checks of the `newFacts` list (length, description, example). */
const NEW_FACTS_CHECKS = [
  z.maxLength(MAX_UPDATE_FACTS),
  z.describe("New facts the USER stated or confirmed in the conversation; [] when none."),
  // Several example facts: shown one, small models list one fact and drop the rest.
  z.meta({ examples: [EXAMPLE_FACTS.map((f) => ({ ...f }))] }),
] as const;

/**
 * The memory update the model must return. Facts come first, so a model that runs out of
 * output tokens has already given the most valuable part.
 */
export const memoryUpdateSchema = z.object({
  newFacts: z.array(factSchema).check(...NEW_FACTS_CHECKS),
  factsToRemove: z
    .array(z.string())
    .check(
      z.maxLength(MAX_UPDATE_FACTS),
      z.describe("Ids of existing facts the user explicitly contradicted or asked to forget; usually []."),
      z.meta({ examples: [[]] }),
    ),
  user: userSectionsSchema,
  history: historySectionsSchema,
});

/** The update as the schema types it (before the parser's coercions and checks). */
export type MemoryUpdateShape = z.infer<typeof memoryUpdateSchema>;

/** The JSON schema of {@link memoryUpdateSchema}, for `request.responseFormat`. */
export const UPDATE_JSON_SCHEMA: Record<string, unknown> = z.toJSONSchema(memoryUpdateSchema, { target: "draft-7" }) as Record<
  string,
  unknown
>;

/** The `responseFormat` of an extraction request. */
export const UPDATE_RESPONSE_FORMAT = { name: "memory_update", schema: UPDATE_JSON_SCHEMA } as const;

/**
 * A value of `schema` built from its `examples` (first one), else the type's neutral value:
 * `""`, `0`, `false`, `[]`, the first enum member, an object of every property. Only the
 * JSON-schema features {@link memoryUpdateSchema} uses are handled.
 */
export function exampleFromJsonSchema(schema: Record<string, unknown>): unknown {
  const examples = schema.examples;
  if (Array.isArray(examples) && examples.length > 0) return examples[0];
  if (Array.isArray(schema.enum)) return schema.enum[0];
  switch (schema.type) {
    case "object": {
      const props = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
      const required = new Set((schema.required as string[] | undefined) ?? Object.keys(props));
      return Object.fromEntries(
        Object.entries(props)
          .filter(([k]) => required.has(k))
          .map(([k, v]) => [k, exampleFromJsonSchema(v)]),
      );
    }
    case "array":
      return [];
    case "string":
      return "";
    case "number":
    case "integer":
      return 0;
    case "boolean":
      return false;
    default:
      return null;
  }
}

/**
 * JSON as the extraction prompt shows it (the example answer and the current memory): compact,
 * with no whitespace. That is the one layout every JSON grammar allows: node-llama-cpp's (and
 * llama.cpp's) grammars accept a newline only followed by their own indentation (4 spaces per
 * level), so an example indented otherwise shows the model a layout the sampler then forbids —
 * measured on Qwen2.5-Coder-1.5B: with a 1-space-indented example, the constrained answer closed
 * `newFacts` at once (the first allowed token after the newline), while the same prompt
 * unconstrained listed the facts.
 */
export function formatJson(value: unknown): string {
  return JSON.stringify(value);
}

/** The example answer shown in the prompt, generated from {@link UPDATE_JSON_SCHEMA}. */
export const UPDATE_EXAMPLE: string = formatJson(exampleFromJsonSchema(UPDATE_JSON_SCHEMA));

/**
 * What one extraction asks the model for:
 * - `"full"`: new facts, removals and the six summaries ({@link memoryUpdateSchema});
 * - `"facts"`: new facts and removals only ({@link factsUpdateSchema}) — a shorter prompt and a
 *   far shorter answer. Small local models given the full update tend to pour everything into
 *   the summaries and leave `newFacts` empty, and spend most of their output tokens (and time)
 *   on six summaries; asked for facts alone they list them. Summaries are then left as they are.
 */
export type ExtractionMode = "full" | "facts";

/** `newFacts` of a `"facts"` extraction: {@link factSchema} without `sourceError`, unless the
 * conversation holds a correction. A grammar cannot leave an optional property out, so every
 * fact would carry a `sourceError` — and a small model given that slot writes its next fact in
 * it (seen on Qwen2.5-Coder-1.5B). */
const factsOnly = (withNote: boolean) =>
  z.object({
    newFacts: withNote ? memoryUpdateSchema.shape.newFacts : z.array(z.omit(factSchema, { sourceError: true })).check(...NEW_FACTS_CHECKS),
    factsToRemove: memoryUpdateSchema.shape.factsToRemove,
  });

/** The update of a `"facts"` extraction: {@link memoryUpdateSchema}'s `newFacts` (without
 * `sourceError`) and `factsToRemove` — the same parser reads it; absent sections mean "no change". */
export const factsUpdateSchema = factsOnly(false);

/** The JSON schema of {@link factsUpdateSchema}, for `request.responseFormat`. */
export const FACTS_JSON_SCHEMA: Record<string, unknown> = z.toJSONSchema(factsUpdateSchema, { target: "draft-7" }) as Record<
  string,
  unknown
>;

/** One extraction's `responseFormat` (name and JSON schema) and the example answer shown, both
 * generated from its schema. */
export interface ExtractionFormat {
  name: string;
  schema: Record<string, unknown>;
  example: string;
}

const format = (name: string, schema: Record<string, unknown>): ExtractionFormat => ({
  name,
  schema,
  example: formatJson(exampleFromJsonSchema(schema)),
});
const FULL_FORMAT: ExtractionFormat = { ...UPDATE_RESPONSE_FORMAT, example: UPDATE_EXAMPLE };
const FACTS_FORMAT = format("memory_facts_update", FACTS_JSON_SCHEMA);
const FACTS_CORRECTION_FORMAT = format(
  "memory_facts_update",
  z.toJSONSchema(factsOnly(true), { target: "draft-7" }) as Record<string, unknown>,
);

/** The format of an extraction in `mode`; `correction`: the conversation holds a correction
 * (a `"facts"` extraction then offers `sourceError`). */
export function extractionFormat(mode: ExtractionMode, correction = false): ExtractionFormat {
  if (mode === "full") return FULL_FORMAT;
  return correction ? FACTS_CORRECTION_FORMAT : FACTS_FORMAT;
}

/** A fact as the model sees it: the {@link factSchema} fields plus its short id. */
export interface FactView {
  id: string;
  content: string;
  category: string;
  confidence: number;
  sourceError?: string;
}

/**
 * The current memory as the model sees it: the sections in exactly the shape the update
 * returns (`{ summary, shouldUpdate: false }`), then the facts with short ids. `clean` is
 * applied to every stored text (redaction, escaping); `shortIds` maps stored ids to shown ones.
 */
export function memoryView(
  memory: MemoryData,
  shortIds: ReadonlyMap<string, string>,
  clean: (text: string) => string,
): { user: MemoryUpdateShape["user"]; history: MemoryUpdateShape["history"]; facts: FactView[] } {
  const section = (s: { summary: string }) => ({ summary: clean(s.summary), shouldUpdate: false });
  return {
    user: Object.fromEntries(USER_SECTIONS.map((k) => [k, section(memory.user[k])])) as MemoryUpdateShape["user"],
    history: Object.fromEntries(HISTORY_SECTIONS.map((k) => [k, section(memory.history[k])])) as MemoryUpdateShape["history"],
    facts: memory.facts.map((f) => ({
      id: shortIds.get(f.id) ?? clean(f.id),
      content: clean(f.content),
      category: clean(f.category),
      confidence: f.confidence,
      ...(f.sourceError ? { sourceError: clean(f.sourceError) } : {}),
    })),
  };
}

const HEX_ID = /^fact_([0-9a-f]{8})$/;

/**
 * Stable short ids for the prompt: the shortest prefix (at least 4 digits) of a `fact_<hex>` id's
 * hex part that no other fact shares; other ids are shown whole. The same memory always yields
 * the same ids, and an id never changes while its fact exists unless a new fact shares its
 * first digits. Returns stored id → shown id.
 */
export function shortFactIds(ids: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  const hexes = ids.map((id) => HEX_ID.exec(id)?.[1]);
  ids.forEach((id, i) => {
    const hex = hexes[i];
    if (!hex) {
      out.set(id, id);
      return;
    }
    let n = 4;
    while (n < hex.length && hexes.some((h, j) => j !== i && h !== undefined && h.startsWith(hex.slice(0, n)))) n++;
    out.set(id, hex.slice(0, n));
  });
  return out;
}

/**
 * The stored id an id from the model names, or `undefined`: a shown short id, a whole stored id,
 * or `fact_` + a short id (models often add the prefix back), matched case-insensitively.
 */
export function resolveFactId(named: string, shortIds: ReadonlyMap<string, string>): string | undefined {
  const wanted = named.trim().toLowerCase();
  if (wanted === "") return undefined;
  for (const [stored, shown] of shortIds) {
    const s = shown.toLowerCase();
    if (wanted === stored.toLowerCase() || wanted === s || wanted === `fact_${s}`) return stored;
  }
  return undefined;
}
