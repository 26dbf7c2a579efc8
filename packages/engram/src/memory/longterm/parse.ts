/**
 * Tolerant, per-part parsing of the model's memory update. The reply may wrap the JSON object
 * in prose, code fences or a reasoning trace, and may be near-JSON (trailing commas, single
 * quotes, comments, Python constants, a cut-off end): such text is repaired with `jsonrepair`.
 * The object is then validated part by part against the sub-schemas of
 * {@link memoryUpdateSchema}: each summary section and each fact stands on its own, so a bad one
 * is dropped (and reported in `issues`) while the good ones are kept.
 * @module
 */
import { jsonrepair } from "jsonrepair";
import type * as z from "zod/mini";
import { parseParams } from "../../zod.js";
import { FACT_CATEGORIES, type FactCategory, HISTORY_SECTIONS, USER_SECTIONS } from "./schema.js";
import { MAX_FACT_ID_CHARS, MAX_UPDATE_FACTS, factSchema, sectionSchema } from "./update-schema.js";

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
  /** The id (as shown to the model) of the existing fact this one changes or contradicts. */
  replaces?: string;
}

/** A parsed memory update. Absent sections mean "no change". `factsToRemove` holds the ids as
 * the model wrote them (short ids are resolved when the update is applied). */
export interface MemoryUpdate {
  user: Partial<Record<(typeof USER_SECTIONS)[number], SectionUpdate>>;
  history: Partial<Record<(typeof HISTORY_SECTIONS)[number], SectionUpdate>>;
  newFacts: NewFact[];
  factsToRemove: string[];
}

/** Outcome of {@link parseMemoryUpdate}: the usable parts and what was dropped, or why nothing
 * is usable. */
export type ParsedUpdate = { ok: true; update: MemoryUpdate; issues: string[] } | { ok: false; error: string };

const UPDATE_KEYS = ["user", "history", "newFacts", "factsToRemove"] as const;
/** How many `{` positions are tried before giving up on a reply. */
const MAX_CANDIDATES = 50;
/** Characters of a reply that are looked at (an update is far shorter). */
const MAX_REPLY_CHARS = 100_000;

/** Coerces the near-misses small models produce before the strict schema sees a value:
 * `"true"`/`"false"`, numeric strings, `null` for absent. */
function coerceBool(v: unknown): unknown {
  if (typeof v === "string" && /^(true|false)$/i.test(v.trim())) return v.trim().toLowerCase() === "true";
  return v ?? false;
}
function coerceNumber(v: unknown): unknown {
  if (typeof v === "string" && /^\s*-?\d+(?:\.\d+)?\s*$/.test(v)) return Number(v);
  return v;
}

function issueText(error: z.core.$ZodError): string {
  const issue = error.issues[0];
  return issue ? `${issue.path.join(".") || "value"}: ${issue.message}` : "invalid";
}

/** One section, or why it was dropped. */
function parseSection(value: unknown): { ok: true; section: SectionUpdate } | { ok: false; error: string } {
  if (typeof value === "string") {
    return { ok: false, error: "a plain string, not { summary, shouldUpdate }" };
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) return { ok: false, error: "not an object" };
  const v = value as Record<string, unknown>;
  const r = sectionSchema.safeParse({ summary: v.summary ?? "", shouldUpdate: coerceBool(v.shouldUpdate) }, parseParams());
  return r.success ? { ok: true, section: r.data } : { ok: false, error: issueText(r.error) };
}

/** One fact, or why it was dropped. */
function parseFact(value: unknown): { ok: true; fact: NewFact } | { ok: false; error: string } {
  if (!value || typeof value !== "object" || Array.isArray(value)) return { ok: false, error: "not an object" };
  const v = value as Record<string, unknown>;
  const category = typeof v.category === "string" ? v.category.trim().toLowerCase() : "";
  const confidence = coerceNumber(v.confidence);
  const r = factSchema.safeParse(
    {
      content: typeof v.content === "string" ? v.content.trim() : v.content,
      category: (FACT_CATEGORIES as readonly string[]).includes(category) ? category : "context",
      confidence: typeof confidence === "number" && Number.isFinite(confidence) ? Math.min(1, Math.max(0, confidence)) : confidence,
      ...(typeof v.sourceError === "string" && v.sourceError.trim() !== "" && { sourceError: v.sourceError }),
      // Absent or not a short string: replaces nothing (the fact itself is still usable).
      replaces: typeof v.replaces === "string" && v.replaces.trim().length <= MAX_FACT_ID_CHARS ? v.replaces.trim() : "",
    },
    parseParams(),
  );
  if (!r.success) return { ok: false, error: issueText(r.error) };
  const { replaces, ...fact } = r.data;
  return { ok: true, fact: replaces === "" ? (fact as NewFact) : { ...(fact as NewFact), replaces } };
}

/**
 * The update in a model reply, part by part. `ok: false` only when the reply holds no JSON
 * object with an update key, or when nothing in it is usable and something was dropped.
 */
export function parseMemoryUpdate(reply: string): ParsedUpdate {
  const found = findUpdateObject(reply);
  if (found === undefined) return { ok: false, error: "the reply holds no JSON object with memory-update keys" };
  const candidate = found.value;
  const issues: string[] = [];
  const update: MemoryUpdate = { user: {}, history: {}, newFacts: [], factsToRemove: [] };

  const sections = (group: "user" | "history", keys: readonly string[]) => {
    const value = candidate[group];
    if (value == null) return;
    if (typeof value !== "object" || Array.isArray(value)) {
      issues.push(`${group}: not an object; dropped`);
      return;
    }
    for (const key of keys) {
      const raw = (value as Record<string, unknown>)[key];
      if (raw == null) continue;
      const r = parseSection(raw);
      if (r.ok) (update[group] as Record<string, SectionUpdate>)[key] = r.section;
      else issues.push(`${group}.${key}: ${r.error}; dropped`);
    }
  };
  sections("user", USER_SECTIONS);
  sections("history", HISTORY_SECTIONS);

  const facts = candidate.newFacts;
  if (Array.isArray(facts)) {
    facts.slice(0, MAX_UPDATE_FACTS).forEach((f, i) => {
      const r = parseFact(f);
      if (r.ok) update.newFacts.push(r.fact);
      else issues.push(`newFacts.${i}: ${r.error}; dropped`);
    });
    if (facts.length > MAX_UPDATE_FACTS) issues.push(`newFacts: more than ${MAX_UPDATE_FACTS}; the rest dropped`);
  } else if (facts != null) issues.push("newFacts: not an array; dropped");

  const removals = candidate.factsToRemove;
  if (Array.isArray(removals)) {
    for (const id of removals.slice(0, MAX_UPDATE_FACTS)) {
      if (typeof id === "string" || typeof id === "number") update.factsToRemove.push(String(id));
      else issues.push(`factsToRemove: ${JSON.stringify(id)} is not an id; dropped`);
    }
    if (removals.length > MAX_UPDATE_FACTS) issues.push(`factsToRemove: more than ${MAX_UPDATE_FACTS}; all ignored`);
    if (removals.length > MAX_UPDATE_FACTS) update.factsToRemove = [];
  } else if (removals != null) issues.push("factsToRemove: not an array; dropped");

  const usable =
    Object.keys(update.user).length + Object.keys(update.history).length + update.newFacts.length + update.factsToRemove.length;
  if (usable === 0 && issues.length > 0) return { ok: false, error: `nothing usable: ${issues.join("; ")}` };
  if (usable === 0 && found.repaired) return { ok: false, error: "the reply is an incomplete JSON object with nothing usable" };
  return { ok: true, update, issues };
}

/** Parses `text` as JSON, repairing near-JSON; `undefined` when even the repair fails. */
function parseLoose(text: string): { value: unknown; repaired: boolean } | undefined {
  try {
    return { value: JSON.parse(text), repaired: false };
  } catch {
    // fall through to the repair
  }
  try {
    return { value: JSON.parse(jsonrepair(text)), repaired: true };
  } catch {
    return undefined;
  }
}

const isUpdate = (value: unknown): value is Record<string, unknown> =>
  !!value && typeof value === "object" && !Array.isArray(value) && UPDATE_KEYS.some((k) => k in (value as object));

/** The first JSON object in `text` (outermost first) that has one of the update's keys; tried
 * as written, repaired, and — for a reply cut off mid-object — from its `{` to the end. */
function findUpdateObject(text: string): { value: Record<string, unknown>; repaired: boolean } | undefined {
  const body = stripFences(text.slice(0, MAX_REPLY_CHARS));
  let tried = 0;
  for (let start = body.indexOf("{"); start >= 0 && tried < MAX_CANDIDATES; start = body.indexOf("{", start + 1)) {
    tried++;
    const end = matchingBrace(body, start);
    const spans = end >= 0 ? [body.slice(start, end + 1)] : [];
    const lastBrace = body.lastIndexOf("}");
    if (lastBrace > start && lastBrace !== end) spans.push(body.slice(start, lastBrace + 1));
    spans.push(body.slice(start));
    for (const span of spans) {
      const parsed = parseLoose(span);
      if (parsed && isUpdate(parsed.value)) return { value: parsed.value, repaired: parsed.repaired };
    }
  }
  return undefined;
}

/** The inside of the first ``` fence when the reply has one, else the reply. */
function stripFences(text: string): string {
  const fence = /```[a-zA-Z]*\s*\n?([\s\S]*?)(?:```|$)/.exec(text);
  return fence?.[1]?.includes("{") ? fence[1] : text;
}

/** Index of the `}` closing the `{` at `start`, skipping braces inside double-quoted strings;
 * -1 if none. */
function matchingBrace(text: string, start: number): number {
  let depth = 0;
  let quote = "";
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === "\\") i++;
      else if (c === quote) quote = "";
    } else if (c === '"') quote = c;
    else if (c === "{") depth++;
    else if (c === "}" && --depth === 0) return i;
  }
  return -1;
}
