/**
 * The `Store` conformance suite: one list of behaviours every implementation must show.
 * Each test works in a namespace of its own, so one store instance serves the whole suite.
 * @module
 */
import { EngramError } from "../errors.js";
import { compareKeys } from "../stores/rules.js";
import type { ListResult, Namespace, Store } from "../stores/types.js";
import { MAX_KEY_BYTES } from "../stores/types.js";
import { type TestApi, prng, uniqueId } from "./api.js";

/** Options of {@link storeConformance}. */
export interface StoreConformanceOptions {
  /** Rounds of the randomised listing test. Default: 25. */
  propertyRounds?: number;
}

/** Registers the Store conformance suite for the store `getStore` returns (called per test;
 * it may return the same instance every time). */
export function storeConformance(
  name: string,
  t: TestApi,
  getStore: () => Store | Promise<Store>,
  options: StoreConformanceOptions = {},
): void {
  const { describe, it, expect } = t;
  const fresh = async (): Promise<{ s: Store; ns: Namespace }> => ({ s: await getStore(), ns: ["conformance", uniqueId("ns")] });
  const keysOf = (r: ListResult) => r.items.map((i) => i.key);
  const invalidArgument = { name: "EngramError", code: "invalid_argument" };

  describe(`${name} Store conformance`, () => {
    it("round-trips JSON values with a revision and a time", async () => {
      const { s, ns } = await fresh();
      expect(await s.get(ns, "missing")).toBeUndefined();
      const value = {
        text: "héllo 😀 \u0000 \ud800",
        n: 1.5,
        neg: -0,
        list: [1, null, "x"],
        nested: { deep: { yes: true } },
        gone: undefined,
      };
      const put = await s.put(ns, "k", value);
      expect(put.ok).toBe(true);
      const item = await s.get(ns, "k");
      expect(item?.value).toEqual(JSON.parse(JSON.stringify(value)));
      expect(item?.revision).toBe(put.ok ? put.revision : "");
      expect(typeof item?.updatedAt).toBe("number");
      for (const v of [null, 0, "", false, [], "x".repeat(1 << 20)]) {
        await s.put(ns, "scalar", v);
        expect((await s.get(ns, "scalar"))?.value).toEqual(v);
      }
    });

    it("changes the revision on every put and never reuses one after a delete", async () => {
      const { s, ns } = await fresh();
      const a = await s.put(ns, "k", 1);
      const b = await s.put(ns, "k", 1);
      expect(a.ok && b.ok && a.revision !== b.revision).toBe(true);
      await s.delete(ns, ["k"]);
      const c = await s.put(ns, "k", 1);
      expect(c.ok && b.ok && c.revision !== b.revision && c.revision !== (a.ok ? a.revision : "")).toBe(true);
      // A compare-and-swap from before the delete must fail (no ABA).
      expect(await s.put(ns, "k", 2, { ifRevision: b.ok ? b.revision : "" })).toEqual({ ok: false, conflict: true });
    });

    it("compare-and-swap: null means absent, a revision must be current", async () => {
      const { s, ns } = await fresh();
      const first = await s.put(ns, "k", "one", { ifRevision: null });
      expect(first.ok).toBe(true);
      expect(await s.put(ns, "k", "two", { ifRevision: null })).toEqual({ ok: false, conflict: true });
      const rev = first.ok ? first.revision : "";
      const second = await s.put(ns, "k", "two", { ifRevision: rev });
      expect(second.ok).toBe(true);
      expect(await s.put(ns, "k", "three", { ifRevision: rev })).toEqual({ ok: false, conflict: true });
      expect(await s.put(ns, "other", "x", { ifRevision: "12345" })).toEqual({ ok: false, conflict: true });
      expect(await s.put(ns, "other", "x", { ifRevision: "not a revision" })).toEqual({ ok: false, conflict: true });
      expect((await s.get(ns, "k"))?.value).toBe("two");
      expect(await s.get(ns, "other")).toBeUndefined();
    });

    it("never loses a concurrent compare-and-swap increment", async () => {
      const { s, ns } = await fresh();
      await s.put(ns, "counter", 0);
      const increment = async () => {
        for (let attempt = 0; attempt < 1000; attempt++) {
          const cur = await s.get<number>(ns, "counter");
          if ((await s.put(ns, "counter", (cur?.value ?? 0) + 1, { ifRevision: cur?.revision ?? null })).ok) return;
        }
        throw new Error("too many conflicts");
      };
      await Promise.all(Array.from({ length: 20 }, increment));
      expect((await s.get(ns, "counter"))?.value).toBe(20);
    });

    it("deletes and counts what existed", async () => {
      const { s, ns } = await fresh();
      await s.put(ns, "a", 1);
      await s.put(ns, "b", 2);
      expect(await s.delete(ns, ["a", "missing"])).toBe(1);
      expect(await s.delete(ns, [])).toBe(0);
      expect(await s.get(ns, "a")).toBeUndefined();
      expect((await s.get(ns, "b"))?.value).toBe(2);
    });

    it("isolates namespaces, including nested ones", async () => {
      const { s, ns } = await fresh();
      const child = [...ns, "child"];
      await s.put(ns, "k", "parent");
      await s.put(child, "k", "child");
      expect((await s.get(ns, "k"))?.value).toBe("parent");
      expect((await s.get(child, "k"))?.value).toBe("child");
      expect(keysOf(await s.list(ns))).toEqual(["k"]);
      await s.delete(child, ["k"]);
      expect((await s.get(ns, "k"))?.value).toBe("parent");
    });

    it("lists by prefix in code point order, with or without values", async () => {
      const { s, ns } = await fresh();
      const keys = ["/b", "/a/x", "/a/y", "/a", "/ab", "/é", "/😀", "/\uffff", "/\ue000", "z"];
      for (const k of keys) await s.put(ns, k, { k });
      const all = await s.list(ns);
      expect(keysOf(all)).toEqual([...keys].sort(compareKeys));
      expect(all.prefixes).toEqual([]);
      expect(all.cursor).toBeUndefined();
      expect(keysOf(await s.list(ns, { prefix: "/a" }))).toEqual(["/a", "/a/x", "/a/y", "/ab"]);
      expect(keysOf(await s.list(ns, { prefix: "/a/" }))).toEqual(["/a/x", "/a/y"]);
      expect(keysOf(await s.list(ns, { prefix: "/\uffff" }))).toEqual(["/\uffff"]);
      expect(keysOf(await s.list(ns, { prefix: "/\u{10ffff}" }))).toEqual([]);
      expect(keysOf(await s.list(ns, { prefix: "nothing" }))).toEqual([]);
      const bare = await s.list(ns, { prefix: "/a/", values: false });
      expect(bare.items.map((i) => i.value)).toEqual([undefined, undefined]);
      expect(typeof bare.items[0]?.revision).toBe("string");
      expect((await s.list(ns, { prefix: "/b" })).items[0]?.value).toEqual({ k: "/b" });
    });

    it("groups by a delimiter once per group", async () => {
      const { s, ns } = await fresh();
      for (const k of ["/a/1", "/a/2", "/a/b/3", "/c", "/d/4", "/d/", "/e.md"]) await s.put(ns, k, 1);
      const root = await s.list(ns, { prefix: "/", delimiter: "/" });
      expect(keysOf(root)).toEqual(["/c", "/e.md"]);
      expect(root.prefixes).toEqual(["/a/", "/d/"]);
      const a = await s.list(ns, { prefix: "/a/", delimiter: "/" });
      expect(keysOf(a)).toEqual(["/a/1", "/a/2"]);
      expect(a.prefixes).toEqual(["/a/b/"]);
      const multi = await s.list(ns, { prefix: "", delimiter: "/a" });
      expect(multi.prefixes).toEqual(["/a"]);
      expect(keysOf(multi)).toEqual(["/c", "/d/", "/d/4", "/e.md"]);
    });

    it("pages with limit and cursor, items and groups alike", async () => {
      const { s, ns } = await fresh();
      const keys = Array.from({ length: 23 }, (_, i) => `k${String(i).padStart(2, "0")}`);
      for (const k of keys) await s.put(ns, k, k);
      for (const k of ["g/1", "g/2", "h/1"]) await s.put(ns, k, k);
      for (const limit of [1, 5, 26, 100]) {
        const seen: string[] = [];
        let cursor: string | undefined;
        for (let page = 0; page < 100; page++) {
          const r: ListResult = await s.list(ns, { limit, delimiter: "/", ...(cursor !== undefined && { cursor }) });
          expect(r.items.length + r.prefixes.length <= limit).toBe(true);
          seen.push(...r.prefixes, ...keysOf(r));
          cursor = r.cursor;
          if (cursor === undefined) break;
        }
        expect(seen.sort(compareKeys)).toEqual([...keys, "g/", "h/"].sort(compareKeys));
      }
      await expect(s.list(ns, { limit: 0 })).rejects.toMatchObject(invalidArgument);
      await expect(s.list(ns, { cursor: "garbage" })).rejects.toMatchObject(invalidArgument);
    });

    it("agrees with a reference model on random keys, prefixes and delimiters (always terminating)", async () => {
      const rounds = options.propertyRounds ?? 25;
      const alphabet = ["a", "b", "/", ".", "é", "\uffff", "\ue000", "\ud7ff", "😀", "\u{10ffff}", "\u{10000}"];
      for (let round = 0; round < rounds; round++) {
        const rand = prng(0xc0ffee + round);
        const word = (max: number) =>
          Array.from({ length: Math.floor(rand() * max) }, () => alphabet[Math.floor(rand() * alphabet.length)]).join("");
        const { s, ns } = await fresh();
        const keys = [...new Set(Array.from({ length: 1 + Math.floor(rand() * 14) }, () => word(5) || "a"))];
        if (s.batch) await s.batch(keys.map((key) => ({ op: "put" as const, namespace: ns, key, value: key })));
        else for (const key of keys) await s.put(ns, key, key);
        const sorted = [...keys].sort(compareKeys);
        for (let q = 0; q < 4; q++) {
          const prefix = word(3);
          const delimiter = rand() < 0.6 ? word(2) || "/" : undefined;
          const limit = rand() < 0.5 ? 1 + Math.floor(rand() * 4) : undefined;
          // The model: filter, then group by the first delimiter after the prefix.
          const expected: string[] = [];
          for (const k of sorted) {
            if (!k.startsWith(prefix)) continue;
            const cut = delimiter === undefined ? -1 : k.indexOf(delimiter, prefix.length);
            const entry = cut >= 0 ? `P:${k.slice(0, cut + (delimiter as string).length)}` : `K:${k}`;
            if (expected.at(-1) !== entry && !expected.includes(entry)) expected.push(entry);
          }
          const got: string[] = [];
          let cursor: string | undefined;
          for (let page = 0; page <= keys.length + 1; page++) {
            const r: ListResult = await s.list(ns, {
              prefix,
              ...(delimiter !== undefined && { delimiter }),
              ...(limit !== undefined && { limit }),
              ...(cursor !== undefined && { cursor }),
              values: false,
            });
            got.push(...[...r.items.map((i) => `K:${i.key}`), ...r.prefixes.map((p) => `P:${p}`)]);
            cursor = r.cursor;
            if (cursor === undefined) break;
          }
          expect(cursor).toBeUndefined();
          const order = (e: string) => e.slice(2);
          expect(got.sort((x, y) => compareKeys(order(x), order(y)))).toEqual(expected.sort((x, y) => compareKeys(order(x), order(y))));
        }
      }
    }, 60_000);

    it("searches values with a filter, in key order, with pages", async () => {
      const { s, ns } = await fresh();
      if (!s.search) throw new Error("search is missing");
      const people = [
        { key: "p1", value: { name: "ada", age: 36, tags: ["math"], address: { city: "London" } } },
        { key: "p2", value: { name: "alan", age: 41, address: { city: "Wilmslow" } } },
        { key: "p3", value: { name: "grace", age: 85, tags: ["navy"] } },
        { key: "q1", value: { name: "edsger", age: 72, address: { city: "Austin" } } },
        { key: "q2", value: "not an object" },
      ];
      for (const p of people) await s.put(ns, p.key, p.value);
      const keys = async (filter: Record<string, unknown>, prefix?: string) =>
        (await s.search?.(ns, { filter, ...(prefix !== undefined && { prefix }) }))?.items.map((i) => i.key);
      expect(await keys({})).toEqual(["p1", "p2", "p3", "q1", "q2"]);
      expect(await keys({ name: "ada" })).toEqual(["p1"]);
      expect(await keys({ "address.city": "Austin" })).toEqual(["q1"]);
      expect(await keys({ tags: ["math"] })).toEqual(["p1"]);
      expect(await keys({ age: { $gte: 41, $lt: 85 } })).toEqual(["p2", "q1"]);
      expect(await keys({ age: { $gt: "40" } })).toEqual([]);
      expect(await keys({ name: { $in: ["grace", "alan"] } })).toEqual(["p2", "p3"]);
      expect(await keys({ name: { $nin: ["grace", "alan"] } })).toEqual(["p1", "q1", "q2"]);
      expect(await keys({ tags: { $exists: false } })).toEqual(["p2", "q1", "q2"]);
      expect(await keys({ name: { $ne: "ada" } }, "p")).toEqual(["p2", "p3"]);
      expect(await keys({ "address.city": { $gt: "B" } })).toEqual(["p1", "p2"]);
      const first = await s.search(ns, { filter: { age: { $exists: true } }, limit: 3 });
      expect(first.items.map((i) => i.key)).toEqual(["p1", "p2", "p3"]);
      const rest = await s.search(ns, {
        filter: { age: { $exists: true } },
        limit: 3,
        ...(first.cursor !== undefined && { cursor: first.cursor }),
      });
      expect(rest.items.map((i) => i.key)).toEqual(["q1"]);
      expect(rest.cursor).toBeUndefined();
      await expect(s.search(ns, { filter: { age: { $regex: "x" } } })).rejects.toMatchObject(invalidArgument);
    });

    it("applies a batch atomically: all writes or none", async () => {
      const { s, ns } = await fresh();
      if (!s.batch) throw new Error("batch is missing");
      const other = [...ns, "other"];
      const a = await s.put(ns, "a", 1);
      const ok = await s.batch([
        { op: "put", namespace: ns, key: "a", value: 2, ifRevision: a.ok ? a.revision : "" },
        { op: "put", namespace: other, key: "b", value: 3, ifRevision: null },
        { op: "delete", namespace: ns, key: "missing" },
      ]);
      expect(ok.ok).toBe(true);
      if (ok.ok) {
        expect(ok.revisions.length).toBe(3);
        expect(ok.revisions[2]).toBe(null);
        expect((await s.get(ns, "a"))?.revision).toBe(ok.revisions[0]);
      }
      const failed = await s.batch([
        { op: "put", namespace: ns, key: "a", value: 99 },
        { op: "delete", namespace: other, key: "b" },
        { op: "put", namespace: ns, key: "c", value: 1, ifRevision: "0" },
      ]);
      expect(failed).toEqual({ ok: false, conflict: true, index: 2 });
      expect((await s.get(ns, "a"))?.value).toBe(2);
      expect((await s.get(other, "b"))?.value).toBe(3);
      expect(await s.get(ns, "c")).toBeUndefined();
      const rev = (await s.get(other, "b"))?.revision;
      expect((await s.batch([{ op: "delete", namespace: other, key: "b", ifRevision: `${rev}0` }])).ok).toBe(false);
      expect((await s.batch([{ op: "delete", namespace: other, key: "b", ifRevision: rev ?? "" }])).ok).toBe(true);
      expect(await s.get(other, "b")).toBeUndefined();
    });

    it("rejects invalid keys, values and namespaces with typed errors, storing nothing", async () => {
      const { s, ns } = await fresh();
      const badKeys: unknown[] = [
        "",
        "a\u0000b",
        "\ud800",
        "x\udc00y",
        "k".repeat(MAX_KEY_BYTES + 1),
        "é".repeat(MAX_KEY_BYTES / 2 + 1),
        42,
        null,
      ];
      for (const key of badKeys) {
        await expect(s.put(ns, key as string, 1)).rejects.toMatchObject(invalidArgument);
        await expect(s.get(ns, key as string)).rejects.toMatchObject(invalidArgument);
      }
      for (const value of [undefined, () => 1, Symbol("x"), 10n]) {
        await expect(s.put(ns, "v", value)).rejects.toMatchObject(invalidArgument);
      }
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;
      await expect(s.put(ns, "v", cyclic)).rejects.toMatchObject(invalidArgument);
      await expect(s.list(ns, { prefix: "\ud800" })).rejects.toMatchObject(invalidArgument);
      await expect(s.list(ns, { delimiter: "" })).rejects.toMatchObject(invalidArgument);
      for (const bad of [[], ["a/b"], ["*"], [""], "ns"]) {
        await expect(s.get(bad as unknown as Namespace, "k")).rejects.toMatchObject(invalidArgument);
      }
      expect((await s.list(ns)).items).toEqual([]);
      // The longest valid key is fine.
      expect((await s.put(ns, "k".repeat(MAX_KEY_BYTES), 1)).ok).toBe(true);
      expect(EngramError).toBeDefined();
    });

    it("changes the change token on every change of its namespace only", async () => {
      const { s, ns } = await fresh();
      if (!s.changeToken) return;
      const other = [...ns, "other"];
      const t0 = await s.changeToken(ns);
      expect(await s.changeToken(ns)).toBe(t0);
      await s.put(ns, "a", 1);
      const t1 = await s.changeToken(ns);
      expect(t1).not.toBe(t0);
      const o1 = await s.changeToken(other);
      await s.put(other, "x", 1);
      expect(await s.changeToken(ns)).toBe(t1);
      expect(await s.changeToken(other)).not.toBe(o1);
      await s.delete(ns, ["a"]);
      const t2 = await s.changeToken(ns);
      expect(t2).not.toBe(t1);
      await s.delete(ns, ["a"]);
      expect(await s.changeToken(ns)).toBe(t2);
    });
  });
}
