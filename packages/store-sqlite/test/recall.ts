/**
 * Recall over a database's own full-text index when rows are damaged or removed behind the
 * checkpointer's back — shared by the SQLite and PostgreSQL tests: the search keeps answering
 * from what is intact, and a thread whose checkpoint is gone is never a hit.
 */
import { type Checkpoint, type Checkpointer, loadCore, searchPastThreads } from "engram";
import { uniqueId } from "engram/testing";
import { expect, it } from "vitest";

const core = await loadCore();

export interface RecallDamageSetup {
  checkpointer: Checkpointer;
  /** Overwrites the stored document of `threadId` with text that is not a checkpoint. */
  corruptDoc(threadId: string, text: string): Promise<void>;
  /** Deletes the checkpoint row of `threadId` (and nothing else). */
  dropCheckpointRow(threadId: string): Promise<void>;
  /** Each indexed message of `threadId` (by its index in the thread) and a version of its
   * index row that changes whenever the row is written. */
  indexRows(threadId: string): Promise<Map<number, string>>;
}

const said = (userId: string, content: string): Checkpoint => ({ messages: [{ role: "user", content }], data: {}, savedAt: 1, userId });

export function recallDamageSuite(setup: () => RecallDamageSetup): void {
  it("a damaged checkpoint does not break the search; saving over it indexes it again", async () => {
    const { checkpointer: cp, corruptDoc } = setup();
    const user = uniqueId("ada");
    const ids = [1, 2, 3].map((i) => uniqueId(`t${i}`));
    for (const id of ids) await cp.put(id, said(user, `the quarterly report of ${id}`));
    await corruptDoc(ids[1] as string, "{not json");
    await expect(cp.get(ids[1] as string)).rejects.toMatchObject({ code: "store_error" });
    const hits = await searchPastThreads(cp, core, { userId: user, query: "quarterly report" });
    expect(hits.map((h) => h.threadId)).toEqual(expect.arrayContaining([ids[0], ids[2]]));
    await cp.put(ids[1] as string, said(user, "a fresh plan"));
    const again = await searchPastThreads(cp, core, { userId: user, query: "fresh" });
    expect(again.map((h) => h.threadId)).toEqual([ids[1]]);
  });

  it("a save re-indexes only the messages that changed", async () => {
    const { checkpointer: cp, indexRows } = setup();
    const user = uniqueId("ada");
    const id = uniqueId("grows");
    const messages: Checkpoint["messages"] = [
      { role: "user", content: "first question" },
      { role: "assistant", content: "first answer" },
      { role: "user", content: "second question" },
    ];
    await cp.put(id, { messages, data: {}, savedAt: 1, userId: user });
    const before = await indexRows(id);
    expect([...before.keys()].sort()).toEqual([0, 1, 2]);
    const next = [
      ...messages.slice(0, 2),
      { role: "user" as const, content: "second question, edited" },
      { role: "assistant" as const, content: "an answer" },
    ];
    await cp.put(id, { messages: next, data: {}, savedAt: 2, userId: user });
    const after = await indexRows(id);
    expect([...after.keys()].sort()).toEqual([0, 1, 2, 3]);
    expect(after.get(0)).toBe(before.get(0));
    expect(after.get(1)).toBe(before.get(1));
    expect(after.get(2)).not.toBe(before.get(2));
    // Saved without a user, the thread leaves the index.
    await cp.put(id, { messages: next, data: {}, savedAt: 3 });
    expect((await indexRows(id)).size).toBe(0);
  });

  it("a thread whose checkpoint row is gone is never a hit", async () => {
    const { checkpointer: cp, dropCheckpointRow } = setup();
    const user = uniqueId("ada");
    const [kept, dropped] = [uniqueId("kept"), uniqueId("dropped")];
    await cp.put(kept, said(user, "notes on the migration"));
    await cp.put(dropped, said(user, "more notes on the migration"));
    await dropCheckpointRow(dropped);
    const hits = await searchPastThreads(cp, core, { userId: user, query: "migration notes" });
    expect(hits.map((h) => h.threadId)).toEqual([kept]);
  });
}
