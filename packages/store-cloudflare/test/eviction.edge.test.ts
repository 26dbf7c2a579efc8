/** Eviction: a request ends while long-term memory extraction is pending, and the Durable Object
 * is evicted (its instance and timers are gone); the alarm extracts in a new instance. A user
 * whose extraction was left to a timer in the isolate loses it. */
import { join } from "node:path";
import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type Bundle, bundleWorker, startWorker } from "./fixtures/host.js";
import { type ModelServer, startModelServer } from "./fixtures/model-server.js";

let bundle: Bundle;
let model: ModelServer;
let mf: Miniflare;

beforeAll(async () => {
  bundle = await bundleWorker(join(import.meta.dirname, "fixtures/worker.ts"));
  model = await startModelServer("Noted.", {
    newFacts: [{ content: "Lives in Lisbon", category: "context", confidence: 0.95 }],
    factsToRemove: [],
  });
  mf = await startWorker(bundle, { bindings: { MODEL_URL: model.url, EXTRACTION_DELAY_MS: "2000" } });
});

afterAll(async () => {
  await mf?.dispose();
  await model?.close();
  await bundle?.dispose();
});

async function call(path: string): Promise<unknown> {
  const res = await mf.dispatchFetch(`http://localhost${path}`);
  const body = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body;
}

const said = encodeURIComponent("I live in Lisbon, by the way.");
const extractions = () => model.requests.filter((r) => !r.stream);

it("extracts long-term memory from the alarm after the object that captured it was evicted", async () => {
  // The request ends with the capture kept as pending work in the object's storage, and an alarm.
  expect(await call(`/chat?object=with-alarm&text=${said}`)).toEqual({ answer: "Noted.", pending: 1 });
  expect(typeof (await call("/alarm?object=with-alarm"))).toBe("number");
  // The other user's capture waits on a one-second timer in the isolate.
  expect(await call(`/chat?object=with-timer&alarm=no&text=${said}`)).toEqual({ answer: "Noted.", pending: 0 });
  for (const object of ["with-alarm", "with-timer"]) await mf.dispatchFetch(`http://localhost/evict?object=${object}`);
  expect(extractions()).toEqual([]);

  // The alarm (two seconds) fires in a new instance; wait for its extraction (bounded by the
  // test timeout).
  let found: unknown = [];
  while (!(found as string[]).includes("Lives in Lisbon")) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    found = await call("/facts?object=with-alarm");
  }
  expect(found).toEqual(["Lives in Lisbon"]);
  expect(JSON.stringify(extractions()[0]?.messages)).toContain("I live in Lisbon");
  // The timer was due before the alarm, and died with its instance.
  expect(await call("/facts?object=with-timer")).toEqual([]);
  expect(extractions().length).toBe(1);
});
