/**
 * The memory updater: one model call per chunk of a captured conversation, then a
 * compare-and-swap save that is re-applied on a fresh copy when another writer got there first.
 * A chunk whose reply is unusable or whose call fails or times out is retried with backoff (a
 * timed-out chunk is split in two first); what still fails is returned as remaining work for the
 * caller to keep. Everything that is saved is sanitised first: secrets redacted, upload mentions
 * stripped, meaningless, duplicate and low-confidence facts dropped, at most `maxFacts` kept.
 * @module
 */
import type { ChatModel, Message } from "../../models/types.js";
import { type CapturedConversation, detectForget, detectSignals } from "./capture.js";
import type { UpdateJob } from "./pending.js";
import { type MemoryUpdate, type NewFact, parseMemoryUpdate } from "./parse.js";
import { type UpdatePromptOptions, type UpdateRequest, buildUpdateRequest, chunkConversation } from "./prompt.js";
import { redactSecrets } from "./redact.js";
import { restatesRequest } from "./requests.js";
import { type Fact, HISTORY_SECTIONS, type MemoryData, type MemorySection, USER_SECTIONS, nowIso } from "./schema.js";
import { type MemoryStorage, copyMemory } from "./storage.js";
import { factKey, mentionsUpload, sentencesOf, stripUploadMentions } from "./text.js";
import { EXAMPLE_FACT_CONTENTS, resolveFactId } from "./update-schema.js";
import { otherOnesName } from "./names.js";
import { thirdPerson, withOwner } from "./person.js";
import { lastConfirmed } from "./slots.js";
import { supersededFacts, userSpeaksOfChange } from "./supersede.js";
import {
  addsDetail,
  contentWords,
  isFramingWord,
  isMeaningless,
  isQuestion,
  isSmallTalk,
  sameContent,
  sameMeaning,
  sameWord,
  supportShare,
  unsaidWord,
} from "./words.js";

/** Rules applied to every document before it is saved. */
export interface SaveRules {
  /** New facts below this confidence are dropped (manual facts are exempt). */
  confidenceThreshold: number;
  /** At most this many facts are kept, highest confidence first. */
  maxFacts: number;
}

/** Rules applied to a model's update on top of {@link SaveRules}. */
export interface UpdateRules extends SaveRules {
  /** Removing more than this share (0–1) of the facts in one update is ignored unless the user
   * asked for a correction or to forget something. */
  maxRemovalShare: number;
  /** A new fact needs at least this share (0–1) of its content words in what the user said or
   * confirmed, no content word that only the assistant said, and no word nobody said (framing
   * words exempt). `0` turns these checks off. */
  minUserSupport: number;
}

export type { UpdateJob } from "./pending.js";

/** What one update did. */
export type UpdateOutcome =
  | { status: "saved"; revision: string; added: Fact[]; removed: string[]; summaries: string[]; notes?: string[] }
  /** The model proposed nothing new (or nothing that passed the rules, see `notes`). */
  | { status: "unchanged"; notes?: string[] }
  /** A reply was not a usable update; memory was left as it was (reported per attempt). */
  | { status: "rejected"; reason: string }
  /** Extraction kept failing (unusable replies, model errors, timeouts): `remaining` is the work
   * left, which the caller keeps as pending work and retries later. Chunks before it were saved. */
  | { status: "pending"; reason: string; attempts: number; remaining: UpdateJob }
  /** Memory was cleared after the conversation was captured; nothing was saved. */
  | { status: "cleared" }
  /** Every compare-and-swap attempt lost to another writer; `remaining` is the work left. */
  | { status: "conflict"; attempts: number; remaining?: UpdateJob }
  /** {@link UpdaterContext.signal} fired (a turn needs the model): `remaining` is the work left,
   * not counted as a failure. Chunks before it were saved. */
  | { status: "preempted"; remaining: UpdateJob };

/** Everything {@link runMemoryUpdate} needs. */
export interface UpdaterContext extends UpdateRules {
  model: ChatModel;
  storage: MemoryStorage;
  prompt: UpdatePromptOptions;
  /** Compare-and-swap attempts before giving up. */
  maxAttempts: number;
  /** Extraction attempts per chunk (first try included) before the work is handed back as
   * pending. Default: 3. */
  extractionAttempts?: number;
  /** First pause between extraction attempts, in ms; doubled each time, at most 60 s. Default: 0. */
  retryBackoffMs?: number;
  /** Abort the model call after this long, in ms: a number, or a function of the request. */
  modelTimeoutMs: number | ((request: UpdateRequest) => number);
  /** Latest clear known in this process for the job's memory (ms), beyond what storage says. */
  clearedAt?: (job: UpdateJob) => number | undefined;
  /** Reports warnings: storage repairs, dropped parts of an update, failed attempts. */
  onWarning: (message: string) => void;
  /** Stops the update between steps and aborts its model call: the outcome is `preempted`.
   * Default: none. */
  signal?: AbortSignal;
  /** The time new and confirmed facts are stamped with (ms). Default: `Date.now`. */
  now?: () => number;
}

/** Resolves after `ms`, or as soon as `signal` fires (the loop then sees it). */
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });

/**
 * Runs one job: the conversation is split into chunks ({@link chunkConversation}); for each,
 * load, ask the model, apply, save by compare-and-swap (reloading and re-applying the same
 * answer after a conflict). A failed chunk is retried (see {@link UpdaterContext}); when it
 * keeps failing the outcome is `pending` with the work left. Storage errors reject.
 */
export async function runMemoryUpdate(job: UpdateJob, ctx: UpdaterContext): Promise<UpdateOutcome> {
  const maxTries = Math.max(1, ctx.extractionAttempts ?? 3);
  const work: { messages: Message[]; failures: number }[] = chunkConversation(job.conversation.messages, ctx.prompt).map((messages) => ({
    messages,
    failures: job.failures ?? 0,
  }));
  const total = { added: [] as Fact[], removed: [] as string[], summaries: [] as string[], notes: [] as string[], revision: "" };
  let lastError = "";
  const remainingJob = (): UpdateJob => ({
    ...job,
    conversation: { ...job.conversation, messages: work.flatMap((w) => w.messages) },
    failures: work[0]?.failures ?? 0,
  });

  while (work.length > 0) {
    if (ctx.signal?.aborted) return { status: "preempted", remaining: remainingJob() };
    const chunk = work[0] as { messages: Message[]; failures: number };
    if (!chunk.messages.some((m) => m.role === "user")) {
      work.shift(); // nothing the user said: no fact could be supported by it
      continue;
    }
    if (chunk.failures >= maxTries) {
      return { status: "pending", reason: lastError, attempts: chunk.failures, remaining: remainingJob() };
    }
    const isLast = work.length === 1;
    const conversation: CapturedConversation = {
      messages: chunk.messages,
      ...detectSignals(chunk.messages),
      forget: detectForget(chunk.messages),
    };
    if (isLast) {
      conversation.correction ||= job.conversation.correction;
      conversation.reinforcement = !conversation.correction && (conversation.reinforcement || job.conversation.reinforcement);
      conversation.forget ||= job.conversation.forget ?? false;
    }

    const loaded = await ctx.storage.load(job.userId, job.agentName);
    if (loaded.warning) ctx.onWarning(loaded.warning);
    if (isCleared(job, loaded.clearedAt, ctx)) return { status: "cleared" };
    const { request, shortIds } = buildUpdateRequest(loaded.memory, conversation, ctx.prompt);
    const timeoutMs = typeof ctx.modelTimeoutMs === "function" ? ctx.modelTimeoutMs(request) : ctx.modelTimeoutMs;
    const signal = AbortSignal.timeout(timeoutMs);
    request.signal = ctx.signal ? AbortSignal.any([signal, ctx.signal]) : signal;
    let update: MemoryUpdate | undefined;
    try {
      const reply = await ctx.model.invoke(request);
      const parsed = parseMemoryUpdate(reply.message.content);
      if (parsed.ok) {
        update = parsed.update;
        for (const issue of parsed.issues) total.notes.push(`part of the update dropped: ${issue}`);
      } else lastError = parsed.error;
    } catch (e) {
      if (ctx.signal?.aborted) return { status: "preempted", remaining: remainingJob() };
      lastError = signal.aborted
        ? `the model did not answer within ${Math.round(timeoutMs / 1000)} s`
        : `the model call failed: ${e instanceof Error ? e.message : String(e)}`;
      if (signal.aborted && chunk.messages.length > 1) {
        // Too much for this model in one go: try the halves.
        const half = splitPoint(chunk.messages);
        work.splice(
          0,
          1,
          { messages: chunk.messages.slice(0, half), failures: chunk.failures + 1 },
          { messages: chunk.messages.slice(half), failures: chunk.failures + 1 },
        );
        ctx.onWarning(`extraction for thread ${JSON.stringify(job.threadId)}: ${lastError}; retrying in two halves`);
        await sleep(backoffMs(ctx, chunk.failures + 1), ctx.signal);
        continue;
      }
    }
    if (!update) {
      chunk.failures++;
      ctx.onWarning(
        `extraction for thread ${JSON.stringify(job.threadId)} failed (attempt ${chunk.failures} of ${maxTries}): ${lastError}`,
      );
      if (chunk.failures < maxTries) await sleep(backoffMs(ctx, chunk.failures), ctx.signal);
      continue;
    }

    const thread = { ...conversation, messages: job.conversation.messages };
    if (copiesExample(update, thread, ctx.minUserSupport) && chunk.failures + 1 < maxTries && userTurns(chunk.messages) >= 2) {
      // The model answered with the prompt's example instead of reading the conversation (a
      // small model does on long chatter): the halves, each shorter, are asked again.
      const half = splitPoint(chunk.messages);
      work.splice(
        0,
        1,
        { messages: chunk.messages.slice(0, half), failures: chunk.failures + 1 },
        { messages: chunk.messages.slice(half), failures: chunk.failures + 1 },
      );
      ctx.onWarning(
        `extraction for thread ${JSON.stringify(job.threadId)}: the model copied the prompt's example facts; retrying in two halves`,
      );
      continue;
    }
    const saved = await saveUpdate(job, ctx, update, conversation, shortIds, loaded);
    if (saved.status === "cleared") return saved;
    if (saved.status === "conflict") return { status: "conflict", attempts: saved.attempts, remaining: remainingJob() };
    work.shift();
    total.notes.push(...saved.notes);
    if (saved.status === "saved") {
      total.added.push(...saved.added);
      total.removed.push(...saved.removed);
      total.summaries.push(...saved.summaries.filter((k) => !total.summaries.includes(k)));
      total.revision = saved.revision;
    }
  }
  const notes = total.notes.length > 0 ? { notes: total.notes } : {};
  if (total.revision === "") return { status: "unchanged", ...notes };
  return { status: "saved", revision: total.revision, added: total.added, removed: total.removed, summaries: total.summaries, ...notes };
}

const EXAMPLE_KEYS = new Set(EXAMPLE_FACT_CONTENTS.map(factKey));

/** Whether `update` proposes facts and every one of them is a fact of the prompt's example that
 * the user did not say (see {@link userRefusal}): the model copied the example. */
export function copiesExample(update: MemoryUpdate, conversation: CapturedConversation, minUserSupport: number): boolean {
  if (update.newFacts.length === 0) return false;
  const support = userSupportWords(conversation);
  return update.newFacts.every(
    (f) => EXAMPLE_KEYS.has(factKey(f.content)) && userRefusal(f.content, support, new Set(), Math.max(minUserSupport, 0.5)) !== undefined,
  );
}

/** Why `content` is refused as a copy of the prompt's example: it is one of the example facts
 * and carries a word the user did not say themselves (the assistant's words the user seemed to
 * confirm with an "ok" do not count here), else `undefined`. */
export function exampleCopy(content: string, userTexts: readonly string[]): string | undefined {
  if (!EXAMPLE_KEYS.has(factKey(content))) return undefined;
  const own = new Set(userTexts.flatMap((t) => contentWords(redactSecrets(t))));
  const unsaid = unsaidWord(content, own);
  return unsaid === undefined ? undefined : `it is the prompt's example, and the user never said ${JSON.stringify(unsaid)}`;
}

const userTurns = (messages: readonly Message[]) => messages.filter((m) => m.role === "user").length;

/** Where to halve a chunk: at the user message nearest the middle (so each half starts with
 * what the user said), else in the middle. */
function splitPoint(messages: readonly Message[]): number {
  const mid = Math.ceil(messages.length / 2);
  let best = -1;
  messages.forEach((m, i) => {
    if (i > 0 && m.role === "user" && (best < 0 || Math.abs(i - mid) < Math.abs(best - mid))) best = i;
  });
  return best > 0 ? best : mid;
}

function backoffMs(ctx: UpdaterContext, failures: number): number {
  return Math.min(60_000, (ctx.retryBackoffMs ?? 0) * 2 ** Math.max(0, failures - 1));
}

function isCleared(job: UpdateJob, storedClear: number | undefined, ctx: UpdaterContext): boolean {
  const cleared = Math.max(storedClear ?? -Infinity, ctx.clearedAt?.(job) ?? -Infinity);
  return cleared >= job.capturedAt;
}

/** Applies one parsed update and saves it by compare-and-swap, reloading after a conflict. */
async function saveUpdate(
  job: UpdateJob,
  ctx: UpdaterContext,
  update: MemoryUpdate,
  conversation: CapturedConversation,
  shortIds: ReadonlyMap<string, string>,
  first: { memory: MemoryData; revision: string; clearedAt?: number },
): Promise<
  | { status: "saved"; revision: string; added: Fact[]; removed: string[]; summaries: string[]; notes: string[] }
  | { status: "unchanged"; notes: string[] }
  | { status: "cleared" }
  | { status: "conflict"; attempts: number }
> {
  let loaded = first;
  // A clear made in this process while the model was thinking.
  if (isCleared(job, first.clearedAt, ctx)) return { status: "cleared" };
  for (let attempt = 1; attempt <= ctx.maxAttempts; attempt++) {
    if (attempt > 1) {
      const again = await ctx.storage.load(job.userId, job.agentName);
      if (again.warning) ctx.onWarning(again.warning);
      if (isCleared(job, again.clearedAt, ctx)) return { status: "cleared" };
      loaded = again;
    }
    const applied = applyUpdate(loaded.memory, update, {
      ...ctx,
      source: job.threadId,
      now: (ctx.now ?? Date.now)(),
      conversation,
      threadMessages: job.conversation.messages,
      shortIds,
    });
    if (!applied.changed) return { status: "unchanged", notes: applied.notes };
    const saved = await ctx.storage.save(job.userId, job.agentName, applied.memory, loaded.revision);
    if (saved.ok) {
      return {
        status: "saved",
        revision: saved.revision,
        added: applied.added,
        removed: applied.removed,
        summaries: applied.summaries,
        notes: applied.notes,
      };
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
  /** Ids of the facts removed, those replaced by a new fact included. */
  removed: string[];
  /** Facts replaced by a new one: the old id and the new fact's. */
  replaced: { id: string; by: string }[];
  /** Ids of existing facts the user stated again (their `confirmedAt` is now). */
  confirmed: string[];
  /** Keys of the summaries replaced. */
  summaries: string[];
  /** Parts of the update that were refused, and why. */
  notes: string[];
}

/** What {@link applyUpdate} needs besides the rules. */
export interface ApplyContext {
  /** Stamped on new facts as their `source` (the thread id). */
  source: string;
  now: number;
  /** The conversation the update came from: new facts must be supported by what the user said
   * or confirmed in it, and its correction/forget signals allow larger removals. Without it the
   * support check is skipped. */
  conversation?: CapturedConversation;
  /** Every message of the captured thread when `conversation` is one part of it (extraction
   * asked in parts, see `runMemoryUpdate`): a fact read from one part is the user's when they
   * said its words in any part. Default: `conversation.messages`. */
  threadMessages?: readonly Message[];
  /** Stored id → the short id the model was shown (ids in `factsToRemove` are resolved through
   * it). Default: ids are matched as stored. */
  shortIds?: ReadonlyMap<string, string>;
}

const AFFIRMATION =
  /^\s*(?:yes|yeah|yep|yup|correct|exactly|right|true|indeed|that'?s (?:right|correct|true)|sure|ok(?:ay)?|是的?|对|没错|正确)\b/iu;

/** The content words the user said, plus those of assistant messages the user then confirmed
 * ("yes, exactly"). */
export function userSupportWords(conversation: CapturedConversation): Set<string> {
  const words = new Set<string>();
  const msgs = conversation.messages;
  msgs.forEach((m, i) => {
    const next = msgs[i + 1];
    const confirmed = m.role === "assistant" && next?.role === "user" && AFFIRMATION.test(next.content);
    if (m.role === "user" || confirmed) for (const w of contentWords(redactSecrets(m.content))) words.add(w);
  });
  return words;
}

/** The content words of assistant messages the user did not confirm, less every word the user
 * said or confirmed (see {@link userSupportWords}): what only the assistant brought up. */
export function assistantOnlyWords(conversation: CapturedConversation, support: ReadonlySet<string>): Set<string> {
  const words = new Set<string>();
  const msgs = conversation.messages;
  msgs.forEach((m, i) => {
    const next = msgs[i + 1];
    const confirmed = next?.role === "user" && AFFIRMATION.test(next.content);
    if (m.role !== "assistant" || confirmed) return;
    for (const w of contentWords(redactSecrets(m.content))) if (supportShare(w, support) === 0) words.add(w);
  });
  return words;
}

/** The first content word of `content` that only the assistant said (in `assistantOnly`, not in
 * `support`), if any: such a fact carries the assistant's claim ("Suggests pandas for Parquet
 * files" after the user asked which library to use). */
export function assistantOnlyWord(content: string, support: ReadonlySet<string>, assistantOnly: ReadonlySet<string>): string | undefined {
  if (assistantOnly.size === 0) return undefined;
  return contentWords(content).find((w) => supportShare(w, support) === 0 && supportShare(w, assistantOnly) > 0);
}

/** Why a proposed fact is not the user's, or `undefined` when it is: too few of its words are
 * the user's ({@link UpdateRules.minUserSupport}), it carries a word only the assistant said, or
 * a word nobody said (a value the model made up or copied from an example; framing words such as
 * "prefers" or "editor" are exempt, see `unsaidWord`). */
export function userRefusal(
  content: string,
  support: ReadonlySet<string>,
  assistantOnly: ReadonlySet<string>,
  minUserSupport: number,
): string | undefined {
  if (supportShare(content, support) < minUserSupport) return "the user did not say or confirm it";
  const claimed = assistantOnlyWord(content, support, assistantOnly);
  if (claimed !== undefined) return `${JSON.stringify(claimed)} is only what the assistant said`;
  const unsaid = unsaidWord(content, support);
  if (unsaid !== undefined) return `${JSON.stringify(unsaid)} is not something the user said or confirmed`;
  return undefined;
}

/** The fact of `existing` that says the same as `content` (equal duplicate keys, the same
 * content words, or the same meaning in other words: see `sameMeaning`), if any. */
export function findDuplicate(content: string, existing: readonly Fact[]): Fact | undefined {
  const key = factKey(content);
  return (
    existing.find((f) => factKey(f.content) === key) ??
    existing.find((f) => sameContent(f.content, content)) ??
    existing.find((f) => sameMeaning(f.content, content))
  );
}

/**
 * Applies an update to a copy of `memory`:
 * - summaries with `shouldUpdate` and non-empty, meaningful text are replaced;
 * - new facts at or above the threshold, in the third person (see `person.ts`), become facts
 *   with a fresh id, unless they are empty or meaningless after redaction, are questions (what
 *   the user asked is not a fact about them), restate a request the user made
 *   (`restatesRequest`) or small talk (thanks, farewells), say the same as an
 *   existing fact (which keeps its id, and takes the new words when they say more of what the
 *   user said), or are not the user's: too little of them is what the user said or confirmed,
 *   or they carry a word only the assistant said or a word nobody said
 *   ({@link UpdateRules.minUserSupport}, `userRefusal`), or they give the user a name the user
 *   gave someone or something else (`otherOnesName`) — of a proposal of several sentences, the
 *   leading ones that are the user's on their own are kept ({@link userLead});
 * - `factsToRemove` must name existing facts (short or stored ids); a removal is refused when
 *   the same update adds the same content again; all removals are ignored when they exceed
 *   {@link UpdateRules.maxRemovalShare} of the facts (more than one), or when the update adds no
 *   fact to replace them — unless the user corrected the assistant or asked to forget;
 * - then {@link sanitizeMemory}.
 */
export function applyUpdate(memory: MemoryData, update: MemoryUpdate, options: UpdateRules & ApplyContext): AppliedUpdate {
  const next = copyMemory(memory);
  const at = nowIso(options.now);
  const summaries: string[] = [];
  const notes: string[] = [];
  const setSection = (target: MemorySection, proposal: { summary: string; shouldUpdate: boolean } | undefined, key: string) => {
    if (!proposal?.shouldUpdate) return;
    const text = cleanText(proposal.summary, true);
    if (text === "" || text === target.summary) return;
    if (isMeaningless(text)) {
      notes.push(`summary ${key} refused: nothing left after redaction`);
      return;
    }
    target.summary = text;
    target.updatedAt = at;
    summaries.push(key);
  };
  for (const k of USER_SECTIONS) setSection(next.user[k], update.user[k], `user.${k}`);
  for (const k of HISTORY_SECTIONS) setSection(next.history[k], update.history[k], `history.${k}`);

  // Removals: existing ids only.
  const removeIds = new Set<string>();
  for (const named of update.factsToRemove) {
    const id = options.shortIds ? resolveFactId(named, options.shortIds) : next.facts.find((f) => f.id === named)?.id;
    if (id !== undefined && next.facts.some((f) => f.id === id)) removeIds.add(id);
    else notes.push(`removal of ${JSON.stringify(named)} ignored: no such fact`);
  }

  // New facts, checked against every existing fact (those proposed for removal included, so a
  // remove-and-re-add keeps the original).
  // What the user said here, and what they said before (the facts already kept, all theirs): a
  // correction names the fact it replaces ("Uses pnpm, not npm").
  const whole = options.conversation && {
    ...options.conversation,
    messages: [...(options.threadMessages ?? options.conversation.messages)],
  };
  const said = whole ? userSupportWords(whole) : undefined;
  const support = said ? new Set(said) : undefined;
  for (const f of support ? memory.facts : []) for (const w of contentWords(f.content)) support?.add(w);
  const change = options.conversation ? userSpeaksOfChange(options.conversation.messages) : false;
  const replacedIds = new Set<string>();
  const replaced: { id: string; by: string }[] = [];
  const confirmed = new Set<string>();
  const confirm = (fact: Fact) => {
    if (lastConfirmed(fact) >= at) return;
    fact.confirmedAt = at;
    confirmed.add(fact.id);
  };
  const assistantOnly = whole && support ? assistantOnlyWords(whole, support) : undefined;
  const userTexts = whole?.messages.filter((m) => m.role === "user").map((m) => m.content) ?? [];
  const added: Fact[] = [];
  const detailed = new Set<string>();
  const asFact = (text: string) => withOwner(cleanFact(text), userTexts);
  const notTheUsers = (content: string) =>
    (support && assistantOnly && options.minUserSupport > 0
      ? userRefusal(content, support, assistantOnly, options.minUserSupport)
      : undefined) ??
    otherOnesName(content, userTexts) ??
    exampleCopy(content, userTexts);
  const keptAlone = (raw: string, content: string) =>
    content !== "" &&
    !isMeaningless(content) &&
    !isQuestion(raw) &&
    !isSmallTalk(raw) &&
    !restatesRequest(content, userTexts) &&
    notTheUsers(content) === undefined;
  for (const proposal of update.newFacts) {
    if (proposal.confidence < options.confidenceThreshold) continue;
    let content = asFact(proposal.content);
    if (content === "") continue;
    if (isMeaningless(content)) {
      notes.push(`fact ${JSON.stringify(content)} refused: nothing left after redaction`);
      continue;
    }
    if (isQuestion(proposal.content)) {
      notes.push(`fact ${JSON.stringify(content)} refused: a question is not a fact`);
      continue;
    }
    if (isSmallTalk(proposal.content)) {
      notes.push(`fact ${JSON.stringify(content)} refused: small talk is not a fact`);
      continue;
    }
    if (restatesRequest(content, userTexts)) {
      notes.push(`fact ${JSON.stringify(content)} refused: it restates what the user asked for, not a fact about them`);
      continue;
    }
    let refusal = notTheUsers(content);
    const lead = refusal === undefined ? undefined : userLead(proposal.content, asFact, keptAlone);
    if (lead !== undefined) {
      notes.push(`fact ${JSON.stringify(content)} cut to ${JSON.stringify(lead)}: the rest is not what the user said`);
      content = lead;
      refusal = undefined;
    }
    const duplicate = findDuplicate(content, [...next.facts, ...added]);
    if (duplicate) {
      if (removeIds.delete(duplicate.id)) notes.push(`removal of ${duplicate.id} refused: the update adds the same fact again`);
      // The same fact with more of what the user said: the stored one (same id) takes the words.
      const before = duplicate.content;
      if (refusal === undefined && addsDetail(content, before)) {
        duplicate.content = content;
        detailed.add(duplicate.id);
      }
      // Said again in this conversation (not only copied from the memory shown), or given words
      // the user said here ("Switched editors from Sublime Text to Zed" over "Favourite editor
      // is Sublime Text"): confirmed now — the block dates a fact by its last confirmation.
      if (
        refusal === undefined &&
        said &&
        (restates(content, said, options.minUserSupport) || gainsSaidWords(before, duplicate.content, said))
      )
        confirm(duplicate);
      continue;
    }
    if (refusal !== undefined) {
      notes.push(`fact ${JSON.stringify(content)} refused: ${refusal}`);
      continue;
    }
    const fact = makeFact({ ...proposal, content }, [...next.facts, ...added], options.source, at);
    if (!fact) continue;
    const candidates = [...next.facts.filter((f) => !replacedIds.has(f.id)), ...added];
    const superseded = supersededFacts(content, proposal.replaces, candidates, {
      change,
      ...(options.shortIds && { shortIds: options.shortIds }),
    });
    notes.push(...superseded.notes);
    for (const id of superseded.ids) {
      const earlier = added.findIndex((f) => f.id === id);
      if (earlier >= 0) {
        // Two values of one slot in one update: the later one stands.
        added.splice(earlier, 1);
        continue;
      }
      replacedIds.add(id);
      replaced.push({ id, by: fact.id });
      notes.push(`fact ${id} replaced by ${fact.id} ${JSON.stringify(content)}`);
    }
    const olds = replaced.filter((r) => r.by === fact.id).map((r) => r.id);
    if (olds.length > 0) fact.replaced = olds;
    added.push(fact);
  }
  // Facts the user restated in their own words without the model listing them again.
  for (const f of said ? next.facts : []) {
    if (!replacedIds.has(f.id) && said && restates(f.content, said, Math.max(0.5, options.minUserSupport))) confirm(f);
  }

  const explicit = !!options.conversation && (options.conversation.correction || !!options.conversation.forget);
  if (removeIds.size > 0 && !explicit && options.conversation) {
    const share = removeIds.size / Math.max(1, next.facts.length);
    if (removeIds.size > 1 && share > options.maxRemovalShare) {
      notes.push(
        `removal of ${removeIds.size} of ${next.facts.length} facts ignored: more than ${Math.round(options.maxRemovalShare * 100)}% at once without a request to forget or a correction`,
      );
      removeIds.clear();
    } else if (added.length === 0) {
      notes.push(`removal of ${[...removeIds].join(", ")} ignored: nothing replaces it and the user did not ask to forget or correct`);
      removeIds.clear();
    }
  }
  for (const id of replacedIds) removeIds.add(id);
  const removed = next.facts.filter((f) => removeIds.has(f.id)).map((f) => f.id);
  next.facts = [...next.facts.filter((f) => !removeIds.has(f.id)), ...added];

  const sanitized = sanitizeMemory(next, options);
  const keptIds = new Set(sanitized.facts.map((f) => f.id));
  const reallyAdded = added.filter((f) => keptIds.has(f.id));
  return {
    memory: sanitized,
    changed:
      summaries.length > 0 ||
      removed.length > 0 ||
      reallyAdded.length > 0 ||
      detailed.size > 0 ||
      confirmed.size > 0 ||
      sanitized.facts.length !== memory.facts.length,
    added: reallyAdded,
    removed,
    replaced: replaced.filter((r) => keptIds.has(r.by)),
    confirmed: [...confirmed].filter((id) => keptIds.has(id) && !removeIds.has(id)),
    summaries,
    notes,
  };
}

/** True when the user said `fact` here: every value word of it (see `unsaidWord`) and at least
 * `minShare` of its content words are in `said` (the user's words of the conversation). */
function restates(fact: string, said: ReadonlySet<string>, minShare: number): boolean {
  return unsaidWord(fact, said) === undefined && supportShare(fact, said) >= minShare;
}

/** True when `after` has content words that `before` lacks, framing words aside, and the user
 * said each of them in this conversation (`said`). */
function gainsSaidWords(before: string, after: string, said: ReadonlySet<string>): boolean {
  const old = contentWords(before);
  const gained = contentWords(after).filter((w) => !isFramingWord(w) && !old.some((v) => sameWord(w, v)));
  return gained.length > 0 && gained.every((w) => supportShare(w, said) === 1);
}

/** A new fact from a proposal, or `undefined` when it is empty or meaningless after cleaning,
 * about an upload, or a duplicate of one of `existing` (see {@link findDuplicate}). */
export function makeFact(
  proposal: Omit<NewFact, "category"> & { category: string },
  existing: readonly Fact[],
  source: string,
  at: string,
): Fact | undefined {
  const content = cleanFact(proposal.content);
  if (content === "" || isMeaningless(content)) return undefined;
  if (findDuplicate(content, existing)) return undefined;
  const fact: Fact = {
    id: newFactId(existing),
    content,
    category: cleanCategory(proposal.category),
    confidence: proposal.confidence,
    createdAt: at,
    source,
  };
  const sourceError = proposal.sourceError ? cleanText(proposal.sourceError, true) : "";
  if (sourceError !== "" && proposal.category === "correction") fact.sourceError = sourceError;
  return fact;
}

/** A category as stored: secrets redacted, trimmed; `"context"` when nothing is left. */
function cleanCategory(category: string): string {
  const c = redactSecrets(category).trim();
  return c === "" || isMeaningless(c) ? "context" : c;
}

/**
 * The rules every saved document obeys, applied to a copy: secrets redacted in summaries,
 * facts, categories and correction notes; upload mentions stripped from summaries and facts
 * about uploads dropped; empty, meaningless (only redaction placeholders and filler words, see
 * `isMeaningless`) and duplicate facts dropped (the first kept); the `maxFacts` facts of highest
 * confidence kept (newer first on ties), in their original order.
 */
export function sanitizeMemory(memory: MemoryData, rules: Pick<SaveRules, "maxFacts">): MemoryData {
  const next = copyMemory(memory);
  for (const k of USER_SECTIONS) next.user[k].summary = cleanText(next.user[k].summary, true);
  for (const k of HISTORY_SECTIONS) next.history[k].summary = cleanText(next.history[k].summary, true);
  const seen = new Set<string>();
  const facts: Fact[] = [];
  for (const f of next.facts) {
    const content = cleanFact(f.content);
    const key = factKey(content);
    if (content === "" || seen.has(key) || isMeaningless(content)) continue;
    seen.add(key);
    const fact: Fact = { ...f, content, category: cleanCategory(f.category) };
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

/** The leading sentences of a proposed fact (`raw`) that make a fact of the user's on their own
 * (`kept`), as `asFact` writes them, the most of them that do; `undefined` for a proposal of one
 * sentence or when not even its first is kept. A small model runs the user's statement on into
 * words of the reply ("Allergic to shellfish. Shellfish are a common cause of …"): the
 * statement is kept, not lost with the rest. */
export function userLead(
  raw: string,
  asFact: (text: string) => string,
  kept: (raw: string, content: string) => boolean,
): string | undefined {
  const sentences = sentencesOf(raw.trim());
  for (let n = sentences.length - 1; n >= 1; n--) {
    const lead = sentences.slice(0, n).join("").trim();
    const content = asFact(lead);
    if (kept(lead, content)) return content;
  }
  return undefined;
}

/** A fact's text as stored: {@link cleanText} (whole), in the third person about the user (see
 * `person.ts`). */
function cleanFact(text: string): string {
  return thirdPerson(cleanText(text, false));
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
