/** `searchPastThreads`, the library call behind the tool: the fallback over a checkpointer
 * without a search of its own (listed and loaded threads, the core's BM25) passes the same
 * conformance as the checkpointers' own searches; damaged checkpoints are passed over; answers
 * stay bounded whatever the source returns; snippets show the match. */
import { describe, expect, it } from "vitest";
import { type Checkpoint, type Checkpointer, EngramError, InMemoryCheckpointer, searchPastThreads } from "../src/index.js";
import { type MessageSearchHit, queryWords, snippetAround } from "../src/kit.js";
import { formatPastThreads } from "../src/middleware/past-threads.js";
import { checkpointerConformance } from "../src/testing/index.js";
import { core } from "./fixtures/session.js";

/** A checkpointer that can list and load threads but not search them: searches go through the
 * fallback. `damaged` ids fail to load, as a checkpoint whose document is broken does. */
function listingOnly(damaged = new Set<string>()): Checkpointer & { inner: InMemoryCheckpointer } {
  const inner = new InMemoryCheckpointer({ core });
  const cp = {
    inner,
    incremental: true,
    get: (id: string, o?: Parameters<Checkpointer["get"]>[1]) =>
      damaged.has(id) ? Promise.reject(new EngramError("store_error", "damaged checkpoint: messages are missing")) : inner.get(id, o),
    put: (id: string, c: Checkpoint) => inner.put(id, c),
    delete: (id: string) => inner.delete(id),
    list: (o?: Parameters<InMemoryCheckpointer["list"]>[0]) => inner.list(o),
  };
  return { ...cp, searchMessages: (search) => searchPastThreads({ get: cp.get, list: cp.list }, core, search) };
}

checkpointerConformance("searchPastThreads over a listing checkpointer", { describe, it, expect }, () => listingOnly());

const said = (userId: string, content: string): Checkpoint => ({ messages: [{ role: "user", content }], data: {}, savedAt: 5, userId });

describe("searchPastThreads", () => {
  it("passes over a damaged checkpoint and finds the rest", async () => {
    const damaged = new Set(["t2"]);
    const cp = listingOnly(damaged);
    for (const id of ["t1", "t2", "t3"]) await cp.put(id, said("ada", `the quarterly ${id} report`));
    const hits = await searchPastThreads({ get: cp.get, list: cp.list }, core, { userId: "ada", query: "quarterly report" });
    expect(hits.map((h) => h.threadId).sort()).toEqual(["t1", "t3"]);
    // Undamaged, the same search finds all three: the damage alone left t2 out.
    damaged.clear();
    expect((await searchPastThreads({ get: cp.get, list: cp.list }, core, { userId: "ada", query: "quarterly report" })).length).toBe(3);
  });

  it("answers like the in-memory checkpointer's own search, on the same threads", async () => {
    const cp = listingOnly();
    const topics = ["billing database", "deploy window", "billing invoices", "lunch", "database backups", "billing"];
    for (const [i, t] of topics.entries()) await cp.put(`t${i}`, said(i % 3 === 2 ? "bob" : "ada", `we talked about ${t} at length`));
    for (const query of ["billing database", "deploy", "backups billing lunch"]) {
      const search = { userId: "ada", query, excludeThreadId: "t0" };
      expect(await searchPastThreads({ get: cp.get, list: cp.list }, core, search)).toEqual(await cp.inner.searchMessages(search));
    }
  });

  it("keeps answers bounded: at most `limit` threads, snippets of at most `snippetChars`", async () => {
    const cp = listingOnly();
    const long = (i: number) => `${"filler words here ".repeat(300)} decision ${i} on the cache ${"more filler ".repeat(300)}`;
    for (let i = 0; i < 60; i++) await cp.put(`t${i}`, said("ada", long(i)));
    for (const source of [cp.inner, { get: cp.get, list: cp.list }]) {
      const few = await searchPastThreads(source, core, { userId: "ada", query: "cache decision" });
      expect(few.length).toBe(5);
      for (const h of few) expect(h.snippet.length <= 300).toBe(true);
      const most = await searchPastThreads(source, core, { userId: "ada", query: "cache decision", limit: 50, snippetChars: 40 });
      expect(most.length).toBe(50);
      for (const h of most) {
        expect(h.snippet.length <= 40).toBe(true);
        expect(h.snippet).toContain("decision");
      }
      // The tool's whole answer stays small: 50 threads, a header line and a 40-character snippet each.
      expect(formatPastThreads("cache decision", most).length < 50 * (40 + 80)).toBe(true);
    }
  });

  it("bounds what a checkpointer's own search returns, and leaves out the asking thread", async () => {
    const flood: MessageSearchHit[] = Array.from({ length: 200 }, (_, i) => ({
      threadId: i === 0 ? "me" : `t${i}`,
      savedAt: 0,
      role: "user",
      messageIndex: 0,
      snippet: "x".repeat(10_000),
      score: 200 - i,
    }));
    const source = { get: async () => undefined, searchMessages: async () => flood };
    const hits = await searchPastThreads(source, core, { userId: "ada", query: "x", excludeThreadId: "me", limit: 7, snippetChars: 50 });
    expect(hits.map((h) => h.threadId)).toEqual(["t1", "t2", "t3", "t4", "t5", "t6", "t7"]);
    for (const h of hits) expect(h.snippet.length).toBe(50);
  });

  it("needs a search or a listing, and a well-formed request", async () => {
    const get = async () => undefined;
    await expect(searchPastThreads({ get }, core, { userId: "ada", query: "x" })).rejects.toMatchObject({ code: "unsupported" });
    const cp = listingOnly();
    for (const bad of [{ userId: 3, query: "x" }, { userId: "ada" }, { userId: "ada", query: "x", limit: 1.5 }, null]) {
      await expect(searchPastThreads(cp, core, bad as never)).rejects.toMatchObject({ code: "invalid_argument" });
    }
  });
});

describe("snippets and query words", () => {
  it("takes the distinct lower-cased words of a query, at most 32", () => {
    expect(queryWords("What did we DECIDE about Postgres-16, we?")).toEqual(["what", "did", "we", "decide", "about", "postgres", "16"]);
    expect(queryWords(Array.from({ length: 40 }, (_, i) => `w${i}`).join(" ")).length).toBe(32);
    expect(queryWords(" ?! ")).toEqual([]);
  });

  it("shows the text around the first match, within the length, marking the cuts", () => {
    const text = `${"a ".repeat(100)}the NEEDLE is here ${"b ".repeat(100)}`;
    const s = snippetAround(text, ["needle"], 50);
    expect(s.length <= 50).toBe(true);
    expect(s.startsWith("…") && s.endsWith("…")).toBe(true);
    expect(s).toContain("NEEDLE is here");
    expect(snippetAround("short\n\n  text", ["x"], 50)).toBe("short text");
    expect(snippetAround(`${"c".repeat(100)}`, ["zzz"], 50)).toBe(`${"c".repeat(49)}…`);
    // Never a broken character, at either cut.
    const emoji = "😀".repeat(60);
    for (const max of [41, 42, 43]) {
      const cut = snippetAround(`${emoji} key ${emoji}`, ["key"], max);
      expect(cut.length <= max).toBe(true);
      expect(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(cut)).toBe(false);
    }
  });
});
