/**
 * Tolerant parsing of the model's memory update: the JSON object may be wrapped in prose,
 * code fences or a reasoning trace. The first JSON object carrying any of the update's keys is
 * the update, and it is accepted whole or not at all: one malformed section rejects everything,
 * so a half-understood answer can never remove facts or overwrite summaries.
 * @module
 */
import { z } from "zod";
import { FACT_CATEGORIES, type FactCategory, type HISTORY_SECTIONS, type USER_SECTIONS } from "./schema.js";

/** A summary the model proposes. */
export interface SectionUpdate {
  summary: string;
  shouldUpdate: boolean;
}

/** A fact the model proposes. Confidence is clamped into 0–1; an unknown category becomes
 * `"context"`. */
export interface NewFact {
  content: string;
  category: FactCategory;
  confidence: number;
  sourceError?: string;
}

/** A parsed memory update. Absent sections mean "no change". */
export interface MemoryUpdate {
  user: Partial<Record<(typeof USER_SECTIONS)[number], SectionUpdate>>;
  history: Partial<Record<(typeof HISTORY_SECTIONS)[number], SectionUpdate>>;
  newFacts: NewFact[];
  factsToRemove: string[];
}

const UPDATE_KEYS = ["user", "history", "newFacts", "factsToRemove"] as const;
/** How many `{` positions are tried before giving up on a reply. */
const MAX_CANDIDATES = 200;

const bool = z.union([z.boolean(), z.enum(["true", "false"]).transform((s) => s === "true")]);
const number = z
  .union([
    z.number(),
    z
      .string()
      .trim()
      .regex(/^-?\d+(?:\.\d+)?$/)
      .transform(Number),
  ])
  .pipe(z.number().finite());
const optionalText = z
  .string()
  .nullish()
  .transform((s) => s ?? "");

const sectionUpdate = z.object({ summary: optionalText, shouldUpdate: bool.nullish().transform((b) => b ?? false) });
const userSections = z
  .object({ workContext: sectionUpdate.nullish(), personalContext: sectionUpdate.nullish(), topOfMind: sectionUpdate.nullish() })
  .nullish();
const historySections = z
  .object({ recentMonths: sectionUpdate.nullish(), earlierContext: sectionUpdate.nullish(), longTermBackground: sectionUpdate.nullish() })
  .nullish();

const newFact = z.object({
  content: z.string(),
  category: z
    .string()
    .nullish()
    .transform((c): FactCategory => {
      const lower = (c ?? "").trim().toLowerCase();
      return (FACT_CATEGORIES as readonly string[]).includes(lower) ? (lower as FactCategory) : "context";
    }),
  confidence: number.transform((n) => Math.min(1, Math.max(0, n))),
  sourceError: z.string().nullish(),
});

const updateSchema = z.object({
  user: userSections,
  history: historySections,
  newFacts: z.array(newFact).nullish(),
  factsToRemove: z.array(z.union([z.string(), z.number().transform(String)])).nullish(),
});

/** The update in a model reply, or why there is none. */
export function parseMemoryUpdate(reply: string): { ok: true; update: MemoryUpdate } | { ok: false; error: string } {
  const candidate = findUpdateObject(reply);
  if (candidate === undefined) return { ok: false, error: "the reply holds no JSON object with memory-update keys" };
  const r = updateSchema.safeParse(candidate);
  if (!r.success) {
    const issue = r.error.issues[0];
    return { ok: false, error: `malformed update at ${issue?.path.join(".") || "top level"}: ${issue?.message ?? "invalid"}` };
  }
  const drop = <T>(o: Record<string, T | null | undefined> | null | undefined) =>
    Object.fromEntries(Object.entries(o ?? {}).filter((e): e is [string, T] => e[1] != null));
  const update: MemoryUpdate = {
    user: drop(r.data.user),
    history: drop(r.data.history),
    newFacts: (r.data.newFacts ?? []).map((f) => ({
      content: f.content,
      category: f.category,
      confidence: f.confidence,
      ...(f.sourceError ? { sourceError: f.sourceError } : {}),
    })),
    factsToRemove: r.data.factsToRemove ?? [],
  };
  return { ok: true, update };
}

/** The first JSON object in `text` (outermost first) that has one of the update's keys. */
function findUpdateObject(text: string): Record<string, unknown> | undefined {
  let tried = 0;
  for (let start = text.indexOf("{"); start >= 0 && tried < MAX_CANDIDATES; start = text.indexOf("{", start + 1)) {
    const end = matchingBrace(text, start);
    if (end < 0) continue;
    tried++;
    let value: unknown;
    try {
      value = JSON.parse(text.slice(start, end + 1));
    } catch {
      continue;
    }
    if (value && typeof value === "object" && !Array.isArray(value) && UPDATE_KEYS.some((k) => k in value)) {
      return value as Record<string, unknown>;
    }
  }
  return undefined;
}

/** Index of the `}` closing the `{` at `start`, skipping braces inside JSON strings; -1 if none. */
function matchingBrace(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{") depth++;
    else if (c === "}" && --depth === 0) return i;
  }
  return -1;
}
