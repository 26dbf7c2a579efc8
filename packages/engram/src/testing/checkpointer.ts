/**
 * The `Checkpointer` conformance suite. Each test uses thread ids of its own, so one
 * checkpointer instance serves the whole suite.
 * @module
 */
import { CHECKPOINT_VERSION, type Checkpoint, type Checkpointer } from "../agent/checkpointer.js";
import { listHistory, pruneHistory, readHistoryPoint } from "../agent/history.js";
import { type RunStep, hasHistoryOperations, hasStepOperations } from "../agent/run-steps.js";
import { type TestApi, uniqueId } from "./api.js";

/** A checkpoint with every kind of content a thread holds. */
export function sampleCheckpoint(): Checkpoint {
  const files = new Uint8Array(70_000);
  for (let i = 0; i < files.length; i++) files[i] = (i * 31) & 0xff;
  return {
    messages: [
      { role: "user", content: "Plan the release — 计划 😀" },
      {
        role: "assistant",
        content: "",
        toolCalls: [{ id: "w1", name: "write_file", args: { file_path: "/plan.md", content: "step 1\n\u0000" } }],
      },
    ],
    data: { summarizations: 2, nested: { list: [1, "two", null] } },
    files,
    interrupt: { toolCalls: [{ id: "w1", name: "write_file", args: { file_path: "/plan.md" }, allow: ["approve", "edit", "reject"] }] },
    savedAt: 1_700_000_000_123,
  };
}

/** Registers the Checkpointer conformance suite for the checkpointer `get` returns. */
export function checkpointerConformance(name: string, t: TestApi, get: () => Checkpointer | Promise<Checkpointer>): void {
  const { describe, it, expect } = t;
  const invalidArgument = { name: "EngramError", code: "invalid_argument" };

  describe(`${name} Checkpointer conformance`, () => {
    it("round-trips messages, data, files and the interrupt, with the format version", async () => {
      const cp = await get();
      const id = uniqueId("thread");
      expect(await cp.get(id)).toBeUndefined();
      const sample = sampleCheckpoint();
      await cp.put(id, sample);
      const back = await cp.get(id);
      expect(back?.version).toBe(CHECKPOINT_VERSION);
      expect(back?.messages).toEqual(sample.messages);
      expect(back?.data).toEqual(sample.data);
      expect(back?.interrupt).toEqual(sample.interrupt);
      expect(back?.savedAt).toBe(sample.savedAt);
      expect(typeof back?.revision).toBe("number");
      expect(back?.files).toBeInstanceOf(Uint8Array);
      expect(Array.from(back?.files ?? []).every((b, i) => b === ((i * 31) & 0xff))).toBe(true);
      expect(back?.files?.length).toBe(70_000);
    });

    it("overwrites, drops what the new checkpoint lacks, and deletes", async () => {
      const cp = await get();
      const id = uniqueId("thread");
      await cp.put(id, sampleCheckpoint());
      await cp.put(id, { messages: [{ role: "user", content: "again" }], data: {}, savedAt: 5 });
      const back = await cp.get(id);
      expect(back?.messages).toEqual([{ role: "user", content: "again" }]);
      expect(back?.files).toBeUndefined();
      expect(back?.interrupt).toBeUndefined();
      await cp.delete(id);
      expect(await cp.get(id)).toBeUndefined();
      await cp.delete(id); // deleting twice is fine
    });

    it("isolates threads, whatever their ids", async () => {
      const cp = await get();
      const base = uniqueId("t");
      const ids = [`${base}`, `${base}'; DROP TABLE x; --`, `${base}/../x`, `${base} 😀`, `${base}%_`, `${base}${"x".repeat(900)}`];
      for (const [i, id] of ids.entries()) await cp.put(id, { messages: [{ role: "user", content: String(i) }], data: {}, savedAt: i });
      for (const [i, id] of ids.entries()) expect((await cp.get(id))?.messages[0]?.content).toBe(String(i));
    });

    it("hands out copies: mutating a result changes nothing stored", async () => {
      const cp = await get();
      const id = uniqueId("thread");
      const sample = sampleCheckpoint();
      await cp.put(id, sample);
      sample.messages.push({ role: "user", content: "mutated after put" });
      (sample.files as Uint8Array)[0] = 99;
      const got = await cp.get(id);
      got?.messages.pop();
      expect((await cp.get(id))?.messages.length).toBe(2);
      expect((await cp.get(id))?.files?.[0]).toBe(0);
    });

    it("rejects invalid thread ids and checkpoints with typed errors", async () => {
      const cp = await get();
      for (const id of ["", "a\u0000b", "\ud800", 7]) {
        await expect(cp.get(id as string)).rejects.toMatchObject(invalidArgument);
        await expect(cp.put(id as string, { messages: [], data: {}, savedAt: 0 })).rejects.toMatchObject(invalidArgument);
      }
      const id = uniqueId("thread");
      await expect(cp.put(id, { messages: "no", data: {}, savedAt: 0 } as unknown as Checkpoint)).rejects.toMatchObject(invalidArgument);
      await expect(cp.put(id, { messages: [], data: {}, files: [1, 2] as unknown as Uint8Array, savedAt: 0 })).rejects.toMatchObject(
        invalidArgument,
      );
      expect(await cp.get(id)).toBeUndefined();
    });

    it("stores files incrementally: appends deltas onto the named files, refuses a stale base, skips known files", async () => {
      const cp = await get();
      if (!cp.incremental) return;
      const id = uniqueId("delta");
      const base = sampleCheckpoint().files as Uint8Array;
      const d1 = Uint8Array.from([1, 2, 3]);
      const d2 = Uint8Array.from([4, 5]);
      await cp.put(id, { messages: [], data: {}, files: base, filesRef: { id: "r1", deltas: 0 }, savedAt: 1 });
      await cp.put(id, {
        messages: [{ role: "user", content: "one" }],
        data: {},
        filesDeltas: [d1],
        filesRef: { id: "r1", deltas: 1 },
        savedAt: 2,
      });
      // Keeping the files as they are: the ref alone.
      await cp.put(id, { messages: [{ role: "user", content: "two" }], data: {}, filesRef: { id: "r1", deltas: 1 }, savedAt: 3 });
      await cp.put(id, {
        messages: [{ role: "user", content: "three" }],
        data: {},
        filesDeltas: [d2],
        filesRef: { id: "r1", deltas: 2 },
        savedAt: 4,
      });
      const back = await cp.get(id);
      expect(back?.messages).toEqual([{ role: "user", content: "three" }]);
      expect(back?.filesRef).toEqual({ id: "r1", deltas: 2 });
      expect(back?.files?.length).toBe(base.length);
      expect(back?.filesDeltas?.map((d) => Array.from(d))).toEqual([
        [1, 2, 3],
        [4, 5],
      ]);

      // A stale base (another writer saved meanwhile): conflict, and nothing changes.
      const stale = cp.put(id, { messages: [], data: {}, filesDeltas: [d1], filesRef: { id: "r1", deltas: 2 }, savedAt: 5 });
      await expect(stale).rejects.toMatchObject({ name: "EngramError", code: "conflict" });
      const other = cp.put(id, { messages: [], data: {}, filesDeltas: [d1], filesRef: { id: "r2", deltas: 3 }, savedAt: 5 });
      await expect(other).rejects.toMatchObject({ code: "conflict" });
      await expect(
        cp.put(uniqueId("none"), { messages: [], data: {}, filesRef: { id: "r1", deltas: 0 }, savedAt: 5 }),
      ).rejects.toMatchObject({
        code: "conflict",
      });
      expect((await cp.get(id))?.savedAt).toBe(4);

      // The caller holds these files: they are not sent again; other files are.
      const known = await cp.get(id, { knownFiles: { id: "r1", deltas: 2 } });
      expect(known?.filesRef).toEqual({ id: "r1", deltas: 2 });
      expect(known?.files).toBeUndefined();
      expect(known?.filesDeltas).toBeUndefined();
      expect((await cp.get(id, { knownFiles: { id: "r1", deltas: 1 } }))?.filesDeltas?.length).toBe(2);

      // A full snapshot replaces the chain; deleting drops every part.
      await cp.put(id, { messages: [], data: {}, files: d2, savedAt: 6 });
      const full = await cp.get(id);
      expect(Array.from(full?.files ?? [])).toEqual([4, 5]);
      expect(full?.filesDeltas).toBeUndefined();
      expect(full?.filesRef?.deltas).toBe(0);
      expect(full?.filesRef?.id).not.toBe("r1");
      await cp.delete(id);
      expect(await cp.get(id)).toBeUndefined();
      await cp.put(id, { messages: [], data: {}, files: base, filesDeltas: [d1], filesRef: { id: "r3", deltas: 1 }, savedAt: 7 });
      expect((await cp.get(id))?.filesDeltas?.map((d) => d.length)).toEqual([3]);
    });

    it("saves by compare-and-swap on the revision: a stale put is a conflict and changes nothing", async () => {
      const cp = await get();
      const id = uniqueId("revision");
      const conflict = { name: "EngramError", code: "conflict" };
      const at = (revision: number | undefined, text: string, more: Partial<Checkpoint> = {}): Checkpoint => ({
        messages: [{ role: "user", content: text }],
        data: {},
        savedAt: 1,
        ...(revision !== undefined && { revision }),
        ...more,
      });
      const stored = async () => {
        const back = await cp.get(id);
        return back && { revision: back.revision, text: back.messages[0]?.content };
      };
      const r1 = (await cp.put(id, at(0, "first"))) as number;
      expect(Number.isSafeInteger(r1) && r1 > 0).toBe(true);
      expect(await stored()).toEqual({ revision: r1, text: "first" });
      await expect(cp.put(id, at(0, "also first"))).rejects.toMatchObject(conflict);
      const r2 = (await cp.put(id, at(r1, "second"))) as number;
      expect(r2 > r1).toBe(true);
      await expect(cp.put(id, at(r1, "stale"))).rejects.toMatchObject(conflict);
      await expect(cp.put(id, at(r2 + 1000, "ahead"))).rejects.toMatchObject(conflict);
      expect(await stored()).toEqual({ revision: r2, text: "second" });
      // Without a revision: saved whatever is stored, with a new revision.
      const r3 = (await cp.put(id, at(undefined, "blind"))) as number;
      expect(r3 > r2).toBe(true);
      expect(await stored()).toEqual({ revision: r3, text: "blind" });
      for (const bad of [-1, 1.5, Number.NaN, "3"]) {
        await expect(cp.put(id, at(bad as number, "bad"))).rejects.toMatchObject(invalidArgument);
      }
      let last = r3;
      if (cp.incremental) {
        // Files: a full snapshot, then an append onto the right files from a stale revision.
        const r4 = (await cp.put(id, at(r3, "files", { files: Uint8Array.from([1]), filesRef: { id: "f", deltas: 0 } }))) as number;
        const stale = at(r3, "append", { filesDeltas: [Uint8Array.from([2])], filesRef: { id: "f", deltas: 1 } });
        await expect(cp.put(id, stale)).rejects.toMatchObject(conflict);
        last = (await cp.put(id, { ...stale, revision: r4 })) as number;
        expect((await cp.get(id, { knownFiles: { id: "f", deltas: 1 } }))?.revision).toBe(last);
        expect((await cp.get(id))?.filesDeltas?.length).toBe(1);
      }
      // After a delete, no earlier revision comes back: a writer that loaded the old thread
      // cannot save over a new one of the same id.
      await cp.delete(id);
      await expect(cp.put(id, at(last, "gone"))).rejects.toMatchObject(conflict);
      const again = (await cp.put(id, at(0, "again"))) as number;
      expect([r1, r2, r3, last].includes(again)).toBe(false);
      await expect(cp.put(id, at(r1, "old writer"))).rejects.toMatchObject(conflict);
      expect(await stored()).toEqual({ revision: again, text: "again" });
    });

    it("lets exactly one of concurrent writers from the same revision save", async () => {
      const cp = await get();
      // Connections, where the checkpointer has them, opened beforehand: the writers start at once.
      await Promise.all(Array.from({ length: 8 }, () => cp.get(uniqueId("warm"))));
      for (const existing of [false, false, false, true, true, true]) {
        const id = uniqueId("race");
        const start = existing ? ((await cp.put(id, { messages: [], data: {}, savedAt: 0 })) as number) : 0;
        const puts = await Promise.allSettled(
          Array.from({ length: 8 }, (_, i) =>
            cp.put(id, { messages: [{ role: "user", content: `writer ${i}` }], data: {}, savedAt: 1, revision: start }),
          ),
        );
        const won = puts.flatMap((p, i) => (p.status === "fulfilled" ? [i] : []));
        expect(won.length).toBe(1);
        for (const p of puts) if (p.status === "rejected") expect(p.reason).toMatchObject({ name: "EngramError", code: "conflict" });
        const back = await cp.get(id);
        expect(back?.revision).toBe((puts[won[0] as number] as PromiseFulfilledResult<number | void>).value);
        expect(back?.messages[0]?.content).toBe(`writer ${won[0]}`);
      }
    });

    it("rejects inconsistent files refs with invalid_argument", async () => {
      const cp = await get();
      const id = uniqueId("thread");
      const files = Uint8Array.from([1]);
      const bad: Partial<Checkpoint>[] = [
        { files, filesRef: { id: "x", deltas: 2 } },
        { filesDeltas: [files] },
        { files, filesRef: { id: "", deltas: 0 } },
        { files, filesRef: { id: "x", deltas: -1 } },
        { filesRef: { id: "x", deltas: 0 }, filesDeltas: [files] },
        { files, filesDeltas: ["no"] as unknown as Uint8Array[], filesRef: { id: "x", deltas: 1 } },
      ];
      for (const b of bad) await expect(cp.put(id, { messages: [], data: {}, savedAt: 0, ...b })).rejects.toMatchObject(invalidArgument);
      expect(await cp.get(id)).toBeUndefined();
    });

    it("records the user of a checkpoint, and rejects a malformed one", async () => {
      const cp = await get();
      const id = uniqueId("owned");
      const user = uniqueId("user");
      await cp.put(id, { messages: [{ role: "user", content: "hi" }], data: {}, savedAt: 1, userId: user });
      expect((await cp.get(id))?.userId).toBe(user);
      await cp.put(id, { messages: [], data: {}, savedAt: 2 });
      expect((await cp.get(id))?.userId).toBeUndefined();
      for (const bad of ["", "a\u0000b", 7]) {
        await expect(cp.put(id, { messages: [], data: {}, savedAt: 3, userId: bad as string })).rejects.toMatchObject(invalidArgument);
      }
      expect((await cp.get(id))?.savedAt).toBe(2);
    });

    it("searches one user's threads: never another user's or an unowned one, bounded, following saves", async () => {
      const cp = await get();
      if (!cp.searchMessages) return;
      const search = cp.searchMessages.bind(cp);
      const [ada, bob] = [uniqueId("ada"), uniqueId("bob")];
      const word = uniqueId("zq").replaceAll("-", "");
      const said = (userId: string | undefined, ...texts: string[]): Checkpoint => ({
        messages: texts.map((content, i) => ({ role: i % 2 === 0 ? "user" : "assistant", content })),
        data: {},
        savedAt: 10,
        ...(userId !== undefined && { userId }),
      });
      const ids = { decided: uniqueId("a1"), weather: uniqueId("a2"), invoices: uniqueId("a3"), current: uniqueId("a4") };
      await cp.put(ids.decided, said(ada, "hello", `we decided to use PostgreSQL for the ${word} billing database`));
      await cp.put(ids.weather, said(ada, "the weather in Lisbon is fine"));
      await cp.put(ids.invoices, said(ada, `${word} billing invoices go out monthly`, "noted"));
      await cp.put(ids.current, said(ada, `what about ${word} then?`));
      const bobs = uniqueId("b1");
      await cp.put(bobs, said(bob, `${word} billing database decided: MySQL`));
      const unowned = uniqueId("n1");
      await cp.put(unowned, said(undefined, `${word} billing database decided: SQLite`));
      // A tool result is not searched (files, command output).
      const tooled = uniqueId("a5");
      await cp.put(tooled, {
        ...said(ada, "read it"),
        messages: [{ role: "tool", content: `${word} billing database`, toolCallId: "c1" }],
        userId: ada,
      });

      const hits = await search({ userId: ada, query: `${word} billing database decided`, excludeThreadId: ids.current });
      expect(hits.map((h) => h.threadId)).toEqual([ids.decided, ids.invoices]);
      expect(hits[0]).toMatchObject({ role: "assistant", messageIndex: 1, savedAt: 10 });
      expect(hits[0]?.snippet).toBe(`we decided to use PostgreSQL for the ${word} billing database`);
      expect(hits[0]?.score).toBeGreaterThan(hits[1]?.score ?? 0);
      expect((await search({ userId: bob, query: `${word} PostgreSQL invoices` })).map((h) => h.threadId)).toEqual([bobs]);
      expect(await search({ userId: uniqueId("nobody"), query: `${word} billing` })).toEqual([]);
      expect(await search({ userId: ada, query: " ?! " })).toEqual([]);
      // Without the exclusion, the asking thread matches too; a limit keeps the best.
      expect((await search({ userId: ada, query: `${word} billing database decided`, limit: 1 })).map((h) => h.threadId)).toEqual([
        ids.decided,
      ]);

      // The index follows saves: new words are found, the replaced ones are not; a deleted or
      // re-owned thread is gone.
      const fresh = uniqueId("zr").replaceAll("-", "");
      await cp.put(ids.weather, said(ada, "the weather in Lisbon is fine", `${fresh} sunny`));
      expect((await search({ userId: ada, query: fresh })).map((h) => h.threadId)).toEqual([ids.weather]);
      await cp.put(ids.weather, said(ada, "nothing to see"));
      expect(await search({ userId: ada, query: fresh })).toEqual([]);
      await cp.put(ids.invoices, said(bob, `${word} billing invoices go out monthly`));
      await cp.delete(ids.decided);
      expect((await search({ userId: ada, query: `${word} billing` })).map((h) => h.threadId)).toEqual([ids.current]);

      // Snippets are bounded and show the match.
      const long = `${"lorem ipsum ".repeat(200)}the ${fresh} plan was approved ${"dolor sit ".repeat(200)}`;
      const longId = uniqueId("a6");
      await cp.put(longId, said(ada, long));
      const [hit] = await search({ userId: ada, query: fresh, snippetChars: 60 });
      expect(hit?.threadId).toBe(longId);
      expect((hit?.snippet.length ?? 99) <= 60).toBe(true);
      expect(hit?.snippet.includes(fresh)).toBe(true);

      for (const bad of [
        { userId: "", query: "x" },
        { userId: ada, query: 7 },
        { userId: ada, query: "x", limit: 0 },
        { userId: ada, query: "x", limit: 51 },
        { userId: ada, query: "x", snippetChars: 5 },
        { userId: ada, query: "x", excludeThreadId: "" },
      ]) {
        await expect(search(bad as Parameters<typeof search>[0])).rejects.toMatchObject(invalidArgument);
      }
    });

    it("keeps two users' searches apart over 1,000 interleaved threads", async () => {
      const cp = await get();
      if (!cp.searchMessages) return;
      const tag = uniqueId("w").replace(/[^a-z0-9]/g, "");
      const users = [uniqueId("ada"), uniqueId("bob")] as const;
      // Each user's own words (`<tag>a3`, `<tag>b7`), and words both use.
      const own = (u: number, k: number) => `${tag}${u === 0 ? "a" : "b"}${k % 10}`;
      const ids: Set<string>[] = [new Set(), new Set()];
      for (let i = 0; i < 1000; i++) {
        const u = i % 2;
        const id = `${tag}-${i}`;
        ids[u]?.add(id);
        await cp.put(id, {
          messages: [
            { role: "user", content: `shared plan ${i}: ${own(u, i)} and ${own(u, i + 3)}` },
            { role: "assistant", content: `agreed on ${own(u, i + 5)}, shared budget` },
          ],
          data: {},
          savedAt: i,
          userId: users[u],
        });
      }
      const everyWord = Array.from({ length: 10 }, (_, k) => `${own(0, k)} ${own(1, k)}`).join(" ");
      for (const [u, userId] of users.entries()) {
        const mine = ids[u] as Set<string>;
        const theirs = u === 0 ? `${tag}b` : `${tag}a`;
        for (const query of [everyWord, "shared plan budget", `${theirs}1 ${theirs}2 shared`]) {
          const hits = await cp.searchMessages({ userId, query, limit: 50 });
          expect(hits.length).toBe(50);
          for (const h of hits) {
            expect(mine.has(h.threadId)).toBe(true);
            expect(h.snippet.includes(theirs)).toBe(false);
          }
        }
        // The other user's words alone match nothing of this user's.
        expect(await cp.searchMessages({ userId, query: `${theirs}1 ${theirs}4 ${theirs}8` })).toEqual([]);
      }
    }, 120_000);

    it("stores run steps beside the checkpoint: in order, as given, dropped by a put or a delete", async () => {
      const cp = await get();
      if (!hasStepOperations(cp)) return;
      const id = uniqueId("steps");
      const conflict = { name: "EngramError", code: "conflict" };
      const revision = (await cp.put(id, { messages: [{ role: "user", content: "base" }], data: {}, savedAt: 1 })) as number;
      expect(await cp.getSteps(id)).toEqual([]);
      const bytes = Uint8Array.from({ length: 3000 }, (_, i) => (i * 7) & 0xff);
      const step = (runId: string, seq: number, more: Partial<RunStep> = {}): RunStep => ({
        runId,
        seq,
        baseRevision: revision ?? 0,
        doc: JSON.stringify({ step: seq, text: "计划 😀 \u0000" }),
        savedAt: 100 + seq,
        ...more,
      });
      // Out of order across runs; each run's steps come back in seq order.
      await cp.putStep(id, step("run-b", 2, { files: bytes }));
      await cp.putStep(id, step("run-a", 1));
      await cp.putStep(id, step("run-b", 1));
      const given = step("run-b", 3, { files: Uint8Array.from([1, 2]) });
      await cp.putStep(id, given);
      (given.files as Uint8Array)[0] = 9; // stored as given: mutating afterwards changes nothing
      await expect(cp.putStep(id, step("run-a", 1))).rejects.toMatchObject(conflict);
      const back = await cp.getSteps(id);
      const byRun = (runId: string) => back.filter((s) => s.runId === runId);
      expect(byRun("run-b").map((s) => s.seq)).toEqual([1, 2, 3]);
      expect(byRun("run-a")).toEqual([step("run-a", 1)]);
      expect(Array.from(byRun("run-b")[1]?.files ?? [])).toEqual(Array.from(bytes));
      expect(Array.from(byRun("run-b")[2]?.files ?? [])).toEqual([1, 2]);
      expect(byRun("run-b")[0]?.files).toBeUndefined();
      expect(JSON.parse(byRun("run-b")[0]?.doc ?? "")).toEqual({ step: 1, text: "计划 😀 \u0000" });
      expect(byRun("run-b")[0]).toMatchObject({ baseRevision: revision ?? 0, savedAt: 101 });
      // The checkpoint is untouched by steps.
      expect((await cp.get(id))?.revision).toBe(revision);
      // Dropping one run's steps keeps the other's; a second time does nothing.
      await cp.deleteSteps(id, "run-a");
      await cp.deleteSteps(id, "run-a");
      expect((await cp.getSteps(id)).map((s) => `${s.runId}:${s.seq}`)).toEqual(["run-b:1", "run-b:2", "run-b:3"]);
      // A put refused (stale revision) drops nothing; a put saved drops every step.
      await expect(cp.put(id, { messages: [], data: {}, savedAt: 2, revision: (revision ?? 0) + 1000 })).rejects.toMatchObject(conflict);
      expect((await cp.getSteps(id)).length).toBe(3);
      await cp.put(id, { messages: [], data: {}, savedAt: 2, ...(revision !== undefined && { revision }) });
      expect(await cp.getSteps(id)).toEqual([]);
      // Appending files (an incremental put) drops them too; so does a delete.
      if (cp.incremental) {
        await cp.put(id, { messages: [], data: {}, files: bytes, filesRef: { id: "s1", deltas: 0 }, savedAt: 3 });
        await cp.putStep(id, step("run-c", 1));
        await cp.put(id, { messages: [], data: {}, filesDeltas: [bytes], filesRef: { id: "s1", deltas: 1 }, savedAt: 4 });
        expect(await cp.getSteps(id)).toEqual([]);
      }
      await cp.putStep(id, step("run-d", 1));
      await cp.delete(id);
      expect(await cp.getSteps(id)).toEqual([]);
      // Steps of a thread that has no checkpoint yet.
      const fresh = uniqueId("steps-new");
      await cp.putStep(fresh, step("run-e", 1, { baseRevision: 0 }));
      expect((await cp.getSteps(fresh)).map((s) => s.baseRevision)).toEqual([0]);
      expect(await cp.get(fresh)).toBeUndefined();
      await cp.delete(fresh);
    });

    it("rejects malformed run steps with invalid_argument, storing nothing", async () => {
      const cp = await get();
      if (!hasStepOperations(cp)) return;
      const id = uniqueId("bad-steps");
      const ok: RunStep = { runId: "r", seq: 1, baseRevision: 0, doc: "{}", savedAt: 1 };
      const bad: unknown[] = [
        null,
        { ...ok, runId: "" },
        { ...ok, runId: "a\u0000b" },
        { ...ok, runId: "x".repeat(257) },
        { ...ok, seq: 0 },
        { ...ok, seq: 1.5 },
        { ...ok, baseRevision: -1 },
        { ...ok, doc: 7 },
        { ...ok, files: [1, 2] },
      ];
      for (const b of bad) await expect(cp.putStep(id, b as RunStep)).rejects.toMatchObject(invalidArgument);
      await expect(cp.putStep("", ok)).rejects.toMatchObject(invalidArgument);
      await expect(cp.getSteps("a\u0000b")).rejects.toMatchObject(invalidArgument);
      await expect(cp.claimThread("")).rejects.toMatchObject(invalidArgument);
      expect(await cp.getSteps(id)).toEqual([]);
    });

    it("lets one live claim hold a thread: a second is a conflict until it is released", async () => {
      const cp = await get();
      if (!hasStepOperations(cp)) return;
      const [a, b] = [uniqueId("claim"), uniqueId("claim")];
      const first = await cp.claimThread(a);
      await expect(cp.claimThread(a)).rejects.toMatchObject({ name: "EngramError", code: "conflict" });
      // Other threads are free, even with ids alike.
      const other = await cp.claimThread(b);
      const alike = await cp.claimThread(`${a} `);
      await first.release();
      await first.release(); // twice is fine
      const again = await cp.claimThread(a);
      await expect(cp.claimThread(b)).rejects.toMatchObject({ code: "conflict" });
      // Claims at once: exactly one wins.
      await again.release();
      const raced = await Promise.allSettled(Array.from({ length: 6 }, () => cp.claimThread(a)));
      const won = raced.filter((r): r is PromiseFulfilledResult<Awaited<ReturnType<typeof cp.claimThread>>> => r.status === "fulfilled");
      expect(won.length).toBe(1);
      for (const r of raced) if (r.status === "rejected") expect(r.reason).toMatchObject({ code: "conflict" });
      await Promise.all([won[0]?.value.release(), other.release(), alike.release()]);
    });

    it("keeps a run's steps as history at a put with keepSteps, drops the rest, and deletes points", async () => {
      const cp = await get();
      if (!hasHistoryOperations(cp)) return;
      const id = uniqueId("history");
      const step = (runId: string, seq: number, baseRevision: number, files?: Uint8Array): RunStep => ({
        runId,
        seq,
        baseRevision,
        doc: JSON.stringify({ runId, seq, text: "计划 😀" }),
        ...(files && { files }),
        savedAt: 1000 + seq,
      });
      const bytes = sampleCheckpoint().files as Uint8Array;
      expect(await cp.getHistory(id)).toEqual([]);
      // Run a on a new thread (base 0), a stale run z, then a's save keeps a's steps only.
      await cp.putStep(id, step("run-a", 1, 0));
      await cp.putStep(id, step("run-a", 2, 0, bytes));
      await cp.putStep(id, step("run-z", 1, 77));
      const r1 = (await cp.put(id, { messages: [], data: {}, savedAt: 1 }, { keepSteps: "run-a" })) as number;
      expect(await cp.getSteps(id)).toEqual([]);
      const first = await cp.getHistory(id);
      expect(first.map((s) => `${s.runId}:${s.seq}`)).toEqual(["run-a:1", "run-a:2"]);
      expect(first[1]).toMatchObject({ baseRevision: 0, savedAt: 1002 });
      expect(Array.from(first[1]?.files ?? [])).toEqual(Array.from(bytes));
      expect(first[0]?.files).toBeUndefined();
      expect(JSON.parse(first[0]?.doc ?? "")).toEqual({ runId: "run-a", seq: 1, text: "计划 😀" });
      if (typeof r1 === "number") expect(first.every((s) => s.keptAt === r1)).toBe(true);
      // Run b extends r1; a put refused (stale revision) keeps nothing and drops nothing.
      await cp.putStep(id, step("run-b", 1, r1 ?? 0));
      await cp.putStep(id, step("run-b", 2, r1 ?? 0));
      await expect(
        cp.put(id, { messages: [], data: {}, savedAt: 2, revision: (r1 ?? 0) + 1000 }, { keepSteps: "run-b" }),
      ).rejects.toMatchObject({ code: "conflict" });
      expect((await cp.getSteps(id)).length).toBe(2);
      expect((await cp.getHistory(id)).length).toBe(2);
      // deleteSteps never touches history.
      await cp.deleteSteps(id, "run-a");
      expect((await cp.getHistory(id)).length).toBe(2);
      // A put keeping another run (or none) drops b's steps.
      await cp.putStep(id, step("run-c", 1, r1 ?? 0));
      const r2 = (await cp.put(
        id,
        { messages: [], data: {}, savedAt: 3, ...(r1 !== undefined && { revision: r1 }) },
        { keepSteps: "run-c" },
      )) as number;
      expect(await cp.getSteps(id)).toEqual([]);
      const second = await cp.getHistory(id);
      expect(second.map((s) => `${s.runId}:${s.seq}`)).toEqual(["run-a:1", "run-a:2", "run-c:1"]);
      if (typeof r2 === "number") expect(second[2]?.keptAt).toBe(r2);
      // A run kept by two saves (one mid-run): its points in order, by the save that kept them.
      await cp.putStep(id, step("run-0", 1, r2 ?? 0));
      const r3 = (await cp.put(id, { messages: [], data: {}, savedAt: 4 }, { keepSteps: "run-0" })) as number;
      await cp.putStep(id, step("run-0", 2, r3 ?? 0, Uint8Array.from([9])));
      await cp.put(id, { messages: [], data: {}, savedAt: 5 }, { keepSteps: "run-0" });
      const third = await cp.getHistory(id);
      expect(third.map((s) => `${s.runId}:${s.seq}`)).toEqual(["run-a:1", "run-a:2", "run-c:1", "run-0:1", "run-0:2"]);
      expect(Array.from(third[4]?.files ?? [])).toEqual([9]);
      // Points go by key; unknown ones are skipped; malformed keys are invalid_argument.
      await cp.deleteHistory(id, [
        { runId: "run-a", seq: 1 },
        { runId: "run-c", seq: 1 },
        { runId: "run-nope", seq: 4 },
      ]);
      expect((await cp.getHistory(id)).map((s) => `${s.runId}:${s.seq}`)).toEqual(["run-a:2", "run-0:1", "run-0:2"]);
      for (const bad of [[{ runId: "", seq: 1 }], [{ runId: "r", seq: 0 }], "x"])
        await expect(cp.deleteHistory(id, bad as never)).rejects.toMatchObject(invalidArgument);
      await expect(cp.put(id, { messages: [], data: {}, savedAt: 6 }, { keepSteps: "" })).rejects.toMatchObject(invalidArgument);
      await expect(cp.getHistory("a\u0000b")).rejects.toMatchObject(invalidArgument);
      // The checkpoint's history head is stored as given; a malformed one is refused.
      await cp.put(id, { messages: [], data: {}, savedAt: 7, history: { runId: "run-0", seq: 2, depth: 5 } });
      expect((await cp.get(id))?.history).toEqual({ runId: "run-0", seq: 2, depth: 5 });
      await expect(cp.put(id, { messages: [], data: {}, savedAt: 8, history: { runId: "r", seq: 0, depth: 1 } })).rejects.toMatchObject(
        invalidArgument,
      );
      // Other threads' history is apart; a delete drops the thread's.
      const other = uniqueId("history");
      expect(await cp.getHistory(other)).toEqual([]);
      await cp.delete(id);
      expect(await cp.getHistory(id)).toEqual([]);
    });

    it("prunes history by count and by age, keeping every listed point and the saved state readable", async () => {
      const cp = await get();
      if (!hasHistoryOperations(cp)) return;
      const id = uniqueId("prune");
      const noFiles = { applyFileDeltas: (): Uint8Array => new Uint8Array(0) };
      // Two runs as a run's step log writes them: run a from a base, run b a base again (its chain
      // was deep enough), each step one more message.
      const say = (n: number) => ({ role: "user" as const, content: `m${n}` });
      const doc = (keep: number, extra: Record<string, unknown> = {}) => JSON.stringify({ keep, append: [say(keep)], ...extra });
      let revision = 0;
      for (const [runId, base] of [
        ["run-a", 0],
        ["run-b", 3],
      ] as const) {
        for (let seq = 1; seq <= 3; seq++) {
          const first = seq === 1 ? { data: {}, depth: 1 } : {};
          const keep = seq === 1 ? 0 : base + seq - 1;
          const d =
            seq === 1 ? JSON.stringify({ keep: 0, append: Array.from({ length: base + 1 }, (_, i) => say(i)), ...first }) : doc(keep);
          await cp.putStep(id, { runId, seq, baseRevision: revision, doc: d, savedAt: runId === "run-a" ? 1_000 : Date.now() });
        }
        revision =
          ((await cp.put(
            id,
            { messages: [], data: {}, savedAt: 1, history: { runId, seq: 3, depth: 3 }, ...(revision > 0 && { revision }) },
            { keepSteps: runId },
          )) as number) ?? 0;
      }
      const head = (await cp.get(id))?.history;
      expect((await cp.getHistory(id)).length).toBe(6);
      // By count: the newest 2 are listed; they follow run b's base, so run a goes, run b stays.
      expect(await pruneHistory(cp, id, { maxPoints: 2 }, head)).toBe(3);
      expect((await cp.getHistory(id)).map((s) => `${s.runId}:${s.seq}`)).toEqual(["run-b:1", "run-b:2", "run-b:3"]);
      const listed = await listHistory(cp, id, { retention: { maxPoints: 2 } });
      expect(listed.map((p) => p.id)).toEqual(["run-b:2", "run-b:3"]);
      expect(listed.map((p) => p.current)).toEqual([false, true]);
      const last = await readHistoryPoint(cp, id, "run-b:3", noFiles);
      expect(last.messages.map((m) => m.content)).toEqual(["m0", "m1", "m2", "m3", "m4", "m5"]);
      // By age: nothing young enough is listed, but the saved state's point and its base stay.
      const later = Date.now() + 3_600_000;
      expect(await pruneHistory(cp, id, { maxAgeMs: 1000 }, head, later)).toBe(0);
      expect(await listHistory(cp, id, { retention: { maxAgeMs: 1000 }, now: later })).toEqual([]);
      expect((await readHistoryPoint(cp, id, "run-b:3", noFiles)).messages.length).toBe(6);
      // Without a saved state to keep, age drops them all.
      expect(await pruneHistory(cp, id, { maxAgeMs: 1000 }, undefined, later)).toBe(3);
      expect(await cp.getHistory(id)).toEqual([]);
      await cp.delete(id);
    });

    it("lists threads in id order, with pages", async () => {
      const cp = await get();
      if (!cp.list) return;
      const base = uniqueId("list");
      const ids = Array.from({ length: 7 }, (_, i) => `${base}-${i}`);
      for (const [i, id] of ids.entries()) {
        await cp.put(id, { messages: [], data: {}, savedAt: 1000 + i, ...(i === 3 && { interrupt: { toolCalls: [] } }) });
      }
      const seen: { threadId: string; savedAt: number; interrupted: boolean }[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 10_000; page++) {
        const r: { threads: typeof seen; cursor?: string } = await cp.list({ limit: 3, ...(cursor !== undefined && { cursor }) });
        expect(r.threads.length <= 3).toBe(true);
        seen.push(...r.threads.filter((x) => x.threadId.startsWith(base)));
        cursor = r.cursor;
        if (cursor === undefined) break;
      }
      expect(seen.map((x) => x.threadId)).toEqual(ids);
      expect(seen[3]).toEqual({ threadId: ids[3], savedAt: 1003, interrupted: true });
      expect(seen[0]?.interrupted).toBe(false);
    });
  });
}
