/**
 * Long-term facts in the memory history: their text form, and a storage wrapper that records
 * every saved or cleared facts document.
 * @module
 */
import type { Fact } from "../longterm/schema.js";
import { type MemoryStorage, NO_REVISION } from "../longterm/storage.js";
import type { MemoryActor, MemoryHistory } from "./history.js";

/** Facts as the history keeps them: one per line, `<id> <content>`, and for a fact that replaced
 * others ` (replaces <id>, …)` — the change that adds it also removes their lines. */
export function factsText(facts: readonly Fact[]): string {
  return facts.map((f) => `${f.id} ${f.content}${f.replaced?.length ? ` (replaces ${f.replaced.join(", ")})` : ""}\n`).join("");
}

/** The history target of a user's facts (per agent when the memory is per agent). */
export function factsTarget(agentName?: string): string {
  return agentName === undefined ? "facts" : `facts:${agentName}`;
}

/** Options of {@link recordFactChanges}. */
export interface RecordFactChangesOptions {
  history: MemoryHistory;
  /** Default: `"agent"` (the extraction after a run). */
  actor?: MemoryActor;
}

/**
 * Wraps a long-term memory storage so that every successful save and every clear is recorded
 * in the history (kind `"facts"`, before and after as {@link factsText}). A save that loses its
 * compare-and-swap records nothing.
 */
export function recordFactChanges(storage: MemoryStorage, options: RecordFactChangesOptions): MemoryStorage {
  const actor = options.actor ?? "agent";
  const current = async (userId: string, agentName?: string) => {
    const loaded = await storage.load(userId, agentName);
    return loaded.revision === NO_REVISION ? null : factsText(loaded.memory.facts);
  };
  const record = (userId: string, agentName: string | undefined, before: string | null, after: string | null) =>
    options.history.record({ userId, kind: "facts", target: factsTarget(agentName), actor, before, after });
  const wrapped: MemoryStorage = {
    load: (userId, agentName) => storage.load(userId, agentName),
    async save(userId, agentName, memory, expectedRevision) {
      const before = await current(userId, agentName);
      const saved = await storage.save(userId, agentName, memory, expectedRevision);
      if (saved.ok) await record(userId, agentName, before, factsText(memory.facts));
      return saved;
    },
    async clear(userId, agentName) {
      const before = await current(userId, agentName);
      await storage.clear(userId, agentName);
      await record(userId, agentName, before, null);
    },
  };
  if (storage.changeToken) wrapped.changeToken = storage.changeToken.bind(storage);
  if (storage.pendingWork) wrapped.pendingWork = storage.pendingWork.bind(storage);
  return wrapped;
}
