/** InMemoryStore and InMemoryCheckpointer against the conformance suites, plus the store rules. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CHECKPOINT_VERSION, type FetchRows, type RawRow, compareKeys, decodeCheckpoint, listRows, prefixEnd } from "../src/kit.js";
import { InMemoryCheckpointer, InMemoryStore, StoreBackend, loadCore } from "../src/index.js";
import { checkpointerConformance, storeConformance } from "../src/testing/index.js";

const store = new InMemoryStore();
storeConformance("InMemoryStore", { describe, it, expect }, () => store, { propertyRounds: 200 });
checkpointerConformance("InMemoryCheckpointer", { describe, it, expect }, () => new InMemoryCheckpointer());

describe("store rules", () => {
  it("a delimited listing walks keys only, then reads its items' values as they are by then", async () => {
    // A store's rows as FetchRows sees them, changed by "another process" once the walk is done.
    let rows: RawRow[] = ["a/1", "a/2", "b", "c", "d/1", "e", "f"].map((key) => ({ key, value: `"${key}"`, revision: "1", updatedAt: 1 }));
    const calls: { values: boolean; limit: number }[] = [];
    let changed = false;
    const fetch: FetchRows = (from, to, limit, values) => {
      calls.push({ values, limit });
      if (values && !changed) {
        changed = true;
        rows = rows
          .filter((r) => r.key !== "c")
          .map((r) => (r.key === "e" ? { ...r, value: '"e2"', revision: "2" } : r))
          .concat({ key: "bb", value: '"bb"', revision: "3", updatedAt: 3 })
          .sort((x, y) => compareKeys(x.key, y.key));
      }
      const found = rows
        .filter((r) => (from.inclusive ? compareKeys(r.key, from.key) >= 0 : compareKeys(r.key, from.key) > 0))
        .filter((r) => to === undefined || compareKeys(r.key, to) < 0)
        .slice(0, limit)
        .map((r) => (values ? { ...r } : { key: r.key, revision: r.revision, updatedAt: r.updatedAt }));
      return found;
    };
    const r = await listRows<string>(fetch, { delimiter: "/" });
    expect(r.prefixes).toEqual(["a/", "d/"]);
    // Walked: b, c (one run), e, f (another). Then `c` was deleted: its run's range read `bb`
    // (inserted meanwhile, not walked, not listed) in its place, and `c` read alone was gone.
    // `e` changed: its new value and revision.
    expect(r.items.map((i) => [i.key, i.value, i.revision])).toEqual([
      ["b", "b", "1"],
      ["e", "e2", "2"],
      ["f", "f", "1"],
    ]);
    expect(calls.filter((c) => c.values).length).toBeGreaterThan(0);
    // The walk itself never read a value.
    const walk = calls.slice(
      0,
      calls.findIndex((c) => c.values),
    );
    expect(walk.every((c) => !c.values) && walk.length > 0).toBe(true);
    // Without values nothing is read twice; without a delimiter the walk reads the values.
    calls.length = 0;
    expect((await listRows(fetch, { delimiter: "/", values: false })).items.every((i) => i.value === undefined)).toBe(true);
    expect(calls.every((c) => !c.values)).toBe(true);
    calls.length = 0;
    expect((await listRows<string>(fetch, {})).items.map((i) => i.value)).toEqual(["a/1", "a/2", "b", "bb", "d/1", "e2", "f"]);
    expect(calls.every((c) => c.values)).toBe(true);
  });

  it("terminates listings at the top of the code space (prefix \\uffff used to hang)", async () => {
    const s = new InMemoryStore();
    for (const k of ["\uffff", "\uffff\uffff", "\uffffa", "\u{10ffff}", "\u{10ffff}\u{10ffff}", "a"]) await s.put(["t"], k, 1);
    expect((await s.list(["t"], { prefix: "\uffff" })).items.map((i) => i.key)).toEqual(["\uffff", "\uffffa", "\uffff\uffff"]);
    expect((await s.list(["t"], { prefix: "\uffff", delimiter: "\uffff" })).prefixes).toEqual(["\uffff\uffff"]);
    expect((await s.list(["t"], { delimiter: "\u{10ffff}" })).prefixes).toEqual(["\u{10ffff}"]);
    expect((await s.list(["t"], { prefix: "\u{10ffff}", delimiter: "\u{10ffff}" })).prefixes).toEqual(["\u{10ffff}\u{10ffff}"]);
  });

  it("keeps thousands of keys in order through puts and deletes (the key blocks split and empty)", async () => {
    const s = new InMemoryStore();
    const ns = ["many"];
    let seed = 7;
    const next = () => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return seed >>> 0;
    };
    const pieces = ["a", "b/", "z", "é", "\uffee", "😀", "/", "0", "m/n/"];
    const randomKey = () => Array.from({ length: 1 + (next() % 6) }, () => pieces[next() % pieces.length]).join("") + (next() % 100_000);
    const model = new Set<string>();
    const sorted = () => [...model].sort(compareKeys);
    const agree = async () => {
      const all: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await s.list(ns, { values: false, limit: 700, ...(cursor !== undefined && { cursor }) });
        all.push(...page.items.map((i) => i.key));
        cursor = page.cursor;
      } while (cursor !== undefined);
      expect(all).toEqual(sorted());
      for (const prefix of ["a", "b/", "é", "😀", "m/n/"]) {
        const under = (await s.list(ns, { prefix, values: false })).items.map((i) => i.key);
        expect(under, prefix).toEqual(sorted().filter((k) => k.startsWith(prefix)));
      }
    };
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 2_500; i++) {
        const key = randomKey();
        model.add(key);
        await s.put(ns, key, i);
      }
      expect(model.size).toBeGreaterThan(2_000);
      await agree();
      // Delete most keys of some ranges, emptying whole blocks, and some scattered ones.
      const keys = sorted();
      const gone = keys.filter((k, i) => k.startsWith(round === 1 ? "a" : "z") || i % 3 === round);
      expect(await s.delete(ns, gone)).toBe(gone.length);
      for (const k of gone) model.delete(k);
      await agree();
    }
  });

  it("orders by code point and computes prefix ends across the surrogate gap", () => {
    expect(["\u{10000}", "\uffff", "\ue000", "z"].sort(compareKeys)).toEqual(["z", "\ue000", "\uffff", "\u{10000}"]);
    expect(prefixEnd("ab")).toBe("ac");
    expect(prefixEnd("a\ud7ff")).toBe("a\ue000");
    expect(prefixEnd("a\uffff")).toBe("a\u{10000}");
    expect(prefixEnd("a\u{10ffff}")).toBe("b");
    expect(prefixEnd("\u{10ffff}")).toBeUndefined();
    expect(prefixEnd("")).toBeUndefined();
  });

  it("subscribers hear every change with its namespace", async () => {
    const s = new InMemoryStore();
    const heard: string[] = [];
    const off = s.subscribe((ns) => heard.push(ns.join("/")));
    await s.put(["a", "b"], "k", 1);
    await s.delete(["a", "b"], ["k"]);
    await new Promise((r) => setTimeout(r, 0));
    off();
    await s.put(["a"], "k", 1);
    await new Promise((r) => setTimeout(r, 0));
    expect(heard).toEqual(["a/b", "a/b"]);
  });
});

describe("checkpoint format", () => {
  it("loads the version-less shape of the first releases (fixture) and upgrades it", () => {
    const legacy = readFileSync(join(import.meta.dirname, "fixtures/stores/checkpoint-v0.json"), "utf8");
    const cp = decodeCheckpoint(legacy);
    expect(cp.version).toBe(CHECKPOINT_VERSION);
    expect(cp.messages.length).toBe(2);
    expect(cp.interrupt?.toolCalls[0]?.allow).toEqual(["approve", "edit", "reject"]);
    expect(Array.from(cp.files ?? [])).toEqual([0, 1, 2, 253, 254, 255]);
    // A JSON-serialised Uint8Array (what JSON.stringify makes of one) is accepted too.
    const objectBytes = decodeCheckpoint({ messages: [], data: {}, files: { 0: 7, 1: 8 }, savedAt: 1 });
    expect(Array.from(objectBytes.files ?? [])).toEqual([7, 8]);
  });

  it("refuses damaged documents and newer formats with store_error", () => {
    for (const doc of ["{", "null", '{"messages": 3}', '{"version": "x", "messages": []}', '{"version": 99, "messages": []}']) {
      expect(() => decodeCheckpoint(doc)).toThrow(expect.objectContaining({ name: "EngramError", code: "store_error" }));
    }
  });
});

describe("StoreBackend input checks", () => {
  it("rejects write(123) with invalid_argument instead of storing an empty file", async () => {
    const s = new InMemoryStore();
    const b = new StoreBackend({ store: s, core: await loadCore() });
    for (const bad of [123, null, undefined, { length: 3 }, [1, 2]]) {
      await expect(b.write("/x.md", bad as unknown as string)).rejects.toMatchObject({ name: "EngramError", code: "invalid_argument" });
    }
    expect((await s.list(["filesystem"])).items).toEqual([]);
    expect((await b.write("/ok.md", new Uint8Array([104, 105]))).error).toBeUndefined();
  });
});
