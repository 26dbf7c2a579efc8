/**
 * `LongTermMemory`: DeerFlow-style facts memory (DESIGN §5.2) — capture after a run, debounced
 * extraction by a model, compare-and-swap storage, budgeted injection, and a facts API.
 * @module
 */
import type { Core } from "../../core/types.js";
import { loadCore } from "../../core/loader.js";
import { ConfigError, EngramError } from "../../errors.js";
import { estimateTokens } from "../../models/tokens.js";
import type { ChatModel, Message } from "../../models/types.js";
import { InMemoryStore } from "../../stores/memory.js";
import type { Store } from "../../stores/types.js";
import { captureConversation } from "./capture.js";
import { DAY_MS, type MemoryInjection, type RecallMode, memoryInjection } from "./inject.js";
import {
  type PendingEntry,
  type PendingWorkStore,
  InMemoryPendingWork,
  StorePendingWork,
  newPendingId,
  redactPendingEntry,
} from "./pending.js";
import { DEFAULT_UPDATE_PROMPT_OPTIONS, type UpdateRequest } from "./prompt.js";
import { UpdateQueue } from "./queue.js";
import { redactSecrets } from "./redact.js";
import { FACT_CATEGORIES, type Fact, type FactCategory, type MemoryData, nowIso } from "./schema.js";
import type { MemoryStorage } from "./storage.js";
import { StoreMemoryStorage } from "./store-storage.js";
import type { UserLine } from "./supersede.js";
import { type UpdateJob, type UpdateOutcome, findDuplicate, makeFact, runMemoryUpdate, sanitizeMemory } from "./updater.js";
import type { ExtractionMode } from "./update-schema.js";

export type { UserLine };

/** Options of {@link LongTermMemory}. */
export interface LongTermMemoryOptions {
  /** The model that extracts memory (the agent passes its own). Required. */
  model: ChatModel;
  /** Where memory lives. Default: a {@link StoreMemoryStorage} over a new `InMemoryStore`
   * (nothing survives the process; use `FileMemoryStorage` or a SQLite/Postgres store). */
  storage?: MemoryStorage;
  /** Delay between the latest capture of a conversation and its extraction, in ms: `0` or
   * 1,000–300,000. `0` extracts as soon as the worker is free (tests, scripts). Default: `30_000`. */
  debounceMs?: number;
  /** New facts the model is less sure of are dropped (0–1). Default: `0.7`. */
  confidenceThreshold?: number;
  /** Facts kept per memory, highest confidence first (≥ 1). Default: `100`. */
  maxFacts?: number;
  /** Token budget of the injected `<memory>` block, tags included. Default: `2000`. */
  maxInjectionTokens?: number;
  /** Tokens of that budget reserved for corrections, which are chosen first. Default: `500`. */
  correctionBudgetTokens?: number;
  /** Fact ranking: `"confidence"`, or `"relevance"` = confidence plus BM25 relevance to the
   * current request (computed in the core). Default: `"confidence"`. */
  recall?: RecallMode;
  /** Compare-and-swap attempts per save before giving up. Default: `10`. */
  maxSaveAttempts?: number;
  /** Token budget of the conversation in one extraction request; longer conversations are
   * extracted in chunks of this size, one request each. Default: `6000`, or `600` for a local
   * model (see `localModel`). */
  maxConversationTokens?: number;
  /** Abort an extraction call after this long, in ms. Default: `120_000`; for a local model
   * `60_000` plus 150 ms per estimated token of the request (a CPU model reads slowly). */
  modelTimeoutMs?: number;
  /** Output-token cap of an extraction request (`settings.maxOutputTokens`). Default: none, or
   * `512` for a local model. */
  maxOutputTokens?: number;
  /** Whether the extraction model runs locally (smaller chunks, longer timeouts, an output cap,
   * `"facts"` extraction). Default: detected from the model id (`llama…`, `ollama…`,
   * `localhost`, `127.0.0.1`). */
  localModel?: boolean;
  /** What an extraction asks for: `"full"` — new facts, removals and the six summaries; `"facts"`
   * — new facts and removals only (a shorter prompt and answer; summaries stay as they are).
   * Small local models given the full update tend to leave the facts empty. Default: `"facts"`
   * for a local model (see `localModel`), else `"full"`. */
  extraction?: ExtractionMode;
  /** When extraction runs. `"background"`: `debounceMs` after a capture, alongside the agent's
   * turns. `"idle"`: never while a turn runs or waits (see {@link LongTermMemory.beginTurn}; the
   * agent marks its runs) — a turn that starts aborts the extraction under way, whose work waits,
   * unfinished parts included, for the next idle time — and only after `debounceMs` without a
   * turn. A local model serves one call at a time, so extraction would hold up the user's turn.
   * Default: `"idle"` for a local model (see `localModel`), else `"background"`. */
  schedule?: ExtractionSchedule;
  /** Extraction attempts per chunk in one run (first try included) before the work is kept as
   * pending work (see `pendingWork`). Default: `3`. */
  extractionAttempts?: number;
  /** Pause before the first retry of a failed extraction, in ms, doubled for each further retry
   * (at most 60 s). Default: `2000`. */
  retryBackoffMs?: number;
  /** An update that removes more than this share (0–1) of the facts — and more than one — has
   * its removals ignored, unless the user corrected the assistant or asked to forget.
   * Default: `0.5`. */
  maxRemovalShare?: number;
  /** A new fact needs at least this share (0–1) of its content words in what the user said or
   * confirmed, no content word that only the assistant said (its suggestion in a fact about
   * the user's question), and no word nobody said (a value made up or copied from the prompt's
   * example; words that only frame a fact, such as "prefers" or "editor", are exempt); the
   * assistant's own claims never become facts. `0` turns these checks off. Default: `0.5`. */
  minUserSupport?: number;
  /** Where extraction work that kept failing is kept and retried from (next run, `flush()`).
   * Default: in `store` when given; else what `storage.pendingWork()` offers (the store of a
   * {@link StoreMemoryStorage}); else in this process only (a warning says so). With
   * `FileMemoryStorage`, pass a `FilePendingWork`. */
  pendingWork?: PendingWorkStore;
  /** A store for pending work (see `pendingWork`). Default: none. */
  store?: Store;
  /** Receives problems that do not stop anything: failed or rejected extractions, repaired
   * storage. Default: `console.warn`. */
  onWarning?: (message: string) => void;
  /** Called after each extraction with what it did (for logs and tests). Default: none. */
  onUpdate?: (outcome: UpdateOutcome, identity: MemoryIdentity) => void;
  /** Called with `true` when an extraction starts and `false` when it ends, done or not (for a
   * status line). Default: none. */
  onExtracting?: (extracting: boolean) => void;
  /** The core that packs the injected block (and ranks facts for relevance recall). Default:
   * {@link loadCore}, loaded on first use. */
  core?: Core | Promise<Core>;
  /** The time facts are stamped with when they are learnt or confirmed, in ms since the epoch
   * (for imports of dated conversations and for tests). Default: `Date.now`. */
  now?: () => number;
}

/** When extraction runs: see {@link LongTermMemoryOptions.schedule}. */
export type ExtractionSchedule = "background" | "idle";

/** Options of {@link LongTermMemory.close}. */
export interface CloseOptions {
  /** Extract for at most this long, in ms, then keep what is left as pending work (resumed by a
   * later run or `flush()`) and return. Default: no bound — everything is extracted. */
  timeoutMs?: number;
}

/** Whose conversation a capture is. */
export interface MemoryIdentity {
  threadId: string;
  userId: string;
  /** Default: none — the memory the user shares across agents. */
  agentName?: string;
}

/** A fact to add by hand. */
export interface NewFactInput {
  content: string;
  /** Default: `"context"`. */
  category?: FactCategory;
  /** Default: `0.9`. */
  confidence?: number;
  /** For corrections: what was wrong. */
  sourceError?: string;
}

/** Changes to a fact. */
export type FactPatch = Partial<Pick<Fact, "content" | "category" | "confidence" | "sourceError">>;

/** Errors of the facts API, as data. */
export type FactErrorCode =
  /** No fact has that id. */
  | "fact_not_found"
  /** Empty after secret redaction or cleaning, about an upload, or out-of-range values. */
  | "invalid_fact"
  /** Another fact already says this (`fact` is that one). */
  | "duplicate"
  /** The fact would not survive `maxFacts` trimming (its confidence is too low). */
  | "over_capacity"
  /** Every compare-and-swap attempt lost to other writers. */
  | "conflict";

/** Outcome of a facts API change. */
export type FactResult = { fact: Fact; error?: undefined } | { error: { code: FactErrorCode; message: string }; fact?: Fact };

/** Outcome of {@link LongTermMemory.deleteFact}. */
export type DeleteFactResult =
  | { deleted: boolean; error?: undefined }
  | { error: { code: "conflict"; message: string }; deleted?: undefined };

/** Defaults of {@link LongTermMemoryOptions}. */
export const LONG_TERM_MEMORY_DEFAULTS = {
  debounceMs: 30_000,
  confidenceThreshold: 0.7,
  maxFacts: 100,
  maxInjectionTokens: 2000,
  correctionBudgetTokens: 500,
  recall: "confidence" as RecallMode,
  maxSaveAttempts: 10,
  maxConversationTokens: DEFAULT_UPDATE_PROMPT_OPTIONS.maxConversationTokens,
  modelTimeoutMs: 120_000,
  extractionAttempts: 3,
  retryBackoffMs: 2000,
  maxRemovalShare: 0.5,
  minUserSupport: 0.5,
};

/** Extraction budgets used instead of the defaults when the model runs locally (see
 * {@link LongTermMemoryOptions.localModel}). */
export const LOCAL_MODEL_DEFAULTS = {
  maxConversationTokens: 600,
  /** Base of the timeout; {@link LOCAL_MODEL_DEFAULTS.msPerToken} is added per request token. */
  modelTimeoutMs: 60_000,
  msPerToken: 150,
  maxOutputTokens: 512,
};

/** True when a model id looks like a model on this machine. */
export function isLocalModelId(id: string): boolean {
  return /^(?:llama|llamacpp|llama\.cpp|ollama|lmstudio|local)\b/i.test(id) || /(?:localhost|127\.0\.0\.1|\[::1\])/i.test(id);
}

const memoryKey = (userId: string, agentName: string | undefined) => JSON.stringify([userId, agentName ?? null]);

/**
 * Long-term facts memory for an agent.
 *
 * ```ts
 * const memory = new LongTermMemory({ model, storage: new FileMemoryStorage({ dir }) });
 * memory.capture(run.messages, { threadId, userId });          // after each run
 * system += await memory.inject(userId, undefined, request);   // before each model call
 * await memory.close();                                        // on shutdown
 * ```
 */
export class LongTermMemory {
  readonly storage: MemoryStorage;
  readonly #model: ChatModel;
  readonly #o: typeof LONG_TERM_MEMORY_DEFAULTS;
  readonly #queue: UpdateQueue<UpdateJob>;
  readonly #warn: (message: string) => void;
  readonly #onUpdate: LongTermMemoryOptions["onUpdate"];
  readonly #onExtracting: LongTermMemoryOptions["onExtracting"];
  readonly #schedule: ExtractionSchedule;
  readonly #coreOption: LongTermMemoryOptions["core"];
  readonly #now: () => number;
  #core: Promise<Core> | undefined;
  /** Latest clear per memory made through this instance (ms), for work already under way. */
  readonly #cleared = new Map<string, number>();
  /** What the last injection per user (and agent) used, keyed by the storage change token. */
  readonly #injected = new Map<
    string,
    { token: string; memory: MemoryData; injection: MemoryInjection; request: string; lines: string; today: number }
  >();
  #immediateSeq = 0;
  readonly #pendingWork: PendingWorkStore;
  /** Extraction settings resolved for this model. */
  readonly #extraction: {
    mode: ExtractionMode;
    maxConversationTokens: number;
    maxOutputTokens?: number;
    timeout: (request: UpdateRequest) => number;
  };
  /** Pending entries queued or running in this instance (not resumed twice). */
  readonly #resuming = new Set<string>();
  #lastResume = -Infinity;
  #closed = false;

  constructor(options: LongTermMemoryOptions) {
    if (!options?.model || typeof options.model.invoke !== "function") {
      throw new EngramError("unsupported", "LongTermMemory needs a `model` (a ChatModel)");
    }
    const o = { ...LONG_TERM_MEMORY_DEFAULTS };
    for (const key of Object.keys(o) as (keyof typeof o)[]) {
      if (options[key] !== undefined) (o as Record<string, unknown>)[key] = options[key];
    }
    validate(o);
    this.#o = o;
    this.#model = options.model;
    this.storage = options.storage ?? new StoreMemoryStorage({ store: new InMemoryStore() });
    this.#pendingWork =
      options.pendingWork ??
      (options.store ? new StorePendingWork({ store: options.store }) : undefined) ??
      this.storage.pendingWork?.() ??
      new InMemoryPendingWork();
    const local = options.localModel ?? isLocalModelId(options.model.id ?? "");
    const maxOutputTokens = options.maxOutputTokens ?? (local ? LOCAL_MODEL_DEFAULTS.maxOutputTokens : undefined);
    if (maxOutputTokens !== undefined && (!Number.isInteger(maxOutputTokens) || maxOutputTokens < 1)) {
      throw new ConfigError("longTermMemory.maxOutputTokens", "must be a positive integer");
    }
    const mode = options.extraction ?? (local ? "facts" : "full");
    if (mode !== "facts" && mode !== "full") throw new ConfigError("longTermMemory.extraction", 'must be "full" or "facts"');
    this.#extraction = {
      mode,
      maxConversationTokens:
        options.maxConversationTokens ?? (local ? LOCAL_MODEL_DEFAULTS.maxConversationTokens : o.maxConversationTokens),
      ...(maxOutputTokens !== undefined && { maxOutputTokens }),
      timeout:
        options.modelTimeoutMs !== undefined || !local
          ? () => o.modelTimeoutMs
          : (request) =>
              LOCAL_MODEL_DEFAULTS.modelTimeoutMs +
              LOCAL_MODEL_DEFAULTS.msPerToken *
                (estimateTokens(request.system) +
                  request.messages.reduce((n, m) => n + estimateTokens(m.content), 0) +
                  (maxOutputTokens ?? 0)),
    };
    this.#warn = options.onWarning ?? ((m) => console.warn(`[engram] long-term memory: ${m}`));
    this.#onUpdate = options.onUpdate;
    this.#coreOption = options.core;
    if (options.now !== undefined && typeof options.now !== "function")
      throw new EngramError("unsupported", "LongTermMemory: now must be a function");
    this.#now = options.now ?? Date.now;
    const schedule = options.schedule ?? (local ? "idle" : "background");
    if (schedule !== "idle" && schedule !== "background")
      throw new ConfigError("longTermMemory.schedule", 'must be "idle" or "background"');
    this.#schedule = schedule;
    this.#onExtracting = options.onExtracting;
    this.#queue = new UpdateQueue<UpdateJob>({
      debounceMs: o.debounceMs,
      process: (job, signal) => this.#process(job, signal),
      ...(schedule === "idle" && { quietMs: o.debounceMs }),
      merge: (older, newer) => ({
        ...newer,
        conversation: {
          ...newer.conversation,
          correction: older.conversation.correction || newer.conversation.correction,
          reinforcement: older.conversation.reinforcement || newer.conversation.reinforcement,
        },
      }),
      onError: (error, job) =>
        this.#warn(
          `update of user ${JSON.stringify(job.userId)} (thread ${JSON.stringify(job.threadId)}) failed: ${error instanceof Error ? error.message : String(error)}`,
        ),
    });
  }

  /**
   * Queues a finished run for extraction; returns whether anything was queued (`false` when the
   * messages hold no user message and assistant reply after filtering — see
   * {@link captureConversation}). Identity is fixed now. A pending capture of the same
   * `(threadId, userId, agentName)` is replaced by this one (pass the whole conversation), its
   * correction/reinforcement flags kept.
   *
   * `immediate: true` extracts without the debounce and never merges with other captures: use
   * it for messages about to leave the conversation (summarisation), which a later capture of
   * the thread would no longer contain.
   */
  capture(messages: readonly Message[], identity: MemoryIdentity, options: { immediate?: boolean } = {}): boolean {
    if (typeof identity?.threadId !== "string" || typeof identity.userId !== "string") {
      throw new EngramError("invalid_argument", "capture needs an identity with string threadId and userId");
    }
    const conversation = captureConversation(messages);
    if (!conversation) return false;
    const job: UpdateJob = { conversation, threadId: identity.threadId, userId: identity.userId, capturedAt: Date.now() };
    if (identity.agentName !== undefined) job.agentName = identity.agentName;
    const key = JSON.stringify([identity.threadId, identity.userId, identity.agentName ?? null]);
    if (options.immediate) this.#queue.add(`${key}#${++this.#immediateSeq}`, job, { immediate: true });
    else this.#queue.add(key, job);
    // Work that failed in an earlier run (or earlier in this one) gets another chance now.
    if (Date.now() - this.#lastResume >= 60_000) void this.#resumePending().catch((e) => this.#warn(`pending work: ${errorText(e)}`));
    return true;
  }

  /** Extracts everything pending now — captures waiting for their debounce and pending work from
   * earlier failed extractions — and resolves when done. Work that fails again stays pending. */
  async flush(): Promise<void> {
    if (!this.#closed) {
      try {
        await this.#resumePending();
      } catch (e) {
        this.#warn(`pending work could not be listed: ${errorText(e)}`);
      }
    }
    await this.#queue.flush();
  }

  /** Flushes, then stops the queue (later captures throw). Call on shutdown. With
   * `timeoutMs`, extraction stops when the time is up (the call under way is aborted) and what
   * is left is kept as pending work, as extraction that failed is: nothing is lost. */
  async close(options: CloseOptions = {}): Promise<void> {
    const { timeoutMs } = options;
    if (timeoutMs === undefined) {
      await this.flush();
      this.#closed = true;
      await this.#queue.close();
      return;
    }
    if (typeof timeoutMs !== "number" || !(timeoutMs >= 0)) {
      throw new EngramError("invalid_argument", "close: timeoutMs must be a number >= 0");
    }
    this.#closed = true;
    if (timeoutMs > 0) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([this.#queue.flush(), new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
      clearTimeout(timer);
    }
    for (const job of await this.#queue.stop()) await this.#putPending(job, job, "not extracted before the memory was closed", 0);
  }

  /** Extraction work that kept failing, kept for a later retry (every user). */
  pendingWork(): Promise<PendingEntry[]> {
    return this.#pendingWork.list();
  }

  /** Queues every pending entry not already queued here, due now. */
  async #resumePending(): Promise<void> {
    this.#lastResume = Date.now();
    const entries = await this.#pendingWork.list();
    for (const entry of entries) {
      if (this.#resuming.has(entry.id) || this.#closed) continue;
      this.#resuming.add(entry.id);
      const job: UpdateJob = { ...entry.job, pendingId: entry.id, failures: 0 };
      this.#queue.add(`pending:${entry.id}`, job, { immediate: true });
    }
  }

  /** Captures waiting for extraction. */
  get pending(): number {
    return this.#queue.pending;
  }

  /**
   * The `<memory>` block for a model call of this user (and agent), or `""` when memory is
   * empty. `currentRequest` — the user's latest message — ranks facts when `recall` is
   * `"relevance"`. A fact that a line of `updatedBy` updates is left out (see `lineUpdatesFact`):
   * pass the user's recalled messages of earlier threads that the prompt shows beside the block.
   */
  async inject(userId: string, agentName?: string, currentRequest = "", updatedBy: readonly UserLine[] = []): Promise<string> {
    return (await this.injection(userId, agentName, currentRequest, updatedBy)).block;
  }

  /** {@link inject}'s block, and the text of each fact it shows. */
  async injection(userId: string, agentName?: string, currentRequest = "", updatedBy: readonly UserLine[] = []): Promise<MemoryInjection> {
    // Unchanged memory (same storage change token) reuses what the last call loaded, and the
    // block itself when it ranks the same way: always with confidence recall, and with relevance
    // recall for the same request (every model call of one run). A model call then costs one
    // token check instead of ranking every fact again (1,000 facts: ~1.2 ms).
    const key = `${userId}\u0000${agentName ?? ""}`;
    const token = await this.storage.changeToken?.(userId, agentName);
    const hit = token === undefined ? undefined : this.#injected.get(key);
    const fresh = hit?.token === token ? hit : undefined;
    const lines = JSON.stringify(updatedBy.map((l) => [l.at, l.text]));
    // The block says how many days ago each fact's day was: a new day writes it again.
    const now = this.#now();
    const today = Math.floor(now / DAY_MS);
    if (fresh && fresh.lines === lines && fresh.today === today && (this.#o.recall === "confidence" || fresh.request === currentRequest))
      return fresh.injection;
    const memory = fresh?.memory ?? (await this.read(userId, agentName));
    const injection = await this.#format(memory, currentRequest, updatedBy, now);
    if (token !== undefined) {
      if (this.#injected.size >= 1024 && !this.#injected.has(key)) this.#injected.delete(this.#injected.keys().next().value as string);
      this.#injected.set(key, { token, memory, injection, request: currentRequest, lines, today });
    }
    return injection;
  }

  async #format(memory: MemoryData, currentRequest: string, updatedBy: readonly UserLine[], now: number): Promise<MemoryInjection> {
    const relevance = this.#o.recall === "relevance" && memory.facts.length > 1 && currentRequest.trim() !== "";
    let core: Core | undefined;
    try {
      core = await this.#loadCore();
    } catch (e) {
      // Ranking is an optimisation: without this core, rank by confidence (the loaded core packs).
      if (relevance) this.#warn(`relevance recall unavailable, ranking by confidence: ${e instanceof Error ? e.message : String(e)}`);
    }
    // One core call: BM25 relevance (when asked) and the packing within the budget.
    return memoryInjection(memory, {
      now,
      maxTokens: this.#o.maxInjectionTokens,
      correctionBudgetTokens: this.#o.correctionBudgetTokens,
      updatedBy,
      ...(core && { core, ...(relevance && { query: currentRequest }) }),
    });
  }

  /** The whole memory document (a copy). */
  async read(userId: string, agentName?: string): Promise<MemoryData> {
    const loaded = await this.storage.load(userId, agentName);
    if (loaded.warning) this.#warn(loaded.warning);
    return loaded.memory;
  }

  /** The facts, in stored order. */
  async listFacts(userId: string, agentName?: string): Promise<Fact[]> {
    return (await this.read(userId, agentName)).facts;
  }

  /** Adds a fact (`source: "manual"`; the confidence threshold does not apply). Secrets are
   * redacted first. A fact that is not an object rejects with `invalid_argument`; what is
   * wrong inside one is answered as `{ error }`. */
  async addFact(userId: string, agentName: string | undefined, input: NewFactInput): Promise<FactResult> {
    if (typeof input !== "object" || input === null || Array.isArray(input)) {
      throw new EngramError("invalid_argument", "addFact: the fact must be an object { content, category?, confidence? }");
    }
    const category = input.category ?? "context";
    const confidence = input.confidence ?? 0.9;
    if (typeof input.content !== "string" || !isConfidence(confidence) || !FACT_CATEGORIES.includes(category)) {
      return invalid("a fact needs text content, a known category and a confidence between 0 and 1");
    }
    let created: Fact | undefined;
    let duplicate: Fact | undefined;
    const r = await this.#change(userId, agentName, (memory) => {
      const proposal = { content: input.content, category, confidence, ...(input.sourceError ? { sourceError: input.sourceError } : {}) };
      created = makeFact(proposal, memory.facts, "manual", nowIso(this.#now()));
      if (!created) {
        duplicate = findDuplicate(redactSecrets(input.content).trim(), memory.facts);
        return undefined;
      }
      memory.facts.push(created);
      return memory;
    });
    if (r.error) return r;
    if (duplicate) return { error: { code: "duplicate", message: "an equal fact exists" }, fact: duplicate };
    if (!created) return invalid("the fact is empty after removing secrets, or it is about an uploaded file");
    const kept = r.memory.facts.find((f) => f.id === created?.id);
    return kept
      ? { fact: kept }
      : { error: { code: "over_capacity", message: `maxFacts (${this.#o.maxFacts}) facts of higher confidence exist` } };
  }

  /** Changes a fact's text, category, confidence or correction note. */
  async editFact(userId: string, agentName: string | undefined, id: string, patch: FactPatch): Promise<FactResult> {
    if (patch.confidence !== undefined && !isConfidence(patch.confidence)) return invalid("confidence must be between 0 and 1");
    if (patch.content !== undefined && typeof patch.content !== "string") return invalid("content must be a string");
    if (patch.category !== undefined && (typeof patch.category !== "string" || patch.category.trim() === ""))
      return invalid("category must be a non-empty string");
    let found = false;
    let duplicate: Fact | undefined;
    const r = await this.#change(userId, agentName, (memory) => {
      const fact = memory.facts.find((f) => f.id === id);
      if (!fact) return undefined;
      found = true;
      if (patch.content !== undefined) {
        duplicate = findDuplicate(
          redactSecrets(patch.content).trim(),
          memory.facts.filter((f) => f.id !== id),
        );
        if (duplicate) return undefined;
      }
      if (patch.content !== undefined) fact.content = patch.content;
      if (patch.category !== undefined) fact.category = patch.category;
      if (patch.confidence !== undefined) fact.confidence = patch.confidence;
      if (patch.sourceError !== undefined) {
        if (patch.sourceError === "") delete fact.sourceError;
        else fact.sourceError = patch.sourceError;
      }
      return memory;
    });
    if (r.error) return r;
    if (!found) return { error: { code: "fact_not_found", message: `no fact ${JSON.stringify(id)}` } };
    if (duplicate) return { error: { code: "duplicate", message: "an equal fact exists" }, fact: duplicate };
    const kept = r.memory.facts.find((f) => f.id === id);
    return kept
      ? { fact: kept }
      : invalid("the edited fact is empty after removing secrets, duplicates another, or no longer fits maxFacts");
  }

  /** Deletes a fact: `{ deleted: false }` when there was none with that id. */
  async deleteFact(userId: string, agentName: string | undefined, id: string): Promise<DeleteFactResult> {
    let found = false;
    const r = await this.#change(userId, agentName, (memory) => {
      const before = memory.facts.length;
      memory.facts = memory.facts.filter((f) => f.id !== id);
      found = memory.facts.length < before;
      return found ? memory : undefined;
    });
    return r.error ? { error: r.error } : { deleted: found };
  }

  /** Forgets everything about the user (for this agent): deletes the memory, drops pending
   * captures of it, and makes any extraction already under way discard its result. */
  async clear(userId: string, agentName?: string): Promise<void> {
    const key = memoryKey(userId, agentName);
    this.#cleared.set(key, Date.now());
    this.#queue.discard((_, job) => memoryKey(job.userId, job.agentName) === key);
    await this.storage.clear(userId, agentName);
    for (const entry of await this.#pendingWork.list()) {
      if (memoryKey(entry.job.userId, entry.job.agentName) === key) await this.#pendingWork.delete(entry.id);
    }
  }

  /**
   * Marks a turn of the agent as running (or waiting for its model) until the returned function
   * is called; the agent does it around every run. With `schedule: "idle"` no extraction runs
   * meanwhile: one under way is aborted (its model call too) and what it had not done waits for
   * the next idle time. With `"background"` it changes nothing.
   */
  beginTurn(): () => void {
    return this.#schedule === "idle" ? this.#queue.pause() : () => {};
  }

  /** One queued job; resolves to the work left when `signal` preempted it. */
  async #process(job: UpdateJob, signal: AbortSignal): Promise<UpdateJob | undefined> {
    this.#onExtracting?.(true);
    try {
      return await this.#extract(job, signal);
    } finally {
      this.#onExtracting?.(false);
    }
  }

  async #extract(job: UpdateJob, signal: AbortSignal): Promise<UpdateJob | undefined> {
    const identity: MemoryIdentity = { threadId: job.threadId, userId: job.userId };
    if (job.agentName !== undefined) identity.agentName = job.agentName;
    const thread = JSON.stringify(job.threadId);
    let outcome: UpdateOutcome;
    try {
      await this.#loadCore(); // redaction runs in the core
      outcome = await runMemoryUpdate(job, {
        model: this.#model,
        storage: this.storage,
        confidenceThreshold: this.#o.confidenceThreshold,
        maxFacts: this.#o.maxFacts,
        maxRemovalShare: this.#o.maxRemovalShare,
        minUserSupport: this.#o.minUserSupport,
        maxAttempts: this.#o.maxSaveAttempts,
        extractionAttempts: this.#o.extractionAttempts,
        retryBackoffMs: this.#o.retryBackoffMs,
        modelTimeoutMs: this.#extraction.timeout,
        prompt: {
          ...DEFAULT_UPDATE_PROMPT_OPTIONS,
          maxConversationTokens: this.#extraction.maxConversationTokens,
          mode: this.#extraction.mode,
          ...(this.#extraction.maxOutputTokens !== undefined && { maxOutputTokens: this.#extraction.maxOutputTokens }),
        },
        clearedAt: (j) => this.#cleared.get(memoryKey(j.userId, j.agentName)),
        onWarning: this.#warn,
        signal,
        now: this.#now,
      });
    } catch (error) {
      // Storage failed: keep the whole job for later, then report as before.
      await this.#keepPending(job, job, `storage failed: ${errorText(error)}`, 1).catch(() => undefined);
      if (job.pendingId) this.#resuming.delete(job.pendingId);
      throw error;
    }
    if (outcome.status === "preempted") return outcome.remaining;
    for (const note of "notes" in outcome ? (outcome.notes ?? []) : []) this.#warn(`extraction for thread ${thread}: ${note}`);
    if (outcome.status === "pending") {
      await this.#keepPending(job, outcome.remaining, outcome.reason, outcome.attempts);
    } else if (outcome.status === "conflict") {
      this.#warn(`extraction for thread ${thread}: ${outcome.attempts} conflicting saves`);
      if (outcome.remaining) await this.#keepPending(job, outcome.remaining, `${outcome.attempts} conflicting saves`, 1);
    } else if (job.pendingId) {
      await this.#pendingWork.delete(job.pendingId);
    }
    if (job.pendingId) this.#resuming.delete(job.pendingId);
    this.#onUpdate?.(outcome, identity);
    return undefined;
  }

  /** Keeps `remaining` (what is left of `job`) as pending work and says so. */
  async #keepPending(job: UpdateJob, remaining: UpdateJob, reason: string, attempts: number): Promise<void> {
    const entry = await this.#putPending(job, remaining, reason, attempts);
    const where =
      (this.#pendingWork as { durable?: boolean }).durable === false ? " (in this process only: no durable store configured)" : "";
    this.#warn(
      `extraction for thread ${JSON.stringify(job.threadId)} kept as pending work ${entry.id}${where} after ${entry.attempts} failed attempt(s): ${entry.reason}; it is retried on the next run or flush()`,
    );
  }

  /** Stores `remaining` (what is left of `job`) as pending work, under the job's entry if it
   * came from one. */
  async #putPending(job: UpdateJob, remaining: UpdateJob, reason: string, attempts: number): Promise<PendingEntry> {
    const previous = job.pendingId ? (await this.#pendingWork.list()).find((e) => e.id === job.pendingId) : undefined;
    const { pendingId: _p, failures: _f, ...work } = remaining;
    await this.#loadCore(); // redaction runs in the core
    const entry: PendingEntry = redactPendingEntry({
      id: job.pendingId ?? newPendingId(),
      job: work,
      reason,
      attempts: (previous?.attempts ?? 0) + attempts,
      updatedAt: Date.now(),
    });
    await this.#pendingWork.put(entry);
    return entry;
  }

  /** Load, change a copy, sanitise, save by compare-and-swap; retried on conflict. `change`
   * returns `undefined` for "nothing to save". */
  async #change(
    userId: string,
    agentName: string | undefined,
    change: (memory: MemoryData) => MemoryData | undefined,
  ): Promise<{ memory: MemoryData; error?: undefined } | { error: { code: "conflict"; message: string } }> {
    await this.#loadCore(); // redaction runs in the core: have it loaded (edge hosts cannot load it synchronously)
    for (let attempt = 1; attempt <= this.#o.maxSaveAttempts; attempt++) {
      const loaded = await this.storage.load(userId, agentName);
      if (loaded.warning) this.#warn(loaded.warning);
      const changed = change(loaded.memory);
      if (!changed) return { memory: loaded.memory };
      const next = sanitizeMemory(changed, { maxFacts: this.#o.maxFacts });
      const saved = await this.storage.save(userId, agentName, next, loaded.revision);
      if (saved.ok) return { memory: next };
      await new Promise((resolve) => setTimeout(resolve, Math.min(200, 5 * 2 ** attempt) * Math.random()));
    }
    return { error: { code: "conflict", message: `gave up after ${this.#o.maxSaveAttempts} conflicting saves` } };
  }

  #loadCore(): Promise<Core> {
    this.#core ??= Promise.resolve(this.#coreOption ?? loadCore()).catch((e: unknown) => {
      this.#core = undefined; // try again next time
      throw e;
    });
    return this.#core;
  }
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function invalid(message: string): FactResult {
  return { error: { code: "invalid_fact", message } };
}

function isConfidence(n: unknown): n is number {
  return typeof n === "number" && Number.isFinite(n) && n >= 0 && n <= 1;
}

function validate(o: typeof LONG_TERM_MEMORY_DEFAULTS): void {
  const fail = (message: string) => {
    throw new EngramError("unsupported", `LongTermMemory: ${message}`);
  };
  const int = (n: number) => Number.isInteger(n);
  if (!(o.debounceMs === 0 || (o.debounceMs >= 1000 && o.debounceMs <= 300_000))) fail("debounceMs must be 0 or 1000–300000");
  if (!(o.confidenceThreshold >= 0 && o.confidenceThreshold <= 1)) fail("confidenceThreshold must be 0–1");
  if (!int(o.maxFacts) || o.maxFacts < 1) fail("maxFacts must be a positive integer");
  if (!int(o.maxInjectionTokens) || o.maxInjectionTokens < 1) fail("maxInjectionTokens must be a positive integer");
  if (!int(o.correctionBudgetTokens) || o.correctionBudgetTokens < 0) fail("correctionBudgetTokens must be a non-negative integer");
  if (o.recall !== "confidence" && o.recall !== "relevance") fail('recall must be "confidence" or "relevance"');
  if (!int(o.maxSaveAttempts) || o.maxSaveAttempts < 1) fail("maxSaveAttempts must be a positive integer");
  if (!int(o.maxConversationTokens) || o.maxConversationTokens < 100) fail("maxConversationTokens must be an integer >= 100");
  if (!(o.modelTimeoutMs > 0)) fail("modelTimeoutMs must be positive");
  if (!int(o.extractionAttempts) || o.extractionAttempts < 1) fail("extractionAttempts must be a positive integer");
  if (!(o.retryBackoffMs >= 0)) fail("retryBackoffMs must be >= 0");
  if (!(o.maxRemovalShare >= 0 && o.maxRemovalShare <= 1)) fail("maxRemovalShare must be 0–1");
  if (!(o.minUserSupport >= 0 && o.minUserSupport <= 1)) fail("minUserSupport must be 0–1");
}
