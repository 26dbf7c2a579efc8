/**
 * The `<memory>` block placed in the system prompt: summaries, then facts, within a token
 * budget counted with the CJK-aware `estimateTokens`. Corrections are chosen first, from
 * their own budget, and listed first; the other facts follow by score. Every stored text is
 * tag-escaped, so nothing in memory can close the block. The block is packed by the Rust core
 * (`engram_core::prompt::facts_block`); this module decides what goes in: of two facts of one
 * slot (name, location, job… see `slots.ts`) only the more recently confirmed, each fact with
 * the day it was last confirmed, and none that a newer line the user said updates (see
 * `supersede.ts`: the recalled messages of earlier threads shown beside the block).
 * @module
 */
import { loadedCore } from "../../core/loader.js";
import type { Core } from "../../core/types.js";
import { type Fact, HISTORY_SECTIONS, type MemoryData, USER_SECTIONS } from "./schema.js";
import { lastConfirmed, newestPerSlot } from "./slots.js";
import { type UserLine, notUpdatedBy } from "./supersede.js";

/** How facts are ranked for injection. */
export type RecallMode = "confidence" | "relevance";

/** Options of {@link formatMemoryBlock}. */
export interface InjectionOptions {
  /** Upper bound of the whole block's estimated tokens, tags included. */
  maxTokens: number;
  /** Tokens that corrections may use, taken first (within `maxTokens`). */
  correctionBudgetTokens: number;
  /** A score per fact of `memory.facts` (same order), higher first. Default: confidence (plus
   * relevance to `query` when that is given). */
  scores?: readonly number[];
  /** The current request: without `scores`, facts are ranked by confidence plus their BM25
   * relevance to it, computed in the same core call (see {@link scoreFacts}). Default: none. */
  query?: string;
  /** The core that writes the block. Default: the loaded core (`loadedCore()`). */
  core?: Core;
  /** Whether each fact is shown with the day it was last confirmed, `(as of 2026-11-20)`, so the
   * model can tell old from new and answer "what did I say last week". Default: `true`. */
  dates?: boolean;
  /** The time the block is written for (ms since the epoch): each dated fact also says how long
   * ago its day was and, for this calendar week and the one before, which week (see
   * {@link calendarWeek}): `(as of 2026-11-12, 8 days ago, last week)` — a small model does not
   * count days from two dates. Default: none (the day alone). */
  now?: number;
  /** What the user said in earlier threads that the prompt also shows (recalled messages): a
   * fact that one of them updates is left out (see `lineUpdatesFact`). Default: none. */
  updatedBy?: readonly UserLine[];
}

/**
 * The `<memory>` block of `memory`, or `""` when it holds nothing or the budget cannot fit the
 * tags, written by the core in one call. Selection: corrections by score within
 * `correctionBudgetTokens`; then the summaries, within half of what is left (a summary that
 * does not fit is cut with `…`); then the other facts by score, each that still fits. Output
 * order: summaries, corrections, other facts. `estimateTokens` of the result never exceeds
 * `maxTokens`. A fact that an other, more recently confirmed fact of its slot contradicts is
 * left out (see `newestPerSlot`), and so is one that a line of `updatedBy` updates.
 */
export function formatMemoryBlock(memory: MemoryData, options: InjectionOptions): string {
  return packBlock(memory, options).block;
}

/** The `<memory>` block of a user's long-term memory, and the text of each fact it shows. */
export interface MemoryInjection {
  block: string;
  /** The facts the block shows (those the budget left out are not among them), found when first
   * asked: most callers need only the block. */
  shownFacts(): readonly string[];
}

/** {@link formatMemoryBlock}, with the facts the block shows. */
export function memoryInjection(memory: MemoryData, options: InjectionOptions): MemoryInjection {
  const { block, candidates, written } = packBlock(memory, options);
  let shown: string[] | undefined;
  // A fact is shown when the block has its line, "- [category | confidence] <text as written>"
  // (a fact whose text had to be escaped is not counted; a longer fact that merely contains the
  // text does not count for it).
  const shownFacts = () =>
    (shown ??= candidates.filter((_, i) => block.includes(`] ${(written[i] as Fact).content}\n`)).map((f) => f.content));
  return { block, shownFacts };
}

/** The block, the facts it was packed from (the budget may have left some out), and those facts
 * as written into it (with their day). */
function packBlock(memory: MemoryData, options: InjectionOptions): { block: string; candidates: Fact[]; written: Fact[] } {
  const core = options.core ?? loadedCore();
  const current = new Set(notUpdatedBy(newestPerSlot(memory.facts), options.updatedBy ?? []));
  const facts = memory.facts.filter((f) => current.has(f));
  const scores = options.scores?.filter((_, i) => current.has(memory.facts[i] as Fact));
  const written = options.dates === false ? facts : facts.map((f) => dated(f, options.now));
  const block = core.factsBlock({
    summaries: [...USER_SECTIONS.map((k) => memory.user[k].summary), ...HISTORY_SECTIONS.map((k) => memory.history[k].summary)],
    facts: written,
    scores,
    query: options.query,
    maxTokens: options.maxTokens,
    correctionTokens: options.correctionBudgetTokens,
  });
  return { block, candidates: facts, written };
}

/**
 * A score per fact: its confidence, plus with `"relevance"` its BM25 relevance to `query`
 * (computed by the core) divided by the best BM25 score, i.e. confidence + a 0–1 relevance.
 */
export function scoreFacts(facts: readonly Fact[], recall: RecallMode, query: string, core?: Core): number[] {
  if (recall !== "relevance" || !core) return facts.map((f) => f.confidence);
  return core.relevanceScores(query, facts);
}

/** `fact` with the day it was last confirmed after its text (when that is a date), how long
 * before `now` that day was (see {@link daysAgo}) and its calendar week when that is this week or
 * last (see {@link calendarWeek}). */
function dated(fact: Fact, now: number | undefined): Fact {
  const day = lastConfirmed(fact).slice(0, 10);
  if (!/^\d{4}-\d\d-\d\d$/.test(day)) return fact;
  const when = now === undefined ? "" : [daysAgo(day, now), calendarWeek(day, now)].filter((t) => t !== undefined).join(", ");
  return { ...fact, content: `${fact.content} (as of ${day}${when ? `, ${when}` : ""})` };
}

/** Milliseconds in a day. */
export const DAY_MS = 86_400_000;

/** How long before `now`'s day (UTC) the day `day` (YYYY-MM-DD) was: "today", "yesterday", "5
 * days ago", "3 weeks ago" (from 14 days), "2 months ago" (from 60), "1 year ago" (from 365);
 * `undefined` for a day after `now`'s or a `now` that is not a time. */
export function daysAgo(day: string, now: number): string | undefined {
  if (!Number.isFinite(now)) return undefined;
  const days = Math.round((Math.floor(now / DAY_MS) * DAY_MS - Date.parse(`${day}T00:00:00Z`)) / DAY_MS);
  if (!(days >= 0)) return undefined;
  if (days === 0) return "today";
  if (days === 1) return "yesterday";
  if (days < 14) return `${days} days ago`;
  if (days < 60) return `${Math.round(days / 7)} weeks ago`;
  if (days < 365) return `${Math.round(days / 30)} months ago`;
  const years = Math.round(days / 365);
  return `${years} year${years === 1 ? "" : "s"} ago`;
}

/** "this week" or "last week" when the day `day` (YYYY-MM-DD) is two or more days before `now`'s
 * and in its calendar week or the one before (weeks start on Monday, UTC), else `undefined`: the
 * words users ask with ("what did I tell you last week"), which a day count does not give. */
export function calendarWeek(day: string, now: number): string | undefined {
  if (!Number.isFinite(now)) return undefined;
  const today = Math.floor(now / DAY_MS);
  const then = Math.floor(Date.parse(`${day}T00:00:00Z`) / DAY_MS);
  if (!(today - then >= 2)) return undefined;
  // Day 0 of the epoch (1970-01-01) was a Thursday: Monday-based week numbers.
  const week = (d: number) => Math.floor((d + 3) / 7);
  const back = week(today) - week(then);
  return back === 0 ? "this week" : back === 1 ? "last week" : undefined;
}
