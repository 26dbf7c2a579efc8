/** The IndexedDB store and checkpointer in headless Chromium on the WASM core: the conformance
 * suites run in the page; tabs of one origin share the database and never lose an update. */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type TestApi, checkpointerConformance, storeConformance } from "../../engram/src/testing/index.js";
import { expectResumed } from "../../store-cloudflare/test/fixtures/expectations.js";
import { LAUNCH, type Site, call, chromium, openPage, serveTestPage } from "./fixtures/host.js";

let site: Site;
let browser: Browser;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  site = await serveTestPage();
  browser = await chromium.launch(LAUNCH);
  context = await browser.newContext();
  page = await openPage(context, site);
});

afterAll(async () => {
  await browser?.close();
  await site?.close();
});

/** How many tests a suite registers (counted here, from the sources the page bundles), so a run
 * in the page can be checked to have run them all. */
function registered(register: (t: TestApi) => void): number {
  let n = 0;
  register({ describe: (_, fn) => fn(), it: () => void n++, expect: () => ({}) as never });
  return n;
}

it("passes the Store conformance suite in Chromium", async () => {
  const results = await call(page, "conformance", "store", "conformance-store");
  expect(results.filter((r) => r.error)).toEqual([]);
  expect(results.length).toBe(registered((t) => storeConformance("x", t, () => ({}) as never)));
});

it("passes the Checkpointer conformance suite in Chromium, message search included", async () => {
  const results = await call(page, "conformance", "checkpointer", "conformance-checkpointer");
  expect(results.filter((r) => r.error)).toEqual([]);
  expect(results.length).toBe(registered((t) => checkpointerConformance("x", t, () => ({}) as never)));
});

it("2 tabs of one origin doing 100 compare-and-swap increments each on one key make exactly 200, every time", async () => {
  const other = await openPage(context, site);
  try {
    for (const round of [1, 2, 3]) {
      const key = `n${round}`;
      const startAt = Date.now() + 500;
      const runs = await Promise.all([page, other].map((tab) => call(tab, "increment", "counters", key, 100, startAt)));
      expect(await call(other, "count", "counters", key)).toBe(200);
      // The tabs overlapped: some of their swaps lost and were retried.
      expect(runs.reduce((n, r) => n + r.conflicts, 0)).toBeGreaterThan(0);
    }
  } finally {
    await other.close();
  }
});

it("a tab and a dedicated worker of the origin doing 100 compare-and-swap increments each make exactly 200", async () => {
  for (const round of [1, 2]) {
    const key = `w${round}`;
    const startAt = Date.now() + 500;
    const runs = await Promise.all([
      call(page, "increment", "counters", key, 100, startAt),
      call(page, "incrementInWorker", "counters", key, 100, startAt),
    ]);
    expect(await call(page, "count", "counters", key)).toBe(200);
    expect(runs.reduce((n, r) => n + r.conflicts, 0)).toBeGreaterThan(0);
  }
});

it("tells subscribers in every tab of the namespaces each write changed, and only of those", async () => {
  const other = await openPage(context, site);
  const heard = (tab: Page, last: string) =>
    tab.waitForFunction((want) => ((globalThis as { __notices?: string[] }).__notices ?? []).includes(want), last);
  try {
    await Promise.all([call(page, "listen", "changes"), call(other, "listen", "changes")]);
    await call(
      page,
      "writes",
      "changes",
      [
        ["users", "u1", "files"],
        ["users", "u1", "facts"],
      ],
      ["quiet"],
      ["end", "1"],
    );
    await Promise.all([heard(page, "end/1"), heard(other, "end/1")]);
    // The writer's own subscriber hears it too; the writes that changed nothing are not told.
    for (const tab of [page, other]) expect(await call(tab, "notices")).toEqual(["users/u1/files", "users/u1/facts", "end/1"]);

    await call(page, "unlisten");
    await call(other, "writes", "changes", [["users", "u2", "files"]], ["quiet"], ["end", "2"]);
    await heard(other, "end/2");
    expect(await call(page, "notices")).toEqual(["users/u1/files", "users/u1/facts", "end/1"]);
  } finally {
    await other.close();
  }
});

it("holds a run's claim of a thread across tabs until the claiming tab is gone", async () => {
  const other = await openPage(context, site);
  expect(await call(other, "claim", "claims", "t1")).toBe("claimed");
  expect(await call(page, "claim", "claims", "t1")).toBe("conflict");
  expect(await call(page, "claim", "claims", "t2")).toBe("claimed");
  // The claiming tab dies without releasing: the browser lets its lock go.
  await other.close();
  await expect.poll(() => call(page, "claim", "claims", "t1"), { timeout: 10_000 }).toBe("claimed");
});

it("resumes a run whose tab was closed mid-run from the steps it committed", async () => {
  const doomed = await openPage(context, site);
  await call(doomed, "startDurableRun");
  // The model turn, the tool call and its result are committed; the run then waits on the model.
  await expect.poll(() => call(doomed, "durableSteps"), { timeout: 20_000 }).toBeGreaterThanOrEqual(3);
  await doomed.close();
  let next = await call(page, "nextDurableRun");
  for (let tries = 0; "busy" in next && tries < 100; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    next = await call(page, "nextDurableRun");
  }
  if ("busy" in next) throw new Error(`the closed tab's claim was never let go: ${next.busy}`);
  expectResumed(next);
});

it("rejects bad input with typed errors, storing nothing", async () => {
  expect(await call(page, "badInput", "bad-input")).toEqual({
    noName: "invalid_argument",
    noIndexedDB: "invalid_argument",
    badKey: "invalid_argument",
    badValue: "invalid_argument",
    badBatch: "invalid_argument",
    badThread: "invalid_argument",
    stored: 0,
  });
});

it("gives way to a newer schema opened in another tab, then refuses it with store_error", async () => {
  const other = await openPage(context, site);
  try {
    expect(await call(page, "hold", "upgraded")).toBe(true);
    // Not blocked: the holding tab closes its connection when the other asks to upgrade.
    expect(await call(other, "upgrade", "upgraded", 99)).toBe(99);
    expect(await call(page, "heldPut")).toBe("store_error");
  } finally {
    await other.close();
  }
});

it("refuses a write over the origin's quota with store_error, keeping what was stored", async () => {
  // A context of its own: Chromium applies a quota override to an origin whose storage the
  // context has not opened yet, while the DevTools session that set it lives.
  const small = await browser.newContext();
  try {
    const cdp = await small.newCDPSession(await small.newPage());
    await cdp.send("Storage.overrideQuotaForOrigin", { origin: new URL(site.url).origin, quotaSize: 4_000_000 });
    const out = await call(await openPage(small, site), "overQuota", "quota");
    expect(out.code).toBe("store_error");
    expect(out.message).toMatch(/quota/);
    expect(out.kept).toBe("before");
  } finally {
    await small.close();
  }
});
