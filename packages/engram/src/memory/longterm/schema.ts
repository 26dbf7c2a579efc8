/**
 * The `memory.json` document of long-term facts memory (DESIGN §5.2): three user-context
 * summaries, three history summaries and a list of facts. This is the whole file, exactly;
 * {@link parseMemory} validates it when it is loaded.
 * @module
 */
import * as z from "zod/mini";
import { parseParams } from "../../zod.js";

/** The `version` every document Engram writes carries. */
export const MEMORY_VERSION = "1.0";

/** The fact categories the updater asks the model for. Stored files may hold other strings. */
export const FACT_CATEGORIES = ["preference", "knowledge", "context", "behavior", "goal", "correction"] as const;

/** A known fact category; any other non-empty string is accepted from a stored file. */
export type FactCategory = (typeof FACT_CATEGORIES)[number];

/** One summary section: text plus when it last changed (ISO-8601, `""` when never). */
export interface MemorySection {
  summary: string;
  updatedAt: string;
}

/** The user-context summaries. */
export interface UserContext {
  /** Role, employer, main projects, technology. */
  workContext: MemorySection;
  /** Languages, communication preferences, interests. */
  personalContext: MemorySection;
  /** What the user is busy with right now. */
  topOfMind: MemorySection;
}

/** The history summaries. */
export interface HistoryContext {
  /** The last one to three months. */
  recentMonths: MemorySection;
  /** Three to twelve months ago. */
  earlierContext: MemorySection;
  /** Lasting background. */
  longTermBackground: MemorySection;
}

/** One remembered fact. */
export interface Fact {
  /** `fact_` followed by 8 hex digits. */
  id: string;
  content: string;
  /** One of {@link FACT_CATEGORIES}, normally. */
  category: FactCategory | (string & {});
  /** 0–1. */
  confidence: number;
  /** ISO-8601: when it was learnt. */
  createdAt: string;
  /** ISO-8601: when the user last stated or confirmed it (a restatement refreshes it); absent
   * when never restated since `createdAt`. Conflicting facts are resolved by it (newest wins). */
  confirmedAt?: string;
  /** Ids of the facts this one replaced when it was learnt (they are kept in the memory history,
   * not here). */
  replaced?: string[];
  /** The thread it was learnt in, `"manual"` for the facts API, or `"unknown"`. */
  source: string;
  /** For corrections: what was wrong, shown as `(avoid: …)` when injected. */
  sourceError?: string;
}

/** The whole `memory.json`. */
export interface MemoryData {
  version: string;
  /** ISO-8601, stamped by every save (`""` for a memory never saved). */
  lastUpdated: string;
  user: UserContext;
  history: HistoryContext;
  facts: Fact[];
}

/** The keys of {@link UserContext}, in display order. */
export const USER_SECTIONS = ["workContext", "personalContext", "topOfMind"] as const;
/** The keys of {@link HistoryContext}, in display order. */
export const HISTORY_SECTIONS = ["recentMonths", "earlierContext", "longTermBackground"] as const;

const section = z.object({ summary: z.string(), updatedAt: z.string() });

const factSchema = z.object({
  id: z.string().check(z.minLength(1)),
  content: z.string(),
  category: z.string().check(z.minLength(1)),
  confidence: z.number().check(z.gte(0), z.lte(1)),
  createdAt: z.string(),
  confirmedAt: z.optional(z.string()),
  replaced: z.optional(z.array(z.string())),
  source: z.string(),
  sourceError: z.optional(z.string()),
});

/** The zod schema of `memory.json`. Unknown keys are dropped; everything listed is required
 * except `sourceError`, `confirmedAt` and `replaced`. */
export const memorySchema = z.object({
  version: z.string(),
  lastUpdated: z.string(),
  user: z.object({ workContext: section, personalContext: section, topOfMind: section }),
  history: z.object({ recentMonths: section, earlierContext: section, longTermBackground: section }),
  facts: z.array(factSchema),
});

/** A fresh, empty memory: every summary `""`, no facts, `lastUpdated` `""`. */
export function createEmptyMemory(): MemoryData {
  const empty = (): MemorySection => ({ summary: "", updatedAt: "" });
  return {
    version: MEMORY_VERSION,
    lastUpdated: "",
    user: { workContext: empty(), personalContext: empty(), topOfMind: empty() },
    history: { recentMonths: empty(), earlierContext: empty(), longTermBackground: empty() },
    facts: [],
  };
}

/** Validates a parsed `memory.json`: the memory (a fresh object), or why it is invalid. */
export function parseMemory(value: unknown): { ok: true; memory: MemoryData } | { ok: false; error: string } {
  const r = memorySchema.safeParse(value, parseParams());
  if (r.success) return { ok: true, memory: r.data as MemoryData };
  const issue = r.error.issues[0];
  return { ok: false, error: issue ? `${issue.path.join(".") || "document"}: ${issue.message}` : "invalid" };
}

/** True when the memory holds nothing: no facts and no summary text. */
export function isEmptyMemory(memory: MemoryData): boolean {
  return (
    memory.facts.length === 0 &&
    USER_SECTIONS.every((k) => memory.user[k].summary === "") &&
    HISTORY_SECTIONS.every((k) => memory.history[k].summary === "")
  );
}

/** The current time as ISO-8601 with a `Z` suffix. */
export function nowIso(now: number = Date.now()): string {
  return new Date(now).toISOString();
}
