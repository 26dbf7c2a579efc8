/**
 * The memory updater: one model call per captured conversation, then a compare-and-swap save
 * that is re-applied on a fresh copy when another writer got there first. Everything that is
 * saved is sanitised first: secrets redacted, upload mentions stripped, duplicates and
 * low-confidence facts dropped, at most `maxFacts` kept.
 * @module
 */
import type { ChatModel } from "../../models/types.js";
import type { CapturedConversation } from "./capture.js";
import { type MemoryUpdate, type NewFact, parseMemoryUpdate } from "./parse.js";
import { type UpdatePromptOptions, buildUpdateRequest } from "./prompt.js";
import { redactSecrets } from "./redact.js";
import { type Fact, HISTORY_SECTIONS, type MemoryData, type MemorySection, USER_SECTIONS, nowIso } from "./schema.js";
import { type MemoryStorage, copyMemory } from "./storage.js";
import { factKey, mentionsUpload, stripUploadMentions } from "./text.js";

/** Rules applied to every document before it is saved. */
export interface SaveRules {
  /** New facts below this confidence are dropped (manual facts are exempt). */
  confidenceThreshold: number;
  /** At most this many facts are kept, highest confidence first. */
  maxFacts: number;
}

/** One queued update: a conversation and who it belongs to, fixed when it was captured. */
export interface UpdateJob {
  conversation: CapturedConversation;
  threadId: string;
  userId: string;
  agentName?: string;
  /** When it was captured (ms since the epoch); a clear after this cancels the job. */
  capturedAt: number;
}

/** What one update did. */
export type UpdateOutcome =
  | { status: "saved"; revision: string; added: Fact[]; removed: string[]; summaries: string[] }
  /** The model proposed nothing new. */
  | { status: "unchanged" }
  /** The reply was not a usable update; memory was left as it was. */
  | { status: "rejected"; reason: string }
  /** Memory was cleared after the conversation was captured; nothing was saved. */
  | { status: "cleared" }
  /** Every compare-and-swap attempt lost to another writer. */
  | { status: "conflict"; attempts: number };

/** Everything {@link runMemoryUpdate} needs. */
export interface UpdaterContext extends SaveRules {
  model: ChatModel;
  storage: MemoryStorage;
  prompt: UpdatePromptOptions;
  /** Compare-and-swap attempts before giving up. */
  maxAttempts: number;
  /** Abort the model call after this long, in ms. */
  modelTimeoutMs: number;
  /** Latest clear known in this process for the job's memory (ms), beyond what storage says. */
  clearedAt?: (job: UpdateJob) => number | undefined;
  /** Reports storage warnings (e.g. a quarantined document). */
  onWarning: (message: string) => void;
}

/** Runs one job: load, ask the model once, apply, save by compare-and-swap (reloading and
 * re-applying the same answer after a conflict). Model and storage errors reject. */
export async function runMemoryUpdate(job: UpdateJob, ctx: UpdaterContext): Promise<UpdateOutcome> {
  let update: MemoryUpdate | undefined;
  for (let attempt = 1; attempt <= ctx.maxAttempts; attempt++) {
    const loaded = await ctx.storage.load(job.userId, job.agentName);
    if (loaded.warning) ctx.onWarning(loaded.warning);
    const cleared = Math.max(loaded.clearedAt ?? -Infinity, ctx.clearedAt?.(job) ?? -Infinity);
    if (cleared >= job.capturedAt) return { status: "cleared" };
    if (!update) {
      const request = buildUpdateRequest(loaded.memory, job.conversation, ctx.prompt);
      request.signal = AbortSignal.timeout(ctx.modelTimeoutMs);
      const reply = await ctx.model.invoke(request);
      const parsed = parseMemoryUpdate(reply.message.content);
      if (!parsed.ok) return { status: "rejected", reason: parsed.error };
      update = parsed.update;
    }
    const applied = applyUpdate(loaded.memory, update, { ...ctx, source: job.threadId, now: Date.now() });
    if (!applied.changed) return { status: "unchanged" };
    const saved = await ctx.storage.save(job.userId, job.agentName, applied.memory, loaded.revision);
    if (saved.ok) {
      return { status: "saved", revision: saved.revision, added: applied.added, removed: applied.removed, summaries: applied.summaries };
    }
    await backoff(attempt);
  }
  return { status: "conflict", attempts: ctx.maxAttempts };
}

/** Result of {@link applyUpdate}. */
export interface AppliedUpdate {
  memory: MemoryData;
  changed: boolean;
  added: Fact[];
  removed: string[];
  /** Keys of the summaries replaced. */
  summaries: string[];
}

/**
 * Applies an update to a copy of `memory`: summaries with `shouldUpdate` and non-empty text are
 * replaced; `factsToRemove` are deleted; new facts at or above the threshold, not duplicates of
 * a kept fact (trimmed, case-folded), become facts with a fresh id; then {@link sanitizeMemory}.
 */
export function applyUpdate(memory: MemoryData, update: MemoryUpdate, options: SaveRules & { source: string; now: number }): AppliedUpdate {
  const next = copyMemory(memory);
  const at = nowIso(options.now);
  const summaries: string[] = [];
  const setSection = (target: MemorySection, proposal: { summary: string; shouldUpdate: boolean } | undefined, key: string) => {
    if (!proposal?.shouldUpdate) return;
    const text = cleanText(proposal.summary, true);
    if (text === "" || text === target.summary) return;
    target.summary = text;
    target.updatedAt = at;
    summaries.push(key);
  };
  for (const k of USER_SECTIONS) setSection(next.user[k], update.user[k], `user.${k}`);
  for (const k of HISTORY_SECTIONS) setSection(next.history[k], update.history[k], `history.${k}`);

  const removeIds = new Set(update.factsToRemove);
  const removed = next.facts.filter((f) => removeIds.has(f.id)).map((f) => f.id);
  next.facts = next.facts.filter((f) => !removeIds.has(f.id));

  const added: Fact[] = [];
  for (const proposal of update.newFacts) {
    if (proposal.confidence < options.confidenceThreshold) continue;
    const fact = makeFact(proposal, next.facts, options.source, at);
    if (fact) {
      next.facts.push(fact);
      added.push(fact);
    }
  }
  const sanitized = sanitizeMemory(next, options);
  const keptIds = new Set(sanitized.facts.map((f) => f.id));
  const reallyAdded = added.filter((f) => keptIds.has(f.id));
  return {
    memory: sanitized,
    changed: summaries.length > 0 || removed.length > 0 || reallyAdded.length > 0 || sanitized.facts.length !== memory.facts.length,
    added: reallyAdded,
    removed,
    summaries,
  };
}

/** A new fact from a proposal, or `undefined` when it is empty after cleaning, about an upload,
 * or a duplicate of one of `existing`. */
export function makeFact(
  proposal: Omit<NewFact, "category"> & { category: string },
  existing: readonly Fact[],
  source: string,
  at: string,
): Fact | undefined {
  const content = cleanText(proposal.content, false);
  if (content === "") return undefined;
  const key = factKey(content);
  if (existing.some((f) => factKey(f.content) === key)) return undefined;
  const fact: Fact = {
    id: newFactId(existing),
    content,
    category: proposal.category,
    confidence: proposal.confidence,
    createdAt: at,
    source,
  };
  const sourceError = proposal.sourceError ? cleanText(proposal.sourceError, true) : "";
  if (sourceError !== "" && proposal.category === "correction") fact.sourceError = sourceError;
  return fact;
}

/**
 * The rules every saved document obeys, applied to a copy: secrets redacted in summaries,
 * facts and correction notes; upload mentions stripped from summaries and facts about uploads
 * dropped; empty and duplicate facts dropped (the first kept); the `maxFacts` facts of highest
 * confidence kept (newer first on ties), in their original order.
 */
export function sanitizeMemory(memory: MemoryData, rules: Pick<SaveRules, "maxFacts">): MemoryData {
  const next = copyMemory(memory);
  for (const k of USER_SECTIONS) next.user[k].summary = cleanText(next.user[k].summary, true);
  for (const k of HISTORY_SECTIONS) next.history[k].summary = cleanText(next.history[k].summary, true);
  const seen = new Set<string>();
  const facts: Fact[] = [];
  for (const f of next.facts) {
    const content = cleanText(f.content, false);
    const key = factKey(content);
    if (content === "" || seen.has(key)) continue;
    seen.add(key);
    const fact: Fact = { ...f, content };
    if (fact.sourceError !== undefined) {
      const note = cleanText(fact.sourceError, true);
      if (note === "") delete fact.sourceError;
      else fact.sourceError = note;
    }
    facts.push(fact);
  }
  next.facts = trimFacts(facts, rules.maxFacts);
  return next;
}

/** The `max` facts of highest confidence (newer first on ties), in their original order. */
export function trimFacts(facts: readonly Fact[], max: number): Fact[] {
  if (facts.length <= max) return [...facts];
  const ranked = facts
    .map((f, i) => ({ f, i }))
    .sort((a, b) => b.f.confidence - a.f.confidence || b.f.createdAt.localeCompare(a.f.createdAt) || b.i - a.i);
  const keep = new Set(ranked.slice(0, Math.max(0, max)).map((r) => r.i));
  return facts.filter((_, i) => keep.has(i));
}

/** Redacts secrets, then removes upload mentions: sentence by sentence for summaries and notes
 * (`partial`), the whole text for a fact that talks about an upload. */
function cleanText(text: string, partial: boolean): string {
  const redacted = redactSecrets(text).trim();
  if (partial) return stripUploadMentions(redacted);
  return mentionsUpload(redacted) ? "" : redacted;
}

/** `fact_` + 8 random hex digits, unique among `existing`. */
export function newFactId(existing: readonly Fact[]): string {
  const bytes = new Uint8Array(4);
  for (;;) {
    globalThis.crypto.getRandomValues(bytes);
    const id = `fact_${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
    if (!existing.some((f) => f.id === id)) return id;
  }
}

/** Jittered exponential pause between compare-and-swap attempts (≤ ~200 ms). */
function backoff(attempt: number): Promise<void> {
  const ms = Math.min(200, 5 * 2 ** attempt) * Math.random();
  return new Promise((resolve) => setTimeout(resolve, ms));
}
