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
